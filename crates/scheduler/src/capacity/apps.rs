//! Applications under the Capacity Scheduler: submission (queue, ACL, state, limits, labels),
//! containers starting and ending, finishing, moves, and recovery-style placement (their
//! asks are in `asks`). Every change of usage goes through `charge` here, and every change of
//! pending through `asks`, which keep the queue path, the user and the application in step.

use fairloom_model::{normalize, ApplicationId, Millis, Resource};

use super::state::{CsApp, LocalityAsk};
use super::CapacityScheduler;
use crate::cluster::hash_order::container_id_hash;
use crate::driver::{AppState, Ask, Placement, QueueAcl, SchedulerError, SubmitSpec};
use crate::ids::{AppId, ContainerId, NodeId, PartitionId, QueueId};

/// A user's share of a partition (`divide(used, partition)`), 0 in an empty partition.
pub(crate) fn share_of(calc: &super::calc::Calc, used: &Resource, partition: &Resource) -> f32 {
    let x = calc.divide(partition, used, partition);
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

impl CapacityScheduler {
    fn new_app(&mut self, spec: &SubmitSpec<'_>, now: Millis) -> AppId {
        let nparts = self.nparts();
        self.counters.apps_submitted += 1;
        self.apps.insert(|id| CsApp {
            id,
            forgotten: false,
            name: spec.name.to_string(),
            yarn_id: ApplicationId { cluster_timestamp: self.cluster_timestamp, id: id.seq + 1 },
            user: spec.user.to_string(),
            queue: None,
            user_slot: 0,
            priority: spec.priority.min(self.max_app_priority),
            start_time: now,
            state: AppState::Accepted,
            rejection: None,
            activated: false,
            users_active: false,
            unmanaged_am: spec.am.is_none(),
            am_resource: Resource::none(),
            am_partition: PartitionId::DEFAULT,
            am_running: false,
            default_label: PartitionId::DEFAULT,
            requests: Vec::new(),
            pending: vec![Resource::none(); nparts],
            used: vec![Default::default(); nparts],
            used_drift: vec![Resource::none(); nparts],
            reserved: vec![Resource::none(); nparts],
            usage: Default::default(),
            live: Default::default(),
            next_container_seq: 1,
            reservations: Vec::new(),
            reservation_peaks: Vec::new(),
            keys: vec![None; nparts],
            ordered_by: Default::default(),
            headroom_leaf: None,
            preempted: 0,
            marked: 0,
            wait: None,
            wait_seq: 0,
        })
    }

    /// Drop every ask of `app`, letting go of the names its entries hold.
    fn release_requests(&mut self, app: AppId) {
        let requests = std::mem::take(&mut self.apps[app].requests);
        self.cluster.locations.release_all(requests.into_iter().flat_map(|r| r.locations.into_keys()));
    }

    /// Forget a finished or rejected application once its owner needs it no more: its slot
    /// is free for the next submission, and nothing of it stays but its per-partition
    /// figures (all zero). Refused while it lives or holds containers or reservations.
    pub(crate) fn forget_app(&mut self, id: AppId) -> Result<(), SchedulerError> {
        if !self.holds(id) {
            return Err(SchedulerError::InvalidRequest(format!("no application {id:?} to forget")));
        }
        let a = &self.apps[id];
        if a.is_alive() || !a.live.is_empty() || a.marked > 0 || !a.reservations.is_empty() || a.activated {
            return Err(SchedulerError::AppNotAlive(format!("{} is not finished", a.name)));
        }
        let a = &mut self.apps[id];
        a.forgotten = true;
        a.queue = None;
        a.rejection = None;
        a.wait = None;
        for s in [&mut a.name, &mut a.user] {
            *s = String::new();
        }
        a.live = Default::default();
        a.reservations = Vec::new();
        a.reservation_peaks = Vec::new();
        self.release_requests(id);
        self.apps.free(id);
        Ok(())
    }

    fn reject(&mut self, app: AppId, why: String) -> AppId {
        self.counters.apps_rejected += 1;
        let a = &mut self.apps[app];
        a.state = AppState::Rejected;
        a.rejection = Some(why);
        app
    }

    /// The leaf a client's queue name means: a full path, or a leaf's own name when only one
    /// leaf has it (YARN 3.x resolves short names the same way).
    pub(crate) fn resolve_queue(&self, name: &str) -> Result<QueueId, String> {
        if let Some(&q) = self.queue_index.get(name) {
            return Ok(q);
        }
        let matches: Vec<QueueId> = self.queues().filter(|(_, q)| q.settings.name == name).map(|(id, _)| id).collect();
        match matches.as_slice() {
            [q] => Ok(*q),
            [] => Err("unknown".to_string()),
            many => Err(format!(
                "ambiguous: {} queues are named {name} ({})",
                many.len(),
                many.iter().map(|&q| self.q(q).name.as_str()).collect::<Vec<_>>().join(", ")
            )),
        }
    }

    /// `validateSubmitApplication`: a RUNNING leaf below its application limits.
    fn check_submission(&self, leaf: QueueId, user: &str, app: &str) -> Result<(), String> {
        let q = self.q(leaf);
        if q.settings.state != fairloom_config::capacity::QueueState::Running {
            return Err(format!("Queue {} is STOPPED. Cannot accept submission of application: {app}", q.name));
        }
        let (max_apps, max_per_user) = self.max_applications(leaf);
        if q.app_count() as i64 >= max_apps as i64 {
            return Err(format!(
                "Queue {} already has {} applications, cannot accept submission of application: {app}",
                q.name,
                q.app_count()
            ));
        }
        let user_apps = q.users.get(user).map_or(0, |u| u.total_apps());
        if user_apps as i64 >= max_per_user as i64 {
            return Err(format!(
                "Queue {} already has {user_apps} applications from user {user} cannot accept submission of application: {app}",
                q.name
            ));
        }
        Ok(())
    }

    /// `maximum-applications` of a leaf (or the system's × its absolute capacity) and the
    /// per-user share of it.
    pub fn max_applications(&self, leaf: QueueId) -> (i32, i32) {
        let s = &self.q(leaf).settings;
        let max = s
            .max_applications
            .unwrap_or((self.conf.max_applications as f32 * self.q(leaf).parts[0].abs_capacity) as i32);
        let per_user = if s.user_limit_factor == -1.0 {
            max
        } else {
            max.min((max as f32 * (s.min_user_limit_percent / 100.0) * s.user_limit_factor) as i32)
        };
        (max, per_user)
    }

    /// The queue's ACL or an ancestor's grants `user` the `acl` (administer implies submit).
    pub(crate) fn holds_acl(&self, id: QueueId, user: &str, acl: QueueAcl) -> bool {
        let groups = self.groups_of(user);
        self.path_to_root(id).any(|q| {
            let s = &self.q(q).settings;
            s.acl_administer.allows(user, &groups)
                || (acl == QueueAcl::SubmitApplications && s.acl_submit.allows(user, &groups))
        })
    }

    /// The partition a label expression names, if the queue may use it.
    pub(crate) fn label_for(&self, leaf: QueueId, label: Option<&str>) -> Result<PartitionId, String> {
        let label = label.filter(|l| !l.is_empty()).or(self.q(leaf).settings.default_label.as_deref()).unwrap_or("");
        let p = self.cluster.partition_id(label).ok_or_else(|| format!("node label {label} does not exist"))?;
        if !self.q(leaf).parts[p.index()].accessible {
            return Err(format!(
                "Invalid resource request, queue={} doesn't have permission to access all labels in resource request. labelExpression of resource request={label}",
                self.q(leaf).name
            ));
        }
        Ok(p)
    }

    /// Submit an application: it is accepted into a leaf (and activated when the AM limits
    /// allow) or rejected with YARN's reason.
    pub(crate) fn submit(&mut self, spec: &SubmitSpec<'_>, now: Millis) -> AppId {
        let id = self.new_app(spec, now);
        let app_id = self.apps[id].yarn_id.to_string();
        let leaf = match self.resolve_queue(spec.queue) {
            Ok(q) if self.q(q).leaf => q,
            Ok(_) => {
                let why =
                    format!("Application {app_id} submitted by user {} to non-leaf queue: {}", spec.user, spec.queue);
                return self.reject(id, why);
            }
            Err(e) => {
                let why = format!("Application {app_id} submitted by user {} to {e} queue: {}", spec.user, spec.queue);
                return self.reject(id, why);
            }
        };
        if self.acl_enabled && !self.holds_acl(leaf, spec.user, QueueAcl::SubmitApplications) {
            let why = format!(
                "User {} does not have permission to submit {app_id} to queue {}",
                spec.user,
                self.q(leaf).name
            );
            return self.reject(id, why);
        }
        if let Err(why) = self.check_submission(leaf, spec.user, &app_id) {
            return self.reject(id, why);
        }
        let label = match self.label_for(leaf, spec.node_label) {
            Ok(p) => p,
            Err(why) => return self.reject(id, why),
        };
        let (am_resource, am_partition) = match spec.am {
            Some(am) => (self.normalize(leaf, am), label),
            None => (self.props.minimum_allocation, PartitionId::DEFAULT),
        };
        let a = &mut self.apps[id];
        a.queue = Some(leaf);
        a.default_label = label;
        a.am_resource = am_resource;
        a.am_partition = am_partition;
        let user = spec.user.to_string();
        let nparts = self.nparts();
        let q = self.q_mut(leaf);
        q.waiting.push(id);
        let slot = q.users.enter(&user, nparts);
        q.users.at_mut(slot).pending_apps += 1;
        self.apps[id].user_slot = slot;
        // As in YARN, the attempt is added (and activated if the AM limits allow) before its
        // AM asks: whether the ask makes the user active depends on it.
        self.activate(leaf);
        if spec.am.is_some() {
            let ask = Ask::any(0, am_resource, 1);
            self.set_asks(id, &[ask]).expect("an accepted application takes asks");
        }
        id
    }

    /// YARN's request normalisation under the scheduler's calculator: at least the minimum,
    /// a multiple of it, at most the queue's maximum allocation.
    pub fn normalize(&self, leaf: QueueId, r: Resource) -> Resource {
        let min = self.props.minimum_allocation;
        let max = self.maximum_allocation(leaf);
        let types = self.props.resource_types.len();
        if self.calc.is_dominant() {
            normalize(r, min, max, min, types)
        } else {
            let memory = normalize(r, min, max, min, 1).memory();
            Resource::new(memory, i64::from(memory > 0))
        }
    }

    /// The scheduler's maximum allocation, lowered by the queue's own.
    pub fn maximum_allocation(&self, leaf: QueueId) -> Resource {
        let mut max = self.props.maximum_allocation;
        let s = &self.q(leaf).settings;
        if let Some(mb) = s.maximum_allocation_mb {
            max.set(fairloom_model::MEMORY, mb.min(max.memory()));
        }
        if let Some(v) = s.maximum_allocation_vcores {
            max.set(fairloom_model::VCORES, v.min(max.vcores()));
        }
        max
    }

    /// A new running container for `app` on `node`: the app's next number, or `seq` (the
    /// number its reservation took: YARN allocates a fulfilled reservation under its id).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start_container(
        &mut self,
        app: AppId,
        node: NodeId,
        resource: Resource,
        priority: i32,
        is_am: bool,
        label: PartitionId,
        seq: Option<u32>,
    ) -> ContainerId {
        let a = &mut self.apps[app];
        let seq = seq.unwrap_or_else(|| {
            a.next_container_seq += 1;
            a.next_container_seq - 1
        });
        let yarn_hash = container_id_hash(a.yarn_id, 1, u64::from(seq));
        let (id, generation) = self.cluster.add_container(app, node, resource, priority, is_am, seq, label, yarn_hash);
        let p = self.cluster.node(node).partition;
        self.charge_app(app, p, resource, true);
        let a = &mut self.apps[app];
        a.live.push(id, generation);
        if is_am {
            a.am_running = true;
            if a.activated {
                a.state = AppState::Running;
            }
        }
        self.charge(app, p, resource, true, false);
        id
    }

    /// Charge `app` alone `d` more than its containers hold, on `node`'s partition (`d` may
    /// have negative components); its queues and user are not charged.
    pub(crate) fn charge_beyond_container(&mut self, app: AppId, node: NodeId, d: Resource) {
        let p = self.cluster.node(node).partition;
        self.charge_app(app, p, d, true);
        self.apps[app].used_drift[p.index()].add_assign(d);
    }

    /// By partition: what `app`'s containers and reservations hold, as its queues count it.
    pub(crate) fn held_by(&self, app: AppId) -> Vec<Resource> {
        let a = &self.apps[app];
        a.used
            .iter()
            .zip(&a.used_drift)
            .zip(&a.reserved)
            .map(|((u, d), r)| u.saturating_sub(*d).saturating_add(*r))
            .collect()
    }

    /// A container finished on its node or was given back by its AM.
    pub(crate) fn complete_container(
        &mut self,
        container: ContainerId,
        exit_status: i32,
    ) -> Result<(), SchedulerError> {
        if !self.cluster.is_live(container) {
            return Err(SchedulerError::ContainerNotLive(format!("#{}", container.0)));
        }
        self.finish_container(container, exit_status);
        Ok(())
    }

    pub(crate) fn finish_container(&mut self, container: ContainerId, exit_status: i32) {
        if !self.cluster.is_live(container) {
            return;
        }
        self.unmark(container);
        let c = self.cluster.end_container(container, exit_status);
        let (app, node, resource) = (c.app, c.node, c.resource);
        let p = self.cluster.node(node).partition;
        self.charge_app(app, p, resource, false);
        let a = &mut self.apps[app];
        a.live.note_ended(&self.cluster.container_gen);
        if a.queue.is_some() && a.is_alive() {
            self.charge(app, p, resource, false, false);
            self.resort_due(app);
        }
    }

    /// The application finishes: containers released, reservations dropped, it leaves its
    /// queue (which may activate waiting applications).
    pub(crate) fn finish_app(&mut self, app: AppId) -> Result<(), SchedulerError> {
        if !self.apps[app].is_alive() {
            return Err(SchedulerError::AppNotAlive(self.apps[app].name.clone()));
        }
        for c in self.cluster.live(&self.apps[app].live).collect::<Vec<_>>() {
            self.finish_container(c, -100);
        }
        for node in self.apps[app].reservations.iter().map(|r| r.node).collect::<Vec<_>>() {
            self.unreserve(app, node);
        }
        let leaf = self.apps[app].queue.expect("an alive application has a queue");
        self.detach(app, leaf);
        self.release_requests(app);
        self.discharge_drift(app);
        let a = &mut self.apps[app];
        a.state = AppState::Finished;
        for r in a.pending.iter_mut() {
            *r = Resource::none();
        }
        self.set_wait(app, None);
        self.activate(leaf);
        Ok(())
    }

    /// Take `app` out of its leaf's lists: its AM usage, pending and user counts go.
    fn detach(&mut self, app: AppId, leaf: QueueId) {
        let activated = self.apps[app].activated;
        // Withdraw its pending from the path while it still counts as activated.
        let pending = self.apps[app].pending.clone();
        for (p, r) in pending.iter().enumerate() {
            self.shift_pending(app, PartitionId(p as u32), *r, false);
        }
        self.apps[app].pending = pending;
        self.detach_app_keys(app, leaf);
        self.forget_resort(app);
        let a = &mut self.apps[app];
        let (slot, am, am_p) = (a.user_slot, a.am_resource, a.am_partition);
        a.activated = false;
        let q = &mut self.queues[leaf];
        q.active.retain(|&x| x != app);
        q.waiting.retain(|&x| x != app);
        let u = q.users.at_mut(slot);
        if activated {
            u.active_apps -= 1;
            u.am_used[am_p.index()].sub_assign(am);
            q.parts[am_p.index()].am_used.sub_assign(am);
        } else {
            u.pending_apps -= 1;
        }
        let ratios = u.ratio.clone();
        if q.users.release_if_idle(slot) {
            // Only a user a same-queue move left with a drift goes with a share (see
            // `QueuePart::usage_ratio_drift`).
            for (part, r) in q.parts.iter_mut().zip(ratios) {
                part.usage_ratio_drift += r;
            }
        }
    }

    /// Move an application to another leaf as YARN's `moveApplication`: the target must be
    /// a RUNNING leaf below its limits that may use the app's label; the app's containers
    /// move with it and it is activated there as a new submission would be.
    pub(crate) fn move_app(&mut self, app: AppId, target: &str) -> Result<QueueId, SchedulerError> {
        let a = &self.apps[app];
        if !a.is_alive() {
            return Err(SchedulerError::AppNotAlive(a.name.clone()));
        }
        let source = a.queue.expect("an alive application has a queue");
        let refused = |m: String| SchedulerError::MoveRefused(m);
        let dest = self.resolve_queue(target).map_err(|e| refused(format!("target queue {target} is {e}")))?;
        if !self.q(dest).leaf {
            return Err(refused(format!("target queue {} is not a leaf queue", self.q(dest).name)));
        }
        let user = a.user.clone();
        let app_id = a.yarn_id.to_string();
        // Checked for the application's own queue too (YARN's preValidateMoveApplication
        // does not skip it: a STOPPED or full queue refuses the move).
        self.check_submission(dest, &user, &app_id).map_err(refused)?;
        let labels: Vec<PartitionId> =
            std::iter::once(a.default_label).chain(a.requests.iter().map(|r| r.label)).collect();
        if let Some(p) = labels.iter().find(|p| !self.q(dest).parts[p.index()].accessible) {
            return Err(refused(format!(
                "Specified queue={} can't satisfy following apps label expressions ={}",
                self.q(dest).name,
                self.partition_name(*p)
            )));
        }
        if dest == source {
            self.move_within(app, source, &user);
            return Ok(dest);
        }
        // The containers move at their own sizes (detachContainer / attachContainer).
        let drift = self.apps[app].used_drift.clone();
        let used: Vec<Resource> = self.apps[app].used.iter().zip(&drift).map(|(u, d)| u.saturating_sub(*d)).collect();
        let reserved = self.apps[app].reserved.clone();
        for (p, (u, r)) in used.iter().zip(&reserved).enumerate() {
            let p = PartitionId(p as u32);
            self.charge(app, p, *u, false, false);
            self.charge(app, p, *r, false, true);
        }
        self.detach(app, source);
        self.apps[app].queue = Some(dest);
        let nparts = self.nparts();
        let q = self.q_mut(dest);
        q.waiting.push(app);
        let slot = q.users.enter(&user, nparts);
        q.users.at_mut(slot).pending_apps += 1;
        self.apps[app].user_slot = slot;
        for (p, (u, r)) in used.iter().zip(&reserved).enumerate() {
            let p = PartitionId(p as u32);
            self.charge(app, p, *u, true, false);
            self.charge(app, p, *r, true, true);
            // The queues' ResourceUsage does not follow the reservations (see
            // `QueuePart::reserved_drift`); their metrics, which the walk reads, do.
            if !r.is_none() {
                self.drift_reserved(source, p, *r);
                self.drift_reserved(dest, p, Resource::none().saturating_sub(*r));
            }
        }
        // Its asks count in the new path (detach took them out of the old one).
        let pending = std::mem::replace(&mut self.apps[app].pending, vec![Resource::none(); nparts]);
        for (p, r) in pending.into_iter().enumerate() {
            self.shift_pending(app, PartitionId(p as u32), r, true);
        }
        self.activate(dest);
        // AppSchedulingInfo.move, after the target's submission: the asking application
        // counts for its user in the new queue if the user has an activated one there.
        self.key_starts_asking(app);
        self.activate(source);
        Ok(dest)
    }

    /// YARN's `moveApplication` to the application's own queue, which it does not skip: the
    /// containers are detached and attached again (no change), the attempt is finished there
    /// (out of the lists, its AM usage given back, the user dropped with its usage when it has
    /// no other application, then `activateApplications`) and submitted again as a moved one
    /// (waiting, activated as a new submission would be). A dropped user comes back holding
    /// nothing while the containers run; their ends take its usage below zero.
    fn move_within(&mut self, app: AppId, leaf: QueueId, user: &str) {
        let old_slot = self.apps[app].user_slot;
        self.detach(app, leaf);
        let dropped = self.drop_user_without_apps(leaf, old_slot);
        self.activate(leaf);
        let nparts = self.nparts();
        let q = self.q_mut(leaf);
        q.waiting.push(app);
        let slot = q.users.enter(user, nparts);
        q.users.at_mut(slot).pending_apps += 1;
        self.apps[app].user_slot = slot;
        if dropped {
            let held = self.held_by(app);
            let u = self.queues[leaf].users.at_mut(slot);
            for (drift, h) in u.used_drift.iter_mut().zip(held) {
                drift.sub_assign(h);
            }
        }
        self.users_changed(leaf);
        let pending = std::mem::replace(&mut self.apps[app].pending, vec![Resource::none(); nparts]);
        for (p, r) in pending.into_iter().enumerate() {
            self.shift_pending(app, PartitionId(p as u32), r, true);
        }
        self.activate(leaf);
        self.key_starts_asking(app);
    }

    /// YARN's `removeUser` once a user's last application left `leaf`: the user goes with its
    /// usage, whatever its containers still hold. True if it went.
    fn drop_user_without_apps(&mut self, leaf: QueueId, slot: u32) -> bool {
        let nparts = self.nparts();
        let q = &mut self.queues[leaf];
        if q.users.slot(&q.users.at(slot).name) != Some(slot) || q.users.at(slot).present() {
            return false;
        }
        let u = q.users.at(slot).clone();
        for p in 0..nparts {
            let part = &mut q.parts[p];
            // The share stays in the queue's sum (`usage_ratio` is unchanged).
            part.usage_ratio_drift += u.ratio[p];
            if u.is_active() {
                part.active_used.sub_assign(u.used[p]);
            }
            part.forget_user_limit();
        }
        q.users.remove(slot);
        true
    }

    /// Add `r` to the reservation drift of every queue from `leaf` to the root.
    fn drift_reserved(&mut self, leaf: QueueId, p: PartitionId, r: Resource) {
        let mut q = Some(leaf);
        while let Some(id) = q {
            self.queues[id].parts[p.index()].reserved_drift.add_assign(r);
            q = self.queues[id].parent;
        }
    }

    /// Put running containers on a node directly, as an RM recovering after a restart learns
    /// them from its NodeManagers: no limit or locality check. `label`: the node-label
    /// expression they were asked with (default: the node's partition).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn place_containers(&mut self, p: &Placement<'_>) -> Result<Vec<ContainerId>, SchedulerError> {
        let Placement { app, node, capability, priority, count, am, label } = *p;
        if !self.apps[app].is_alive() {
            return Err(SchedulerError::AppNotAlive(self.apps[app].name.clone()));
        }
        if self.cluster.node(node).removed {
            return Err(SchedulerError::UnknownNode(self.cluster.node(node).name.clone()));
        }
        let label = match label {
            Some(l) => self
                .cluster
                .partition_id(l)
                .ok_or_else(|| SchedulerError::InvalidRequest(format!("node label {l} does not exist")))?,
            None => self.cluster.node(node).partition,
        };
        let mut out = Vec::new();
        for i in 0..count {
            let is_am = am && i == 0 && !self.apps[app].am_running;
            out.push(self.start_container(app, node, capability, priority, is_am, label, None));
            if is_am {
                // The recovered AM satisfies the AM ask made at submission.
                if let Some(idx) = self.apps[app].request(0) {
                    let r = &self.apps[app].requests[idx];
                    if let Some(any) = r.any.filter(|a| a.count > 0) {
                        let label = r.label;
                        self.set_any(app, idx, Some(LocalityAsk { count: any.count - 1, ..any }), label);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Give `node` a reservation for `app` at `priority`, as recovery would.
    pub(crate) fn place_reservation(
        &mut self,
        app: AppId,
        node: NodeId,
        capability: Resource,
        priority: i32,
        now: Millis,
    ) -> Result<(), SchedulerError> {
        if !self.apps[app].is_alive() {
            return Err(SchedulerError::AppNotAlive(self.apps[app].name.clone()));
        }
        if let Some(r) = self.cluster.node(node).reservation {
            return Err(SchedulerError::InvalidRequest(format!(
                "node {} already holds a reservation (for {})",
                self.cluster.node(node).name,
                self.apps[r.app].name
            )));
        }
        self.reserve(app, node, priority, capability, now);
        Ok(())
    }
}
