//! Applications: submission (placement, ACLs, runnability), YARN `allocate()` asks, finish,
//! moves between queues, and recovery-style placement of running containers.

use std::collections::BTreeMap;

use fairloom_model::{normalize, ApplicationId, Millis, Resource, ANY};

use super::state::{App, AppState, LocalityAsk, RequestEntry, Reservation};
use super::FairScheduler;
use crate::driver::{check_new_request_keys, Ask, Placement, QueueAcl, SchedulerError};
use crate::ids::{AppId, ContainerId, NodeId, QueueId};

impl FairScheduler {
    /// Submit an application. It is always recorded: placed in a queue (runnable or waiting)
    /// or rejected with a reason. `am`: the AM container's size, `None` for an unmanaged AM.
    pub(crate) fn submit(
        &mut self,
        name: &str,
        requested_queue: &str,
        user: &str,
        am: Option<Resource>,
        now: Millis,
    ) -> AppId {
        let id = self.new_app(name, user, am.is_none(), now);
        let queue = match self.place(requested_queue, user).and_then(|q| self.get_or_create_leaf(&q)) {
            Ok(q) => q,
            Err(why) => {
                self.reject(id, why);
                return id;
            }
        };
        self.admit(id, queue, requested_queue, user, am)
    }

    /// Submit straight into an existing leaf, skipping placement (as YARN's own test harness
    /// does). ACLs and maxRunningApps still apply.
    pub fn submit_to_leaf(
        &mut self,
        name: &str,
        leaf: QueueId,
        user: &str,
        am: Option<Resource>,
        now: Millis,
    ) -> Result<AppId, SchedulerError> {
        if !self.q(leaf).leaf || self.q(leaf).removed {
            return Err(SchedulerError::InvalidRequest(format!("{} is not a leaf queue", self.q(leaf).name)));
        }
        let id = self.new_app(name, user, am.is_none(), now);
        let requested = self.q(leaf).name.clone();
        Ok(self.admit(id, leaf, &requested, user, am))
    }

    fn new_app(&mut self, name: &str, user: &str, unmanaged: bool, now: Millis) -> AppId {
        self.counters.apps_submitted += 1;
        let cluster_timestamp = self.cluster_timestamp;
        let id = self.apps.insert(|id| {
            let yarn_id = ApplicationId { cluster_timestamp, id: id.seq + 1 };
            App {
                id,
                forgotten: false,
                name: name.to_string(),
                yarn_id,
                id_string: yarn_id.to_string(),
                user: user.to_string(),
                queue: None,
                start_time: now,
                state: AppState::Accepted,
                rejection: None,
                runnable: false,
                unmanaged_am: unmanaged,
                am_running: false,
                am_resource: Resource::none(),
                requests: Vec::new(),
                pending: Resource::none(),
                usage: Default::default(),
                demand: Resource::none(),
                demand_counted: Resource::none(),
                demand_counted_in: None,
                demand_dirty: false,
                fair_share: Resource::none(),
                live: Default::default(),
                next_container_seq: 1,
                next_yarn_number: 1,
                reserved_nodes: Vec::new(),
                wait: None,
                preempted: 0,
                order_key: None,
                tie_rank: 0,
                fairshare_starvation: Resource::none(),
                minshare_starvation: Resource::none(),
                last_time_at_fair_share: now,
                next_starvation_check: 0,
                marked: 0,
                marked_resource: Resource::none(),
                ask_stamps: 0,
            }
        });
        self.rank_app(id);
        id
    }

    /// ACL check, then into the leaf as runnable or waiting, then the AM ask.
    fn admit(&mut self, id: AppId, queue: QueueId, requested_queue: &str, user: &str, am: Option<Resource>) -> AppId {
        let groups = self.groups_of(user);
        if !self.holds_acl(queue, user, &groups, QueueAcl::SubmitApplications) {
            let why = format!(
                "user {user} cannot submit applications to queue {} (requested queue {requested_queue})",
                self.q(queue).name
            );
            self.reject(id, why);
            return id;
        }
        self.apps[id].queue = Some(queue);
        self.q_mut(queue).app_refs += 1;
        self.touch_demand(id);
        match self.runnable_block(queue, user) {
            None => {
                self.q_mut(queue).runnable_apps.push(id);
                self.apps[id].runnable = true;
                self.track_runnable(id);
                if am.is_none() {
                    self.apps[id].state = AppState::Running;
                }
                self.refresh_app(id);
            }
            Some(reason) => {
                self.q_mut(queue).non_runnable_apps.push(id);
                self.apps[id].wait = Some(reason);
                self.track_non_runnable(id);
            }
        }
        if let Some(am) = am {
            let ask = Ask::any(0, am, 1);
            self.set_asks(id, &[ask]).expect("an accepted app takes asks");
        }
        id
    }

