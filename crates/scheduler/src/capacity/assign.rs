//! One node heartbeat under the Capacity Scheduler, as YARN 3.x runs it: serve the node's
//! reservation, else walk from root (children in their ordering policy, each parent
//! handing its child a limit), through the leaf's applications in its ordering policy
//! (queue and user limits), to one container or one reservation; repeat while
//! `canAllocateMore`. A labelled non-exclusive node that finds nothing for its own
//! partition is offered to default-partition asks (IGNORE_PARTITION_EXCLUSIVITY).

use fairloom_config::capacity::AppOrdering;
use fairloom_model::{Millis, NodeType, Resource};

use super::allocator::AppAnswer;
use super::{CapacityScheduler, ROOT};
use crate::driver::Decision;
use crate::ids::{AppId, ContainerId, NodeId, PartitionId, QueueId};
use crate::reason::WaitReason;

/// What one walk produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Allocated(NodeType),
    Reserved,
    /// Nothing. `blocked` is YARN's QUEUE_LIMIT skip: an application's ask did not fit the
    /// leaf's headroom; that headroom, which nobody under the parent can use now, comes off
    /// the limits the parent hands its later children (`addBlockedHeadroom`).
    Nothing {
        blocked: Option<Resource>,
    },
}

impl Outcome {
    const NONE: Self = Self::Nothing { blocked: None };

    fn assigned(self) -> bool {
        !matches!(self, Self::Nothing { .. })
    }
}

/// The walk's scheduling mode and the node it serves.
#[derive(Debug, Clone, Copy)]
pub(super) struct Offer {
    pub node: NodeId,
    pub partition: PartitionId,
    /// RESPECT_PARTITION_EXCLUSIVITY (else IGNORE: a non-exclusive partition lent to
    /// default-partition asks).
    pub respect: bool,
    /// The heartbeat's time (a reservation made now records it).
    pub now: Millis,
}

/// Whether a parent has room left for its children. With the memory-only calculator, once
/// its limit less the headroom its children were blocked on and what it uses leaves no
/// memory, every child's limit is at most what the child uses: only a child that can give
/// back a reservation (continue-looking; `may_unreserve`) may pass its check, and the walk
/// visits only those. The applications under the others wait for this queue, noted once.
/// Only under RESPECT: lent nodes (IGNORE_PARTITION_EXCLUSIVITY) check queues against the
/// partition, not against the limits parents hand down.
struct Shut {
    /// The parent's limit capped by its maximum, less what it uses (memory), when the
    /// calculator allows the shortcut.
    room: Option<i64>,
    queue: QueueId,
    partition: PartitionId,
    cap: Resource,
    noted: bool,
}

impl Shut {
    fn new(s: &CapacityScheduler, q: QueueId, offer: Offer, limit: Resource) -> Self {
        debug_assert!(offer.respect);
        let part = &s.q(q).parts[offer.partition.index()];
        let cap = s.calc.min(&s.cluster.total, limit, part.maximum);
        Self {
            room: (!s.calc.is_dominant()).then(|| cap.memory() - part.used.memory()),
            queue: q,
            partition: offer.partition,
            cap,
            noted: false,
        }
    }

    /// True when no child without a reservation can pass; notes the queue the first time.
    fn check(&mut self, s: &mut CapacityScheduler, blocked: Option<Resource>) -> bool {
        let Some(room) = self.room else { return false };
        let blocked = blocked.unwrap_or(Resource::none());
        if room - blocked.memory() > 0 {
            return false;
        }
        if !self.noted {
            self.noted = true;
            s.note_queue_limit(self.queue, self.partition, self.cap.saturating_sub(blocked));
        }
        true
    }
}

/// What the idle applications ahead of the first asking one decide (see
/// `idle_apps_queue_check`).
enum IdleCheck {
    /// One of them failed the queue check under this limit: the leaf's turn ends.
    Stop(Resource),
    /// The asking applications decide, as before.
    Undecided,
}

