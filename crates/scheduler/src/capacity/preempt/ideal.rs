//! The ideal assignment (docs/capacity.md, "Proportional preemption"): extras bottom-up, then top-down each parent's
//! ideal shared among its children by a fixpoint that favours the most under-served
//! (ideal over guarantee, queue priority where the parent orders by it), each child's
//! to-preempt against its floor, scaled to the round's budget; finally each leaf's
//! to-obtain past the dead zone, damped by natural termination.

use std::cmp::Ordering;

use fairloom_model::Resource;

use super::snapshot::Snapshot;
use crate::capacity::calc::Calc;
use crate::ids::{PartitionId, QueueId};

/// How a selector computes the ideal assignment.
#[derive(Debug, Clone, Copy)]
pub struct IdealMode {
    /// Offers take pending with reservations (P) rather than pending less reserved (PR).
    pub considers_reserved: bool,
    /// Preemption to balance: no leaf cap at max(used, guaranteed).
    pub balance: bool,
    /// Damp to-obtain by `natural_termination_factor` (not the reserved selector).
    pub natural_termination: bool,
}

pub struct Knobs {
    pub max_ignored_over_capacity: f64,
    pub natural_termination_factor: f64,
}

/// The normalised offer (`multiplyAndNormalizeUp` with a step of 1): `floor(x + 0.5)` of
/// memory under the default calculator, whose answer is `createResource(memory)` (one vcore,
/// none without memory), and the ceiling of every type under the dominant one.
fn offer_share(calc: &Calc, unassigned: &Resource, norm: &[f64]) -> Resource {
    if !calc.is_dominant() {
        return calc.multiply_and_normalize_up(unassigned, norm[0], &Resource::new(1, 1));
    }
    let mut out = *unassigned;
    for (i, n) in norm.iter().enumerate().take(calc.types) {
        out.set(i, (unassigned.get(i) as f64 * n).ceil() as i64);
    }
    out
}

/// `PriorityUtilizationQueueOrderingPolicy.compare`: same priority, least ratio first;
/// different priorities, the higher first when both are under (or both at or over) 1,
/// else the one under 1.
pub fn priority_utilization(r1: f64, r2: f64, p1: i32, p2: i32) -> Ordering {
    if p1 == p2 || ((r1 < 1.0) != (r2 < 1.0)) {
        r1.total_cmp(&r2)
    } else {
        p2.cmp(&p1)
    }
}

pub fn compute(snap: &mut Snapshot, calc: &Calc, budget: &Resource, mode: IdealMode, knobs: &Knobs) {
    for p in snap.partitions().collect::<Vec<_>>() {
        update_extras(snap, calc, p, crate::capacity::ROOT);
        let root = snap.q_mut(p, crate::capacity::ROOT);
        root.ideal = root.guaranteed;
        recurse(snap, calc, p, crate::capacity::ROOT, budget, mode);
    }
    to_obtain(snap, calc, mode, knobs);
}

fn update_extras(snap: &mut Snapshot, calc: &Calc, p: PartitionId, q: QueueId) {
    for c in snap.q(p, q).children.clone() {
        update_extras(snap, calc, p, c);
    }
    let t = snap.q(p, q);
    let total = t.total_partition;
    let mut extra = t.used.saturating_sub(t.guaranteed);
    if calc.lt(&total, &extra, &Resource::none()) {
        extra = Resource::none();
    }
    let (untouchable, preemptable) = if t.children.is_empty() {
        if t.disabled {
            (extra, Resource::none())
        } else {
            (Resource::none(), extra)
        }
    } else {
        let cp = t.children.iter().fold(Resource::none(), |acc, c| acc.saturating_add(snap.q(p, *c).preemptable));
        let untouchable = if calc.ge(&total, &cp, &extra) { Resource::none() } else { extra.saturating_sub(cp) };
        (untouchable, calc.min(&total, cp, extra))
    };
    let t = snap.q_mut(p, q);
    t.untouchable = untouchable;
    t.preemptable = preemptable;
}

fn recurse(snap: &mut Snapshot, calc: &Calc, p: PartitionId, q: QueueId, budget: &Resource, mode: IdealMode) {
    let children = snap.q(p, q).children.clone();
    if children.is_empty() {
        return;
    }
    let total = snap.q(p, q).ideal;
    distribute(snap, calc, p, &children, total, budget, mode);
    for c in children {
        recurse(snap, calc, p, c, budget, mode);
    }
}

