//! Users and AM limits of a leaf: YARN's `UsersManager.computeUserLimit`, the queue's and
//! the user's AM resource limits, application activation (`activateApplications`), and the
//! pending demand the preemption policy reads (`getTotalPendingResourcesConsideringUserLimit`).

use std::collections::BTreeMap;

use fairloom_model::Resource;

use super::CapacityScheduler;
use crate::driver::AppState;
use crate::ids::{AppId, PartitionId, QueueId};
use crate::reason::WaitReason;

impl CapacityScheduler {
    /// Active users of the leaf (YARN's `UsersManager` active users; see `key_starts_asking`).
    pub(crate) fn active_users(&self, leaf: QueueId) -> usize {
        self.q(leaf).active_users as usize
    }

    /// `getNumActiveUsers`: active users, and users whose applications all wait for
    /// activation as last counted (see [`UsersCount`]).
    fn users_for_am_limit(&self, leaf: QueueId) -> usize {
        self.active_users(leaf) + self.q(leaf).users_count.waiting_only as usize
    }

    /// `userLimitNeedsRecompute`: the users' state of `leaf` changed.
    pub(crate) fn users_changed(&mut self, leaf: QueueId) {
        self.queues[leaf].users_count.version += 1;
    }

    /// A user limit of `leaf` is asked for (`getComputedResourceLimitFor{Active,All}Users`):
    /// computed afresh when the users' state changed since the last one for the same
    /// partition, mode and users, and with it the users whose applications all wait are
    /// counted again.
    pub(crate) fn user_limit_asked(&mut self, leaf: QueueId, p: PartitionId, respect: bool, active: bool) {
        let q = &mut self.queues[leaf];
        let at = p.index() * 4 + usize::from(respect) * 2 + usize::from(active);
        if q.users_count.seen.len() <= at {
            q.users_count.seen.resize(at + 1, None);
        }
        if q.users_count.seen[at] == Some(q.users_count.version) {
            return;
        }
        q.users_count.seen[at] = Some(q.users_count.version);
        q.users_count.waiting_only = q.users.iter().filter(|u| u.pending_apps > 0 && u.active_apps == 0).count() as u32;
    }

    /// `computeUserLimitAndSetHeadroom` for `app` in `leaf`: its headroom reads the leaf's user
    /// limit from now on.
    pub(crate) fn set_headroom(&mut self, app: AppId, leaf: QueueId) {
        self.apps[app].headroom_leaf = Some(leaf);
    }

    /// The AM's heartbeat (`allocate`) returns the app's headroom, which asks its leaf's user
    /// limit in each partition it asks in (the default one when none).
    pub(crate) fn headroom_asked(&mut self, app: AppId) {
        let Some(leaf) = self.apps[app].headroom_leaf else { return };
        if self.queues[leaf].removed {
            return;
        }
        let mut parts: Vec<PartitionId> = self.apps[app].requests.iter().map(|r| r.label).collect();
        parts.sort();
        parts.dedup();
        if parts.is_empty() {
            parts.push(PartitionId::DEFAULT);
        }
        for p in parts {
            self.user_limit_asked(leaf, p, true, true);
        }
    }

    /// The user limit in partition `p` (`computeUserLimit`, active users): a share of the
    /// queue's current capacity among the active users by what they use, at least
    /// `minimum-user-limit-percent` of it, at most `user-limit-factor` × the guarantee.
    /// `respect`: RESPECT_PARTITION_EXCLUSIVITY (else the partition is shared, no cap).
    pub fn user_limit(&self, leaf: QueueId, p: PartitionId, respect: bool) -> Resource {
        self.compute_user_limit(leaf, p, respect, true)
    }

    /// [`Self::user_limit`], computed once until the leaf's usage, its active users, the
    /// capacities or the cluster change.
    pub(crate) fn cached_user_limit(&mut self, leaf: QueueId, p: PartitionId, respect: bool) -> Resource {
        let mode = usize::from(respect);
        if let Some(limit) = self.queues[leaf].parts[p.index()].user_limit_cache[mode] {
            return limit;
        }
        let limit = self.user_limit(leaf, p, respect);
        self.queues[leaf].parts[p.index()].user_limit_cache[mode] = Some(limit);
        limit
    }

    /// The user limit over all the queue's users rather than the active ones
    /// (`getResourceLimitForAllUsers`, which intra-queue preemption reads).
    pub fn user_limit_all_users(&self, leaf: QueueId, p: PartitionId) -> Resource {
        self.compute_user_limit(leaf, p, true, false)
    }

