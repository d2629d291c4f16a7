//! One node heartbeat: YARN's `attemptScheduling` and the `assignContainer` walk down the
//! queue tree, with reservations, the AM share check, delay scheduling and max shares.

use fairloom_config::{Ordering, UsageMode};
use fairloom_model::{Millis, NodeType, Resource};

use super::policy::{compare, Calculator, SchedView};
use super::state::Reservation;
use super::tree::ROOT;
use super::FairScheduler;
use crate::driver::Decision;
use crate::ids::{AppId, ContainerId, NodeId, QueueId};
use crate::reason::WaitReason;

/// What one `assignContainer` call produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Assigned {
    None,
    Container(Resource),
    Reserved,
}

impl FairScheduler {
    /// A NodeManager heartbeat as YARN's `nodeUpdate` takes it: the containers the node
    /// reports finished are released first, then the node is offered to the queues. A
    /// reported container that is not live on this node (its AM released it already, or it
    /// was preempted) is skipped, as YARN skips a completed container it no longer knows.
    /// Returns how many containers it released.
    pub(crate) fn node_heartbeat_into(
        &mut self,
        node: NodeId,
        completed: &[(ContainerId, i32)],
        now: Millis,
        decisions: &mut Vec<Decision>,
    ) -> usize {
        let mut released = 0;
        for &(c, exit_status) in completed {
            if self.cluster.containers.get(c.index()).is_some_and(|x| x.alive && x.node == node) {
                self.finish_container(c, exit_status);
                released += 1;
            }
        }
        self.node_update_into(node, now, decisions);
        released
    }

    /// A heartbeat's walk, appending to a buffer the caller reuses (a heartbeat then
    /// allocates nothing on the heap unless a decision needs more room).
    pub(crate) fn node_update_into(&mut self, node: NodeId, now: Millis, decisions: &mut Vec<Decision>) {
        let from = decisions.len();
        self.node_walk(node, now, decisions);
        self.counters.decisions.decisions(&decisions[from..], &self.cluster);
    }

    fn node_walk(&mut self, node: NodeId, now: Millis, decisions: &mut Vec<Decision>) {
        if self.cluster.nodes[node].removed {
            return;
        }
        self.counters.heartbeats += 1;
        self.phase_clock.heartbeat(self.counters.heartbeats);
        // The switches are read once per scheduling pass.
        self.walk = self.props.optimizations;
        // Room freed by preemption goes to the app it was freed for, first.
        let t0 = self.phase_clock.now();
        self.assign_preempted(node, now, decisions);
        let mut valid_reservation = false;
        if let Some(r) = self.cluster.nodes[node].reservation {
            valid_reservation = self.assign_reserved(r, node, now, decisions);
        }
        self.phases.reservations_ns += self.phase_clock.since(t0);
        if !valid_reservation {
            let max_to_assign = self.cluster.nodes[node].unallocated().multiply_truncate(0.5);
            let mut count = 0u32;
            let mut assigned = Resource::none();
            while self.cluster.nodes[node].reservation.is_none() {
                match self.assign_queue(ROOT, node, now, decisions) {
                    Assigned::None => break,
                    Assigned::Container(r) => assigned.add_assign(r),
                    Assigned::Reserved => {}
                }
                count += 1;
                if !self.should_continue_assigning(count, &max_to_assign, &assigned) {
                    break;
                }
            }
        }
        self.refresh_root_metrics();
    }

    fn should_continue_assigning(&self, containers: u32, max_to_assign: &Resource, assigned: &Resource) -> bool {
        let p = &self.props;
        if !p.assign_multiple {
            false
        } else if p.dynamic_max_assign {
            assigned.fits_in(max_to_assign)
        } else {
            p.max_assign <= 0 || (containers as i64) < p.max_assign as i64
        }
    }

    fn assign_reserved(&mut self, r: Reservation, node: NodeId, now: Millis, out: &mut Vec<Decision>) -> bool {
        let app = r.app;
        let valid = self.apps[app].is_alive()
            && self.apps[app].request_index(r.priority).is_some_and(|idx| self.has_container_for_node(app, idx, node))
            && !self.over_am_share_limit(app);
        if !valid {
            self.unreserve(app, node);
            out.push(Decision::Unreserved { app, node });
            return false;
        }
        if r.resource.fits_in(&self.cluster.nodes[node].unallocated()) {
            self.assign_app_on(app, node, true, now, out);
        }
        true
    }

