//! The Fair Scheduler: one owner of the cluster state, driven by events and `now`.

use std::collections::{BTreeMap, HashMap};

use fairloom_config::{generated_policy, AllocationFile, ConfigError, RuleConfig, SchedulerProperties};
use fairloom_model::Resource;

use super::runnable::UserRunState;
use super::state::{App, AppState};
use super::tree::ROOT;
use crate::cluster::hash_order::container_id_hash;
use crate::cluster::{Cluster, Node};
use crate::driver::{Counters, SchedulerError};
use crate::ids::{AppId, ContainerId, LocationId, NodeId, PartitionId, QueueId};
use crate::reason::WaitReason;

pub struct FairScheduler {
    pub(crate) props: SchedulerProperties,
    /// Resource types beyond yarn-site's that the owner declared (a reload's yarn-site is
    /// read with them too).
    pub(crate) extra_types: Vec<String>,
    pub(crate) alloc: AllocationFile,
    pub(crate) placement: Vec<RuleConfig>,
    pub(crate) types: usize,
    /// The queues: slots, names and creation order (a removed queue's slot is free for a
    /// new queue once no application names it: dynamic queues come and go with their users
    /// for the RM's life).
    pub(crate) queues: super::queue_tree::QueueTree,
    /// By [`AppId::slot`]; a forgotten application's slot is the next one's.
    pub(crate) apps: crate::cluster::app_table::AppTable<App>,
    pub(crate) cluster: Cluster,
    /// Per node: room being freed by preemption there, by the starved app it is for.
    pub(crate) preempted_for: Vec<Vec<(AppId, Resource)>>,
    /// The root queue metrics' available resource as YARN last refreshed it
    /// (`updateRootQueueMetrics`: at the update, a node's arrival or loss, a container's end
    /// and the end of a heartbeat's scheduling, not at each allocation nor at a recovered
    /// container). A queue whose fair share is 0 in a type reads its AM limit from it.
    pub(crate) root_available: Resource,
    /// Users with an application running or waiting (an idle one is dropped).
    pub(crate) users: HashMap<String, UserRunState>,
    pub(crate) groups: BTreeMap<String, Vec<String>>,
    pub(crate) cluster_timestamp: i64,
    pub(crate) warnings: Vec<String>,
    /// False while some order key is NaN: the walk sorts instead (see `order`).
    pub(crate) order_exact: bool,
    /// Live apps' tie-breaks as ranks (see `ties`).
    pub(crate) tie_ranks: super::ties::TieRanks,
    /// The optimisation switches of the current scheduling pass.
    pub(crate) walk: fairloom_config::Optimizations,
    /// Apps whose usage or pending changed since the last update (see `update`).
    pub(crate) demand_dirty_apps: Vec<AppId>,
    /// The next update recomputes every demand (the tree, max shares or the cluster changed).
    pub(crate) demand_full: bool,
    /// Something an instantaneous split reads changed since the last update: runnable apps
    /// (`track_runnable`), max shares (`refresh_max_shares`), or the tree, policies and
    /// settings, each change of which ends in `rebuild_order`. Size-based weights are checked
    /// by the update itself.
    pub(crate) shares_stale: bool,
    /// Preemption kills waiting for `waitTimeBeforeKill`.
    pub(crate) kills: Vec<super::preempt::PendingKill>,
    pub preemption: super::preempt::PreemptionCounters,
    pub phases: crate::phases::PhaseTimes,
    pub(crate) phase_clock: crate::phases::PhaseTimer,
    pub counters: Counters,
}

impl FairScheduler {
    /// A scheduler over an empty cluster with the given configuration.
    pub fn new(props: SchedulerProperties, alloc: AllocationFile) -> Result<Self, SchedulerError> {
        let types = props.resource_types.len();
        let placement = alloc
            .placement_policy
            .clone()
            .unwrap_or_else(|| generated_policy(props.allow_undeclared_pools, props.user_as_default_queue));
        let mut s = Self {
            props,
            extra_types: Vec::new(),
            alloc: AllocationFile::default(),
            placement,
            types,
            queues: Default::default(),
            apps: Default::default(),
            cluster: Cluster::default(),
            preempted_for: Vec::new(),
            root_available: Resource::none(),
            users: HashMap::new(),
            groups: BTreeMap::new(),
            cluster_timestamp: 0,
            warnings: Vec::new(),
            order_exact: true,
            tie_ranks: Default::default(),
            walk: fairloom_config::Optimizations::ALL_ON,
            demand_dirty_apps: Vec::new(),
            demand_full: true,
            shares_stale: true,
            kills: Vec::new(),
            preemption: Default::default(),
            phases: Default::default(),
            phase_clock: Default::default(),
            counters: Counters::default(),
        };
        let root_policy = alloc.queues[0].scheduling_policy.unwrap_or(alloc.default_scheduling_policy);
        s.alloc = alloc.clone();
        // Only root, as YARN 3.x's QueueManager: root.default exists when the allocation file
        // names it, or once placement puts an application there; then it is dynamic and goes
        // when empty, like any queue placement creates (the oracle showed it; docs/fidelity.md).
        s.add_queue("root", None, false, false, root_policy);
        s.apply_allocation(alloc);
        Ok(s)
    }

