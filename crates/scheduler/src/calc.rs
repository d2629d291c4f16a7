//! YARN's `DominantResourceCalculator.compare`, shared by both schedulers (the Fair
//! Scheduler's drf policy and the Capacity Scheduler's dominant resource calculator).

use std::cmp::Ordering;

use fairloom_model::Resource;

/// Java's `(int) Math.signum(x)` as an ordering (NaN → equal).
#[inline]
pub(crate) fn signum(x: f64) -> Ordering {
    if x > 0.0 {
        Ordering::Greater
    } else if x < 0.0 {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

/// `compare(cluster, lhs, rhs, singleType)`: shares of the cluster per type, compared from
/// the largest down (only the largest with `single`). A cluster with a zero type cannot
/// divide: then one side is greater only if greater in some type and smaller in none.
pub fn dominant_compare(cluster: &Resource, lhs: &Resource, rhs: &Resource, types: usize, single: bool) -> Ordering {
    if lhs == rhs {
        return Ordering::Equal;
    }
    if (0..types).any(|i| cluster.get(i) == 0) {
        return compare_without_cluster(lhs, rhs, types);
    }
    let mut l = [0f64; fairloom_model::MAX_RESOURCE_TYPES];
    let mut r = [0f64; fairloom_model::MAX_RESOURCE_TYPES];
    for i in 0..types {
        l[i] = lhs.get(i) as f64 / cluster.get(i) as f64;
        r[i] = rhs.get(i) as f64 / cluster.get(i) as f64;
    }
    let (l, r) = (&mut l[..types], &mut r[..types]);
    if single {
        let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
        return signum(max(l) - max(r));
    }
    l.sort_by(f64::total_cmp);
    r.sort_by(f64::total_cmp);
    let diff = l.iter().zip(r.iter()).rev().map(|(x, y)| x - y).find(|d| *d != 0.0).unwrap_or(0.0);
    signum(diff)
}

/// Dominance without a cluster to divide by.
pub fn compare_without_cluster(lhs: &Resource, rhs: &Resource, types: usize) -> Ordering {
    let greater = (0..types).any(|i| lhs.get(i) > rhs.get(i));
    let smaller = (0..types).any(|i| lhs.get(i) < rhs.get(i));
    match (greater, smaller) {
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => Ordering::Equal,
    }
}
