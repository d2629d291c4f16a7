//! The periodic update: demand, then instantaneous fair shares top-down (and steady shares
//! whenever the cluster or the tree changes).

use fairloom_model::{Millis, Resource, MEMORY};

use super::fair_share::{compute_shares_into, ShareInput};
use super::policy::PolicyKind;
use super::tree::ROOT;
use super::FairScheduler;
use crate::ids::{AppId, QueueId};

impl FairScheduler {
    /// YARN's update thread, once: tidy the tree, recompute demand and fair shares, then
    /// starvation and preemption (identify, mark, and kill what has waited long enough).
    pub(crate) fn update(&mut self, now: Millis) {
        self.update_with(now, None);
    }

    /// The update, with preemption recording into `plan` instead of acting when one is given.
    pub(crate) fn update_with(&mut self, now: Millis, plan: Option<&mut super::preempt::PreemptionPlan>) {
        self.counters.updates += 1;
        self.tidy_queues();
        let moved = self.refresh_demand();
        // Size-based weights follow demand.
        let weights_moved = self.props.size_based_weight && moved.as_ref().is_none_or(|m| !m.is_empty());
        if self.shares_stale || weights_moved || self.q(ROOT).fair_share != self.cluster.total {
            self.shares_stale = false;
            self.q_mut(ROOT).fair_share = self.cluster.total;
            self.recompute_shares(ROOT);
        }
        // Demand (and, with size-based weight, app weights) changed: re-place what moved.
        match moved {
            Some(apps) => {
                // Apps first, then each touched leaf's path once (many moved apps share one).
                let mut leaves: Vec<QueueId> = apps.into_iter().filter_map(|a| self.rekey_app(a)).collect();
                leaves.sort_unstable();
                leaves.dedup();
                for leaf in leaves {
                    self.refresh_path(leaf);
                }
            }
            None => self.refresh_all_keys(),
        }
        self.refresh_root_metrics();
        self.preempt_with(now, plan);
    }

    /// Note that `app`'s usage or pending changed: its demand is taken again at the next update.
    #[inline]
    pub(crate) fn touch_demand(&mut self, app: AppId) {
        let a = &mut self.apps[app];
        if !a.demand_dirty {
            a.demand_dirty = true;
            self.demand_dirty_apps.push(app);
        }
    }

    /// Demand as YARN's `updateDemand` leaves it: each app's usage plus pending, summed up the
    /// tree and capped by max shares. Only apps touched since the last update are looked at,
    /// each moving its own path; the whole tree is summed again after a structural change.
    /// Returns the apps whose demand moved, or `None` when every key may have.
    fn refresh_demand(&mut self) -> Option<Vec<AppId>> {
        let dirty = std::mem::take(&mut self.demand_dirty_apps);
        for &a in &dirty {
            self.apps[a].demand_dirty = false;
        }
        if !self.demand_full {
            let mut moved = Vec::new();
            let mut exact = true;
            for &a in &dirty {
                let app = &self.apps[a];
                let (place, value) = match app.queue {
                    Some(q) if app.is_alive() => (Some(q), app.current_demand()),
                    _ => (None, Resource::none()),
                };
                let (was_in, was) = (app.demand_counted_in, app.demand_counted);
                if place == was_in && value == was {
                    continue;
                }
                if app.is_alive() {
                    self.apps[a].demand = value;
                }
                if let Some(q) = was_in {
                    exact &= self.shift_demand(q, was, Resource::none());
                }
                if let Some(q) = place {
                    exact &= self.shift_demand(q, Resource::none(), value);
                }
                let app = &mut self.apps[a];
                app.demand_counted_in = place;
                app.demand_counted = value;
                moved.push(a);
            }
            if exact {
                return Some(moved);
            }
        }
        self.demand_full = false;
        for app in self.apps.iter_mut() {
            app.demand_counted_in = None;
            app.demand_counted = Resource::none();
        }
        self.update_demand(ROOT);
        None
    }

    /// Move `leaf`'s demand from `old` to `new` (one app's share of it) and pass the change of
    /// each capped demand up. False when a sum saturated: only a full pass is exact then.
    fn shift_demand(&mut self, leaf: QueueId, old: Resource, new: Resource) -> bool {
        let (mut id, mut old, mut new) = (leaf, old, new);
        loop {
            let max = self.max_share(id);
            let q = self.q_mut(id);
            let sum = q.demand_sum.saturating_sub(old).saturating_add(new);
            if sum.to_array().iter().any(|&x| x == i64::MAX || x < 0) {
                return false;
            }
            q.demand_sum = sum;
            let capped = parent_reads(q.leaf, sum.componentwise_min(max));
            if capped == q.demand {
                return true;
            }
            (old, new) = (q.demand, capped);
            q.demand = capped;
            match q.parent {
                Some(p) => id = p,
                None => return true,
            }
        }
    }

    fn update_demand(&mut self, id: QueueId) -> Resource {
        let mut demand = Resource::none();
        if self.q(id).leaf {
            let apps: Vec<AppId> =
                self.q(id).runnable_apps.iter().chain(&self.q(id).non_runnable_apps).copied().collect();
            for a in apps {
                let app = &mut self.apps[a];
                app.demand = app.current_demand();
                app.demand_counted = app.demand;
                app.demand_counted_in = Some(id);
                demand.add_assign(app.demand);
            }
        } else {
            for c in self.q(id).children.clone() {
                demand.add_assign(self.update_demand(c));
            }
        }
        let capped = parent_reads(self.q(id).leaf, demand.componentwise_min(self.max_share(id)));
        let q = self.q_mut(id);
        q.demand_sum = demand;
        q.demand = capped;
        capped
    }

