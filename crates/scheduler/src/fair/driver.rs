//! The Fair Scheduler behind the driver interface.

use fairloom_model::{Millis, Resource, ResourceTypes};

use fairloom_config::SchedulerProperties;

use super::FairScheduler;
use crate::audit::Mismatch;
use crate::cluster::live::LiveIter;
use crate::cluster::Cluster;
use crate::driver::{
    AppView, Ask, Counters, Decision, Layout, NodeSpec, Placement, QueueAcl, QueueDetail, QueueSummary, Scheduler,
    SchedulerError, SubmitSpec,
};
use crate::factory::Reconfigure;
use crate::ids::{AppId, ContainerId, NodeId, QueueId};
use crate::phases::{PhaseClock, PhaseTimes};

fn labels_unsupported(what: &str) -> SchedulerError {
    SchedulerError::NotSupported(format!("{what}: node labels need the Capacity Scheduler"))
}

impl Scheduler for FairScheduler {
    fn layout(&self) -> Layout<'_> {
        Layout::Fair(self)
    }

    fn has_app_priorities(&self) -> bool {
        false
    }

    fn resource_types(&self) -> &ResourceTypes {
        &self.props.resource_types
    }

    fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    fn add_nodes(&mut self, nodes: &[NodeSpec<'_>]) -> Result<Vec<NodeId>, SchedulerError> {
        if let Some(n) = nodes.iter().find(|n| n.label.is_some_and(|l| !l.is_empty())) {
            return Err(labels_unsupported(&format!("node {}", n.name)));
        }
        FairScheduler::add_nodes(self, nodes.iter().map(|n| (n.name, n.rack, n.resource)))
    }

    fn remove_node(&mut self, node: NodeId) {
        FairScheduler::remove_node(self, node)
    }

    fn submit(&mut self, spec: &SubmitSpec<'_>, now: Millis) -> AppId {
        // The Fair Scheduler gives every application the same priority (FSAppAttempt's is
        // constant), so `spec.priority` is deliberately not used.
        if spec.node_label.is_some_and(|l| !l.is_empty()) {
            let why = "node labels need the Capacity Scheduler".to_string();
            return self.refuse(spec.name, spec.user, spec.am, why, now);
        }
        FairScheduler::submit(self, spec.name, spec.queue, spec.user, spec.am, now)
    }

    fn set_asks(&mut self, app: AppId, asks: &[Ask]) -> Result<(), SchedulerError> {
        if asks.iter().any(|a| a.node_label.as_deref().is_some_and(|l| !l.is_empty())) {
            return Err(labels_unsupported("ask"));
        }
        FairScheduler::set_asks(self, app, asks)
    }

    #[inline]
    fn node_heartbeat_into(
        &mut self,
        node: NodeId,
        completed: &[(ContainerId, i32)],
        now: Millis,
        out: &mut Vec<Decision>,
    ) -> usize {
        FairScheduler::node_heartbeat_into(self, node, completed, now, out)
    }

    fn update(&mut self, now: Millis) {
        FairScheduler::update(self, now)
    }

    fn reload(&mut self, change: &Reconfigure) -> Result<(), SchedulerError> {
        let props = match &change.site {
            Some((name, site)) => {
                SchedulerProperties::from_properties(site, &self.extra_types).map_err(|e| e.in_file(name.clone()))?
            }
            None => self.props.clone(),
        };
        let alloc = match &change.file {
            Some((name, file)) => crate::factory::fair_allocations(name, crate::factory::fair_text(file)?, &props)?,
            None => self.alloc.clone(),
        };
        self.reload_with(props, alloc)
    }

    fn complete_container(&mut self, container: ContainerId, exit_status: i32) -> Result<(), SchedulerError> {
        FairScheduler::complete_container(self, container, exit_status)
    }

    fn finish_app(&mut self, app: AppId) -> Result<(), SchedulerError> {
        FairScheduler::finish_app(self, app)
    }

    fn move_app(&mut self, app: AppId, target: &str) -> Result<(), SchedulerError> {
        FairScheduler::move_app(self, app, target).map(|_| ())
    }

    fn forget_app(&mut self, app: AppId) -> Result<(), SchedulerError> {
        FairScheduler::forget_app(self, app)
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
            ("users", self.users.len()),
            ("tie_ranks", self.tie_ranks.len()),
            ("pending_kills", self.kills.len()),
        ]);
        out
    }

    fn place_containers(&mut self, p: &Placement<'_>) -> Result<Vec<ContainerId>, SchedulerError> {
        if p.label.is_some_and(|l| !l.is_empty()) {
            return Err(labels_unsupported("place"));
        }
        FairScheduler::place_containers(self, p)
    }

    fn place_reservation(
        &mut self,
        app: AppId,
        node: NodeId,
        capability: Resource,
        priority: i32,
        _now: Millis,
    ) -> Result<(), SchedulerError> {
        FairScheduler::place_reservation(self, app, node, capability, priority)
    }

    fn app(&self, app: AppId) -> AppView<'_> {
        let a = &self.apps[app];
        AppView {
            name: &a.name,
            user: &a.user,
            queue: a.queue.filter(|_| a.rejection.is_none()).map(|q| self.queues[q].name.as_str()),
            state: a.state,
            rejection: a.rejection.as_deref(),
            runnable: a.runnable,
            am_running: a.am_running,
            live_containers: a.live.len(),
            reservations: a.reserved_nodes.len(),
            usage: a.usage.get(),
            pending: a.pending,
            preempted: a.preempted,
            preemption_marked: a.marked,
            wait: a.wait.as_ref().map(std::borrow::Cow::Borrowed),
        }
    }

    fn app_count(&self) -> usize {
        self.apps.held()
    }

    fn app_containers(&self, app: AppId) -> LiveIter<'_> {
        FairScheduler::app_containers(self, app)
    }

    fn queue_summaries(&self) -> Vec<QueueSummary> {
        let mut out = Vec::new();
        self.summarise(super::ROOT, 0, &mut out);
        out
    }

    fn queue_details(&self) -> Vec<QueueDetail> {
        let mut out = Vec::new();
        self.detail(super::ROOT, &mut out);
        out
    }

    fn audit(&self) -> Vec<Mismatch> {
        FairScheduler::audit(self)
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn preemption_counters(&self) -> Vec<(&'static str, i64)> {
        let p = &self.preemption;
        vec![
            ("starved_app_checks", p.starved_app_checks as i64),
            ("containers_marked", p.containers_marked as i64),
            ("marked_for_fair_share", p.marked_for_fair_share as i64),
            ("marked_for_min_share", p.marked_for_min_share as i64),
            ("killed_for_fair_share", p.killed_for_fair_share as i64),
            ("killed_for_min_share", p.killed_for_min_share as i64),
            ("memory_freed_for_fair_share_mb", p.memory_freed_for_fair_share_mb),
            ("memory_freed_for_min_share_mb", p.memory_freed_for_min_share_mb),
            ("containers_killed", p.containers_killed as i64),
            ("memory_freed_mb", p.memory_freed_mb),
        ]
    }

    fn phases(&self) -> &PhaseTimes {
        &self.phases
    }

    fn set_phase_clock(&mut self, clock: Box<dyn PhaseClock>) {
        FairScheduler::set_phase_clock(self, clock)
    }

    fn update_interval_ms(&self) -> i64 {
        self.props.update_interval_ms
    }

    fn placement(&self, requested: &str, user: &str) -> Result<String, String> {
        self.place(requested, user)
    }

    fn queue_access(&self, queue: &str, user: &str, acl: QueueAcl) -> Option<bool> {
        let full = super::placement::with_root(queue);
        // The nearest existing queue on the path: placement may name one it would create.
        let mut name = full.as_str();
        let id = loop {
            if let Some(id) = self.queue_id(name) {
                break id;
            }
            name = &name[..name.rfind('.')?];
        };
        Some(self.holds_acl(id, user, &self.groups_of(user), acl))
    }
}

