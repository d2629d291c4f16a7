//! One node heartbeat under the Capacity Scheduler, as YARN 3.x runs it: serve the node's
//! reservation, else walk from root (children in their ordering policy, each parent
//! handing its child a limit), through the leaf's applications in its ordering policy
//! (queue and user limits), to one container or one reservation; repeat while
//! `canAllocateMore`. A labelled non-exclusive node that finds nothing for its own
//! partition is offered to default-partition asks (IGNORE_PARTITION_EXCLUSIVITY).

use fairloom_config::capacity::AppOrdering;
use fairloom_model::{Millis, NodeType, Resource};

use super::state::LocalityAsk;
use super::{CapacityScheduler, ROOT};
use crate::driver::Decision;
use crate::ids::{AppId, ContainerId, NodeId, PartitionId, QueueId};
use crate::reason::WaitReason;

/// What one walk produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Allocated(NodeType),
    Reserved,
    /// Nothing; `QueueLimit` when a queue's limit stopped it (YARN's `SkippedType`).
    Nothing {
        queue_limit: bool,
    },
}

impl Outcome {
    const NONE: Self = Self::Nothing { queue_limit: false };

    fn assigned(self) -> bool {
        !matches!(self, Self::Nothing { .. })
    }
}

/// An application's answer for one node (YARN's `AllocationState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AppAnswer {
    Allocated(NodeType),
    Reserved,
    /// Try the next application.
    Skipped,
    /// Try the next priority of this application.
    PrioritySkipped,
    /// Try the next locality level of this priority.
    LocalitySkipped,
}

/// The walk's scheduling mode and the node it serves.
#[derive(Debug, Clone, Copy)]
struct Offer {
    node: NodeId,
    partition: PartitionId,
    /// RESPECT_PARTITION_EXCLUSIVITY (else IGNORE: a non-exclusive partition lent to
    /// default-partition asks).
    respect: bool,
}

impl CapacityScheduler {
    /// A NodeManager heartbeat: reported completions first, then allocation on the node.
    pub fn node_heartbeat_into(
        &mut self,
        node: NodeId,
        completed: &[(ContainerId, i32)],
        now: Millis,
        out: &mut Vec<Decision>,
    ) -> usize {
        let mut released = 0;
        for &(c, exit) in completed {
            if self.cluster.containers.get(c.index()).is_some_and(|x| x.alive && x.node == node) {
                self.finish_container(c, exit);
                released += 1;
            }
        }
        self.node_update_into(node, now, out);
        released
    }

    /// Allocation on one node (`allocateContainersToNode` with `canAllocateMore`). The
    /// Capacity Scheduler's delay scheduling counts missed opportunities, so `now` is unused.
    pub fn node_update_into(&mut self, node: NodeId, _now: Millis, out: &mut Vec<Decision>) {
        if self.cluster.node(node).removed {
            return;
        }
        self.counters.heartbeats += 1;
        let (mut offswitch, mut assigned) = (0, 0);
        loop {
            let outcome = self.allocate_on_node(node, out);
            match outcome {
                Outcome::Allocated(kind) => {
                    assigned += 1;
                    if kind == NodeType::OffSwitch {
                        offswitch += 1;
                    }
                }
                Outcome::Reserved | Outcome::Nothing { .. } => break,
            }
            let c = &self.conf;
            if offswitch >= c.max_offswitch_assign
                || !c.assign_multiple
                || (c.max_assign != -1 && assigned >= c.max_assign)
            {
                break;
            }
        }
    }

    /// `allocateContainerOnSingleNode`: the node's reservation, or one new container or
    /// reservation.
    fn allocate_on_node(&mut self, node: NodeId, out: &mut Vec<Decision>) -> Outcome {
        if let Some(r) = self.cluster.node(node).reservation {
            self.allocate_reserved(node, r.app, r.priority, out);
            return Outcome::NONE;
        }
        let n = self.cluster.node(node);
        if self.calc.available_containers(&n.unallocated(), &self.props.minimum_allocation) <= 0 {
            return Outcome::NONE;
        }
        let partition = n.partition;
        let t0 = self.clock_ns();
        let limit = self.cluster.partitions[partition.index()].total;
        let offer = Offer { node, partition, respect: true };
        let mut outcome = self.assign_parent(ROOT, offer, limit, out);
        if !outcome.assigned() && partition != PartitionId::DEFAULT && !self.cluster.partition(partition).exclusive {
            let limit = self.cluster.partitions[0].total;
            outcome = self.assign_parent(ROOT, Offer { respect: false, ..offer }, limit, out);
        }
        self.phases.assignment_ns += self.clock_ns().saturating_sub(t0);
        outcome
    }

