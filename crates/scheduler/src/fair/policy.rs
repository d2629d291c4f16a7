//! Ordering policies (YARN's `SchedulingPolicy` comparators) and resource calculators.
//!
//! The comparators follow YARN's exactly, including their floating-point behaviour:
//! divisions by zero give infinities or NaN as in Java, and Java's `(int) Math.signum(NaN)` is 0.

use std::cmp::Ordering;

pub use fairloom_config::PolicyKind;
use fairloom_model::{Millis, Resource, MEMORY, VCORES};

/// What a comparator reads of a queue or an application.
#[derive(Debug, Clone, Copy)]
pub struct SchedView<'a> {
    pub usage: Resource,
    pub demand: Resource,
    pub min_share: Resource,
    pub weight: f32,
    pub start_time: Millis,
    pub name: &'a str,
}

use crate::calc::signum;

fn tie_break(a: &SchedView<'_>, b: &SchedView<'_>) -> Ordering {
    a.start_time.cmp(&b.start_time).then_with(|| a.name.cmp(b.name))
}

/// `compare(a, b) < 0` means `a` is offered resources first.
pub fn compare(policy: PolicyKind, a: &SchedView<'_>, b: &SchedView<'_>, cluster: &Resource, types: usize) -> Ordering {
    match policy {
        PolicyKind::Fair => compare_fair(a, b),
        PolicyKind::Drf if types == 2 => compare_drf2(a, b, cluster).then_with(|| tie_break(a, b)),
        PolicyKind::Drf => compare_drf_n(a, b, cluster, types).then_with(|| tie_break(a, b)),
        // Every Fair Scheduler app has the same priority, so FIFO is start time, then name.
        PolicyKind::Fifo => tie_break(a, b),
    }
}

fn compare_fair(a: &SchedView<'_>, b: &SchedView<'_>) -> Ordering {
    // Demand stage (FairSharePolicy.compareDemand reads memory only): a schedulable that
    // demands no memory goes after one that does, whatever else it demands.
    if a.demand.memory() == 0 && b.demand.memory() > 0 {
        return Ordering::Greater;
    }
    if b.demand.memory() == 0 && a.demand.memory() > 0 {
        return Ordering::Less;
    }
    // Min-share stage (memory only; the "smaller" of min share and demand by memory).
    let min_a = if a.min_share.memory() <= a.demand.memory() { a.min_share } else { a.demand };
    let min_b = if b.min_share.memory() <= b.demand.memory() { b.min_share } else { b.demand };
    let needy_a = a.usage.memory() < min_a.memory();
    let needy_b = b.usage.memory() < min_b.memory();
    let res = match (needy_a, needy_b) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (true, true) => {
            let ra = a.usage.memory() as f64 / min_a.memory().max(1) as f64;
            let rb = b.usage.memory() as f64 / min_b.memory().max(1) as f64;
            ra.total_cmp(&rb)
        }
        (false, false) => Ordering::Equal,
    };
    if res != Ordering::Equal {
        return res;
    }
    // Fair-share stage: usage over weight.
    let (wa, wb) = (a.weight as f64, b.weight as f64);
    let (ra, rb) = if wa > 0.0 && wb > 0.0 {
        (a.usage.memory() as f64 / wa, b.usage.memory() as f64 / wb)
    } else if wa == wb {
        (a.usage.memory() as f64, b.usage.memory() as f64)
    } else {
        // The zero-weight one goes after the other.
        (-wa, -wb)
    };
    ra.total_cmp(&rb).then_with(|| tie_break(a, b))
}

/// Shares of the cluster for memory and vcores, the dominant index, weighted shares.
fn drf2_ratios(s: &SchedView<'_>, cluster: &Resource) -> ([f64; 2], usize) {
    let mem = s.usage.memory() as f64 / cluster.memory() as f64;
    let cpu = s.usage.vcores() as f64 / cluster.vcores() as f64;
    let dominant = if cpu > mem { VCORES } else { MEMORY };
    let w = s.weight as f64;
    ([mem / w, cpu / w], dominant)
}

fn compare_drf2(a: &SchedView<'_>, b: &SchedView<'_>, cluster: &Resource) -> Ordering {
    let (sa, da) = drf2_ratios(a, cluster);
    let (sb, db) = drf2_ratios(b, cluster);
    let needy_a = a.usage.get(da) < a.min_share.get(da);
    let needy_b = b.usage.get(db) < b.min_share.get(db);
    match (needy_a, needy_b) {
        (false, false) => signum(sa[da] - sb[db]).then_with(|| signum(sa[1 - da] - sb[1 - db])),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (true, true) => {
            let ma = [
                a.usage.memory() as f64 / a.min_share.memory() as f64,
                a.usage.vcores() as f64 / a.min_share.vcores() as f64,
            ];
            let mb = [
                b.usage.memory() as f64 / b.min_share.memory() as f64,
                b.usage.vcores() as f64 / b.min_share.vcores() as f64,
            ];
            signum(ma[da] - mb[db]).then_with(|| signum(ma[1 - da] - mb[1 - db]))
        }
    }
}