fn distribute(
    snap: &mut Snapshot,
    calc: &Calc,
    p: PartitionId,
    children: &[QueueId],
    total: Resource,
    budget: &Resource,
    mode: IdealMode,
) {
    let none = Resource::none();
    let (nonzero, zero): (Vec<QueueId>, Vec<QueueId>) =
        children.iter().partition(|&&c| calc.gt(&total, &snap.q(p, c).guaranteed, &none));
    let mut unassigned = fixpoint(snap, calc, p, &nonzero, total, total, false, mode);
    if !zero.is_empty() && calc.gt(&total, &unassigned, &none) {
        unassigned = fixpoint(snap, calc, p, &zero, unassigned, total, true, mode);
    }
    let _ = unassigned;
    let mut need = Resource::none();
    for &c in children {
        let t = snap.q(p, c);
        if calc.gt(&total, &t.used, &t.ideal) {
            need.add_assign(t.used.saturating_sub(t.ideal));
        }
    }
    let scale = if calc.gt(&total, &need, budget) { calc.divide(&total, budget, &need) } else { 1.0 };
    for &c in children {
        let t = snap.q(p, c);
        let floor = calc.max(&total, calc.min(&total, t.used.saturating_add(t.pending), t.guaranteed), t.ideal);
        let used = t.used.saturating_sub(t.killable);
        let to_preempt = if calc.gt(&total, &used, &floor) {
            used.saturating_sub(floor).multiply_truncate(scale as f64)
        } else {
            Resource::none()
        };
        snap.q_mut(p, c).to_preempt = to_preempt;
    }
}

/// The ratio that orders the fixpoint's heap: ideal over guarantee, last when no guarantee.
fn need_key(calc: &Calc, tot: &Resource, ideal: &Resource, guaranteed: &Resource) -> f64 {
    if calc.gt(tot, guaranteed, &Resource::none()) {
        calc.divide(tot, ideal, guaranteed) as f64
    } else {
        i32::MAX as f64
    }
}

/// Hand `unassigned` to `queues` (weighted by guarantee, or uniformly), most under-served
/// first; returns what YARN's caller then holds as left: its `unassigned` object takes the
/// initial assignments and the first offer only, because `computeFixpointAllocation` then
/// rebinds its parameter to a new object (`componentwiseMax`) and takes the later offers
/// from that one. So the zero-guarantee pass may hand out what the others already took.
#[allow(clippy::too_many_arguments)]
fn fixpoint(
    snap: &mut Snapshot,
    calc: &Calc,
    p: PartitionId,
    queues: &[QueueId],
    mut unassigned: Resource,
    tot: Resource,
    uniform: bool,
    mode: IdealMode,
) -> Resource {
    let none = Resource::none();
    let mut heap: Vec<QueueId> = Vec::new();
    for &q in queues {
        let t = snap.q(p, q);
        let ideal = if calc.gt(&tot, &t.used, &t.guaranteed) {
            t.guaranteed.componentwise_min(t.used).saturating_add(t.untouchable)
        } else {
            t.used
        };
        let wants = calc.lt(&tot, &ideal, &t.used.saturating_add(t.pending));
        snap.q_mut(p, q).ideal = ideal;
        unassigned = unassigned.saturating_sub(ideal);
        if wants {
            heap.push(q);
            snap.note_under_served(q, p);
        }
    }
    let order = |snap: &Snapshot, a: QueueId, b: QueueId| -> Ordering {
        let (x, y) = (snap.q(p, a), snap.q(p, b));
        priority_utilization(
            need_key(calc, &tot, &x.ideal, &x.guaranteed),
            need_key(calc, &tot, &y.ideal, &y.guaranteed),
            x.relative_priority,
            y.relative_priority,
        )
    };
    let mut seen_by_caller = unassigned;
    let mut first_offer = true;
    while !heap.is_empty() && calc.gt(&tot, &unassigned, &none) {
        normalise(snap, calc, p, &heap, uniform);
        heap.sort_by(|&a, &b| order(snap, a, b).then(a.cmp(&b)));
        let first = heap[0];
        let group = heap.iter().take_while(|&&q| order(snap, first, q) == Ordering::Equal).count();
        let served: Vec<QueueId> = heap.drain(..group).collect();
        let snapshot = unassigned;
        for q in served {
            if !calc.any_above_zero(&unassigned) {
                break;
            }
            let norm = snap.q(p, q).normalized;
            let avail = offer_share(calc, &snapshot, &norm).componentwise_min(unassigned);
            let accepted = offer(snap, calc, p, q, avail, &tot, mode);
            if calc.gt(&tot, &accepted, &none) {
                heap.push(q);
            }
            if first_offer {
                seen_by_caller = seen_by_caller.saturating_sub(accepted);
                first_offer = false;
            }
            unassigned = unassigned.saturating_sub(accepted).componentwise_max(none);
        }
    }
    seen_by_caller
}