    /// Record a submission refused before placement (it asked for something this scheduler
    /// does not have).
    pub(crate) fn refuse(&mut self, name: &str, user: &str, am: Option<Resource>, why: String, now: Millis) -> AppId {
        let id = self.new_app(name, user, am.is_none(), now);
        self.reject(id, why);
        id
    }

    fn reject(&mut self, app: AppId, why: String) {
        self.counters.apps_rejected += 1;
        let a = &mut self.apps[app];
        a.state = AppState::Rejected;
        a.rejection = Some(why);
        self.unrank_app(app);
    }

    /// The scheduler's own record of an application (the driver's view is [`Scheduler::app`]).
    pub fn app_record(&self, id: AppId) -> &App {
        &self.apps[id]
    }

    /// Every application not forgotten, in submission order.
    pub fn apps(&self) -> impl Iterator<Item = (AppId, &App)> {
        let mut held: Vec<(AppId, &App)> = self.apps.iter().filter(|a| !a.forgotten).map(|a| (a.id, a)).collect();
        held.sort_unstable_by_key(|(id, _)| *id);
        held.into_iter()
    }

    /// Drop every ask of `app`, letting go of the names its entries hold.
    fn release_requests(&mut self, app: AppId) {
        let requests = std::mem::take(&mut self.apps[app].requests);
        self.cluster.locations.release_all(requests.into_iter().flat_map(|e| e.locations.into_keys()));
    }

    /// Whether `id` names an application this scheduler holds (not one forgotten, whose
    /// slot another may have taken).
    pub fn holds(&self, id: AppId) -> bool {
        self.apps.get(id.index()).is_some_and(|a| a.id == id && !a.forgotten)
    }

    /// Forget a finished or rejected application once its owner needs it no more: its slot
    /// is free for the next submission, and nothing of it stays (an RM running for months
    /// submits millions). Refused while it lives, holds containers, or its demand is still
    /// counted (an update takes it out).
    pub(crate) fn forget_app(&mut self, id: AppId) -> Result<(), SchedulerError> {
        if !self.holds(id) {
            return Err(SchedulerError::InvalidRequest(format!("no application {id:?} to forget")));
        }
        let a = &self.apps[id];
        if a.is_alive() || !a.live.is_empty() || a.marked > 0 || !a.reserved_nodes.is_empty() {
            return Err(SchedulerError::AppNotAlive(format!("{} is not finished", a.name)));
        }
        if a.demand_dirty || a.demand_counted_in.is_some() {
            return Err(SchedulerError::InvalidRequest(format!(
                "{} still counts in its queue's demand until the next update",
                a.name
            )));
        }
        for list in &mut self.preempted_for {
            list.retain(|(app, _)| *app != id);
        }
        if let Some(q) = self.apps[id].queue {
            self.q_mut(q).app_refs -= 1;
            self.queues.free_if_unused(q);
        }
        let a = &mut self.apps[id];
        a.forgotten = true;
        a.queue = None;
        a.rejection = None;
        for s in [&mut a.name, &mut a.id_string, &mut a.user] {
            *s = String::new();
        }
        a.live = Default::default();
        a.reserved_nodes = Vec::new();
        self.release_requests(id);
        self.apps.free(id);
        Ok(())
    }

    /// The largest container the app's queue allows: the scheduler maximum, capped by the
    /// queue's (inherited) maxContainerAllocation.
    pub fn maximum_allocation(&self, queue: QueueId) -> Resource {
        self.props.maximum_allocation.componentwise_min(self.max_container_allocation(queue))
    }

    /// Normalise a request for `app`'s queue.
    pub fn normalize_for(&self, app: AppId, capability: Resource) -> Resource {
        let max = self.apps[app].queue.map_or(self.props.maximum_allocation, |q| self.maximum_allocation(q));
        normalize(capability, self.props.minimum_allocation, max, self.props.increment_allocation, self.types)
    }

