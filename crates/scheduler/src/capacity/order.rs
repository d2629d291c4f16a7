//! The orders the allocation walk reads, kept up to date instead of sorted at each visit
//! (docs/capacity.md, "Speed"). Per parent and partition: the children with
//! pending demand there, by the parent's ordering policy; per leaf and partition: the
//! activated applications with pending demand there, by the leaf's ordering policy. A change
//! of usage or pending re-keys the queues on one leaf-to-root path and the one application.
//! `fairloom.scheduler.ordering=sorted` walks by sorting instead (YARN's way), with the same
//! decisions; the property tests compare the two.

use std::cmp::Reverse;

use fairloom_config::capacity::{AppOrdering, QueueOrdering};

use fairloom_model::Millis;

use super::state::OrderedBy;
use super::CapacityScheduler;
use crate::ids::{AppId, PartitionId, QueueId};

/// One kept order: its owner, partition and members.
pub(crate) type Order<T> = (QueueId, PartitionId, Vec<T>);

/// A float as an integer that orders the same way (`total_cmp`).
fn ordered(x: f32) -> u32 {
    let b = x.to_bits();
    if b >> 31 == 1 {
        !b
    } else {
        b | 0x8000_0000
    }
}

fn ordered64(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 0x8000_0000_0000_0000
    }
}

/// A child's place among its siblings (PriorityUtilizationQueueOrderingPolicy): with a
/// capacity before without, under its guarantee before over (priority-utilization only),
/// higher priority first, less used capacity first, larger absolute capacity first,
/// configuration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChildKey {
    zero_capacity: bool,
    over: bool,
    priority: Reverse<i32>,
    used: u32,
    capacity: Reverse<u32>,
    index: u32,
    pub id: QueueId,
}

/// An application's place in its leaf: fifo by priority then submission; fair
/// (FairOrderingPolicy) by usage as of its last re-sort (see [`OrderedBy`]), then start time,
/// then those with some demand before those with none, then submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct AppKey {
    major: u64,
    start: Millis,
    no_demand: bool,
    submission: u32,
    pub app: AppId,
}

impl CapacityScheduler {
    fn child_key(&self, q: QueueId, p: PartitionId, index: usize) -> ChildKey {
        let queue = &self.queues[q];
        let by_priority = queue
            .parent
            .is_some_and(|parent| self.queues[parent].settings.queue_ordering == QueueOrdering::PriorityUtilization);
        let (zero_capacity, used) = self.ordering_used(q, p);
        ChildKey {
            zero_capacity,
            over: by_priority && used >= 1.0,
            priority: Reverse(if by_priority { queue.settings.priority } else { 0 }),
            used: ordered(used),
            capacity: Reverse(ordered(queue.parts[p.index()].abs_capacity)),
            index: index as u32,
            id: q,
        }
    }

    /// The app's place in its leaf's order, as the order holds it.
    pub(crate) fn app_key(&self, app: AppId) -> AppKey {
        self.app_key_by(app, self.apps[app].ordered_by)
    }

    /// The app's place once a re-sort due now were done (what the preemption pass, which
    /// re-sorts first, sees).
    pub(crate) fn app_key_resorted(&self, app: AppId) -> AppKey {
        let a = &self.apps[app];
        let by = if a.ordered_by.due { self.ordered_by_now(app) } else { a.ordered_by };
        self.app_key_by(app, by)
    }

    fn app_key_by(&self, app: AppId, by: OrderedBy) -> AppKey {
        let a = &self.apps[app];
        let leaf = a.queue.expect("an ordered app has a queue");
        match self.queues[leaf].settings.app_ordering {
            AppOrdering::Fifo => AppKey {
                major: (i64::from(i32::MAX) - i64::from(a.priority)) as u64,
                start: 0,
                no_demand: false,
                submission: a.yarn_id.id,
                app,
            },
            AppOrdering::Fair { size_based_weight } => {
                let used = by.used_mb as f64;
                let mut magnitude = used;
                if size_based_weight && used != 0.0 {
                    let weight = (by.demand_mb() as f64).ln_1p() / std::f64::consts::LN_2;
                    if weight != 0.0 {
                        magnitude = used / weight;
                    }
                }
                AppKey {
                    major: ordered64(magnitude),
                    start: a.start_time,
                    no_demand: by.demand_mb() == 0,
                    submission: a.yarn_id.id,
                    app,
                }
            }
        }
    }

    /// `updateSchedulingResourceUsage`: the app's usage and pending now.
    fn ordered_by_now(&self, app: AppId) -> OrderedBy {
        let a = &self.apps[app];
        OrderedBy { used_mb: a.usage.memory(), pending_mb: a.total_pending().memory(), due: false }
    }

