//! Choosing containers (docs/capacity.md, "Proportional preemption"): the FIFO selector takes, per preemptable leaf,
//! ignore-exclusivity containers first, then applications in reverse ordering-policy order
//! (their reservations, then live containers by priority and age, AM containers set
//! aside), then the set-aside AM containers while the queue keeps more AM resource than
//! its AM limit. The same selector, after queues are satisfied, balances them.

use std::collections::BTreeMap;

use fairloom_model::Resource;

use super::snapshot::{Candidate, Snapshot};
use super::Selection;
use crate::capacity::calc::Calc;
use crate::ids::{PartitionId, QueueId};

/// What a selector may still take, per partition of one leaf.
pub type Need = BTreeMap<PartitionId, Resource>;

/// The preemption rules shared by the selectors.
pub struct Taker<'a> {
    pub calc: &'a Calc,
    pub cluster: Resource,
    /// The round's budget, shared by every selector.
    pub budget: &'a mut Resource,
    pub selection: &'a mut Selection,
    /// Stop at the first type of the need at or below zero (else: any positive
    /// contribution is enough).
    pub conservative: bool,
}

impl Taker<'_> {
    /// `tryPreemptContainerAndDeductResToObtain`.
    pub fn try_take(&mut self, c: &Candidate, need: &mut Need, queue: QueueId, selector: usize) -> bool {
        if self.selection.contains(c) {
            return false;
        }
        let Some(n) = need.get_mut(&c.partition) else { return false };
        for i in 0..self.calc.types {
            if n.get(i) == 0 {
                n.set(i, -1);
            }
        }
        if !self.calc.any_above_zero(n) || !self.calc.fits_in(&c.resource, self.budget) {
            return false;
        }
        let take = if self.conservative {
            !zero_or_negative(self.calc, n)
        } else {
            let none = Resource::none();
            let after = n.saturating_sub(c.resource).componentwise_max(none);
            self.calc.lt(&self.cluster, &after, &n.componentwise_max(none))
        };
        if !take {
            return false;
        }
        n.sub_assign(c.resource);
        self.budget.sub_assign(c.resource);
        if self.calc.le(&self.cluster, n, &Resource::none()) {
            need.remove(&c.partition);
        }
        self.selection.add(*c, queue, selector);
        true
    }
}

/// `isAnyMajorResourceZeroOrNegative`.
pub fn zero_or_negative(calc: &Calc, r: &Resource) -> bool {
    if calc.is_dominant() {
        (0..calc.types).any(|i| r.get(i) <= 0)
    } else {
        r.memory() <= 0
    }
}

/// Deduct what earlier selectors took from each queue's to-obtain (strictly larger only,
/// as YARN's `deductActuallyToBePreempted`).
pub fn deduct_selected(snap: &mut Snapshot, calc: &Calc, selection: &Selection) {
    for s in &selection.picked {
        let t = snap.q_mut(s.candidate.partition, s.queue);
        let total = t.total_partition;
        if calc.gt(&total, &t.actually, &s.candidate.resource) {
            t.actually.sub_assign(s.candidate.resource);
        }
        t.actually = calc.max(&total, t.actually, Resource::none());
    }
}

/// A leaf's to-obtain per partition, where positive.
pub fn leaf_need(snap: &Snapshot, calc: &Calc, leaf: QueueId) -> Need {
    snap.partitions()
        .filter_map(|p| {
            let t = snap.q(p, leaf);
            (!t.disabled && calc.gt(&snap.cluster, &t.actually, &Resource::none())).then_some((p, t.actually))
        })
        .collect()
}

/// Live containers in the order the selectors take them: lowest YARN priority (largest
/// number) first, then the newest.
pub fn preemption_order(containers: &mut [Candidate]) {
    containers.sort_by(|a, b| b.priority.cmp(&a.priority).then(b.app.cmp(&a.app)).then(b.seq.cmp(&a.seq)));
}

/// Run the FIFO selector over every preemptable leaf. Reservations it visits are returned
/// to be dropped.
pub fn select(snap: &mut Snapshot, taker: &mut Taker<'_>, selector: usize, drops: &mut Vec<Candidate>) {
    deduct_selected(snap, taker.calc, taker.selection);
    for leaf in snap.leaves.clone() {
        if snap.q(PartitionId::DEFAULT, leaf).disabled {
            continue;
        }
        let mut need = leaf_need(snap, taker.calc, leaf);
        let apps: Vec<_> = snap.apps[leaf].activated().cloned().collect();
        // Containers placed on a lent (non-exclusive) partition go first, newest app first.
        for &p in need.clone().keys() {
            let mut lent: Vec<Candidate> = apps
                .iter()
                .flat_map(|a| a.containers.iter())
                .filter(|c| c.partition == p && p != PartitionId::DEFAULT && c.label == PartitionId::DEFAULT)
                .copied()
                .collect();
            lent.sort_by(|a, b| b.app.cmp(&a.app).then(b.seq.cmp(&a.seq)));
            for c in &lent {
                taker.try_take(c, &mut need, leaf, selector);
            }
        }
        let mut skipped_ams: Vec<Candidate> = Vec::new();
        let mut skipped_am_size = Resource::none();
        'apps: for app in apps.iter().rev() {
            if need.is_empty() {
                break;
            }
            for r in &app.reservations {
                if taker.selection.contains(r) {
                    continue;
                }
                if need.is_empty() {
                    break 'apps;
                }
                taker.try_take(r, &mut need, leaf, selector);
                drops.push(*r);
            }
            let mut live = app.containers.clone();
            preemption_order(&mut live);
            for c in &live {
                if need.is_empty() {
                    break 'apps;
                }
                if taker.selection.contains(c) {
                    continue;
                }
                if c.is_am {
                    skipped_ams.push(*c);
                    skipped_am_size.add_assign(c.resource);
                    continue;
                }
                taker.try_take(c, &mut need, leaf, selector);
            }
        }
        // The AM resource the queue keeps: cluster × absolute capacity × AM percent.
        let default = snap.q(PartitionId::DEFAULT, leaf);
        let max_am = taker
            .cluster
            .multiply_truncate(default.abs_capacity as f64)
            .multiply_truncate(default.max_am_percent as f64);
        for c in &skipped_ams {
            if need.is_empty() || taker.calc.le(&taker.cluster, &skipped_am_size, &max_am) {
                break;
            }
            if taker.try_take(c, &mut need, leaf, selector) {
                skipped_am_size.sub_assign(c.resource);
            }
        }
    }
}