    /// YARN `allocate()` asks: each sets the outstanding count and the capability at (priority,
    /// name), replacing what that name asked before. As in YARN (AppSchedulingInfo keys
    /// requests by priority, each key's asks by name), one entry holds a priority's asks, and
    /// a host, its rack and `*` may each ask for another size.
    pub(crate) fn set_asks(&mut self, app: AppId, asks: &[Ask]) -> Result<(), SchedulerError> {
        if !self.apps[app].is_alive() {
            return Err(SchedulerError::AppNotAlive(self.apps[app].name.clone()));
        }
        if let Some(bad) = asks.iter().find(|a| a.num_containers < 0) {
            return Err(SchedulerError::InvalidRequest(format!(
                "negative container count {} at priority {}",
                bad.num_containers, bad.priority
            )));
        }
        // Checked before anything changes, so a refused call leaves the asks as they were.
        let capabilities: Vec<Resource> = asks.iter().map(|ask| self.normalize_for(app, ask.capability)).collect();
        let held = &self.apps[app];
        check_new_request_keys(held.requests.len(), asks, |p| held.request_index(p).is_some())?;
        // Applied in YARN's order, which decides where each new name lands in its key's map
        // (preemption reads them in that order; see `ask_order`).
        let mut key_stamp = 0;
        let mut last_priority = None;
        let mut cleared: Vec<i32> = Vec::new();
        for i in super::ask_order::batch_order(asks) {
            let (ask, capability) = (&asks[i], capabilities[i]);
            let at_any = ask.resource_name == ANY;
            if last_priority != Some(ask.priority) {
                last_priority = Some(ask.priority);
                key_stamp = match self.held_key_stamp(app, ask.priority) {
                    Some(stamp) => stamp,
                    None => self.next_ask_stamp(app),
                };
            }
            // A name not interned yet (a host or rack no one holds) is new to the key.
            let held = if at_any {
                self.held_name_stamp(app, ask.priority, None)
            } else {
                let location = self.cluster.locations.get(&ask.resource_name);
                location.and_then(|l| self.held_name_stamp(app, ask.priority, Some(l)))
            };
            let stamp = match held {
                Some(stamp) => stamp,
                None => self.next_ask_stamp(app),
            };
            let a = &mut self.apps[app];
            let index = match a.request_index(ask.priority) {
                Some(i) => i,
                None => {
                    let at = a.requests.partition_point(|r| r.priority <= ask.priority);
                    a.requests.insert(
                        at,
                        RequestEntry {
                            priority: ask.priority,
                            capability,
                            any: None,
                            locations: BTreeMap::new(),
                            key_stamp,
                            scheduling_opportunities: 0,
                            allowed_locality: None,
                            last_scheduled: None,
                        },
                    );
                    at
                }
            };
            a.requests[index].key_stamp = key_stamp;
            let entry = &mut a.requests[index];
            let value = LocalityAsk { capability, count: ask.num_containers, relax: ask.relax_locality, stamp };
            if at_any {
                set_any(entry, &mut a.pending, Some(value));
                if ask.num_containers <= 0 {
                    cleared.push(ask.priority);
                } else {
                    cleared.retain(|&p| p != ask.priority);
                }
            } else {
                // The entry holds its name until it goes (allocated down to nothing, or the
                // app finishes).
                let l = self.cluster.locations.hold_for(&entry.locations, &ask.resource_name);
                entry.locations.insert(l, value);
            }
        }
        // A `*` ask of nothing ends the key in YARN (updatePendingResources drops its placement
        // allocator): every name at that priority goes with it, so a later ask starts afresh.
        for priority in cleared {
            self.clear_asks_at(app, priority);
        }
        self.touch_demand(app);
        Ok(())
    }

    fn next_ask_stamp(&mut self, app: AppId) -> u32 {
        let a = &mut self.apps[app];
        a.ask_stamps += 1;
        a.ask_stamps
    }

    /// Every ask at `priority` goes (its entry stays, with its scheduling opportunities and
    /// allowed locality, which YARN keeps per key in the application attempt).
    fn clear_asks_at(&mut self, app: AppId, priority: i32) {
        let a = &mut self.apps[app];
        if let Some(i) = a.request_index(priority) {
            let entry = &mut a.requests[i];
            set_any(entry, &mut a.pending, None);
            for l in std::mem::take(&mut entry.locations).into_keys() {
                self.cluster.locations.release(l);
            }
        }
    }

    /// A container finished on its node (`complete`) or was given back by its AM (`release`).
    pub(crate) fn complete_container(
        &mut self,
        container: ContainerId,
        exit_status: i32,
    ) -> Result<(), SchedulerError> {
        if !self.cluster.containers.get(container.index()).is_some_and(|c| c.alive) {
            return Err(SchedulerError::ContainerNotLive(format!("#{}", container.0)));
        }
        self.finish_container(container, exit_status);
        Ok(())
    }