    /// The resource types a parent's policy computes shares for: fair only memory (other
    /// types keep whatever they held), drf every type.
    fn share_types(&self, policy: PolicyKind) -> std::ops::Range<usize> {
        match policy {
            PolicyKind::Drf => 0..self.types,
            PolicyKind::Fair | PolicyKind::Fifo => MEMORY..MEMORY + 1,
        }
    }

    /// Forget what the last update kept, so the next one recomputes every demand and share (a
    /// check that the incremental paths change nothing).
    pub fn clear_caches(&mut self) {
        self.demand_full = true;
        self.shares_stale = true;
        for q in self.queues.slots_mut() {
            q.share_signature.clear();
        }
    }

    /// Everything the instantaneous split of `id`'s share reads: the same signature means the
    /// same result, so the split can be skipped.
    fn share_signature(&self, id: QueueId) -> Vec<u64> {
        let q = self.q(id);
        let mut sig = vec![q.policy as u64];
        sig.extend(q.fair_share.to_array().iter().map(|&x| x as u64));
        if q.leaf {
            for &a in &q.runnable_apps {
                sig.push(u64::from(a.seq));
                sig.push(self.app_weight(a).to_bits() as u64);
                sig.push(self.apps[a].start_time as u64);
            }
        } else {
            for &c in &q.children {
                let child = self.q(c);
                sig.push(c.0 as u64);
                sig.push(child.settings.weight.to_bits() as u64);
                sig.push(u64::from(child.is_active()));
                sig.extend(child.settings.min_share.to_array().iter().map(|&x| x as u64));
                sig.extend(child.max_share.to_array().iter().map(|&x| x as u64));
            }
        }
        sig
    }

    fn recompute_shares(&mut self, id: QueueId) {
        let total = self.q(id).fair_share;
        let policy = self.q(id).policy;
        let sig = self.share_signature(id);
        if sig == self.q(id).share_signature {
            // Nothing the split reads has changed: the shares below are as they were.
            if !self.q(id).leaf {
                for c in self.q(id).children.clone() {
                    self.recompute_shares(c);
                }
            }
            return;
        }
        self.q_mut(id).share_signature = sig;
        if self.q(id).leaf {
            let apps = self.q(id).runnable_apps.clone();
            if apps.is_empty() {
                return;
            }
            if policy == PolicyKind::Fifo {
                // The earliest app gets the leaf's whole share; the others keep theirs.
                let earliest = apps.iter().copied().reduce(|best, a| {
                    if self.apps[a].start_time < self.apps[best].start_time {
                        a
                    } else {
                        best
                    }
                });
                if let Some(e) = earliest {
                    self.apps[e].fair_share = total;
                }
                return;
            }
            let weights: Vec<f32> = apps.iter().map(|&a| self.app_weight(a)).collect();
            let mut out = vec![0; apps.len()];
            for t in self.share_types(policy) {
                let inputs: Vec<ShareInput> = weights
                    .iter()
                    .map(|&w| ShareInput { weight: w, min_share: 0, max_share: i64::MAX, active: true })
                    .collect();
                compute_shares_into(&inputs, total.get(t), false, &mut out);
                for (a, share) in apps.iter().zip(&out) {
                    self.apps[*a].fair_share.set(t, *share);
                }
            }
            return;
        }
        let children = self.q(id).children.clone();
        self.split_among_children(&children, total, policy, false);
        for c in children {
            self.recompute_shares(c);
        }
    }

    fn split_among_children(&mut self, children: &[QueueId], total: Resource, policy: PolicyKind, steady: bool) {
        if children.is_empty() {
            return;
        }
        let maxes: Vec<Resource> = children.iter().map(|&c| self.max_share(c)).collect();
        let mut out = vec![0; children.len()];
        for t in self.share_types(policy) {
            let inputs: Vec<ShareInput> = children
                .iter()
                .zip(&maxes)
                .map(|(&c, max)| {
                    let q = self.q(c);
                    ShareInput {
                        weight: q.settings.weight,
                        min_share: q.settings.min_share.get(t),
                        max_share: max.get(t),
                        active: q.is_active(),
                    }
                })
                .collect();
            compute_shares_into(&inputs, total.get(t), steady, &mut out);
            for (&c, share) in children.iter().zip(&out) {
                let q = self.q_mut(c);
                if steady {
                    q.steady_fair_share.set(t, *share);
                } else {
                    q.fair_share.set(t, *share);
                }
            }
        }
    }

    /// Steady fair shares: every queue takes part, active or not; apps get none.
    pub(crate) fn recompute_steady_shares(&mut self) {
        self.q_mut(ROOT).steady_fair_share = self.cluster.total;
        self.recompute_steady(ROOT);
    }

    fn recompute_steady(&mut self, id: QueueId) {
        if self.q(id).leaf {
            return;
        }
        let children = self.q(id).children.clone();
        let (total, policy) = (self.q(id).steady_fair_share, self.q(id).policy);
        self.split_among_children(&children, total, policy, true);
        for c in children {
            self.recompute_steady(c);
        }
    }
}

/// A queue's demand as the rest of YARN reads it: a leaf's whole, a parent's memory and vcores
/// only, because `FSParentQueue.getDemand` rebuilds the resource from those two. A parent's
/// custom types therefore count as 0 in its own parent's sum and in what is reported.
fn parent_reads(leaf: bool, demand: Resource) -> Resource {
    if leaf {
        demand
    } else {
        Resource::new(demand.memory(), demand.vcores())
    }
}