    fn compute_user_limit(&self, leaf: QueueId, p: PartitionId, respect: bool, active_only: bool) -> Resource {
        let calc = &self.calc;
        let q = self.q(leaf);
        let part = q.part(p);
        let partition = self.cluster.partitions[p.index()].total;
        let required = self.props.minimum_allocation;
        let original = part.guaranteed;
        let queue_capacity = calc.max(&partition, original, required);
        let usage_ratio = if part.usage_ratio.is_finite() { part.usage_ratio.max(0.0) } else { 0.0 };
        let consumed = calc.multiply_and_normalize_up(&partition, usage_ratio as f64, &required);
        let current_capacity = if calc.lt(&partition, &consumed, &queue_capacity) {
            queue_capacity
        } else {
            consumed.saturating_add(required)
        };
        let (by_weight, used_by) = if active_only {
            (q.active_users as f32, part.active_used.saturating_add(required))
        } else {
            (q.users.present() as f32, current_capacity)
        };
        let percent = q.settings.min_user_limit_percent;
        let limit = calc.max(
            &partition,
            calc.divide_and_ceil(&used_by, by_weight),
            calc.divide_and_ceil(&current_capacity.multiply_truncate(percent as f64), 100.0),
        );
        let factor = q.settings.user_limit_factor;
        let max_user_limit = if !respect {
            partition
        } else if factor == -1.0 || original.is_none() {
            calc.round_down(&part.maximum, &required)
        } else {
            queue_capacity.multiply_truncate(factor as f64)
        };
        calc.round_up(&calc.min(&partition, limit, max_user_limit), &required)
    }

    /// `canAssignToUser`: a user at or below its limit may get a container (YARN checks
    /// `used > limit`, not the request). With reservations that could be given back, the
    /// answer carries how much must be unreserved.
    pub(crate) fn can_assign_to_user(
        &self,
        leaf: QueueId,
        app: AppId,
        limit: &Resource,
        p: PartitionId,
    ) -> (bool, Resource) {
        let a = &self.apps[app];
        let u = self.q(leaf).users.at(a.user_slot);
        let cluster = &self.cluster.total;
        if !self.calc.gt(cluster, &u.used[p.index()], limit) {
            return (true, Resource::none());
        }
        if self.conf.reservations_continue_looking {
            let reserved = self.current_reservation(app);
            if self.calc.le(cluster, &u.used[0].saturating_sub(reserved), limit) {
                return (true, u.used[p.index()].saturating_sub(*limit));
            }
        }
        (false, Resource::none())
    }

    /// The queue's AM limit in partition `p`: `maximum-am-resource-percent` of what the queue
    /// may use (the limit it last published in the default partition when that is at least
    /// its guarantee, else the guarantee), normalised up.
    pub fn am_limit(&self, leaf: QueueId, p: PartitionId) -> Resource {
        let part = self.q(leaf).part(p);
        let step = self.props.minimum_allocation;
        // getEffectiveCapacity: the guarantee as the queue's effective minimum resource.
        let guarantee = part.guaranteed;
        let current = if p == PartitionId::DEFAULT { self.q(leaf).published_limit } else { Resource::none() };
        let usable = if self.calc.fits_in(&guarantee, &current) { current } else { guarantee };
        self.calc.multiply_and_normalize_up(&usable, part.max_am_percent as f64, &step)
    }

    /// `getCurrentReservation`: what the app holds reserved in the default partition, which
    /// continue-looking may give back.
    pub(crate) fn current_reservation(&self, app: AppId) -> Resource {
        self.apps[app].reserved[PartitionId::DEFAULT.index()]
    }

    /// A user's AM limit in partition `p`: the user's share (`minimum-user-limit-percent`, or
    /// one of the users) of the guarantee's AM percent, × `user-limit-factor` (-1: the whole
    /// AM percent), at most the queue's AM limit.
    pub fn user_am_limit(&self, leaf: QueueId, p: PartitionId) -> Resource {
        let q = self.q(leaf);
        let part = q.part(p);
        let step = self.props.minimum_allocation;
        let users = self.users_for_am_limit(leaf).max(1) as f32;
        let effective = (q.settings.min_user_limit_percent / 100.0).max(1.0 / users).min(1.0);
        let guarantee = part.guaranteed;
        // A factor of -1 lifts the user limit: the user may take the queue's whole AM share.
        let factor = if q.settings.user_limit_factor == -1.0 {
            part.max_am_percent
        } else {
            part.max_am_percent * effective * q.settings.user_limit_factor
        };
        let limit = self.calc.multiply_and_normalize_up(&guarantee, factor as f64, &step);
        self.calc.min(&self.cluster.total, limit, self.am_limit(leaf, p))
    }