    pub(crate) fn finish_container(&mut self, container: ContainerId, exit_status: i32) {
        if !self.cluster.containers[container].alive {
            return;
        }
        self.unmark(container);
        let c = self.cluster.end_container(container, exit_status);
        let (app, resource) = (c.app, c.resource);
        self.apps[app].live.note_ended(&self.cluster.container_gen);
        self.charge(app, resource, false);
        if self.apps[app].queue.is_some() {
            self.refresh_app(app);
        }
        self.touch_demand(app);
        self.refresh_root_metrics();
    }

    /// The application finishes: its containers are released, its reservations dropped,
    /// and it leaves its queue (which may let waiting applications run).
    pub(crate) fn finish_app(&mut self, app: AppId) -> Result<(), SchedulerError> {
        if !self.apps[app].is_alive() {
            return Err(SchedulerError::AppNotAlive(self.apps[app].name.clone()));
        }
        for c in self.app_containers(app).collect::<Vec<_>>() {
            self.finish_container(c, -100);
        }
        for node in self.apps[app].reserved_nodes.clone() {
            self.unreserve(app, node);
        }
        let queue = self.apps[app].queue.expect("an alive app has a queue");
        let was_runnable = self.remove_from_queue(app, queue);
        self.release_requests(app);
        let a = &mut self.apps[app];
        a.state = AppState::Finished;
        a.pending = Resource::none();
        a.demand = Resource::none();
        a.fair_share = Resource::none();
        a.runnable = false;
        a.wait = None;
        let user = a.user.clone();
        self.refresh_app(app);
        self.unrank_app(app);
        self.touch_demand(app);
        if was_runnable {
            self.untrack_runnable(app);
            self.update_runnability_on_app_removal(&user, queue);
        } else {
            self.untrack_non_runnable(app);
        }
        Ok(())
    }

    /// Take `app` out of its leaf's lists, releasing its AM usage. True if it was runnable.
    fn remove_from_queue(&mut self, app: AppId, queue: QueueId) -> bool {
        let q = self.q_mut(queue);
        let runnable = q.runnable_apps.contains(&app);
        q.runnable_apps.retain(|&a| a != app);
        q.non_runnable_apps.retain(|&a| a != app);
        let a = &self.apps[app];
        if runnable && a.am_running {
            let am = a.am_resource;
            self.q_mut(queue).am_usage.sub_assign(am);
        }
        runnable
    }

    /// Move a running application to another leaf, as YARN's moveApplicationAcrossQueues:
    /// refused when the target is not a leaf, or would break maxRunningApps or maxResources
    /// on a queue below the lowest common ancestor.
    pub(crate) fn move_app(&mut self, app: AppId, target: &str) -> Result<QueueId, SchedulerError> {
        if !self.apps[app].is_alive() {
            return Err(SchedulerError::AppNotAlive(self.apps[app].name.clone()));
        }
        let target_name =
            if target == "root" || target.starts_with("root.") { target.to_string() } else { format!("root.{target}") };
        let target = self.queue_id(&target_name).filter(|&q| self.q(q).leaf).ok_or_else(|| {
            SchedulerError::MoveRefused(format!("target queue {target_name} not found or is not a leaf queue"))
        })?;
        let old = self.apps[app].queue.expect("an alive app has a queue");
        if old == target {
            return Ok(target);
        }
        let was_runnable = self.apps[app].runnable;
        let usage = self.apps[app].usage.get();
        if was_runnable {
            let old_path: Vec<QueueId> = self.path_to_root(old).collect();
            for q in self.path_to_root(target).take_while(|q| !old_path.contains(q)) {
                let queue = self.q(q);
                if queue.runnable_count as i64 == queue.settings.max_running_apps as i64 {
                    return Err(SchedulerError::MoveRefused(format!(
                        "moving to {target_name} would violate maxRunningApps of {}",
                        queue.name
                    )));
                }
                if !queue.usage.get().saturating_add(usage).fits_in(&self.max_share(q)) {
                    return Err(SchedulerError::MoveRefused(format!(
                        "moving to {target_name} would violate maxResources of {}",
                        queue.name
                    )));
                }
            }
        }
        let user = self.apps[app].user.clone();
        // As YARN's executeMove: runnability in the target is judged before the app leaves
        // its queue, and a runnable app that would not run there is not moved.
        let now_runnable = match self.runnable_block(target, &user) {
            None => true,
            Some(reason) if was_runnable => {
                return Err(SchedulerError::MoveRefused(format!(
                    "the app would not be runnable in {target_name}: {reason}"
                )))
            }
            Some(_) => false,
        };
        let (am_running, am) = (self.apps[app].am_running, self.apps[app].am_resource);
        self.detach_app(app);
        self.remove_from_queue(app, old);
        if was_runnable {
            self.untrack_runnable(app);
        }
        // Its reservations stay where they are (SchedulerApplicationAttempt.move only moves
        // their metrics to the new queue).
        self.charge_path(old, usage, false);
        self.apps[app].queue = Some(target);
        self.q_mut(old).app_refs -= 1;
        self.q_mut(target).app_refs += 1;
        self.queues.free_if_unused(old);
        self.charge_path(target, usage, true);
        if now_runnable {
            self.q_mut(target).runnable_apps.push(app);
            if !was_runnable {
                self.untrack_non_runnable(app);
            }
            self.apps[app].runnable = true;
            self.apps[app].wait = None;
            self.track_runnable(app);
            // YARN drops a moved app's AM usage from the old queue and never adds it to the
            // new one (FSLeafQueue.addApp does not; removeApp will subtract it when the app
            // ends, so that queue's AM usage can go below zero): fairloom keeps the same count,
            // the difference recorded as the queue's drift.
            if am_running {
                self.q_mut(target).am_drift.sub_assign(am);
            }
            let a = &mut self.apps[app];
            if a.unmanaged_am || a.am_running {
                a.state = AppState::Running;
            }
        } else {
            self.q_mut(target).non_runnable_apps.push(app);
            self.apps[app].runnable = false;
        }
        self.refresh_app(app);
        self.refresh_path(old);
        self.touch_demand(app);
        if was_runnable {
            self.update_runnability_on_app_removal(&user, old);
        }
        Ok(target)
    }