    /// The limit a queue works under on this offer (its maximum, and what its parent leaves
    /// it), and its headroom under it; `Err(limit)` when it already uses all of it
    /// (`canAssignToThisQueue`).
    fn queue_limit(&self, q: QueueId, offer: Offer, limit: Resource) -> Result<(Resource, Resource), Resource> {
        let part = &self.q(q).parts[offer.partition.index()];
        let current = if offer.respect {
            self.calc.min(&self.cluster.total, part.maximum, limit)
        } else {
            self.cluster.partitions[offer.partition.index()].total
        };
        if self.calc.ge(&self.cluster.total, &part.used, &current) {
            return Err(current);
        }
        Ok((current, current.saturating_sub(part.used)))
    }

    /// Whether the walk follows the kept orders (else it sorts at each visit, as YARN does).
    fn incremental(&self) -> bool {
        self.props.optimizations.ordering == fairloom_config::Ordering::Incremental
    }

    fn assign_parent(&mut self, q: QueueId, offer: Offer, limit: Resource, out: &mut Vec<Decision>) -> Outcome {
        self.phases.parents_visited += 1;
        if !self.wants(q, offer.partition, offer.respect) {
            return Outcome::NONE;
        }
        let t0 = self.clock_ns();
        if self.queue_limit(q, offer, limit).is_err() {
            self.phases.precheck_ns += self.clock_ns().saturating_sub(t0);
            return Outcome::Nothing { queue_limit: true };
        }
        if self.incremental() && offer.respect {
            // Children that assign nothing change nothing, so the kept order stays valid.
            let mut after = None;
            while let Some(k) = self.next_child(q, offer.partition, after.as_ref()) {
                let outcome = self.assign_child(q, k.id, offer, limit, out);
                if outcome.assigned() {
                    return outcome;
                }
                after = Some(k);
            }
        } else {
            let children = self.sorted_children(q, offer.partition, offer.respect);
            self.phases.children_skipped += (self.q(q).children.len() - children.len()) as u64;
            self.phases.ordering_ns += self.clock_ns().saturating_sub(t0);
            for child in children {
                let outcome = self.assign_child(q, child, offer, limit, out);
                if outcome.assigned() {
                    return outcome;
                }
            }
        }
        Outcome::NONE
    }

    fn assign_child(
        &mut self,
        parent: QueueId,
        child: QueueId,
        offer: Offer,
        limit: Resource,
        out: &mut Vec<Decision>,
    ) -> Outcome {
        let child_limit = self.child_limit(parent, child, limit, offer.partition);
        if self.q(child).leaf {
            self.assign_leaf(child, offer, child_limit, out)
        } else {
            self.assign_parent(child, offer, child_limit, out)
        }
    }

    /// The leaf's activated applications with something to ask in `p`, in its ordering
    /// policy, sorted afresh.
    pub(crate) fn sorted_apps(&self, leaf: QueueId, p: PartitionId) -> Vec<AppId> {
        let q = self.q(leaf);
        let mut apps: Vec<AppId> =
            q.active.iter().copied().filter(|&a| self.apps[a.index()].pending[p.index()].any_positive()).collect();
        if let AppOrdering::Fair { .. } = q.settings.app_ordering {
            apps.sort_by_key(|&a| self.app_key(a));
        }
        apps
    }

    /// Keep a leaf's activated applications in fifo order: priority, then submission.
    pub(crate) fn insert_active(&mut self, leaf: QueueId, app: AppId) {
        let key = |s: &Self, a: AppId| {
            let x = &s.apps[a.index()];
            (std::cmp::Reverse(x.priority), x.yarn_id.id)
        };
        let k = key(self, app);
        let at = self.q(leaf).active.partition_point(|&a| key(self, a) < k);
        self.q_mut(leaf).active.insert(at, app);
    }