    /// The children of a parent queue in the parent policy's order.
    fn ordered_children(&self, parent: QueueId) -> Vec<QueueId> {
        let p = self.q(parent);
        let mut children: Vec<QueueId> = if self.walk.skip_no_demand {
            p.children.iter().copied().filter(|&c| !self.q(c).members.is_empty()).collect()
        } else {
            p.children.clone()
        };
        let policy = p.policy;
        children.sort_by(|&a, &b| {
            compare(policy, &self.queue_view(a), &self.queue_view(b), &self.cluster.total, self.types)
        });
        children
    }

    /// Whether a max-share check has to run, given that the max shares it reads are
    /// `bounded`. An unbounded max share admits any usage, so the check is skipped, except
    /// under YARN 2.7's recomputed usage, whose cost the baseline is there to show.
    #[inline]
    fn must_check_max(&self, bounded: bool) -> bool {
        bounded || self.walk.usage != UsageMode::Incremental
    }

    /// Queue usage as the walk reads it: the incremental aggregate, or summed over the
    /// subtree's apps on every read (YARN 2.7).
    #[inline]
    pub(crate) fn walk_usage(&self, id: QueueId) -> Resource {
        if self.walk.usage == UsageMode::Incremental {
            return self.q(id).usage.get();
        }
        let q = self.q(id);
        if q.leaf {
            q.runnable_apps
                .iter()
                .chain(&q.non_runnable_apps)
                .fold(Resource::none(), |acc, &a| acc.saturating_add(self.apps[a].usage.get()))
        } else {
            q.children.iter().fold(Resource::none(), |acc, &c| acc.saturating_add(self.walk_usage(c)))
        }
    }