    /// User → groups (the first is the primary group). Users not listed have one group named
    /// like the user.
    pub fn set_groups(&mut self, groups: BTreeMap<String, Vec<String>>) {
        self.groups = groups;
    }

    /// Resource types beyond yarn-site's the owner declares (see [`crate::factory`]).
    pub(crate) fn set_extra_types(&mut self, extra: Vec<String>) {
        self.extra_types = extra;
    }

    pub fn properties(&self) -> &SchedulerProperties {
        &self.props
    }

    pub fn allocation_file(&self) -> &AllocationFile {
        &self.alloc
    }

    pub fn cluster_resource(&self) -> Resource {
        self.cluster.total
    }

    /// Warnings gathered from configuration loads and reloads (not errors).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    // ----- nodes -----------------------------------------------------------------------

    /// Register many nodes at once: shares are recomputed once, not per node.
    pub(crate) fn add_nodes<'a>(
        &mut self,
        nodes: impl IntoIterator<Item = (&'a str, Option<&'a str>, Resource)>,
    ) -> Result<Vec<NodeId>, SchedulerError> {
        let mut ids = Vec::new();
        for (name, rack, total) in nodes {
            ids.push(self.register_node(name, rack, total)?);
        }
        self.cluster_changed();
        self.recompute_steady_shares();
        self.refresh_root_metrics();
        Ok(ids)
    }

    pub fn add_node(&mut self, name: &str, rack: Option<&str>, total: Resource) -> Result<NodeId, SchedulerError> {
        let id = self.register_node(name, rack, total)?;
        self.cluster_changed();
        self.recompute_steady_shares();
        self.refresh_root_metrics();
        Ok(id)
    }

    fn register_node(&mut self, name: &str, rack: Option<&str>, total: Resource) -> Result<NodeId, SchedulerError> {
        let id = self.cluster.register_node(name, rack, total, PartitionId::DEFAULT)?;
        crate::cluster::put_in_slot(&mut self.preempted_for, id.0, Vec::new());
        Ok(id)
    }

    /// The node is lost: its containers complete (exit status ABORTED) and its reservation goes.
    pub(crate) fn remove_node(&mut self, node: NodeId) {
        if self.cluster.nodes[node].removed {
            return;
        }
        for c in self.node_containers(node).collect::<Vec<_>>() {
            self.finish_container(c, -100);
        }
        if let Some(r) = self.cluster.nodes[node].reservation {
            self.unreserve(r.app, node);
        }
        self.preempted_for[node.index()] = Vec::new();
        self.cluster.deregister_node(node);
        self.cluster_changed();
        self.recompute_steady_shares();
        self.refresh_root_metrics();
    }

    /// YARN's `updateRootQueueMetrics`: available = cluster − allocated, as of now.
    pub(crate) fn refresh_root_metrics(&mut self) {
        self.root_available = self.cluster.total.saturating_sub(self.q(ROOT).usage.get());
    }

    pub(crate) fn new_container(
        &mut self,
        app: AppId,
        node: NodeId,
        resource: Resource,
        priority: i32,
        is_am: bool,
        reserved_as: Option<u32>,
    ) -> ContainerId {
        let seq = self.apps[app].next_container_seq;
        let number = reserved_as.unwrap_or_else(|| self.take_yarn_number(app));
        let yarn_hash = container_id_hash(self.apps[app].yarn_id, 1, u64::from(number));
        let (id, generation) =
            self.cluster.add_container(app, node, resource, priority, is_am, seq, PartitionId::DEFAULT, yarn_hash);
        let a = &mut self.apps[app];
        a.next_container_seq += 1;
        a.live.push(id, generation);
        debug_assert!(a.queue.is_some(), "an alive app has a queue");
        self.preemption_fulfilled(node, app, resource);
        self.charge(app, resource, true);
        self.refresh_app(app);
        self.touch_demand(app);
        id
    }

    /// YARN's number for the app's next container or reservation.
    pub(crate) fn take_yarn_number(&mut self, app: AppId) -> u32 {
        let a = &mut self.apps[app];
        a.next_yarn_number += 1;
        a.next_yarn_number - 1
    }

    /// The app's first container becomes its AM: AM usage is charged to its leaf.
    pub(crate) fn mark_am(&mut self, app: AppId, resource: Resource) {
        let a = &mut self.apps[app];
        a.am_running = true;
        a.am_resource = resource;
        if a.runnable {
            a.state = AppState::Running;
        }
        // A leaf's AM usage is the sum over its runnable apps (a waiting app's AM, possible
        // only through recovery, is charged when it becomes runnable).
        if a.runnable {
            let queue = a.queue.expect("an alive app has a queue");
            self.q_mut(queue).am_usage.add_assign(resource);
        }
    }

    /// The app's live containers.
    pub(crate) fn app_containers(&self, app: AppId) -> crate::live::LiveIter<'_> {
        self.apps[app].live.iter(&self.cluster.container_gen)
    }

    /// The node's live containers.
    pub fn node_containers(&self, node: NodeId) -> crate::live::LiveIter<'_> {
        self.cluster.nodes[node].containers.iter(&self.cluster.container_gen)
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.cluster.nodes[id]
    }

    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.cluster.nodes()
    }

    pub fn location_name(&self, id: LocationId) -> &str {
        self.cluster.locations.name(id)
    }

    /// Why the app waits, if it does.
    pub fn wait_reason(&self, app: AppId) -> Option<&WaitReason> {
        self.apps[app].wait.as_ref()
    }

    // ----- configuration -----------------------------------------------------------------

    /// Hot reload: the new configuration applies at once, or is rejected whole with the old
    /// one kept. Lowered limits never stop running work.
    ///
    /// Of the scheduler's properties only what YARN's `FairScheduler.reinitialize` reads
    /// again changes: the maximum allocation, and the two switches that make the placement
    /// policy of a file without one (read from the scheduler's configuration when the file
    /// is loaded). Every other setting (assignment, locality, preemption, increments) is
    /// read once when YARN's scheduler starts, and stays.
    pub(crate) fn reload_with(
        &mut self,
        props: SchedulerProperties,
        alloc: AllocationFile,
    ) -> Result<(), SchedulerError> {
        if props.resource_types != self.props.resource_types {
            return Err(ConfigError::new("resource types cannot change on reload").into());
        }
        let placement = alloc
            .placement_policy
            .clone()
            .unwrap_or_else(|| generated_policy(props.allow_undeclared_pools, props.user_as_default_queue));
        self.props.maximum_allocation = props.maximum_allocation;
        self.props.allow_undeclared_pools = props.allow_undeclared_pools;
        self.props.user_as_default_queue = props.user_as_default_queue;
        self.placement = placement;
        self.apply_allocation(alloc);
        self.update_runnability_on_reload();
        Ok(())
    }
}

