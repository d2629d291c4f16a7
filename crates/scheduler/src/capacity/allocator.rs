//! One application's turn on a node (YARN's `RegularContainerAllocator`): its priorities in
//! order, the pre-checks (partition, headroom, the wait before lending a labelled node),
//! delay scheduling across locality levels, then allocate, reserve or unreserve elsewhere;
//! and the node's own reservation served first.

use fairloom_model::{NodeType, Resource};

use super::assign::Offer;
use super::state::LocalityAsk;
use super::CapacityScheduler;
use crate::driver::Decision;
use crate::ids::{AppId, ContainerId, NodeId, PartitionId, QueueId};
use crate::reason::WaitReason;

/// An application's answer for one node (YARN's `AllocationState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AppAnswer {
    Allocated(NodeType),
    Reserved,
    /// Try the next application.
    Skipped,
    /// Try the next priority of this application.
    PrioritySkipped,
    /// Try the next locality level of this priority.
    LocalitySkipped,
    /// The queue's headroom is below the ask: the leaf's turn ends (QUEUE_SKIPPED).
    QueueSkipped,
}

impl CapacityScheduler {
    /// `RegularContainerAllocator.assignContainers` for a new container: the app's
    /// priorities in order until one allocates, reserves or skips the app.
    pub(super) fn assign_app(
        &mut self,
        leaf: QueueId,
        app: AppId,
        offer: Offer,
        headroom: Resource,
        user_unreserve: Resource,
        out: &mut Vec<Decision>,
    ) -> AppAnswer {
        for idx in 0..self.apps[app].requests.len() {
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
        let a = &self.apps[app];
        let r = &a.requests[idx];
        let Some(any) = r.any.filter(|x| x.count > 0) else { return AppAnswer::PrioritySkipped };
        if !offer.respect && !a.unmanaged_am && !a.am_running {
            return AppAnswer::Skipped;
        }
        let wanted_partition = if offer.respect { offer.partition } else { PartitionId::DEFAULT };
        if r.label != wanted_partition {
            return AppAnswer::PrioritySkipped;
        }
        let looking = self.conf.reservations_continue_looking;
        if !looking && !self.should_allocate_or_reserve(leaf, app, idx, &any.capability) {
            return AppAnswer::PrioritySkipped;
        }
        // `checkHeadroom`: what the app has reserved could be given back, on the default
        // partition and while continue-looking.
        let could_unreserve = if looking && offer.partition == PartitionId::DEFAULT {
            self.current_reservation(app)
        } else {
            Resource::none()
        };
        // Hadoop 3.4's `Resources.fitsIn(rc, ...)`: memory under the default calculator,
        // every type under the dominant one (not a dominant-share comparison).
        if !self.calc.fits_in(&any.capability, &headroom.saturating_add(could_unreserve)) {
            // The whole leaf stops here, for every application in it.
            self.note_queue_limit(leaf, wanted_partition, headroom);
            return AppAnswer::QueueSkipped;
        }
        let request_label = self.apps[app].requests[idx].label;
        let r = &mut self.apps[app].requests[idx];
        if request_label == PartitionId::DEFAULT {
            r.missed_non_partitioned += 1;
        }
        if !offer.respect && (r.missed_non_partitioned as usize) < self.cluster.live_nodes as usize {
            return AppAnswer::Skipped;
        }
        // `tryAllocateOnNode`: a scheduling opportunity, not counted when the node served
        // no locality level of this priority.
        r.scheduling_opportunities += 1;
        let answer = self.assign_on_node(leaf, app, idx, offer, headroom, user_unreserve, out);
        if answer == AppAnswer::PrioritySkipped {
            self.apps[app].requests[idx].scheduling_opportunities -= 1;
        }
        answer
    }

    /// `assignContainersOnNode`: node-local, rack-local, then off-switch.
    #[allow(clippy::too_many_arguments)]
    fn assign_on_node(
        &mut self,
        leaf: QueueId,
        app: AppId,
        idx: usize,
        offer: Offer,
        headroom: Resource,
        user_unreserve: Resource,
        out: &mut Vec<Decision>,
    ) -> AppAnswer {
        let (location, rack) = {
            let n = self.cluster.node(offer.node);
            (n.location, n.rack)
        };
        let r = &self.apps[app].requests[idx];
        // Node-local, which `canAssign` allows only while the node's rack is asked for too.
        if let (Some(&ask), Some(_)) = (r.at(location), r.at(rack)) {
            let answer =
                self.assign_container(leaf, app, idx, ask, NodeType::NodeLocal, offer, headroom, user_unreserve, out);
            if answer != AppAnswer::LocalitySkipped {
                return answer;
            }
        }
        let r = &self.apps[app].requests[idx];
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
        let r = &self.apps[app].requests[idx];
        let Some(ask) = r.any.filter(|a| a.count > 0) else { return AppAnswer::PrioritySkipped };
        if !r.can_delay_to(None) {
            return AppAnswer::PrioritySkipped;
        }
        if !self.may_assign(app, idx, NodeType::OffSwitch) {
            self.set_wait(app, Some(WaitReason::WaitingForLocality));
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
        let r = &self.apps[app].requests[idx];
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
        let a = &self.apps[app];
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
        if !self.calc.fits_in(&capability, &n.total) {
            self.set_wait(app, Some(WaitReason::LargerThanNode { request: capability }));
            return AppAnswer::LocalitySkipped;
        }
        let fits = self.calc.available_containers(&n.unallocated(), &capability) > 0;
        let should = self.should_allocate_or_reserve(leaf, app, idx, &capability);
        let need = self.calc.max(&self.cluster.total, capability.saturating_sub(headroom), user_unreserve);
        let need_unreserve = self.calc.any_above_zero(&need);
        let looking = self.conf.reservations_continue_looking;
        if fits {
            let mut give_back = None;
            // Giving back a reservation to make room is done on default-partition nodes only.
            if looking && offer.partition == PartitionId::DEFAULT && (!should || need_unreserve) {
                let needed = if need_unreserve { need } else { capability };
                match self.node_to_unreserve(app, idx, &needed) {
                    Some(node) => give_back = Some(node),
                    None => {
                        self.set_wait(
                            app,
                            Some(if need_unreserve {
                                WaitReason::QueueMaxCapacity { queue: self.q(leaf).name.clone(), limit: headroom }
                            } else {
                                WaitReason::NodeFull { request: capability }
                            }),
                        );
                        return AppAnswer::LocalitySkipped;
                    }
                }
            }
            let released = give_back.map_or(Resource::none(), |node| {
                self.apps[app].reservations.iter().find(|h| h.node == node).map_or(Resource::none(), |h| h.resource)
            });
            if !self.accept(leaf, &capability, &released, offer) {
                // The walk proposed it and stops here as for an allocation; the commit
                // refuses it, and the heartbeat counts it and walks again.
                self.reset_opportunities(app, idx, kind, offer.partition);
                self.set_wait(
                    app,
                    Some(WaitReason::QueueMaxCapacity { queue: self.q(leaf).name.clone(), limit: headroom }),
                );
                return AppAnswer::Allocated(kind);
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
                self.set_wait(
                    app,
                    Some(WaitReason::QueueMaxCapacity { queue: self.q(leaf).name.clone(), limit: headroom }),
                );
                return AppAnswer::LocalitySkipped;
            }
            if !self.accept(leaf, &capability, &Resource::none(), offer) {
                // Proposed, refused by the commit: the heartbeat ends as after a reservation.
                self.reset_opportunities(app, idx, kind, offer.partition);
                return AppAnswer::Reserved;
            }
            let priority = self.apps[app].requests[idx].priority;
            self.reserve(app, offer.node, priority, capability, offer.now);
            self.reset_opportunities(app, idx, kind, offer.partition);
            self.set_wait(app, Some(WaitReason::Reserved { request: capability }));
            out.push(Decision::Reserved { app, node: offer.node });
            AppAnswer::Reserved
        } else {
            self.set_wait(app, Some(WaitReason::NodeFull { request: capability }));
            AppAnswer::LocalitySkipped
        }
    }

    /// `getNodeIdToUnreserve`: the first of the app's reservations at this key that frees
    /// at least `needed`, in the order YARN's map of them iterates
    /// ([`CapacityScheduler::reservations_in_yarn_order`]).
    fn node_to_unreserve(&self, app: AppId, idx: usize, needed: &Resource) -> Option<NodeId> {
        let a = &self.apps[app];
        let priority = a.requests[idx].priority;
        self.reservations_in_yarn_order(app)
            .into_iter()
            .map(|i| &a.reservations[i])
            .find(|h| h.priority == priority && self.calc.fits_in(needed, &h.resource))
            .map(|h| h.node)
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
        let r = &mut self.apps[app].requests[idx];
        let priority = r.priority;
        let label = r.label;
        // An entry allocated down to nothing goes, and lets go of its name.
        let locations = &mut self.cluster.locations;
        let mut dec = |loc| {
            if let Some(ask) = r.locations.get_mut(&loc) {
                ask.count -= 1;
                if ask.count <= 0 {
                    r.locations.remove(&loc);
                    locations.release(loc);
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
        if let Some(any) = r.any.filter(|a| a.count > 0) {
            self.set_any(app, idx, Some(LocalityAsk { count: any.count - 1, ..any }), label);
        }
        let a = &self.apps[app];
        let is_am = !a.am_running && !a.unmanaged_am;
        let container = self.start_container(app, node, capability, priority, is_am, label, seq);
        if seq.is_none() {
            // A served reservation allocates without `containerAllocated`.
            self.resort_due(app);
        }
        self.set_wait(app, None);
        self.counters.containers_allocated += 1;
        container
    }

    /// After a first allocation or reservation at a key (`doAllocation`): delay scheduling
    /// starts over unless it went off-switch (or rack-local without the full reset), and a
    /// default-partition node restarts the wait before lending labelled nodes.
    fn reset_opportunities(&mut self, app: AppId, idx: usize, kind: NodeType, partition: PartitionId) {
        let full_reset = self.conf.rack_locality_full_reset;
        let r = &mut self.apps[app].requests[idx];
        if kind == NodeType::NodeLocal || (kind == NodeType::RackLocal && full_reset) {
            r.scheduling_opportunities = 0;
        }
        if partition == PartitionId::DEFAULT {
            r.missed_non_partitioned = 0;
        }
    }

    /// The node's reservation first (`allocateFromReservedContainer`): the locality levels
    /// of its key are walked as for a new container (`tryAllocateOnNode` with the reserved
    /// container), except that off-switch needs no delay; the first level whose ask fits the
    /// node allocates, or re-reserves when the node has no room yet. The reservation is
    /// dropped when nothing is asked at its key any more. No limit applies, as in YARN.
    pub(super) fn allocate_reserved(&mut self, node: NodeId, app: AppId, priority: i32, out: &mut Vec<Decision>) {
        let Some(idx) = self.apps[app].request(priority).filter(|&i| self.apps[app].requests[i].any_count() > 0) else {
            self.unreserve(app, node);
            out.push(Decision::Unreserved { app, node });
            return;
        };
        // Every offer of a reserved node counts as a scheduling opportunity of its key, and
        // is never taken back (YARN subtracts only for nodes without a reservation).
        self.apps[app].requests[idx].scheduling_opportunities += 1;
        let Some((ask, kind)) = self.reserved_level(app, idx, node) else { return };
        let n = self.cluster.node(node);
        if self.calc.available_containers(&n.unallocated(), &ask.capability) > 0 {
            // No limit is published: YARN's commit skips its limit checks (and the user limit
            // that publishes one) for an allocation from a reservation.
            let held = self.cluster.node(node).reservation;
            // YARN checks the fit with the ask's size but commits the reserved container: the
            // node, the queues and the user keep the reserved size (the container's end gives it
            // back), while the application is charged the ask's (see `CsApp::used_drift`).
            // The node can end up over-committed.
            let size = held.map_or(ask.capability, |r| r.resource);
            self.drop_reservation(app, node);
            let container = self.allocate(app, idx, node, kind, size, held.map(|r| r.seq));
            if size != ask.capability {
                self.counters.reservations_served_resized += 1;
                self.charge_beyond_container(app, node, ask.capability.saturating_sub(size));
            }
            out.push(Decision::Allocated { app, container, node });
        } else {
            self.apps[app].requests[idx].re_reservations += 1;
        }
    }

    /// `assignContainersOnNode` for a reserved container: the first locality level that may
    /// be served here and whose ask fits the node's total, with that ask. Node-local and
    /// rack-local keep their checks (an ask at the node's rack, the rack-local delay); a
    /// level that does not relax locality ends the walk.
    fn reserved_level(&self, app: AppId, idx: usize, node: NodeId) -> Option<(LocalityAsk, NodeType)> {
        let n = self.cluster.node(node);
        let r = &self.apps[app].requests[idx];
        let fits_node = |ask: &LocalityAsk| self.calc.fits_in(&ask.capability, &n.total);
        let rack_asked = r.at(n.rack).is_some();
        if let Some(&ask) = r.at(n.location) {
            if rack_asked && fits_node(&ask) {
                return Some((ask, NodeType::NodeLocal));
            }
        }
        if let Some(&ask) = r.at(n.rack) {
            if !r.can_delay_to(Some(n.rack)) {
                return None;
            }
            if self.may_assign(app, idx, NodeType::RackLocal) && fits_node(&ask) {
                return Some((ask, NodeType::RackLocal));
            }
        }
        let ask = r.any.filter(|a| a.count > 0)?;
        if !r.can_delay_to(None) || !fits_node(&ask) {
            return None;
        }
        Some((ask, NodeType::OffSwitch))
    }
}