    pub(crate) fn sort_active(&mut self, leaf: QueueId) {
        let mut active = std::mem::take(&mut self.q_mut(leaf).active);
        active.sort_by_key(|&a| (std::cmp::Reverse(self.apps[a.index()].priority), self.apps[a.index()].yarn_id.id));
        self.q_mut(leaf).active = active;
    }

    fn assign_leaf(&mut self, leaf: QueueId, offer: Offer, limit: Resource, out: &mut Vec<Decision>) -> Outcome {
        // Lent (non-exclusive) nodes serve default-partition asks.
        let p = if offer.respect { offer.partition } else { PartitionId::DEFAULT };
        if !self.wants(leaf, offer.partition, offer.respect) {
            return Outcome::NONE;
        }
        let headroom = match self.queue_limit(leaf, offer, limit) {
            Ok((_, headroom)) => headroom,
            Err(current) => {
                let reason = WaitReason::QueueMaxCapacity { queue: self.q(leaf).name.clone(), limit: current };
                for a in self.sorted_apps(leaf, p) {
                    self.apps[a.index()].wait = Some(reason.clone());
                }
                return Outcome::Nothing { queue_limit: true };
            }
        };
        // Without user weights the limit is the same for every user of the leaf.
        let user_limit = self.cached_user_limit(leaf, offer.partition, offer.respect);
        let incremental = self.incremental();
        let sorted = if incremental { Vec::new() } else { self.sorted_apps(leaf, p) };
        let mut after = None;
        let mut i = 0;
        loop {
            let app = if incremental {
                let Some(k) = self.next_app(leaf, p, after.as_ref()) else { break };
                after = Some(k);
                k.app
            } else {
                let Some(&a) = sorted.get(i) else { break };
                i += 1;
                a
            };
            self.phases.apps_tried += 1;
            let (allowed, unreserve) = self.can_assign_to_user(leaf, app, &user_limit, offer.partition);
            if !allowed {
                self.note_user_limit(leaf, app, offer.partition, user_limit);
                continue;
            }
            match self.assign_app(leaf, app, offer, headroom, unreserve, out) {
                AppAnswer::Allocated(kind) => return Outcome::Allocated(kind),
                AppAnswer::Reserved => return Outcome::Reserved,
                _ => continue,
            }
        }
        Outcome::NONE
    }

    /// Record why `app` waits: its user is over the user limit (updated in place when it
    /// already says so, as it does on every heartbeat while the user stays over).
    fn note_user_limit(&mut self, leaf: QueueId, app: AppId, p: PartitionId, limit: Resource) {
        let a = &self.apps[app.index()];
        let used = self.queues[leaf.index()].users.at(a.user_slot).used[p.index()];
        let a = &mut self.apps[app.index()];
        match &mut a.wait {
            Some(WaitReason::UserLimit { used: u, limit: l, .. }) => {
                *u = used;
                *l = limit;
            }
            wait => *wait = Some(WaitReason::UserLimit { user: a.user.clone(), used, limit }),
        }
    }

    /// `RegularContainerAllocator.assignContainers` for a new container: the app's
    /// priorities in order until one allocates, reserves or skips the app.
    fn assign_app(
        &mut self,
        leaf: QueueId,
        app: AppId,
        offer: Offer,
        headroom: Resource,
        user_unreserve: Resource,
        out: &mut Vec<Decision>,
    ) -> AppAnswer {
        for idx in 0..self.apps[app.index()].requests.len() {
            let answer = self.assign_priority(leaf, app, idx, offer, headroom, user_unreserve, out);
            if answer != AppAnswer::PrioritySkipped {
                return answer;
            }
        }
        AppAnswer::Skipped
    }