impl CapacityScheduler {
    /// A NodeManager heartbeat: reported completions first, then allocation on the node.
    pub(crate) fn node_heartbeat_into(
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

    /// Allocation on one node (`allocateContainersToNode` with `canAllocateMore`). Delay
    /// scheduling counts missed opportunities, not time; `now` dates new reservations.
    pub(crate) fn node_update_into(&mut self, node: NodeId, now: Millis, out: &mut Vec<Decision>) {
        let from = out.len();
        self.node_walk(node, now, out);
        self.counters.decisions.decisions(&out[from..], &self.cluster);
    }

    fn node_walk(&mut self, node: NodeId, now: Millis, out: &mut Vec<Decision>) {
        if self.cluster.node(node).removed {
            return;
        }
        self.counters.heartbeats += 1;
        self.phase_clock.heartbeat(self.counters.heartbeats);
        let (mut offswitch, mut assigned) = (0, 0);
        loop {
            let outcome = self.allocate_on_node(node, now, out);
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
    fn allocate_on_node(&mut self, node: NodeId, now: Millis, out: &mut Vec<Decision>) -> Outcome {
        if let Some(r) = self.cluster.node(node).reservation {
            self.allocate_reserved(node, r.app, r.priority, out);
            return Outcome::NONE;
        }
        let n = self.cluster.node(node);
        if self.calc.available_containers(&n.unallocated(), &self.props.minimum_allocation) <= 0 {
            return Outcome::NONE;
        }
        let partition = n.partition;
        let t0 = self.phase_clock.now();
        let limit = self.cluster.partitions[partition.index()].total;
        let offer = Offer { node, partition, respect: true, now };
        let mut outcome = self.assign_parent(ROOT, offer, limit, out);
        if !outcome.assigned() && partition != PartitionId::DEFAULT && !self.cluster.partition(partition).exclusive {
            let limit = self.cluster.partitions[0].total;
            outcome = self.assign_parent(ROOT, Offer { respect: false, ..offer }, limit, out);
        }
        self.phases.assignment_ns += self.phase_clock.since(t0);
        outcome
    }

    /// The queue's headroom under the limit it works under on this offer (its maximum, and
    /// what its parent leaves it; negative when over); `Err(limit)` when it already uses
    /// all of it (`canAssignToThisQueue`), unless continue-looking could give back
    /// `could_unreserve` and bring it under.
    fn queue_limit(
        &self,
        q: QueueId,
        offer: Offer,
        limit: Resource,
        could_unreserve: Resource,
    ) -> Result<Resource, Resource> {
        let cluster = &self.cluster.total;
        let part = &self.q(q).parts[offer.partition.index()];
        let current = if offer.respect {
            self.calc.min(cluster, part.maximum, limit)
        } else {
            self.cluster.partitions[offer.partition.index()].total
        };
        if self.calc.ge(cluster, &part.used, &current) {
            let rescued = self.conf.reservations_continue_looking
                && self.calc.gt(cluster, &could_unreserve, &Resource::none())
                && self.calc.lt(cluster, &part.used.saturating_sub(could_unreserve), &current);
            if !rescued {
                return Err(current);
            }
        }
        Ok(current.saturating_sub(part.used.get()))
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
        let t0 = self.phase_clock.now();
        // A parent may pass its limit by what is reserved under it (YARN reads the queue's
        // reserved metric, which is the default partition's).
        let reserved = self.q(q).parts[PartitionId::DEFAULT.index()].reserved;
        if self.queue_limit(q, offer, limit, reserved).is_err() {
            self.phases.precheck_ns += self.phase_clock.since(t0);
            return Outcome::NONE;
        }
        let mut blocked = None;
        if self.incremental() && offer.respect {
            let mut shut = Shut::new(self, q, offer, limit);
            // Children that assign nothing change nothing, so the kept order stays valid.
            let mut after = None;
            loop {
                let next = if shut.check(self, blocked) {
                    self.next_reserving_child(q, offer.partition, after.as_ref())
                } else {
                    self.next_child(q, offer.partition, after.as_ref())
                };
                let Some(k) = next else { break };
                let outcome = self.assign_child(q, k.id, offer, limit, &mut blocked, out);
                if outcome.assigned() {
                    return outcome;
                }
                after = Some(k);
            }
        } else {
            let children = self.sorted_children(q, offer.partition, offer.respect);
            self.phases.children_skipped += (self.q(q).children.len() - children.len()) as u64;
            self.phases.ordering_ns += self.phase_clock.since(t0);
            // YARN's way, every child visited: the property tests hold the shortcut to it.
            for child in children {
                let outcome = self.assign_child(q, child, offer, limit, &mut blocked, out);
                if outcome.assigned() {
                    return outcome;
                }
            }
        }
        Outcome::Nothing { blocked }
    }

    /// One child's turn; a QUEUE_LIMIT skip adds its headroom (at least none) to the
    /// parent's `blocked`, which the limits of the children after it leave out.
    fn assign_child(
        &mut self,
        parent: QueueId,
        child: QueueId,
        offer: Offer,
        limit: Resource,
        blocked: &mut Option<Resource>,
        out: &mut Vec<Decision>,
    ) -> Outcome {
        let held_back = blocked.unwrap_or(Resource::none());
        let child_limit = self.child_limit(parent, child, limit, held_back, offer.partition);
        let outcome = if self.q(child).leaf {
            self.assign_leaf(child, offer, child_limit, out)
        } else {
            self.assign_parent(child, offer, child_limit, out)
        };
        if let Outcome::Nothing { blocked: Some(headroom) } = outcome {
            let more = self.calc.max(&self.cluster.total, headroom, Resource::none());
            *blocked = Some(held_back.saturating_add(more));
        }
        outcome
    }

    /// The leaf's activated applications with something to ask in `p`, in its ordering
    /// policy, sorted afresh.
    pub(crate) fn sorted_apps(&self, leaf: QueueId, p: PartitionId) -> Vec<AppId> {
        let apps = self.q(leaf).active.iter().copied().filter(|&a| self.apps[a].pending[p.index()].any_positive());
        self.in_policy_order(leaf, apps.collect())
    }

    /// `apps`, activated applications of `leaf` in its active order, in its ordering
    /// policy's order (fifo keeps the active order).
    fn in_policy_order(&self, leaf: QueueId, mut apps: Vec<AppId>) -> Vec<AppId> {
        if let AppOrdering::Fair { .. } = self.q(leaf).settings.app_ordering {
            apps.sort_by_key(|&a| self.app_key(a));
        }
        apps
    }

    /// Keep a leaf's activated applications in fifo order: priority, then submission.
    pub(crate) fn insert_active(&mut self, leaf: QueueId, app: AppId) {
        let key = |s: &Self, a: AppId| {
            let x = &s.apps[a];
            (std::cmp::Reverse(x.priority), x.yarn_id.id)
        };
        let k = key(self, app);
        let at = self.q(leaf).active.partition_point(|&a| key(self, a) < k);
        self.q_mut(leaf).active.insert(at, app);
    }

    pub(crate) fn sort_active(&mut self, leaf: QueueId) {
        let mut active = std::mem::take(&mut self.q_mut(leaf).active);
        active.sort_by_key(|&a| (std::cmp::Reverse(self.apps[a].priority), self.apps[a].yarn_id.id));
        self.q_mut(leaf).active = active;
    }

    /// `LeafQueue.assignContainers`: the applications in order; each first passes the queue
    /// limit (checked again per application only while continue-looking could use its
    /// reservation) and its user's limit. An application skipped for the queue's headroom
    /// ends the leaf's turn (QUEUE_LIMIT), one skipped otherwise lets the next one try.
    fn assign_leaf(&mut self, leaf: QueueId, offer: Offer, limit: Resource, out: &mut Vec<Decision>) -> Outcome {
        // Lent (non-exclusive) nodes serve default-partition asks.
        let p = if offer.respect { offer.partition } else { PartitionId::DEFAULT };
        if !self.wants(leaf, offer.partition, offer.respect) {
            return Outcome::NONE;
        }
        self.resort(leaf);
        // Without user weights the limit is the same for every user of the leaf; it is
        // computed once an application passed the queue's check.
        let mut user_limit = None;
        let looking = self.conf.reservations_continue_looking;
        let mut headroom = Resource::none();
        let mut check_queue = true;
        let incremental = self.incremental();
        let mut all_held = true;
        if looking {
            match self.idle_apps_queue_check(leaf, offer, limit, p) {
                IdleCheck::Stop(current) => {
                    self.note_queue_limit(leaf, p, current);
                    return Outcome::NONE;
                }
                IdleCheck::Undecided => {}
            }
        }
        let sorted = if incremental { Vec::new() } else { self.sorted_apps(leaf, p) };
        let mut after = None;
        let mut i = 0;
        let mut tried = false;
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
            tried = true;
            if check_queue {
                let reserved = self.current_reservation(app);
                match self.queue_limit(leaf, offer, limit, reserved) {
                    Ok(room) => headroom = room,
                    Err(current) => {
                        self.note_queue_limit(leaf, p, current);
                        return Outcome::NONE;
                    }
                }
                check_queue = looking && !reserved.is_none();
            }
            self.set_headroom(app, leaf);
            if user_limit.is_none() {
                self.user_limit_asked(leaf, offer.partition, offer.respect, true);
                self.publish_limit(leaf, limit);
                // A held leaf: every application would be refused by the cached user limit
                // again. It is visited anyway because the visit publishes the limit the AM
                // limit (activation) reads, as sorting visits it; its applications are not.
                if incremental && offer.respect && self.q(leaf).parts[p.index()].held() {
                    return Outcome::NONE;
                }
            }
            let user_limit =
                *user_limit.get_or_insert_with(|| self.cached_user_limit(leaf, offer.partition, offer.respect));
            let (allowed, unreserve) = self.can_assign_to_user(leaf, app, &user_limit, offer.partition);
            if !allowed {
                self.note_user_limit(leaf, app, offer.partition, user_limit);
                continue;
            }
            all_held = false;
            match self.assign_app(leaf, app, offer, headroom, unreserve, out) {
                AppAnswer::Allocated(kind) => return Outcome::Allocated(kind),
                AppAnswer::Reserved => return Outcome::Reserved,
                AppAnswer::QueueSkipped => return Outcome::Nothing { blocked: Some(headroom) },
                _ => continue,
            }
        }
        if !tried {
            self.publish_for_idle_apps(leaf, offer, limit);
        }
        // Only under RESPECT (the kept orders' mode), where p is the apps' partition too.
        if all_held && offer.respect && !self.q(leaf).parts[p.index()].all_users_held {
            self.hold(leaf, p);
        }
        Outcome::NONE
    }

    /// The queue check over the applications that ask for nothing in `p` ahead of the first
    /// one that does: YARN's loop walks every activated application, and while the check is
    /// still due an idle one stops the leaf as an asking one would. It matters only when the
    /// leaf is at its limit and continue-looking could let an application with a reservation
    /// through: an idle one without a reservation ahead of it ends the leaf's turn. (An idle
    /// one that passes with a reservation publishes the limit as an asking one would.)
    fn idle_apps_queue_check(&mut self, leaf: QueueId, offer: Offer, limit: Resource, p: PartitionId) -> IdleCheck {
        // Passing without a reservation, or nothing reserved in the leaf for the check to
        // give back: every application gets the answer the first asking one gets.
        if self.q(leaf).parts[PartitionId::DEFAULT.index()].reserved.is_none()
            || self.queue_limit(leaf, offer, limit, Resource::none()).is_ok()
        {
            return IdleCheck::Undecided;
        }
        let order = self.in_policy_order(leaf, self.q(leaf).active.clone());
        for app in order {
            if self.apps[app].pending[p.index()].any_positive() {
                return IdleCheck::Undecided;
            }
            let reserved = self.current_reservation(app);
            if let Err(current) = self.queue_limit(leaf, offer, limit, reserved) {
                return IdleCheck::Stop(current);
            }
            self.set_headroom(app, leaf);
            self.user_limit_asked(leaf, offer.partition, offer.respect, true);
            self.publish_limit(leaf, limit);
        }
        IdleCheck::Undecided
    }

    /// A leaf visited for its waiting applications' asks, none of its activated ones asking:
    /// YARN's loop walks activated applications that ask for nothing too, and the first one
    /// that passes the queue's check publishes the limit the AM limit reads.
    fn publish_for_idle_apps(&mut self, leaf: QueueId, offer: Offer, limit: Resource) {
        let q = self.q(leaf);
        let first = match q.settings.app_ordering {
            AppOrdering::Fair { .. } => q.active.iter().copied().min_by_key(|&a| self.app_key(a)),
            _ => q.active.first().copied(),
        };
        let Some(first) = first else { return };
        let reserved = self.current_reservation(first);
        if self.queue_limit(leaf, offer, limit, reserved).is_ok() {
            self.set_headroom(first, leaf);
            self.user_limit_asked(leaf, offer.partition, offer.respect, true);
            self.publish_limit(leaf, limit);
        }
    }

    /// Record why `app` waits: its user is over the user limit (updated in place when it
    /// already says so, as it does on every heartbeat while the user stays over).
    fn note_user_limit(&mut self, leaf: QueueId, app: AppId, p: PartitionId, limit: Resource) {
        let a = &self.apps[app];
        let used = self.queues[leaf].users.at(a.user_slot).used[p.index()];
        let seq = self.next_wait_seq();
        let a = &mut self.apps[app];
        match &mut a.wait {
            Some(WaitReason::UserLimit { used: u, limit: l, .. }) => {
                *u = used;
                *l = limit;
            }
            wait => *wait = Some(WaitReason::UserLimit { user: a.user.clone(), used, limit }),
        }
        a.wait_seq = seq;
    }
}