impl FairScheduler {
    /// Outstanding asks of a leaf's runnable applications; none for a parent.
    fn leaf_pending(&self, id: QueueId) -> Resource {
        let q = &self.queues[id];
        if !q.leaf {
            return Resource::none();
        }
        q.runnable_apps.iter().fold(Resource::none(), |acc, &a| acc.saturating_add(self.apps[a].pending))
    }

    fn detail(&self, id: QueueId, out: &mut Vec<QueueDetail>) {
        let q = &self.queues[id];
        out.push(QueueDetail {
            name: q.name.clone(),
            depth: q.name.matches('.').count(),
            leaf: q.leaf,
            used: q.usage.get(),
            steady: q.steady_fair_share,
            share: q.fair_share,
            min: q.settings.min_share,
            max: q.max_share.componentwise_min(self.cluster.total),
            demand: q.demand,
            pending: self.leaf_pending(id),
            am_used: q.am_usage,
            am_limit: if q.leaf { self.am_limit(id) } else { Resource::none() },
            active_apps: q.runnable_apps.len(),
            pending_apps: q.non_runnable_apps.len(),
            max_apps: (q.settings.max_running_apps < i32::MAX).then_some(q.settings.max_running_apps as i64),
            policy: q.policy.name().to_string(),
        });
        for &c in q.children.iter().filter(|&&c| !self.queues[c].removed) {
            self.detail(c, out);
        }
    }

    fn summarise(&self, id: QueueId, depth: usize, out: &mut Vec<QueueSummary>) {
        let q = &self.queues[id];
        let pending = self.leaf_pending(id);
        out.push(QueueSummary {
            name: q.name.clone(),
            leaf: q.leaf,
            depth,
            usage: q.usage.get(),
            share: q.fair_share,
            max: self.max_share(id),
            pending,
        });
        for &c in &q.children {
            self.summarise(c, depth + 1, out);
        }
    }
}