    /// `preCheckForNodeCandidateSet`, then the locality levels of one priority.
    #[allow(clippy::too_many_arguments)]
    fn assign_priority(
        &mut self,
        leaf: QueueId,
        app: AppId,
        idx: usize,
        offer: Offer,
        headroom: Resource,
        user_unreserve: Resource,
        out: &mut Vec<Decision>,
    ) -> AppAnswer {
        let a = &self.apps[app.index()];
        let r = &a.requests[idx];
        if r.any_count() <= 0 {
            return AppAnswer::PrioritySkipped;
        }
        if !offer.respect && !a.unmanaged_am && !a.am_running {
            return AppAnswer::Skipped;
        }
        let wanted_partition = if offer.respect { offer.partition } else { PartitionId::DEFAULT };
        if r.label != wanted_partition {
            return AppAnswer::PrioritySkipped;
        }
        let request_label = r.label;
        let r = &mut self.apps[app.index()].requests[idx];
        r.scheduling_opportunities += 1;
        if request_label == PartitionId::DEFAULT {
            r.missed_non_partitioned += 1;
        }
        if !offer.respect && (r.missed_non_partitioned as usize) < self.cluster.live_nodes as usize {
            return AppAnswer::Skipped;
        }
        let (location, rack) = {
            let n = self.cluster.node(offer.node);
            (n.location, n.rack)
        };
        let r = &self.apps[app.index()].requests[idx];
        // Node-local.
        if let Some(&ask) = r.at(location) {
            let answer =
                self.assign_container(leaf, app, idx, ask, NodeType::NodeLocal, offer, headroom, user_unreserve, out);
            if answer != AppAnswer::LocalitySkipped {
                return answer;
            }
        }
        let r = &self.apps[app.index()].requests[idx];
        if let Some(&ask) = r.at(rack) {
            if !r.can_delay_to(Some(rack)) {
                return AppAnswer::PrioritySkipped;
            }
            if self.may_assign(app, idx, NodeType::RackLocal) {
                let answer = self.assign_container(
                    leaf,
                    app,
                    idx,
                    ask,
                    NodeType::RackLocal,
                    offer,
                    headroom,
                    user_unreserve,
                    out,
                );
                if answer != AppAnswer::LocalitySkipped {
                    return answer;
                }
            }
        }
        let r = &self.apps[app.index()].requests[idx];
        let Some(ask) = r.any.filter(|a| a.count > 0) else { return AppAnswer::PrioritySkipped };
        if !r.can_delay_to(None) {
            return AppAnswer::PrioritySkipped;
        }
        if !self.may_assign(app, idx, NodeType::OffSwitch) {
            self.apps[app.index()].wait = Some(WaitReason::WaitingForLocality);
            return AppAnswer::Skipped;
        }
        match self.assign_container(leaf, app, idx, ask, NodeType::OffSwitch, offer, headroom, user_unreserve, out) {
            AppAnswer::LocalitySkipped => AppAnswer::Skipped,
            other => other,
        }
    }

    /// Delay scheduling (`canAssign` for rack-local and off-switch): missed opportunities
    /// against `node-locality-delay` and `rack-locality-additional-delay`.
    fn may_assign(&self, app: AppId, idx: usize, kind: NodeType) -> bool {
        let r = &self.apps[app.index()].requests[idx];
        let nodes = self.cluster.live_nodes as i64;
        let missed = r.scheduling_opportunities as i64;
        let node_delay = (self.conf.node_locality_delay as i64).min(nodes);
        match kind {
            NodeType::NodeLocal => true,
            NodeType::RackLocal => node_delay < missed,
            NodeType::OffSwitch => {
                if nodes == 0 {
                    return false;
                }
                let unique = r.unique_location_asks();
                if unique == 1 {
                    return true;
                }
                if self.conf.rack_locality_additional_delay > -1 {
                    let delay = (self.conf.node_locality_delay as i64
                        + self.conf.rack_locality_additional_delay as i64)
                        .min(nodes);
                    missed > delay
                } else {
                    let wait_factor = ((unique.saturating_sub(1)) as f32 / nodes as f32).min(1.0);
                    let required = r.any_count() as f32;
                    (nodes as f32).min(required * wait_factor) < missed as f32
                }
            }
        }
    }

    /// `shouldAllocOrReserveNewContainer`: reservations already held at this key, weighed
    /// by how often they were re-reserved, must leave an ask uncovered.
    fn should_allocate_or_reserve(&self, leaf: QueueId, app: AppId, idx: usize, required: &Resource) -> bool {
        let a = &self.apps[app.index()];
        let r = &a.requests[idx];
        let outstanding = r.any_count() as i64;
        let reserved = a.reservations.iter().filter(|h| h.priority == r.priority).count() as i64;
        let mut starvation = 0i64;
        if reserved > 0 {
            let max = self.maximum_allocation(leaf);
            let node_factor = self.calc.ratio(required, &max);
            let min_factor = self.calc.ratio(&max.saturating_sub(self.props.minimum_allocation), &max);
            starvation = ((r.re_reservations as f32 / reserved as f32) * (1.0 - node_factor.min(min_factor))) as i64;
        }
        starvation + outstanding - reserved > 0
    }

