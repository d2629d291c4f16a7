//! The Capacity Scheduler behind the driver interface.

use fairloom_model::{Millis, Resource, ResourceTypes};

use super::CapacityScheduler;
use crate::audit::Mismatch;
use crate::cluster::live::LiveIter;
use crate::cluster::Cluster;
use crate::driver::{
    AppView, Ask, Counters, Decision, Layout, NodeSpec, Placement, QueueAcl, QueueDetail, QueueSummary, Scheduler,
    SchedulerError, SubmitSpec,
};
use crate::factory::Reconfigure;
use crate::ids::{AppId, ContainerId, NodeId, PartitionId, QueueId};
use crate::phases::{PhaseClock, PhaseTimes};

impl CapacityScheduler {
    /// Register nodes; capacities are resolved once for all of them.
    pub(crate) fn add_nodes(&mut self, nodes: &[NodeSpec<'_>]) -> Result<Vec<NodeId>, SchedulerError> {
        let mut partitions = Vec::with_capacity(nodes.len());
        for n in nodes {
            let label = n.label.unwrap_or("");
            let p = self.cluster.partition_id(label).ok_or_else(|| {
                SchedulerError::InvalidRequest(format!("node {}: unknown node label '{label}'", n.name))
            })?;
            partitions.push(p);
        }
        let mut ids = Vec::with_capacity(nodes.len());
        for (n, p) in nodes.iter().zip(partitions) {
            ids.push(self.cluster.register_node(n.name, n.rack, n.resource, p)?);
        }
        self.cluster_changed();
        Ok(ids)
    }

    /// The node is lost: its containers end (ABORTED) and its reservation goes.
    pub(crate) fn remove_node(&mut self, node: NodeId) {
        if self.cluster.node(node).removed {
            return;
        }
        for c in self.cluster.node_containers(node).collect::<Vec<_>>() {
            self.finish_container(c, -100);
        }
        if let Some(r) = self.cluster.node(node).reservation {
            self.unreserve(r.app, node);
        }
        self.cluster.deregister_node(node);
        self.cluster_changed();
    }

    /// Capacities follow the partitions' resources; more room may activate applications.
    pub(crate) fn cluster_changed(&mut self) {
        self.resolve_capacities();
        self.refresh_ratios();
        self.rebuild_order();
        self.publish_limits();
        for leaf in self.leaves() {
            self.update_cluster_resource(leaf);
        }
    }

    /// A leaf's `updateClusterResource`: activation first, then the users' state changes and
    /// each activated application's user limit is computed.
    pub(crate) fn update_cluster_resource(&mut self, leaf: QueueId) {
        self.activate(leaf);
        self.users_changed(leaf);
        let active = self.q(leaf).active.clone();
        if !active.is_empty() {
            self.user_limit_asked(leaf, PartitionId::DEFAULT, true, true);
        }
        for app in active {
            self.set_headroom(app, leaf);
        }
    }

    /// The periodic update: one round of the preemption policy when the monitor is on.
    pub(crate) fn update(&mut self, now: Millis) {
        self.counters.updates += 1;
        if self.policy.enabled {
            self.preemption_round(now);
        }
    }
}

impl Scheduler for CapacityScheduler {
    fn layout(&self) -> Layout<'_> {
        Layout::Capacity(self)
    }

    fn has_app_priorities(&self) -> bool {
        true
    }

    fn resource_types(&self) -> &ResourceTypes {
        &self.props.resource_types
    }

    fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    fn add_nodes(&mut self, nodes: &[NodeSpec<'_>]) -> Result<Vec<NodeId>, SchedulerError> {
        CapacityScheduler::add_nodes(self, nodes)
    }

    fn remove_node(&mut self, node: NodeId) {
        CapacityScheduler::remove_node(self, node)
    }

    fn submit(&mut self, spec: &SubmitSpec<'_>, now: Millis) -> AppId {
        CapacityScheduler::submit(self, spec, now)
    }

    fn set_asks(&mut self, app: AppId, asks: &[Ask]) -> Result<(), SchedulerError> {
        CapacityScheduler::set_asks(self, app, asks)
    }

    fn node_heartbeat_into(
        &mut self,
        node: NodeId,
        completed: &[(ContainerId, i32)],
        now: Millis,
        out: &mut Vec<Decision>,
    ) -> usize {
        CapacityScheduler::node_heartbeat_into(self, node, completed, now, out)
    }

    fn update(&mut self, now: Millis) {
        CapacityScheduler::update(self, now)
    }

    fn reload(&mut self, change: &Reconfigure) -> Result<(), SchedulerError> {
        let capacity = match &change.file {
            Some((name, file)) => Some(crate::factory::capacity_properties(name, file)?.0),
            None => None,
        };
        self.reload_with(change.site.as_ref().map(|(_, site)| site.clone()), capacity)
    }

    fn complete_container(&mut self, container: ContainerId, exit_status: i32) -> Result<(), SchedulerError> {
        CapacityScheduler::complete_container(self, container, exit_status)
    }

    fn finish_app(&mut self, app: AppId) -> Result<(), SchedulerError> {
        CapacityScheduler::finish_app(self, app)
    }

    fn move_app(&mut self, app: AppId, target: &str) -> Result<(), SchedulerError> {
        CapacityScheduler::move_app(self, app, target).map(|_| ())
    }

    fn forget_app(&mut self, app: AppId) -> Result<(), SchedulerError> {
        CapacityScheduler::forget_app(self, app)
    }

    fn app_ids(&self) -> Vec<AppId> {
        self.apps().map(|(id, _)| id).collect()
    }

    fn footprint(&self) -> Vec<(&'static str, usize)> {
        let mut out = self.cluster.footprint();
        out.extend([
            ("app_slots", self.apps.len()),
            ("apps_held", self.apps.held()),
            ("queue_slots", self.queues.len()),
            ("user_slots", self.queues.iter().map(|q| q.users.slots()).sum()),
            ("preemption_candidates", self.monitor.candidate_count()),
        ]);
        out
    }

    fn place_containers(&mut self, p: &Placement<'_>) -> Result<Vec<ContainerId>, SchedulerError> {
        CapacityScheduler::place_containers(self, p)
    }

    fn place_reservation(
        &mut self,
        app: AppId,
        node: NodeId,
        capability: Resource,
        priority: i32,
        now: Millis,
    ) -> Result<(), SchedulerError> {
        CapacityScheduler::place_reservation(self, app, node, capability, priority, now)
    }

    fn app(&self, app: AppId) -> AppView<'_> {
        let a = &self.apps[app];
        AppView {
            name: &a.name,
            user: &a.user,
            queue: a.queue.filter(|_| a.rejection.is_none()).map(|q| self.queues[q].name.as_str()),
            state: a.state,
            rejection: a.rejection.as_deref(),
            runnable: a.activated,
            am_running: a.am_running,
            live_containers: a.live.len(),
            reservations: a.reservations.len(),
            usage: a.usage.get(),
            pending: a.total_pending(),
            preempted: a.preempted,
            preemption_marked: a.marked,
            wait: self.wait_reason(app),
        }
    }

