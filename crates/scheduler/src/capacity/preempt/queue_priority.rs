//! The queue-priority selector (`QueuePriorityContainerCandidateSelector`, YARN ≥ 2.9, on
//! with `…priority-utilization.underutilized-preemption.enabled`): a reservation held long
//! enough (`reserved-container-delay-ms`) by a leaf that is not yet at its guarantee may
//! take, on the reserved node, the non-AM containers of leaves of lower priority until it
//! fits, whether or not those leaves are over their own guarantee. Priority between two
//! leaves is that of their branches under their lowest common ancestor (queue `priority`,
//! read where the parent orders by priority-utilization). It runs first in a round.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use fairloom_model::{Millis, Resource};

use super::fifo::Taker;
use super::snapshot::{Candidate, Snapshot};
use crate::capacity::CapacityScheduler;
use crate::ids::{NodeId, PartitionId, QueueId};

/// Which leaves outrank which: each leaf's path from root with the relative priority of
/// every queue on it.
struct Priorities {
    paths: BTreeMap<QueueId, Vec<(QueueId, i32)>>,
}

impl Priorities {
    fn new(snap: &Snapshot) -> Self {
        let path = |leaf: QueueId| {
            let mut out = Vec::new();
            let mut q = Some(leaf);
            while let Some(id) = q {
                let t = snap.q(PartitionId::DEFAULT, id);
                out.push((id, t.relative_priority));
                q = t.parent;
            }
            out.reverse();
            out
        };
        Self { paths: snap.leaves.iter().map(|&l| (l, path(l))).collect() }
    }

    /// Whether leaf `a` may preempt leaf `b`: below their lowest common ancestor, `a`'s
    /// branch has the higher priority.
    fn outranks(&self, a: QueueId, b: QueueId) -> bool {
        let (Some(pa), Some(pb)) = (self.paths.get(&a), self.paths.get(&b)) else { return false };
        let split = pa.iter().zip(pb).position(|(x, y)| x.0 != y.0);
        match split {
            Some(i) => pa[i].1 > pb[i].1,
            None => false,
        }
    }

    /// YARN's digraph has an edge out of `a`.
    fn outranks_any(&self, a: QueueId) -> bool {
        self.paths.keys().any(|&b| self.outranks(a, b))
    }

    /// `CONTAINER_CREATION_TIME_COMPARATOR`: a container of a queue that outranks the
    /// other's first, else the older first.
    fn compare(&self, (qa, ta): (QueueId, u64), (qb, tb): (QueueId, u64)) -> Ordering {
        if self.outranks(qa, qb) {
            Ordering::Less
        } else if self.outranks(qb, qa) {
            Ordering::Greater
        } else {
            ta.cmp(&tb)
        }
    }
}

/// A stable merge sort that accepts a comparator which is not a total order (YARN's mixes
/// queue rank, which is not transitive across branches, with time): deterministic, and it
/// never panics, where the standard sort may on such a comparator.
fn merge_sort<T: Clone>(v: &mut Vec<T>, cmp: &impl Fn(&T, &T) -> Ordering) {
    if v.len() <= 1 {
        return;
    }
    let mut right = v.split_off(v.len() / 2);
    merge_sort(v, cmp);
    merge_sort(&mut right, cmp);
    let left = std::mem::take(v);
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        if cmp(&right[j], &left[i]) == Ordering::Less {
            v.push(right[j].clone());
            j += 1;
        } else {
            v.push(left[i].clone());
            i += 1;
        }
    }
    v.extend_from_slice(&left[i..]);
    v.extend_from_slice(&right[j..]);
}

/// A reservation the selector may act for.
#[derive(Clone)]
struct Held {
    node: NodeId,
    leaf: QueueId,
    resource: Resource,
    since: Millis,
}