    /// Put running containers on a node directly, as an RM recovering after a restart
    /// learns them from node managers: no limit, share or locality check.
    pub(crate) fn place_containers(&mut self, p: &Placement<'_>) -> Result<Vec<ContainerId>, SchedulerError> {
        let Placement { app, node, capability, priority, count, am, .. } = *p;
        if !self.apps[app].is_alive() {
            return Err(SchedulerError::AppNotAlive(self.apps[app].name.clone()));
        }
        if self.cluster.nodes[node].removed {
            return Err(SchedulerError::UnknownNode(self.cluster.nodes[node].name.clone()));
        }
        let mut out = Vec::new();
        for _ in 0..count {
            // As FSAppAttempt.recoverContainer: a managed application's first recovered
            // container is its AM (AM usage, am_running), whichever it is; an unmanaged one has
            // none. `am` is the per-container flag preemption reads (RMContainer's AM flag),
            // set on every container placed with it, as Hadoop's preemption tests do.
            let first = !self.apps[app].unmanaged_am && !self.apps[app].am_running;
            let c = self.new_container(app, node, capability, priority, am, None);
            if first {
                self.mark_am(app, capability);
                // The recovered AM satisfies the AM ask made at submission.
                let normalized = self.normalize_for(app, capability);
                let a = &self.apps[app];
                if let Some(idx) = a.request_index(0).filter(|&i| a.requests[i].capability == normalized) {
                    self.decrement_any(app, idx);
                }
            }
            out.push(c);
        }
        Ok(out)
    }

    /// Give `node` a reservation for `app`, as recovery would.
    pub(crate) fn place_reservation(
        &mut self,
        app: AppId,
        node: NodeId,
        capability: Resource,
        priority: i32,
    ) -> Result<(), SchedulerError> {
        if !self.apps[app].is_alive() {
            return Err(SchedulerError::AppNotAlive(self.apps[app].name.clone()));
        }
        if let Some(r) = self.cluster.nodes[node].reservation {
            self.unreserve(r.app, node);
        }
        let seq = self.take_yarn_number(app);
        self.cluster.nodes[node].reservation = Some(Reservation { app, priority, resource: capability, seq });
        self.apps[app].reserved_nodes.push(node);
        Ok(())
    }
}

/// Set the `*` ask of a request entry (its capability becomes the entry's), keeping the
/// application's pending total (the `*` asks' sum) in step with it.
fn set_any(entry: &mut RequestEntry, pending: &mut Resource, value: Option<LocalityAsk>) {
    pending.sub_assign(entry.capability.times(entry.any_count() as i64));
    if let Some(any) = value {
        entry.capability = any.capability;
    }
    entry.any = value;
    pending.add_assign(entry.capability.times(entry.any_count() as i64));
}