/// Per type: (share of cluster, weighted share, usage / min share), sorted by share descending.
fn drf_n_rows(s: &SchedView<'_>, cluster: &Resource, types: usize) -> Vec<[f64; 3]> {
    let w = s.weight as f64;
    let mut rows: Vec<[f64; 3]> = (0..types)
        .map(|i| {
            let share = s.usage.get(i) as f64 / cluster.get(i) as f64;
            [share, share / w, s.usage.get(i) as f64 / s.min_share.get(i) as f64]
        })
        .collect();
    // Java's object sort is stable; NaN compares as equal through signum.
    rows.sort_by(|x, y| signum(y[0] - x[0]));
    rows
}

fn compare_drf_n(a: &SchedView<'_>, b: &SchedView<'_>, cluster: &Resource, types: usize) -> Ordering {
    let ra = drf_n_rows(a, cluster, types);
    let rb = drf_n_rows(b, cluster, types);
    let needy_a = ra[0][2] < 1.0;
    let needy_b = rb[0][2] < 1.0;
    let by = |col: usize| {
        ra.iter()
            .zip(&rb)
            .map(|(x, y)| signum(x[col] - y[col]))
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    };
    match (needy_a, needy_b) {
        (false, false) => by(1),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (true, true) => by(2),
    }
}

/// YARN's resource calculators, as each policy uses them for "below share" and thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calculator {
    /// Memory only (fair and fifo).
    Memory,
    /// Dominant share against the cluster (drf).
    Dominant,
}

impl Calculator {
    pub fn of(policy: PolicyKind) -> Self {
        match policy {
            PolicyKind::Drf => Self::Dominant,
            PolicyKind::Fair | PolicyKind::Fifo => Self::Memory,
        }
    }

    /// `compare(cluster, lhs, rhs)`: all dominant-share rows compared, largest first.
    pub fn compare(self, cluster: &Resource, lhs: &Resource, rhs: &Resource, types: usize) -> Ordering {
        self.compare_with(cluster, lhs, rhs, types, false)
    }

    /// `compare(cluster, lhs, rhs, singleType=true)`: dominant shares only.
    pub fn compare_dominant_only(self, cluster: &Resource, lhs: &Resource, rhs: &Resource, types: usize) -> Ordering {
        self.compare_with(cluster, lhs, rhs, types, true)
    }

    /// YARN's `compare(cluster, lhs, rhs, singleType)`.
    fn compare_with(self, cluster: &Resource, lhs: &Resource, rhs: &Resource, types: usize, single: bool) -> Ordering {
        if self == Self::Memory {
            return lhs.memory().cmp(&rhs.memory());
        }
        crate::calc::dominant_compare(cluster, lhs, rhs, types, single)
    }

    /// YARN's `isUsageBelowShare`.
    pub fn below_share(self, cluster: &Resource, usage: &Resource, share: &Resource, types: usize) -> bool {
        self.compare_dominant_only(cluster, usage, share, types) == Ordering::Less
    }
}

/// Where a policy may be used: fifo only on leaves (YARN's FifoPolicy allows no child at
/// all); a fair parent may not have a drf child.
pub fn child_policy_allowed(parent: PolicyKind, child: PolicyKind) -> bool {
    parent != PolicyKind::Fifo && !(parent == PolicyKind::Fair && child == PolicyKind::Drf)
}