pub fn select(s: &CapacityScheduler, snap: &Snapshot, taker: &mut Taker<'_>, selector: usize, now: Millis) {
    let ranks = Priorities::new(snap);
    let mut held: Vec<Held> = s
        .cluster
        .nodes()
        .filter_map(|(node, n)| {
            let r = n.reservation?;
            let app = &s.apps[r.app];
            let leaf = app.queue?;
            let since = app.reservations.iter().find(|h| h.node == node).map_or(now, |h| h.since);
            Some(Held { node, leaf, resource: r.resource, since })
        })
        .filter(|h| ranks.outranks_any(h.leaf))
        .collect();
    if held.is_empty() {
        return;
    }
    merge_sort(&mut held, &|a: &Held, b: &Held| {
        // Ties in registration order (node slots are reused; their order is not the nodes').
        let seq = |h: &Held| s.cluster.node(h.node).seq;
        ranks.compare((a.leaf, a.since as u64), (b.leaf, b.since as u64)).then(seq(a).cmp(&seq(b)))
    });
    let mut running: BTreeMap<NodeId, Vec<(Candidate, QueueId)>> = held.iter().map(|h| (h.node, Vec::new())).collect();
    for &leaf in &snap.leaves {
        for app in &snap.apps[leaf].apps {
            for c in &app.containers {
                if let Some(list) = running.get_mut(&c.node) {
                    list.push((*c, leaf));
                }
            }
        }
    }
    let delay = s.policy.underutilized_reserved_container_delay_ms;
    let mut touched: BTreeSet<NodeId> = BTreeSet::new();
    let mut promised: BTreeMap<(QueueId, PartitionId), Resource> = BTreeMap::new();
    for h in held {
        if now.saturating_sub(h.since) < delay {
            continue;
        }
        let partition = s.cluster.node(h.node).partition;
        if satisfied(snap, taker, h.leaf, partition, &promised) || touched.contains(&h.node) {
            continue;
        }
        let list = running.get_mut(&h.node).expect("every reserved node has a list");
        merge_sort(list, &|a: &(Candidate, QueueId), b: &(Candidate, QueueId)| {
            ranks.compare((a.1, a.0.born), (b.1, b.0.born))
        });
        let Some(taken) = make_room(s, taker, &ranks, &h, list) else { continue };
        touched.insert(h.node);
        promised.entry((h.leaf, partition)).or_default().add_assign(h.resource);
        for (c, queue) in taken {
            taker.selection.add(c, queue, selector);
            taker.budget.sub_assign(c.resource);
        }
    }
}

/// `isQueueSatisfied`: used less reserved, plus what this selector already took for it, is
/// at least its guarantee.
fn satisfied(
    snap: &Snapshot,
    taker: &Taker<'_>,
    leaf: QueueId,
    p: PartitionId,
    promised: &BTreeMap<(QueueId, PartitionId), Resource>,
) -> bool {
    let t = snap.q(p, leaf);
    let have = t.used.saturating_sub(t.reserved).saturating_add(promised.get(&(leaf, p)).copied().unwrap_or_default());
    taker.calc.ge(&snap.cluster, &have, &t.guaranteed)
}

/// `canPreemptEnoughResourceForAsked`: what the node lacks for the reservation, less what
/// is already selected there; then containers of outranked leaves (no AMs) within the
/// round's budget until it fits. `None` when it cannot fit; `Some(vec![])` when what is
/// already selected suffices.
fn make_room(
    s: &CapacityScheduler,
    taker: &Taker<'_>,
    ranks: &Priorities,
    h: &Held,
    running: &[(Candidate, QueueId)],
) -> Option<Vec<(Candidate, QueueId)>> {
    let calc = taker.calc;
    let n = s.cluster.node(h.node);
    let mut lacking = h.resource.saturating_sub(n.total.saturating_sub(n.allocated));
    for (c, _) in running {
        if taker.selection.contains(c) {
            lacking.sub_assign(c.resource);
        }
    }
    let none = Resource::none();
    if calc.fits_in(&lacking, &none) {
        return Some(Vec::new());
    }
    let mut allowed = *taker.budget;
    let mut taken = Vec::new();
    for &(c, queue) in running {
        if taker.selection.contains(&c) || !ranks.outranks(h.leaf, queue) || c.is_am {
            continue;
        }
        if calc.ge(&taker.cluster, &allowed, &c.resource) {
            allowed.sub_assign(c.resource);
            lacking.sub_assign(c.resource);
            taken.push((c, queue));
        }
        if calc.fits_in(&lacking, &none) {
            return Some(taken);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_sort_is_stable_and_survives_an_inconsistent_order() {
        let mut v: Vec<(u8, u8)> = vec![(2, 0), (1, 0), (2, 1), (1, 1), (0, 0)];
        merge_sort(&mut v, &|a, b| a.0.cmp(&b.0));
        assert_eq!(v, vec![(0, 0), (1, 0), (1, 1), (2, 0), (2, 1)]);
        // Rock-paper-scissors: no total order, still a permutation, no panic.
        let mut w: Vec<u8> = (0..30).map(|i| i % 3).collect();
        merge_sort(&mut w, &|a, b| if (a + 1) % 3 == *b { Ordering::Less } else { Ordering::Greater });
        assert_eq!(w.len(), 30);
        assert_eq!(w.iter().filter(|&&x| x == 0).count(), 10);
    }
}