    /// `assignContainer`: allocate if the node has room (unreserving elsewhere when limits
    /// or held reservations require it), else reserve the node.
    #[allow(clippy::too_many_arguments)]
    fn assign_container(
        &mut self,
        leaf: QueueId,
        app: AppId,
        idx: usize,
        ask: LocalityAsk,
        kind: NodeType,
        offer: Offer,
        headroom: Resource,
        user_unreserve: Resource,
        out: &mut Vec<Decision>,
    ) -> AppAnswer {
        let capability = ask.capability;
        let n = self.cluster.node(offer.node);
        if !self.calc.le(&self.cluster.total, &capability, &n.total) {
            self.apps[app.index()].wait = Some(WaitReason::LargerThanNode { request: capability });
            return AppAnswer::LocalitySkipped;
        }
        let fits = self.calc.available_containers(&n.unallocated(), &capability) > 0;
        let should = self.should_allocate_or_reserve(leaf, app, idx, &capability);
        let need = self.calc.max(&self.cluster.total, capability.saturating_sub(headroom), user_unreserve);
        let need_unreserve = self.calc.any_above_zero(&need);
        let looking = self.conf.reservations_continue_looking;
        if fits {
            let mut give_back = None;
            if looking && (!should || need_unreserve) {
                let needed = if need_unreserve { need } else { capability };
                match self.node_to_unreserve(app, idx, &needed) {
                    Some(node) => give_back = Some(node),
                    None => {
                        self.apps[app.index()].wait = Some(if need_unreserve {
                            WaitReason::QueueMaxCapacity { queue: self.q(leaf).name.clone(), limit: headroom }
                        } else {
                            WaitReason::NodeFull { request: capability }
                        });
                        return AppAnswer::LocalitySkipped;
                    }
                }
            }
            let released = give_back.map_or(Resource::none(), |node| {
                self.apps[app.index()]
                    .reservations
                    .iter()
                    .find(|h| h.node == node)
                    .map_or(Resource::none(), |h| h.resource)
            });
            if !self.accept(leaf, &capability, &released, offer) {
                self.apps[app.index()].wait =
                    Some(WaitReason::QueueMaxCapacity { queue: self.q(leaf).name.clone(), limit: headroom });
                return AppAnswer::LocalitySkipped;
            }
            if let Some(node) = give_back {
                self.unreserve(app, node);
                out.push(Decision::Unreserved { app, node });
            }
            let container = self.allocate(app, idx, offer.node, kind, capability, None);
            self.reset_opportunities(app, idx, kind, offer.partition);
            out.push(Decision::Allocated { app, container, node: offer.node });
            AppAnswer::Allocated(kind)
        } else if should {
            if looking && need_unreserve {
                self.apps[app.index()].wait =
                    Some(WaitReason::QueueMaxCapacity { queue: self.q(leaf).name.clone(), limit: headroom });
                return AppAnswer::LocalitySkipped;
            }
            if !self.accept(leaf, &capability, &Resource::none(), offer) {
                return AppAnswer::LocalitySkipped;
            }
            let priority = self.apps[app.index()].requests[idx].priority;
            self.reserve(app, offer.node, priority, capability);
            self.reset_opportunities(app, idx, kind, offer.partition);
            self.apps[app.index()].wait = Some(WaitReason::Reserved { request: capability });
            out.push(Decision::Reserved { app, node: offer.node });
            AppAnswer::Reserved
        } else {
            self.apps[app.index()].wait = Some(WaitReason::NodeFull { request: capability });
            AppAnswer::LocalitySkipped
        }
    }

    /// `getNodeIdToUnreserve`: the first of the app's reservations at this key that frees
    /// at least `needed`.
    fn node_to_unreserve(&self, app: AppId, idx: usize, needed: &Resource) -> Option<NodeId> {
        let a = &self.apps[app.index()];
        let priority = a.requests[idx].priority;
        a.reservations.iter().find(|h| h.priority == priority && self.calc.fits_in(needed, &h.resource)).map(|h| h.node)
    }