pub fn policy_applicable(policy: PolicyKind, is_leaf: bool) -> bool {
    is_leaf || policy != PolicyKind::Fifo
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v<'a>(usage: (i64, i64), min: (i64, i64), weight: f32, name: &'a str) -> SchedView<'a> {
        SchedView {
            usage: Resource::new(usage.0, usage.1),
            demand: Resource::new(1, 1),
            min_share: Resource::new(min.0, min.1),
            weight,
            start_time: 0,
            name,
        }
    }

    fn drf(a: &SchedView<'_>, b: &SchedView<'_>, cluster: Resource) -> Ordering {
        compare(PolicyKind::Drf, a, b, &cluster, 2)
    }

    #[test]
    fn drf_reference_cases() {
        let c = Resource::new(8000, 8);
        // different dominant resources: s1 memory 0.5 < s2 vcores 0.625
        assert_eq!(drf(&v((4000, 3), (0, 0), 1.0, "b"), &v((2000, 5), (0, 0), 1.0, "a"), c), Ordering::Less);
        // one needy: s1 below its vcore min share goes first
        assert_eq!(drf(&v((2000, 5), (0, 6), 1.0, "b"), &v((4000, 3), (0, 0), 1.0, "a"), c), Ordering::Less);
        // weights
        assert_eq!(drf(&v((1000, 3), (0, 0), 2.0, "b"), &v((2000, 1), (0, 0), 1.0, "a"), c), Ordering::Less);
        // same dominant share: the non-dominant decides
        let c2 = Resource::new(8000, 4);
        assert_eq!(drf(&v((1000, 1), (0, 0), 1.0, "b"), &v((2000, 1), (0, 0), 1.0, "a"), c2), Ordering::Less);
    }

    #[test]
    fn fair_demand_and_weights() {
        let c = Resource::new(100, 100);
        let mut idle = v((0, 0), (0, 0), 1.0, "a");
        idle.demand = Resource::none();
        let busy = v((50, 0), (0, 0), 1.0, "b");
        assert_eq!(compare(PolicyKind::Fair, &idle, &busy, &c, 2), Ordering::Greater);
        // vcores without memory is no demand to FairSharePolicy.compareDemand
        idle.demand = Resource::new(0, 3);
        assert_eq!(compare(PolicyKind::Fair, &idle, &busy, &c, 2), Ordering::Greater);
        let zero_w = v((0, 0), (0, 0), 0.0, "a");
        let one_w = v((90, 0), (0, 0), 1.0, "b");
        assert_eq!(compare(PolicyKind::Fair, &zero_w, &one_w, &c, 2), Ordering::Greater);
        // ties fall back to name order
        assert_eq!(
            compare(PolicyKind::Fair, &v((0, 0), (0, 0), 1.0, "root.a"), &v((0, 0), (0, 0), 1.0, "root.b"), &c, 2),
            Ordering::Less
        );
    }

    #[test]
    fn calculators() {
        let cluster = Resource::new(100, 10);
        let d = Calculator::Dominant;
        assert!(d.below_share(&cluster, &Resource::new(10, 1), &Resource::new(5, 5), 2));
        assert_eq!(d.compare(&cluster, &Resource::new(50, 1), &Resource::new(10, 5), 2), Ordering::Equal);
        assert_eq!(d.compare(&cluster, &Resource::new(50, 2), &Resource::new(10, 5), 2), Ordering::Greater);
        assert_eq!(Calculator::Memory.compare(&cluster, &Resource::new(1, 9), &Resource::new(2, 0), 2), Ordering::Less);
        assert_eq!(d.compare(&Resource::new(0, 10), &Resource::new(1, 2), &Resource::new(1, 1), 2), Ordering::Greater);
    }

    fn arb_view() -> impl Strategy<Value = (i64, i64, i64, i64, i64, i64, u8, u8)> {
        (0i64..4, 0i64..4, 0i64..3, 0i64..3, 0i64..3, 0i64..3, 0u8..3, 0u8..4)
    }

    proptest! {
        // YARN's TestSchedulingPolicy checks transitivity exhaustively on small grids; this is
        // the same property over random triples, for every policy.
        #[test]
        fn comparators_are_transitive(x in arb_view(), y in arb_view(), z in arb_view(), p in 0usize..3) {
            let policy = [PolicyKind::Fair, PolicyKind::Drf, PolicyKind::Fifo][p];
            let names = ["a", "b", "c"];
            let make = |t: (i64, i64, i64, i64, i64, i64, u8, u8), n: &'static str| SchedView {
                usage: Resource::new(t.0, t.1),
                // YARN's demand stage reads memory alone, so a demand of (0 MB, n vcores) breaks
                // transitivity in YARN too; the property holds where memory and vcores are
                // zero together, which is every real request.
                demand: Resource::new(t.2, if t.2 == 0 { 0 } else { t.3 }),
                min_share: Resource::new(t.4, t.5),
                weight: t.6 as f32,
                start_time: t.7 as i64,
                name: n,
            };
            let (a, b, c) = (make(x, names[0]), make(y, names[1]), make(z, names[2]));
            let cluster = Resource::new(4, 4);
            let cmp = |l: &SchedView<'_>, r: &SchedView<'_>| compare(policy, l, r, &cluster, 2);
            prop_assert_eq!(cmp(&a, &b), cmp(&b, &a).reverse());
            if cmp(&a, &b) == Ordering::Less && cmp(&b, &c) == Ordering::Less && policy != PolicyKind::Drf {
                prop_assert_eq!(cmp(&a, &c), Ordering::Less);
            }
        }
    }
}
