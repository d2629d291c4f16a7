//! The queue tree: built from capacity-scheduler.xml, its capacities resolved per partition
//! against the cluster (YARN's effective minimum and maximum resources), reshaped by a
//! refresh, and the orders and limits the allocation walk reads.

use std::collections::HashMap;

use fairloom_config::capacity::{CapacityValue, MaxCapacityValue, QueueOrdering};
use fairloom_config::{CapacityConfig, ConfigError};
use fairloom_model::Resource;

use super::state::{CsQueue, QueuePart, UsersCount};
use super::CapacityScheduler;
use crate::cluster::hash_order;
use crate::driver::AppState;
use crate::driver::SchedulerError;
use crate::ids::{PartitionId, QueueId};

/// `CSQueueUtils.EPSILON`: how far an absolute maximum may sit below the absolute capacity.
const EPSILON: f32 = 0.0001;

fn config_error(message: String) -> SchedulerError {
    SchedulerError::Config(ConfigError::new(message).in_file("capacity-scheduler"))
}

/// A child's sort key in [`CapacityScheduler::sorted_children`]: inaccessible, no capacity,
/// over its guarantee, priority, used, capacity, configuration position, the child.
type SortKey = (bool, bool, bool, i32, f32, f32, usize, QueueId);

impl CapacityScheduler {
    /// Build the tree from `conf` (queue ids are configuration indices: parents first).
    pub(crate) fn build_tree(&mut self, conf: &CapacityConfig) -> Result<(), SchedulerError> {
        for label in &conf.labels {
            if self.cluster.partition_id(label).is_none() {
                return Err(config_error(format!("NodeLabelManager doesn't include label = {label}, please check.")));
            }
        }
        let nparts = self.nparts();
        let mut queues: Vec<CsQueue> = Vec::with_capacity(conf.queues.len());
        for c in &conf.queues {
            let depth = c.parent.map_or(0, |p| queues[p].depth + 1);
            queues.push(CsQueue {
                name: c.path.clone(),
                parent: c.parent.map(|p| QueueId(p as u32)),
                children: c.children.iter().map(|&i| QueueId(i as u32)).collect(),
                leaf: c.is_leaf(),
                depth,
                index_in_parent: c
                    .parent
                    .map_or(0, |p| conf.queues[p].children.iter().position(|&x| x == queues.len()).unwrap_or(0) as u32),
                settings: c.clone(),
                parts: vec![QueuePart::default(); nparts],
                active: Vec::new(),
                waiting: Vec::new(),
                reorder: Vec::new(),
                users: Default::default(),
                active_users: 0,
                users_count: Default::default(),
                removed: false,
                published_limit: Resource::none(),
            });
        }
        self.queue_index = queues.iter().enumerate().map(|(i, q)| (q.name.clone(), QueueId(i as u32))).collect();
        self.queues = queues.into();
        self.conf = conf.clone();
        self.set_fractions()?;
        self.resolve_capacities();
        self.rebuild_order();
        self.publish_limits();
        Ok(())
    }