    pub(crate) fn queue_view(&self, id: QueueId) -> SchedView<'_> {
        let q = self.q(id);
        SchedView {
            usage: self.walk_usage(id),
            demand: q.demand,
            min_share: q.settings.min_share,
            weight: q.settings.weight,
            start_time: 0,
            name: &q.name,
        }
    }

    pub(crate) fn app_view(&self, id: AppId) -> SchedView<'_> {
        let a = &self.apps[id];
        SchedView {
            usage: a.usage.get(),
            demand: a.demand,
            min_share: Resource::none(),
            weight: self.app_weight(id),
            start_time: a.start_time,
            name: &a.id_string,
        }
    }

    pub(crate) fn app_weight(&self, id: AppId) -> f32 {
        if self.props.size_based_weight {
            let demand = self.apps[id].demand.memory().max(0) as f64;
            ((1.0 + demand).ln() / 2f64.ln()) as f32
        } else {
            1.0
        }
    }

    /// Runnable apps of a leaf with pending demand, in the leaf policy's order.
    pub(crate) fn apps_with_demand(&self, leaf: QueueId) -> Vec<AppId> {
        let q = self.q(leaf);
        let mut apps: Vec<AppId> =
            q.runnable_apps.iter().copied().filter(|&a| self.apps[a].has_pending_demand()).collect();
        let policy = q.policy;
        apps.sort_by(|&a, &b| compare(policy, &self.app_view(a), &self.app_view(b), &self.cluster.total, self.types));
        apps
    }

    fn assign_queue(&mut self, id: QueueId, node: NodeId, now: Millis, out: &mut Vec<Decision>) -> Assigned {
        let t0 = self.phase_clock.now();
        let blocked = self.cluster.nodes[node].reservation.is_some()
            || (self.must_check_max(self.q(id).max_share_bounded) && !self.walk_usage(id).fits_in(&self.max_share(id)));
        self.phases.precheck_ns += self.phase_clock.since(t0);
        if blocked {
            return Assigned::None;
        }
        if !self.q(id).leaf {
            self.phases.parents_visited += 1;
            // Children with no pending demand are exactly those outside the members set.
            let q = self.q(id);
            self.phases.children_skipped += q.children.len().saturating_sub(q.members.len()) as u64;
        }
        if self.walk.ordering == Ordering::Incremental && self.order_exact {
            // Members in order. A child that fails moves no key (it neither allocates nor
            // reserves, and a failed try changes nothing a key is made of), so the array
            // stays as it was and the walk steps through it by position; it stops at the
            // first child that assigns or reserves.
            let leaf = self.q(id).leaf;
            for i in 0.. {
                let t0 = self.phase_clock.now();
                let next = self.q(id).members.get(i).copied();
                self.phases.ordering_ns += self.phase_clock.since(t0);
                let Some(key) = next else { break };
                let member = Self::member_id(&key);
                let r = if leaf {
                    self.assign_app(self.apps[member as usize].id, node, now, out)
                } else {
                    self.assign_queue(QueueId(member), node, now, out)
                };
                if r != Assigned::None {
                    return r;
                }
                debug_assert_eq!(self.q(id).members.get(i), Some(&key), "a failed child moved a key");
            }
            return Assigned::None;
        }
        if self.q(id).leaf {
            let t0 = self.phase_clock.now();
            let apps = self.apps_with_demand(id);
            self.phases.ordering_ns += self.phase_clock.since(t0);
            for app in apps {
                let r = self.assign_app(app, node, now, out);
                if r != Assigned::None {
                    return r;
                }
            }
        } else {
            let t0 = self.phase_clock.now();
            let children = self.ordered_children(id);
            self.phases.ordering_ns += self.phase_clock.since(t0);
            for child in children {
                let r = self.assign_queue(child, node, now, out);
                if r != Assigned::None {
                    return r;
                }
            }
        }
        Assigned::None
    }

    /// The AM limit of a leaf: `ceil(base × maxAMShare)` where base is the fair share, or
    /// min(root metrics' available, max share) for each type whose fair share is 0.
    pub fn am_limit(&self, leaf: QueueId) -> Resource {
        let q = self.q(leaf);
        if (q.settings.max_am_share + 1.0).abs() < 0.0001 {
            return self.props.resource_types.unbounded();
        }
        // The root metrics as last refreshed, not the live usage: allocations earlier in the
        // same heartbeat (or recovered containers) are not seen yet, as in YARN.
        let available = self.root_available;
        let max_share = self.max_share(leaf);
        let mut base = q.fair_share;
        for i in 0..self.types {
            if base.get(i) == 0 {
                base.set(i, available.get(i).min(max_share.get(i)));
            }
        }
        base.multiply_round_up(q.settings.max_am_share as f64)
    }

    /// An app without its AM may start it only within its queue's AM limit.
    fn over_am_share_limit(&mut self, app: AppId) -> bool {
        let a = &self.apps[app];
        if a.am_running || a.unmanaged_am {
            return false;
        }
        let queue = a.queue.expect("an alive app has a queue");
        let Some(next) = a.requests.iter().find(|r| r.any_count() > 0).map(|r| r.capability) else {
            return true;
        };
        let q = self.q(queue);
        if (q.settings.max_am_share + 1.0).abs() < 0.0001 {
            return false;
        }
        let limit = self.am_limit(queue);
        let am_usage = self.q(queue).am_usage;
        if am_usage.saturating_add(next).fits_in(&limit) {
            false
        } else {
            let name = self.q(queue).name.clone();
            self.apps[app].wait = Some(WaitReason::AmShareExceeded { queue: name, am_usage, request: next, limit });
            true
        }
    }

    fn assign_app(&mut self, app: AppId, node: NodeId, now: Millis, out: &mut Vec<Decision>) -> Assigned {
        self.phases.apps_tried += 1;
        let t0 = self.phase_clock.now();
        let r =
            if self.over_am_share_limit(app) { Assigned::None } else { self.assign_app_on(app, node, false, now, out) };
        self.phases.assignment_ns += self.phase_clock.since(t0);
        r
    }

    /// YARN's `hasContainerForNode`: an outstanding ask at this key that locality allows on
    /// this node, fits in the node's total capability and in the queue's max share.
    fn has_container_for_node(&mut self, app: AppId, idx: usize, node: NodeId) -> bool {
        let n = &self.cluster.nodes[node];
        let a = &self.apps[app];
        let e = &a.requests[idx];
        let has_rack = e.count_at(n.rack) > 0;
        let has_node = e.count_at(n.location) > 0;
        let locality_ok = e.any_count() > 0
            && (e.can_delay_to(None) || has_rack)
            && (!has_rack || e.can_delay_to(Some(n.rack)) || has_node);
        if !locality_ok {
            return false;
        }
        let capability = e.capability;
        if !capability.fits_in(&n.total) {
            self.apps[app].wait = Some(WaitReason::LargerThanNode { request: capability });
            return false;
        }
        let queue = a.queue.expect("an alive app has a queue");
        if !self.must_check_max(self.q(queue).path_bounded) {
            return true;
        }
        let over = self
            .path_to_root(queue)
            .find(|&q| !self.walk_usage(q).saturating_add(capability).fits_in(&self.max_share(q)));
        if let Some(q) = over {
            let name = self.q(q).name.clone();
            self.apps[app].wait = Some(WaitReason::QueueMaxResources { queue: name, request: capability });
            return false;
        }
        true
    }

    fn assign_app_on(
        &mut self,
        app: AppId,
        node: NodeId,
        reserved: bool,
        now: Millis,
        out: &mut Vec<Decision>,
    ) -> Assigned {
        // A reserved node serves only the reserved key; otherwise every key with an ask, in
        // priority order (the request list does not change length while it is walked).
        let reserved_idx = if reserved {
            let r = self.cluster.nodes[node].reservation.expect("a reserved node has a reservation");
            self.apps[app].request_index(r.priority)
        } else {
            None
        };
        let (node_loc, rack_loc) = {
            let n = &self.cluster.nodes[node];
            (n.location, n.rack)
        };
        for idx in 0..self.apps[app].requests.len() {
            let wanted =
                if reserved { Some(idx) == reserved_idx } else { self.apps[app].requests[idx].any_count() > 0 };
            if !wanted {
                continue;
            }
            if !reserved && !self.has_container_for_node(app, idx, node) {
                continue;
            }
            self.apps[app].requests[idx].scheduling_opportunities += 1;
            let allowed = self.allowed_locality(app, idx, now);
            let e = &self.apps[app].requests[idx];
            let (rack_count, node_count) = (e.count_at(rack_loc), e.count_at(node_loc));
            if rack_count > 0 && node_count > 0 {
                return self.assign_request(app, idx, node, NodeType::NodeLocal, reserved, out);
            }
            if !e.can_delay_to(Some(rack_loc)) {
                continue;
            }
            if rack_count > 0 && allowed != NodeType::NodeLocal {
                return self.assign_request(app, idx, node, NodeType::RackLocal, reserved, out);
            }
            if !e.can_delay_to(None) {
                continue;
            }
            if e.any_count() > 0 && (e.unique_location_asks() <= 1 || allowed == NodeType::OffSwitch) {
                return self.assign_request(app, idx, node, NodeType::OffSwitch, reserved, out);
            }
            self.apps[app].wait = Some(WaitReason::WaitingForLocality);
        }
        Assigned::None
    }

    /// Delay scheduling: the most relaxed locality allowed now for this key, by missed
    /// scheduling opportunities (or by time, with continuous scheduling's delays).
    fn allowed_locality(&mut self, app: AppId, idx: usize, now: Millis) -> NodeType {
        let p = &self.props;
        let by_time = p.continuous_scheduling;
        let (node_threshold, rack_threshold) = (p.locality_threshold_node.min(1.0), p.locality_threshold_rack.min(1.0));
        let (node_delay, rack_delay) = (p.locality_delay_node_ms, p.locality_delay_rack_ms);
        let num_nodes = self.cluster.live_nodes as f64;
        let start = self.apps[app].start_time;
        let e = &mut self.apps[app].requests[idx];
        if (by_time && (node_delay < 0 || rack_delay < 0))
            || (!by_time && (node_threshold < 0.0 || rack_threshold < 0.0))
        {
            return NodeType::OffSwitch;
        }
        let Some(allowed) = e.allowed_locality else {
            e.allowed_locality = Some(NodeType::NodeLocal);
            if by_time {
                e.last_scheduled = Some(now);
            }
            return NodeType::NodeLocal;
        };
        if allowed == NodeType::OffSwitch {
            return allowed;
        }
        let relax = if by_time {
            let waited = now - e.last_scheduled.unwrap_or(start);
            waited > if allowed == NodeType::NodeLocal { node_delay } else { rack_delay }
        } else {
            let threshold = if allowed == NodeType::NodeLocal { node_threshold } else { rack_threshold };
            e.scheduling_opportunities as f64 > num_nodes * threshold
        };
        if relax {
            let next = if allowed == NodeType::NodeLocal { NodeType::RackLocal } else { NodeType::OffSwitch };
            e.allowed_locality = Some(next);
            e.scheduling_opportunities = 0;
            e.last_scheduled = Some(now);
        }
        e.allowed_locality.expect("set above")
    }

    fn assign_request(
        &mut self,
        app: AppId,
        idx: usize,
        node: NodeId,
        kind: NodeType,
        reserved: bool,
        out: &mut Vec<Decision>,
    ) -> Assigned {
        let capability = {
            let n = &self.cluster.nodes[node];
            self.apps[app].requests[idx].capability_at(kind, n.location, n.rack)
        };
        let available = self.cluster.nodes[node].unallocated();
        if capability.fits_in(&available) {
            if self.apps[app].requests[idx].any_count() <= 0 {
                if reserved {
                    self.unreserve(app, node);
                    out.push(Decision::Unreserved { app, node });
                }
                return Assigned::None;
            }
            // A reserved container is the one allocated, at its size (YARN assumes one size
            // per priority; the ask's size only decided whether it fits).
            // It also keeps the reservation's container id.
            let mut size = capability;
            let mut reserved_as = None;
            if reserved {
                let r = self.cluster.nodes[node].reservation;
                size = r.map_or(capability, |r| r.resource);
                reserved_as = r.map(|r| r.seq);
                self.unreserve(app, node);
            }
            let container = self.allocate(app, idx, node, kind, size, reserved_as);
            out.push(Decision::Allocated { app, container, node });
            return Assigned::Container(capability);
        }
        // An app waiting for room preempted on this node does not also reserve it.
        if self.is_reservable(app, &capability)
            && !self.node_preempted_for(node, app)
            && self.reserve(app, idx, node, kind, if reserved { None } else { Some(capability) })
        {
            self.apps[app].wait = Some(WaitReason::Reserved { request: capability });
            out.push(Decision::Reserved { app, node });
            return Assigned::Reserved;
        }
        self.apps[app].wait = Some(WaitReason::NodeFull { request: capability });
        Assigned::None
    }

    /// Reserve only when the app is starved (below its fair share) and the container is at
    /// least the reservation threshold.
    fn is_reservable(&self, app: AppId, capability: &Resource) -> bool {
        let a = &self.apps[app];
        let queue = a.queue.expect("an alive app has a queue");
        let calc = Calculator::of(self.q(queue).policy);
        let starved = self.is_starved(app);
        let threshold = self.props.reservation_threshold();
        starved && calc.compare(&self.cluster.total, capability, &threshold, self.types).is_ge()
    }

    /// Reserve `node` for `app` at the key of entry `idx`: a new container of `fresh_size`, or
    /// (`None`, the node's reservation being served) the reserved container again.
    fn reserve(&mut self, app: AppId, idx: usize, node: NodeId, kind: NodeType, fresh_size: Option<Resource>) -> bool {
        let n = &self.cluster.nodes[node];
        if n.reservation.is_some_and(|r| r.app != app) {
            return false;
        }
        if kind != NodeType::NodeLocal {
            let a = &self.apps[app];
            let existing = a
                .reserved_nodes
                .iter()
                .filter(|&&m| kind == NodeType::OffSwitch || self.cluster.nodes[m].rack == n.rack)
                .count();
            let total = if kind == NodeType::OffSwitch {
                self.cluster.live_nodes
            } else {
                self.cluster.rack_sizes.get(&n.rack).copied().unwrap_or(0)
            };
            // Java multiplies int by float in float: 20 x 0.05f is 1.0f, not the 1.00000001
            // a double product of the widened ratio gives (which would allow 2).
            let allowed = f64::from(total as f32 * self.props.reservable_nodes).ceil() as usize;
            if existing >= allowed {
                return false;
            }
        }
        let priority = self.apps[app].requests[idx].priority;
        let Some(resource) = fresh_size.or(n.reservation.map(|r| r.resource)) else {
            return false;
        };
        // A new reservation takes a container id; the reserved container again keeps its own.
        let existing = n.reservation.map(|r| r.seq);
        let fresh = existing.is_none();
        let seq = existing.unwrap_or_else(|| self.take_yarn_number(app));
        self.cluster.nodes[node].reservation = Some(Reservation { app, priority, resource, seq });
        if fresh {
            self.apps[app].reserved_nodes.push(node);
            self.counters.reservations_made += 1;
        }
        true
    }

    pub(crate) fn unreserve(&mut self, app: AppId, node: NodeId) {
        let n = &mut self.cluster.nodes[node];
        if n.reservation.is_some_and(|r| r.app == app) {
            n.reservation = None;
            self.counters.reservations_released += 1;
        }
        self.apps[app].reserved_nodes.retain(|&m| m != node);
    }

    /// Create the container: asks decremented by locality, usage charged, AM marked.
    fn allocate(
        &mut self,
        app: AppId,
        idx: usize,
        node: NodeId,
        kind: NodeType,
        capability: Resource,
        reserved_as: Option<u32>,
    ) -> crate::ids::ContainerId {
        let (node_loc, rack_loc) = {
            let n = &self.cluster.nodes[node];
            (n.location, n.rack)
        };
        let e = &mut self.apps[app].requests[idx];
        // A more local allocation than allowed pulls the allowed level back.
        if let Some(allowed) = e.allowed_locality {
            if kind < allowed {
                e.allowed_locality = Some(kind);
            }
        }
        let priority = e.priority;
        // An entry allocated down to nothing goes, and lets go of its name.
        let locations = &mut self.cluster.locations;
        let mut dec = |loc| {
            if let Some(ask) = e.locations.get_mut(&loc) {
                ask.count -= 1;
                if ask.count <= 0 {
                    e.locations.remove(&loc);
                    locations.release(loc);
                }
            }
        };
        match kind {
            NodeType::NodeLocal => {
                dec(node_loc);
                dec(rack_loc);
            }
            NodeType::RackLocal => dec(rack_loc),
            NodeType::OffSwitch => {}
        }
        self.decrement_any(app, idx);
        let is_am = {
            let a = &self.apps[app];
            !a.am_running && !a.unmanaged_am
        };
        let container = self.new_container(app, node, capability, priority, is_am, reserved_as);
        if is_am {
            self.mark_am(app, capability);
        }
        self.apps[app].wait = None;
        self.counters.containers_allocated += 1;
        container
    }

    pub(crate) fn decrement_any(&mut self, app: AppId, idx: usize) {
        let a = &mut self.apps[app];
        let e = &mut a.requests[idx];
        if let Some(any) = e.any.as_mut() {
            if any.count > 0 {
                any.count -= 1;
                a.pending.sub_assign(e.capability);
                self.touch_demand(app);
            }
        }
    }
}

impl FairScheduler {
    /// One `assignContainer` for `app` on `node` (used for room freed by preemption): the
    /// resource allocated, or `None` when nothing was (a reservation counts as nothing).
    pub(crate) fn assign_app_for_preemption(
        &mut self,
        app: AppId,
        node: NodeId,
        now: Millis,
        out: &mut Vec<Decision>,
    ) -> Option<Resource> {
        // Called from `node_update`, which has already read this pass's switches.
        match self.assign_app(app, node, now, out) {
            Assigned::Container(r) => Some(r),
            Assigned::None | Assigned::Reserved => None,
        }
    }
}