    /// The commit's check (`AbstractCSQueue.accept`): no queue on the path goes past its
    /// maximum (the partition, when lent).
    fn accept(&self, leaf: QueueId, required: &Resource, released: &Resource, offer: Offer) -> bool {
        let p = offer.partition.index();
        let partition_total = self.cluster.partitions[p].total;
        self.path_to_root(leaf).all(|q| {
            let part = &self.q(q).parts[p];
            let max = if offer.respect { part.maximum } else { partition_total };
            self.calc.fits_in(&part.used.saturating_add(*required).saturating_sub(*released), &max)
        })
    }

    /// Create the container: asks decremented by locality.
    fn allocate(
        &mut self,
        app: AppId,
        idx: usize,
        node: NodeId,
        kind: NodeType,
        capability: Resource,
        seq: Option<u32>,
    ) -> ContainerId {
        let (location, rack) = {
            let n = self.cluster.node(node);
            (n.location, n.rack)
        };
        let r = &mut self.apps[app.index()].requests[idx];
        let priority = r.priority;
        let label = r.label;
        let mut dec = |loc| {
            if let Some(ask) = r.locations.get_mut(&loc) {
                ask.count -= 1;
                if ask.count <= 0 {
                    r.locations.remove(&loc);
                }
            }
        };
        match kind {
            NodeType::NodeLocal => {
                dec(location);
                dec(rack);
            }
            NodeType::RackLocal => dec(rack),
            NodeType::OffSwitch => {}
        }
        r.re_reservations = 0;
        if let Some(any) = r.any.filter(|a| a.count > 0) {
            self.set_any(app, idx, Some(LocalityAsk { count: any.count - 1, ..any }), label);
        }
        let a = &self.apps[app.index()];
        let is_am = !a.am_running && !a.unmanaged_am;
        let container = self.start_container(app, node, capability, priority, is_am, label, seq);
        self.apps[app.index()].wait = None;
        self.counters.containers_allocated += 1;
        container
    }

    /// After a first allocation or reservation at a key (`doAllocation`): delay scheduling
    /// starts over unless it went off-switch (or rack-local without the full reset), and a
    /// default-partition node restarts the wait before lending labelled nodes.
    fn reset_opportunities(&mut self, app: AppId, idx: usize, kind: NodeType, partition: PartitionId) {
        let full_reset = self.conf.rack_locality_full_reset;
        let r = &mut self.apps[app.index()].requests[idx];
        if kind == NodeType::NodeLocal || (kind == NodeType::RackLocal && full_reset) {
            r.scheduling_opportunities = 0;
        }
        if partition == PartitionId::DEFAULT {
            r.missed_non_partitioned = 0;
        }
    }

    /// The node's reservation first (`allocateFromReservedContainer`): allocate it if the
    /// node now has room, re-reserve if not, drop it when nothing is asked at its key any
    /// more. No limit applies, as in YARN.
    fn allocate_reserved(&mut self, node: NodeId, app: AppId, priority: i32, out: &mut Vec<Decision>) {
        let Some(idx) =
            self.apps[app.index()].request(priority).filter(|&i| self.apps[app.index()].requests[i].any_count() > 0)
        else {
            self.unreserve(app, node);
            out.push(Decision::Unreserved { app, node });
            return;
        };
        let (location, rack) = {
            let n = self.cluster.node(node);
            (n.location, n.rack)
        };
        let r = &self.apps[app.index()].requests[idx];
        let (ask, kind) = if let Some(&a) = r.at(location) {
            (a, NodeType::NodeLocal)
        } else if let Some(&a) = r.at(rack) {
            (a, NodeType::RackLocal)
        } else {
            (r.any.expect("a request with a count has a * ask"), NodeType::OffSwitch)
        };
        let n = self.cluster.node(node);
        if !self.calc.le(&self.cluster.total, &ask.capability, &n.total) {
            return;
        }
        if self.calc.available_containers(&n.unallocated(), &ask.capability) > 0 {
            let seq = self.cluster.node(node).reservation.map(|r| r.seq);
            self.unreserve(app, node);
            let container = self.allocate(app, idx, node, kind, ask.capability, seq);
            out.push(Decision::Allocated { app, container, node });
        } else {
            self.apps[app.index()].requests[idx].re_reservations += 1;
        }
    }
}