    /// `activateApplications`: waiting applications, highest priority then oldest first,
    /// become active while their AM fits in the queue's and their user's AM limits (always
    /// the first one, when nothing is active or no AM resource is in use).
    pub(crate) fn activate(&mut self, leaf: QueueId) {
        if !self.calc.positive(&self.cluster.total, &self.cluster.total) {
            for &a in &self.q(leaf).waiting.clone() {
                self.set_wait(a, Some(WaitReason::ClusterEmpty));
            }
            return;
        }
        let mut waiting = self.q(leaf).waiting.clone();
        waiting.sort_by(|&a, &b| {
            let (x, y) = (&self.apps[a], &self.apps[b]);
            y.priority.cmp(&x.priority).then(x.yarn_id.id.cmp(&y.yarn_id.id))
        });
        let mut am_limits: BTreeMap<PartitionId, Resource> = BTreeMap::new();
        let mut user_am_limits: BTreeMap<PartitionId, Resource> = BTreeMap::new();
        let cluster = self.cluster.total;
        for app in waiting {
            let (am, p, user) = {
                let a = &self.apps[app];
                (a.am_resource, a.am_partition, a.user.clone())
            };
            let limit = *am_limits.entry(p).or_insert_with(|| self.am_limit(leaf, p));
            let q = self.q(leaf);
            let am_used = q.part(p).am_used;
            let exempt = q.active.is_empty() || !self.calc.positive(&cluster, &am_used);
            if !exempt && !self.calc.fits_in(&am_used.saturating_add(am), &limit) {
                let queue = q.name.clone();
                self.set_wait(app, Some(WaitReason::QueueAmLimit { queue, am_used, request: am, limit }));
                continue;
            }
            let user_limit = *user_am_limits.entry(p).or_insert_with(|| self.user_am_limit(leaf, p));
            let slot = self.apps[app].user_slot;
            let user_am = self.q(leaf).users.at(slot).am_used[p.index()];
            if !exempt && !self.calc.fits_in(&user_am.saturating_add(am), &user_limit) {
                self.set_wait(
                    app,
                    Some(WaitReason::UserAmLimit { user, am_used: user_am, request: am, limit: user_limit }),
                );
                continue;
            }
            self.make_active(leaf, app);
        }
    }

    fn make_active(&mut self, leaf: QueueId, app: AppId) {
        self.set_wait(app, None);
        let a = &mut self.apps[app];
        let (am, p, slot) = (a.am_resource, a.am_partition, a.user_slot);
        a.activated = true;
        if a.unmanaged_am || a.am_running {
            a.state = AppState::Running;
        }
        let q = self.q_mut(leaf);
        q.waiting.retain(|&x| x != app);
        let u = q.users.at_mut(slot);
        u.pending_apps -= 1;
        u.active_apps += 1;
        u.am_used[p.index()].add_assign(am);
        q.parts[p.index()].am_used.add_assign(am);
        self.insert_active(leaf, app);
        // Its asks (already in the queue path) give it a place in the leaf's order; they do
        // not make its user active (YARN's activateApplications leaves usersApplications
        // alone: see `key_starts_asking`).
        self.refresh_app_keys(app);
        for p in 0..self.nparts() {
            self.refresh_path(leaf, PartitionId(p as u32));
        }
    }

    /// The pending demand of a leaf in partition `p` as the preemption policy sees it: each
    /// activated application's outstanding asks, as far as its user's headroom under the
    /// user limit goes (shared by the user's applications). Both of YARN's views in one pass:
    /// as asked (P), and with each application's reservations taken off its own pending
    /// before its user's headroom caps it (PR, the FIFO selector's view).
    pub fn pending_considering_user_limit(&self, leaf: QueueId, p: PartitionId) -> (Resource, Resource) {
        // Per user: the headroom left for P, and for PR (each view uses it up on its own).
        let mut headroom: BTreeMap<&str, [Resource; 2]> = BTreeMap::new();
        let mut total = [Resource::none(); 2];
        let q = self.q(leaf);
        for &app in &q.active {
            let a = &self.apps[app];
            let h = headroom.entry(a.user.as_str()).or_insert_with(|| {
                let used = q.users.at(a.user_slot).used[p.index()];
                let room = self.user_limit(leaf, p, true).saturating_sub(used).componentwise_max(Resource::none());
                [room; 2]
            });
            let asked = a.pending[p.index()];
            let pending = [asked, asked.saturating_sub(a.reserved[p.index()])];
            for view in 0..2 {
                let take = h[view].componentwise_min(pending[view].componentwise_max(Resource::none()));
                total[view].add_assign(take);
                h[view] = h[view].saturating_sub(take);
            }
        }
        (total[0], total[1])
    }
}