    /// `containerAllocated`, `containerReleased` (and `demandUpdated` with size-based
    /// weight): an activated app of a fair-ordered leaf is re-sorted at the leaf's next pass.
    pub(crate) fn resort_due(&mut self, app: AppId) {
        let a = &self.apps[app];
        let Some(leaf) = a.queue else { return };
        if !a.activated || a.ordered_by.due {
            return;
        }
        if !matches!(self.queues[leaf].settings.app_ordering, AppOrdering::Fair { .. }) {
            return;
        }
        self.apps[app].ordered_by.due = true;
        self.queues[leaf].reorder.push(app);
    }

    /// `reorderScheduleEntities`, at the start of the leaf's assignment or preemption pass:
    /// the due apps take their usage and pending now and their new places.
    pub(crate) fn resort(&mut self, leaf: QueueId) {
        if self.queues[leaf].reorder.is_empty() {
            return;
        }
        for app in std::mem::take(&mut self.queues[leaf].reorder) {
            let a = &self.apps[app];
            if a.id != app || !a.ordered_by.due || a.queue != Some(leaf) {
                continue;
            }
            self.apps[app].ordered_by = self.ordered_by_now(app);
            self.refresh_app_keys(app);
        }
    }

    /// The app leaves its leaf's ordering policy (finished, moved): a re-sort due goes with it.
    pub(crate) fn forget_resort(&mut self, app: AppId) {
        self.apps[app].ordered_by.due = false;
    }

    /// A refresh gives every leaf a new ordering policy, which knows nothing of the re-sorts
    /// the old one had due (`setOrderingPolicy` copies the applications, not the list).
    /// (The queues may be new objects already, their lists empty: the apps are cleared
    /// directly.)
    pub(crate) fn forget_all_resorts(&mut self) {
        for q in &mut self.queues {
            q.reorder.clear();
        }
        for a in &mut self.apps {
            a.ordered_by.due = false;
        }
    }

    /// Whether `q` belongs in its parent's kept order for partition `p`: a leaf that has
    /// something pending there, a parent with such a child. A held leaf stays in: the walk
    /// must still reach it where sorting would, to publish its limit (see `assign_leaf`).
    pub(crate) fn is_member(&self, q: QueueId, p: PartitionId) -> bool {
        let queue = &self.queues[q];
        if queue.leaf {
            self.wants(q, p, true)
        } else {
            queue.parts[p.index()].accessible && !queue.parts[p.index()].members.is_empty()
        }
    }

    /// Put `q` where it belongs in its parent's order for partition `p` (or take it out).
    pub(crate) fn refresh_queue_key(&mut self, q: QueueId, p: PartitionId) {
        let Some(parent) = self.queues[q].parent else { return };
        let old = self.queues[q].parts[p.index()].key.take();
        if let Some(k) = old {
            let pp = &mut self.queues[parent].parts[p.index()];
            pp.members.remove(&k);
            pp.reserving.remove(&k);
        }
        if self.is_member(q, p) {
            let k = self.child_key(q, p, self.queues[q].index_in_parent as usize);
            let reserving = self.may_unreserve(q, p);
            let pp = &mut self.queues[parent].parts[p.index()];
            pp.members.insert(k);
            if reserving {
                pp.reserving.insert(k);
            }
            self.queues[q].parts[p.index()].key = Some(k);
        }
    }

    /// Whether `q` could pass its queue check over its limit by giving back a reservation
    /// (continue-looking reads default-partition reservations in every partition): a leaf
    /// checks its first application in `p`'s order, the one it tries first; a parent
    /// whatever is reserved under it.
    pub(crate) fn may_unreserve(&self, q: QueueId, p: PartitionId) -> bool {
        let queue = &self.queues[q];
        if queue.leaf {
            queue.parts[p.index()].apps.first().is_some_and(|k| self.current_reservation(k.app).memory() > 0)
        } else {
            queue.parts[PartitionId::DEFAULT.index()].reserved.memory() > 0
        }
    }

    /// Re-key every queue on the path from `leaf` up (after its usage or pending changed).
    pub(crate) fn refresh_path(&mut self, leaf: QueueId, p: PartitionId) {
        let mut q = Some(leaf);
        while let Some(id) = q {
            self.refresh_queue_key(id, p);
            q = self.queues[id].parent;
        }
    }

    /// Put `app` where it belongs in its leaf's order in every partition.
    pub(crate) fn refresh_app_keys(&mut self, app: AppId) {
        let Some(leaf) = self.apps[app].queue else { return };
        let ordered = self.apps[app].activated && self.apps[app].is_alive();
        let key = ordered.then(|| self.app_key(app));
        for p in 0..self.nparts() {
            let head_was = self.may_unreserve(leaf, PartitionId(p as u32));
            let old = self.apps[app].keys[p].take();
            if let Some(k) = old {
                self.queues[leaf].parts[p].apps.remove(&k);
            }
            if let Some(k) = key.filter(|_| self.apps[app].pending[p].any_positive()) {
                self.queues[leaf].parts[p].apps.insert(k);
                self.apps[app].keys[p] = Some(k);
                if old.is_none() {
                    // A newcomer may be free of the limit that holds the others.
                    self.unhold(leaf, PartitionId(p as u32));
                }
            }
            // A new first application may change whether the leaf can unreserve.
            if self.may_unreserve(leaf, PartitionId(p as u32)) != head_was {
                self.refresh_path(leaf, PartitionId(p as u32));
            }
        }
    }