impl FairScheduler {
    /// Every queue of the tree, in creation order.
    pub fn queues(&self) -> impl Iterator<Item = (QueueId, &super::state::Queue)> {
        self.queues.live()
    }

    pub fn queue(&self, id: QueueId) -> &super::state::Queue {
        &self.queues[id]
    }

    /// Applications waiting (maxRunningApps) anywhere under `id`.
    pub fn waiting_apps_under(&self, id: QueueId) -> usize {
        let q = self.q(id);
        q.non_runnable_apps.len() + q.children.iter().map(|&c| self.waiting_apps_under(c)).sum::<usize>()
    }
}

impl FairScheduler {
    /// Percentages resolve against the cluster; only drf keys read it. Called before steady
    /// shares are recomputed: YARN's getMaxShare resolves a percentage maximum against the
    /// cluster as it is now.
    fn cluster_changed(&mut self) {
        self.refresh_max_shares();
        if self.queues.live().any(|(_, q)| q.policy == super::policy::PolicyKind::Drf) {
            self.rebuild_order();
        }
    }
}

impl Clone for FairScheduler {
    /// A copy of the state (the dry run's); the phase clock stays with the original.
    fn clone(&self) -> Self {
        Self {
            props: self.props.clone(),
            extra_types: self.extra_types.clone(),
            alloc: self.alloc.clone(),
            placement: self.placement.clone(),
            types: self.types,
            queues: self.queues.clone(),
            apps: self.apps.clone(),
            cluster: self.cluster.clone(),
            preempted_for: self.preempted_for.clone(),
            root_available: self.root_available,
            users: self.users.clone(),
            groups: self.groups.clone(),
            cluster_timestamp: self.cluster_timestamp,
            warnings: self.warnings.clone(),
            order_exact: self.order_exact,
            tie_ranks: self.tie_ranks.clone(),
            walk: self.walk,
            demand_dirty_apps: self.demand_dirty_apps.clone(),
            demand_full: self.demand_full,
            shares_stale: self.shares_stale,
            kills: self.kills.clone(),
            preemption: self.preemption.clone(),
            phases: self.phases.clone(),
            phase_clock: Default::default(),
            counters: self.counters.clone(),
        }
    }
}

impl FairScheduler {
    /// Time the walk's phases with the driver's clock (counters are kept regardless).
    pub(crate) fn set_phase_clock(&mut self, clock: Box<dyn crate::phases::PhaseClock>) {
        self.phase_clock.set(clock);
    }
}