    /// A refresh may not take a queue with applications away, nor make it a parent.
    pub(crate) fn check_reload(&self, conf: &CapacityConfig) -> Result<(), SchedulerError> {
        for (_, q) in self.queues() {
            let busy = q.app_count() > 0;
            if !busy {
                continue;
            }
            match conf.queue(&q.name) {
                None => {
                    return Err(config_error(format!(
                        "queue {} has applications and cannot be removed from the configuration",
                        q.name
                    )))
                }
                Some(c) if !c.is_leaf() => {
                    return Err(config_error(format!(
                        "queue {} has applications and cannot become a parent queue",
                        q.name
                    )))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Replace the tree by `conf`'s, keeping every application in the queue of the same path.
    pub(crate) fn rebuild_tree(&mut self, conf: &CapacityConfig) -> Result<(), SchedulerError> {
        let old: HashMap<QueueId, String> = self.queues().map(|(id, q)| (id, q.name.clone())).collect();
        // A leaf that stays keeps its applications and its `UsersManager`'s version state.
        let old_lists: HashMap<String, (Vec<_>, Vec<_>, UsersCount)> = self
            .queues()
            .map(|(_, q)| (q.name.clone(), (q.active.clone(), q.waiting.clone(), q.users_count.clone())))
            .collect();
        let old_children = self.children_by_parent();
        // YARN keeps a queue's ResourceUsage across a refresh, its reservation drift with it.
        let drifts: HashMap<String, Vec<(Resource, f32)>> = self
            .queues()
            .map(|(_, q)| (q.name.clone(), q.parts.iter().map(|p| (p.reserved_drift, p.usage_ratio_drift)).collect()))
            .collect();
        // And its users, with what a same-queue move left in their counts.
        let user_drifts: Vec<(String, String, Vec<Resource>)> = self
            .queues()
            .flat_map(|(_, q)| {
                q.users
                    .iter()
                    .filter(|u| u.used_drift.iter().any(|d| !d.is_none()))
                    .map(|u| (q.name.clone(), u.name.clone(), u.used_drift.clone()))
            })
            .collect();
        self.build_tree(conf)?;
        for (path, drift) in drifts {
            if let Some(&id) = self.queue_index.get(&path) {
                for (part, (reserved, ratio)) in self.queues[id].parts.iter_mut().zip(drift) {
                    part.reserved_drift = reserved;
                    part.usage_ratio_drift = ratio;
                }
            }
        }
        let nparts = self.nparts();
        for (path, user, drift) in user_drifts {
            if let Some(&id) = self.queue_index.get(&path) {
                let users = &mut self.queues[id].users;
                let slot = users.enter(&user, nparts);
                users.at_mut(slot).used_drift = drift;
            }
        }
        self.reorder_children_after_reload(&old_children);
        for a in &mut self.apps {
            if let Some(q) = a.queue {
                let path = &old[&q];
                a.queue = self.queue_index.get(path).copied();
            }
        }
        for (path, (active, waiting, users_count)) in old_lists {
            if let Some(&id) = self.queue_index.get(&path) {
                let q = &mut self.queues[id];
                q.active = active;
                q.waiting = waiting;
                q.users_count = users_count;
            }
        }
        self.rebuild_aggregates();
        self.rebuild_order();
        self.publish_limits();
        for leaf in self.leaves() {
            self.sort_active(leaf);
            // setupQueueConfigs' `updateUserWeights`, then `updateClusterResource`.
            self.users_changed(leaf);
            self.update_cluster_resource(leaf);
        }
        Ok(())
    }

    /// A refresh that failed while building the new queues re-initialises the old ones
    /// (`reinitialize`'s catch), which puts each parent's children in the same map order as
    /// a refresh that applies.
    pub(crate) fn reorder_children_as_reinitialised(&mut self) {
        let current = self.children_by_parent();
        self.reorder_children_after_reload(&current);
    }

    /// Each parent's children by path, in their current order.
    fn children_by_parent(&self) -> HashMap<String, Vec<String>> {
        self.queues()
            .filter(|(_, q)| !q.leaf)
            .map(|(_, q)| (q.name.clone(), q.children.iter().map(|&c| self.q(c).name.clone()).collect()))
            .collect()
    }

    /// A refresh leaves each parent that was a parent before with its children in the order
    /// of a `HashMap` keyed by queue path (`AbstractParentQueue.reinitialize`): the children it
    /// had, in their order, then the new ones in the new configuration's map order; the ones
    /// gone are taken out. The orders break ties between siblings by this order.
    fn reorder_children_after_reload(&mut self, old_children: &HashMap<String, Vec<String>>) {
        for i in 0..self.queues.len() {
            let Some(old) = old_children.get(&self.queues[i].name) else { continue };
            if self.queues[i].leaf {
                continue;
            }
            let children = self.queues[i].children.clone();
            let names: Vec<&str> = children.iter().map(|&c| self.q(c).name.as_str()).collect();
            let parsed = hash_order::string_map_order(&names);
            // Every child put, old and new; the ones gone are taken out of the order after.
            let mut puts: Vec<&str> = old.iter().map(String::as_str).collect();
            puts.extend(parsed.iter().map(|&k| names[k]).filter(|n| !old.iter().any(|o| o == n)));
            let order: Vec<QueueId> = hash_order::string_map_order(&puts)
                .into_iter()
                .filter_map(|k| children.iter().copied().find(|&c| self.q(c).name == puts[k]))
                .collect();
            for (index, &c) in order.iter().enumerate() {
                self.queues[c].index_in_parent = index as u32;
            }
            self.queues[i].children = order;
        }
    }

    /// `updateClusterResource` down the tree: every leaf publishes the limit its ancestors
    /// leave it now (its maximum at most).
    pub(crate) fn publish_limits(&mut self) {
        for leaf in self.leaves() {
            let limit = self.limit_from_ancestors(leaf, PartitionId::DEFAULT);
            self.publish_limit(leaf, limit);
        }
    }

    /// `updateCurrentResourceLimits` then `setQueueResourceLimitsInfo`: an allocation walk
    /// examined an application of `leaf` under `limit` (whatever the offer's partition, as in
    /// YARN, which keeps one such value per queue).
    pub(crate) fn publish_limit(&mut self, leaf: QueueId, limit: Resource) {
        // getEffectiveMaxCapacityDown: the maximum rounded down to the minimum allocation.
        let max = self.q(leaf).parts[PartitionId::DEFAULT.index()].maximum;
        let max = self.calc.round_down(&max, &self.props.minimum_allocation);
        self.q_mut(leaf).published_limit = self.calc.min(&self.cluster.total, max, limit);
    }

    pub(crate) fn leaves(&self) -> Vec<QueueId> {
        self.queues().filter(|(_, q)| q.leaf).map(|(id, _)| id).collect()
    }

    /// Capacities as fractions, per partition: the configured percentages and weights, and
    /// each one's product down the tree (float32, as YARN multiplies them).
    fn set_fractions(&mut self) -> Result<(), SchedulerError> {
        let names: Vec<String> = self.cluster.partitions.iter().map(|p| p.name.clone()).collect();
        for i in 0..self.queues.len() {
            let parent = self.queues[i].parent;
            for (p, label) in names.iter().enumerate() {
                let s = &self.queues[i].settings;
                let accessible = s.accessible_labels.allows(label);
                let conf = s.partitions.get(label.as_str()).cloned();
                let am_percent = conf.as_ref().map_or(s.partitions[""].max_am_percent, |c| c.max_am_percent);
                let part = &mut self.queues[i].parts[p];
                part.accessible = accessible;
                part.max_am_percent = am_percent;
                let (mut capacity, mut maximum) = (0f32, if accessible { 1f32 } else { 0f32 });
                part.min_absolute = None;
                part.max_absolute = None;
                if let Some(c) = &conf {
                    match c.capacity {
                        CapacityValue::Percent(x) => capacity = x / 100.0,
                        CapacityValue::Weight(_) => {}
                        CapacityValue::Absolute(r) => part.min_absolute = Some(r),
                    }
                    match c.maximum {
                        MaxCapacityValue::Percent(x) => maximum = x / 100.0,
                        // YARN 3.4 (legacy queue mode) honours an absolute maximum only on a
                        // queue whose capacity is absolute too (`updateEffectiveResources`);
                        // otherwise the key reads as 100%.
                        MaxCapacityValue::Absolute(r) if matches!(c.capacity, CapacityValue::Absolute(_)) => {
                            part.max_absolute = Some(r);
                            maximum = 1.0;
                        }
                        MaxCapacityValue::Absolute(_) => maximum = 1.0,
                    }
                }
                part.capacity = capacity;
                part.max_capacity = maximum;
            }
            // Weights: a share of the siblings' total weight in each partition.
            if let Some(parent) = parent {
                for (p, label) in names.iter().enumerate() {
                    let weight = |q: &CsQueue| match q.settings.partitions.get(label.as_str()).map(|c| c.capacity) {
                        Some(CapacityValue::Weight(w)) => Some(w),
                        _ => None,
                    };
                    if let Some(w) = weight(&self.queues[i]) {
                        let total: f32 =
                            self.queues[parent].children.iter().filter_map(|&c| weight(&self.queues[c])).sum();
                        self.queues[i].parts[p].capacity = if total > 0.0 { w / total } else { 0.0 };
                    }
                }
            }
            for (p, label) in names.iter().enumerate() {
                let (pabs, pmax) = match parent {
                    None => (1.0f32, 1.0f32),
                    Some(pq) => {
                        let pp = &self.queues[pq].parts[p];
                        (pp.abs_capacity, pp.abs_max_capacity)
                    }
                };
                let is_root = parent.is_none();
                let name = self.queues[i].name.clone();
                let part = &mut self.queues[i].parts[p];
                if is_root && p == 0 {
                    part.capacity = 1.0;
                    part.max_capacity = 1.0;
                }
                part.abs_capacity = if is_root { part.capacity } else { part.capacity * pabs };
                part.abs_max_capacity = if is_root { part.max_capacity } else { part.max_capacity * pmax };
                if part.min_absolute.is_none() && part.abs_max_capacity < part.abs_capacity - EPSILON {
                    let for_label = if label.is_empty() { String::new() } else { format!(" for label {label}") };
                    return Err(config_error(format!(
                        "Illegal call to setMaxCapacity. Queue '{}' has an absolute capacity ({}) greater than its absolute maximumCapacity ({}){for_label}",
                        name, part.abs_capacity, part.abs_max_capacity
                    )));
                }
            }
        }
        Ok(())
    }

    /// Guaranteed and maximum resources per queue and partition against the partitions'
    /// current resources: `partition × absolute capacity`, truncated per type; absolute
    /// configurations as given, scaled down when siblings ask for more than their parent has.
    pub(crate) fn resolve_capacities(&mut self) {
        let totals: Vec<Resource> = self.cluster.partitions.iter().map(|p| p.total).collect();
        let types = self.props.resource_types.len();
        for i in 0..self.queues.len() {
            if self.queues[i].removed {
                continue;
            }
            let parent = self.queues[i].parent;
            for (p, &total) in totals.iter().enumerate() {
                let (parent_min, parent_max, pabs, pmax) = match parent {
                    None => (total, total, 1.0f32, 1.0f32),
                    Some(pq) => {
                        let pp = &self.queues[pq].parts[p];
                        (pp.guaranteed, pp.maximum, pp.abs_capacity, pp.abs_max_capacity)
                    }
                };
                let scale = parent.and_then(|pq| self.absolute_scale(pq, p, parent_min, types));
                let part = &mut self.queues[i].parts[p];
                match part.min_absolute {
                    Some(r) => {
                        let mut g = r;
                        if let Some(ratio) = scale {
                            for (t, factor) in ratio.iter().enumerate().take(types) {
                                g.set(t, (r.get(t) as f64 * factor) as i64);
                            }
                        }
                        part.guaranteed = g;
                        part.abs_capacity = if total.memory() > 0 || total.any_positive() {
                            self.calc.divide(&self.cluster.total, &g, &total)
                        } else {
                            0.0
                        };
                        if part.abs_capacity.is_nan() {
                            part.abs_capacity = 0.0;
                        }
                        part.capacity = if pabs > 0.0 { part.abs_capacity / pabs } else { 0.0 };
                    }
                    None => part.guaranteed = total.multiply_truncate(part.abs_capacity as f64),
                }
                part.maximum = match part.max_absolute {
                    Some(r) => r.componentwise_min(parent_max),
                    None if part.min_absolute.is_some() => {
                        part.abs_max_capacity = part.max_capacity * pmax;
                        total.multiply_truncate(part.abs_max_capacity as f64)
                    }
                    None => total.multiply_truncate(part.abs_max_capacity as f64),
                };
            }
        }
    }

    /// When the absolute guarantees of `parent`'s children add up to more than the parent
    /// has in partition `p`, each type is scaled by parent / sum.
    fn absolute_scale(&self, parent: QueueId, p: usize, parent_min: Resource, types: usize) -> Option<Vec<f64>> {
        let mut sum = Resource::none();
        for &c in &self.queues[parent].children {
            sum.add_assign(self.queues[c].parts[p].min_absolute?);
        }
        if sum.fits_in(&parent_min) {
            return None;
        }
        Some(
            (0..types)
                .map(
                    |t| if sum.get(t) > parent_min.get(t) { parent_min.get(t) as f64 / sum.get(t) as f64 } else { 1.0 },
                )
                .collect(),
        )
    }

    /// `usedCapacity`: used over the guarantee (floored at the minimum allocation), by the
    /// calculator; 0 in an empty partition.
    pub fn used_capacity(&self, q: QueueId, p: PartitionId) -> f32 {
        let total = self.cluster.partitions[p.index()].total;
        if !self.calc.positive(&self.cluster.total, &total) {
            return 0.0;
        }
        let part = &self.queues[q].parts[p.index()];
        let guaranteed = self.calc.max(&total, part.guaranteed, self.props.minimum_allocation);
        self.calc.divide(&total, &part.used, &guaranteed)
    }

    /// What a parent's ordering compares a child by (`PriorityQueueComparator`): a child with
    /// a positive absolute capacity goes before one without (the flag), and two without
    /// compare their absolute used capacity (`used / partition`) instead of the used one.
    pub(crate) fn ordering_used(&self, q: QueueId, p: PartitionId) -> (bool, f32) {
        let part = &self.queues[q].parts[p.index()];
        if part.abs_capacity > 0.0 {
            return (false, self.used_capacity(q, p));
        }
        let total = self.cluster.partitions[p.index()].total;
        if !self.calc.positive(&self.cluster.total, &total) {
            return (true, 0.0);
        }
        (true, self.calc.divide(&total, &part.used, &total))
    }

    /// The children of `parent` that may get something in partition `p`, in the parent's
    /// ordering policy: under-guarantee first and then by priority (priority-utilization),
    /// least used capacity, larger guarantee, configuration order; children with no capacity
    /// after the others (see [`Self::ordering_used`]).
    pub(crate) fn sorted_children(&self, parent: QueueId, p: PartitionId, respect: bool) -> Vec<QueueId> {
        let q = &self.queues[parent];
        let by_priority = q.settings.queue_ordering == QueueOrdering::PriorityUtilization;
        let mut keyed: Vec<SortKey> = q
            .children
            .iter()
            .enumerate()
            .filter(|(_, &c)| self.wants(c, p, respect))
            .map(|(i, &c)| {
                let part = &self.queues[c].parts[p.index()];
                let (zero, used) = self.ordering_used(c, p);
                let prio = if by_priority { self.queues[c].settings.priority } else { 0 };
                (!part.accessible, zero, by_priority && used >= 1.0, -prio, used, -part.abs_capacity, i, c)
            })
            .collect();
        keyed.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(a.1.cmp(&b.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
                .then(a.4.total_cmp(&b.4))
                .then(a.5.total_cmp(&b.5))
                .then(a.6.cmp(&b.6))
        });
        keyed.into_iter().map(|k| k.7).collect()
    }

    /// A queue with pending demand that the walk must visit (YARN's `hasPendingResourceRequest`
    /// and partition access).
    pub(crate) fn wants(&self, q: QueueId, p: PartitionId, respect: bool) -> bool {
        let part = &self.queues[q].parts[if respect { p.index() } else { 0 }];
        (!respect || self.queues[q].parts[p.index()].accessible)
            && self.calc.positive(&self.cluster.total, &part.pending)
    }

    /// `getResourceLimitsOfChild`: the parent's limit (capped by its maximum) less the
    /// headroom its earlier children were blocked on and what the parent uses, plus what
    /// the child uses, rounded down to the minimum allocation.
    pub(crate) fn child_limit(
        &self,
        parent: QueueId,
        child: QueueId,
        parent_limit: Resource,
        blocked: Resource,
        p: PartitionId,
    ) -> Resource {
        let pp = &self.queues[parent].parts[p.index()];
        let capped = self.calc.min(&self.cluster.total, parent_limit, pp.maximum);
        // YARN's Resources.subtract does not stop at zero: a parent over its limit (an
        // over-committed cluster, a lowered maximum) hands its child less than the child uses.
        let child_used = self.queues[child].parts[p.index()].used.get();
        let mut limit = capped;
        for i in 0..self.props.resource_types.len() {
            limit.set(i, capped.get(i) - blocked.get(i) - pp.used.get().get(i) + child_used.get(i));
        }
        self.calc.round_down(&limit, &self.props.minimum_allocation)
    }

    /// The limit a queue works under now in partition `p`: its maximum, and what its
    /// ancestors leave it (as each parent hands a child its limit during allocation).
    pub fn current_limit(&self, q: QueueId, p: PartitionId) -> Resource {
        let limit = self.limit_from_ancestors(q, p);
        self.calc.min(&self.cluster.total, self.queues[q].parts[p.index()].maximum, limit)
    }

    /// What the ancestors of `q` leave it in partition `p`, each parent handing its child a
    /// limit from root down (`getResourceLimitsOfChild`), before `q`'s own maximum.
    fn limit_from_ancestors(&self, q: QueueId, p: PartitionId) -> Resource {
        let path: Vec<QueueId> = self.path_to_root(q).collect();
        let mut limit = self.cluster.partitions[p.index()].total;
        for w in path.windows(2).rev() {
            limit = self.child_limit(w[1], w[0], limit, Resource::none(), p);
        }
        limit
    }

    /// Recompute every usage aggregate from the applications and containers (after a
    /// refresh reshaped the tree).
    pub(crate) fn rebuild_aggregates(&mut self) {
        let fresh = self.recompute();
        for (i, q) in self.queues.iter_mut().enumerate() {
            for (p, part) in q.parts.iter_mut().enumerate() {
                let f = &fresh.parts[i][p];
                super::charge::set_rebuilt(&mut part.used, f.used);
                part.reserved = f.reserved;
                part.pending = f.pending;
                part.am_used = f.am_used;
                part.usage_ratio = f.usage_ratio;
                part.active_used = f.active_used;
            }
            q.users = super::state::Users::from_map(fresh.users[i].clone());
            q.active_users = fresh.active_users[i];
        }
        for a in &mut self.apps {
            if let Some(q) = a.queue.filter(|_| matches!(a.state, AppState::Accepted | AppState::Running)) {
                a.user_slot = self.queues[q].users.slot(&a.user).unwrap_or(0);
            }
        }
    }

    /// Users' shares of the partitions after the partitions' resources changed.
    pub(crate) fn refresh_ratios(&mut self) {
        let calc = self.calc;
        for q in &mut self.queues {
            for (p, part) in q.parts.iter_mut().enumerate() {
                let total = self.cluster.partitions[p].total;
                // YARN's updateUsageRatio sums the present users afresh: what dropped users
                // left in the sum goes.
                part.usage_ratio = 0.0;
                part.usage_ratio_drift = 0.0;
                for u in q.users.slots_mut() {
                    u.ratio[p] = super::apps::share_of(&calc, &u.used[p], &total);
                    part.usage_ratio += u.ratio[p];
                }
            }
        }
    }
}