    fn app_count(&self) -> usize {
        self.apps.held()
    }

    fn app_containers(&self, app: AppId) -> LiveIter<'_> {
        self.cluster.live(&self.apps[app].live)
    }

    fn queue_summaries(&self) -> Vec<QueueSummary> {
        self.queues()
            .map(|(_, q)| {
                let part = &q.parts[PartitionId::DEFAULT.index()];
                let pending = leaf_pending(q);
                QueueSummary {
                    name: q.name.clone(),
                    leaf: q.leaf,
                    depth: q.depth,
                    usage: q.parts.iter().fold(Resource::none(), |acc, p| acc.saturating_add(p.used.get())),
                    share: part.guaranteed,
                    max: part.maximum,
                    pending,
                }
            })
            .collect()
    }

    fn queue_details(&self) -> Vec<QueueDetail> {
        let mut out = Vec::new();
        self.detail(QueueId(0), &mut out);
        out
    }

    fn audit(&self) -> Vec<Mismatch> {
        CapacityScheduler::audit(self)
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn preemption_counters(&self) -> Vec<(&'static str, i64)> {
        let m = &self.monitor.counters;
        vec![
            ("rounds", m.rounds as i64),
            ("containers_marked", m.containers_marked as i64),
            ("containers_killed", m.containers_killed as i64),
            ("reservations_dropped", m.reservations_dropped as i64),
            ("memory_freed_mb", m.memory_freed_mb),
        ]
    }

    fn phases(&self) -> &PhaseTimes {
        &self.phases
    }

    fn set_phase_clock(&mut self, clock: Box<dyn PhaseClock>) {
        CapacityScheduler::set_phase_clock(self, clock)
    }

    fn update_interval_ms(&self) -> i64 {
        self.policy.monitoring_interval_ms.max(1)
    }

    fn placement(&self, requested: &str, _user: &str) -> Result<String, String> {
        match self.resolve_queue(requested) {
            Ok(q) if self.q(q).leaf => Ok(self.q(q).name.clone()),
            Ok(q) => Err(format!("non-leaf queue: {}", self.q(q).name)),
            Err(e) => Err(format!("{e} queue: {requested}")),
        }
    }

    fn queue_access(&self, queue: &str, user: &str, acl: QueueAcl) -> Option<bool> {
        Some(self.holds_acl(self.resolve_queue(queue).ok()?, user, acl))
    }
}

impl CapacityScheduler {
    fn detail(&self, id: QueueId, out: &mut Vec<QueueDetail>) {
        let q = self.queue(id);
        let p = q.part(PartitionId::DEFAULT);
        out.push(QueueDetail {
            name: q.name.clone(),
            depth: q.depth,
            leaf: q.leaf,
            used: p.used.get(),
            steady: p.guaranteed,
            share: p.guaranteed,
            min: p.guaranteed,
            max: p.maximum.componentwise_min(self.cluster.total),
            demand: p.used.saturating_add(p.pending),
            pending: leaf_pending(q),
            am_used: p.am_used,
            am_limit: if q.leaf { self.am_limit(id, PartitionId::DEFAULT) } else { Resource::none() },
            active_apps: q.active.len(),
            pending_apps: q.waiting.len(),
            max_apps: q.settings.max_applications.map(i64::from),
            policy: if q.leaf {
                format!("{:?}", q.settings.app_ordering)
            } else {
                format!("{:?}", q.settings.queue_ordering)
            }
            .to_lowercase(),
        });
        for &child in q.children.iter().filter(|&&ch| !self.queue(ch).removed) {
            self.detail(child, out);
        }
    }
}

/// Outstanding asks of a leaf's activated applications in every partition; none for a parent.
fn leaf_pending(q: &super::state::CsQueue) -> Resource {
    if !q.leaf {
        return Resource::none();
    }
    q.parts.iter().fold(Resource::none(), |acc, p| acc.saturating_add(p.pending))
}