    /// The leaf's user limit may have changed (or an app joined): it is computed again at
    /// the next visit, and a leaf that was held has its applications tried again.
    pub(crate) fn unhold(&mut self, leaf: QueueId, p: PartitionId) {
        self.queues[leaf].parts[p.index()].forget_user_limit();
    }

    /// What the hold on `leaf` in `p` rested on changed, its user limit did not: the leaf's
    /// applications are tried again, the limit stays cached.
    pub(crate) fn release_hold(&mut self, leaf: QueueId, p: PartitionId) {
        self.queues[leaf].parts[p.index()].all_users_held = false;
    }

    /// The last walk found every app of `leaf` held by its user limit: later walks pass
    /// its applications by until something could free one.
    pub(crate) fn hold(&mut self, leaf: QueueId, p: PartitionId) {
        self.queues[leaf].parts[p.index()].all_users_held = true;
    }

    /// Take `app` out of every order (it leaves its leaf).
    pub(crate) fn detach_app_keys(&mut self, app: AppId, leaf: QueueId) {
        for p in 0..self.nparts() {
            if let Some(k) = self.apps[app].keys[p].take() {
                self.queues[leaf].parts[p].apps.remove(&k);
            }
        }
    }

    /// Rebuild every order (the tree, the capacities or the cluster changed); cached user
    /// limits, which follow the same changes, go too.
    pub(crate) fn rebuild_order(&mut self) {
        for q in &mut self.queues {
            for part in &mut q.parts {
                part.members.clear();
                part.reserving.clear();
                part.apps.clear();
                part.key = None;
                part.forget_user_limit();
            }
        }
        for a in &mut self.apps {
            a.keys = vec![None; a.pending.len()];
        }
        for i in 0..self.apps.len() {
            if !self.apps[i].forgotten {
                self.refresh_app_keys(self.apps[i].id);
            }
        }
        // Children before parents: a parent's membership follows from its children's.
        for i in (0..self.queues.len()).rev() {
            for p in 0..self.nparts() {
                self.refresh_queue_key(QueueId(i as u32), PartitionId(p as u32));
            }
        }
    }

    /// The child after `after` (or the first) in `parent`'s order for partition `p`.
    pub(crate) fn next_child(&self, parent: QueueId, p: PartitionId, after: Option<&ChildKey>) -> Option<ChildKey> {
        let set = &self.queues[parent].parts[p.index()].members;
        match after {
            None => set.first().copied(),
            Some(k) => set.range((std::ops::Bound::Excluded(*k), std::ops::Bound::Unbounded)).next().copied(),
        }
    }

    /// The reserving child after `after` (or the first) in `parent`'s order for partition `p`.
    pub(crate) fn next_reserving_child(
        &self,
        parent: QueueId,
        p: PartitionId,
        after: Option<&ChildKey>,
    ) -> Option<ChildKey> {
        let set = &self.queues[parent].parts[p.index()].reserving;
        match after {
            None => set.first().copied(),
            Some(k) => set.range((std::ops::Bound::Excluded(*k), std::ops::Bound::Unbounded)).next().copied(),
        }
    }

    /// The application after `after` (or the first) in `leaf`'s order for partition `p`.
    pub(crate) fn next_app(&self, leaf: QueueId, p: PartitionId, after: Option<&AppKey>) -> Option<AppKey> {
        let set = &self.queues[leaf].parts[p.index()].apps;
        match after {
            None => set.first().copied(),
            Some(k) => set.range((std::ops::Bound::Excluded(*k), std::ops::Bound::Unbounded)).next().copied(),
        }
    }

    /// Every order as a fresh sort would give it: (parent, partition, children) and
    /// (leaf, partition, apps). The auditor compares these with the kept orders.
    pub(crate) fn fresh_orders(&self) -> (Vec<Order<QueueId>>, Vec<Order<AppId>>) {
        let mut children = Vec::new();
        let mut apps = Vec::new();
        for (id, q) in self.queues() {
            for p in self.partitions() {
                if q.leaf {
                    apps.push((id, p, self.sorted_apps(id, p)));
                } else {
                    let members: Vec<QueueId> =
                        self.sorted_children(id, p, true).into_iter().filter(|&c| self.fresh_member(c, p)).collect();
                    children.push((id, p, members));
                }
            }
        }
        (children, apps)
    }

    /// [`Self::is_member`] recomputed down the subtree (for the auditor).
    fn fresh_member(&self, q: QueueId, p: PartitionId) -> bool {
        let queue = &self.queues[q];
        if queue.leaf {
            self.wants(q, p, true)
        } else {
            queue.parts[p.index()].accessible && queue.children.iter().any(|&c| self.fresh_member(c, p))
        }
    }
}