/// Each heap member's share (`resetCapacity`), per resource type: an equal share when
/// guarantees are ignored, when the heap's guarantees of that type sum to nothing or its
/// absolute capacities do; a share of the absolute capacities when one member's guarantee of
/// that type rounds to nothing though its capacity does not; else a share of the guarantees.
fn normalise(snap: &mut Snapshot, calc: &Calc, p: PartitionId, heap: &[QueueId], uniform: bool) {
    let even = (1.0f32 / heap.len() as f32) as f64;
    if uniform {
        for &q in heap {
            snap.q_mut(p, q).normalized[..calc.types].fill(even);
        }
        return;
    }
    let total = heap.iter().fold(Resource::none(), |acc, &q| acc.saturating_add(snap.q(p, q).guaranteed));
    // f32 sums in heap order, as YARN adds them.
    let total_abs = heap.iter().fold(0.0f32, |acc, &q| acc + snap.q(p, q).abs_capacity);
    for i in 0..calc.types {
        let by_abs = total.get(i) != 0
            && heap.iter().any(|&q| snap.q(p, q).guaranteed.get(i) == 0 && snap.q(p, q).abs_capacity != 0.0);
        let evenly = total_abs == 0.0 || total.get(i) == 0;
        for &q in heap {
            let t = snap.q_mut(p, q);
            if by_abs {
                if total_abs != 0.0 {
                    t.normalized[i] = (t.abs_capacity / total_abs) as f64;
                }
            } else if evenly {
                t.normalized[i] = even;
            } else {
                t.normalized[i] = (t.guaranteed.get(i) as f32 / total.get(i) as f32) as f64;
            }
        }
    }
}

/// What the queue accepts of `avail`: up to its maximum, its used plus pending, and (a leaf,
/// unless balancing) at most max(used, guaranteed).
fn offer(
    snap: &mut Snapshot,
    calc: &Calc,
    p: PartitionId,
    q: QueueId,
    avail: Resource,
    tot: &Resource,
    mode: IdealMode,
) -> Resource {
    let none = Resource::none();
    let t = snap.q(p, q);
    let pending = if mode.considers_reserved { t.pending } else { t.pending_less_reserved };
    let room = t.max.saturating_sub(t.ideal).componentwise_max(none);
    let wanted = t.used.saturating_add(pending).saturating_sub(t.ideal);
    let mut x = room.componentwise_min(calc.min(tot, avail, wanted));
    if t.leaf && !mode.balance {
        let cap = calc.max(tot, calc.max(tot, t.used, t.guaranteed).saturating_sub(t.ideal), none);
        x = calc.min(tot, x, cap);
    }
    let x = x.componentwise_max(none).componentwise_min(avail);
    snap.q_mut(p, q).ideal.add_assign(x);
    x
}

/// Each preemptable leaf's to-obtain per partition: its to-preempt when it uses more than
/// its guarantee × (1 + max_ignored_over_capacity), damped by natural termination.
fn to_obtain(snap: &mut Snapshot, calc: &Calc, mode: IdealMode, knobs: &Knobs) {
    let cluster = snap.cluster;
    for leaf in snap.leaves.clone() {
        if snap.q(PartitionId::DEFAULT, leaf).disabled {
            continue;
        }
        for p in snap.partitions().collect::<Vec<_>>() {
            let t = snap.q(p, leaf);
            let dead_zone = t.guaranteed.multiply_truncate(1.0 + knobs.max_ignored_over_capacity);
            let actually = if calc.gt(&cluster, &t.used, &dead_zone) {
                if mode.natural_termination && calc.gt(&cluster, &t.to_preempt, &Resource::none()) {
                    calc.multiply_and_normalize_up(
                        &t.to_preempt,
                        knobs.natural_termination_factor,
                        &Resource::new(1, 1),
                    )
                } else {
                    t.to_preempt
                }
            } else {
                Resource::none()
            };
            snap.q_mut(p, leaf).actually = actually;
        }
    }
}
