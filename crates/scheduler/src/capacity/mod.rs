//! YARN's Capacity Scheduler: a queue tree with guaranteed and maximum capacities per node
//! partition, node-driven allocation (children in priority-utilization order, applications
//! in fifo or fair order, user limits, AM limits with pending activation, reservations and
//! delay scheduling), and `ProportionalCapacityPreemptionPolicy` run from `update`.

mod allocator;
mod apps;
mod asks;
mod assign;
mod audit;
pub mod calc;
mod charge;
mod driver;
mod order;
pub mod preempt;
mod queues;
mod reservations;
pub mod state;
mod users;
mod waits;

use std::collections::{BTreeMap, HashMap};

use fairloom_config::capacity::Lines;
use fairloom_config::{
    parse_capacity_config, CapacityConfig, ConfigError, PreemptionConfig, Properties, SchedulerProperties,
};
use fairloom_model::Resource;

use crate::cluster::Cluster;
use crate::driver::{Counters, SchedulerError};
use crate::ids::{AppId, IdVec, PartitionId, QueueId};
use crate::phases::{PhaseClock, PhaseTimes};
use calc::Calc;
use state::{CsApp, CsQueue};

pub use charge::Usage;
pub use preempt::{PreemptionReport, QueueRound};

/// `yarn.cluster.max-application-priority`.
const MAX_APP_PRIORITY: &str = "yarn.cluster.max-application-priority";
const ACL_ENABLE: &str = "yarn.acl.enable";

/// Everything a Capacity Scheduler is configured from.
#[derive(Debug, Clone, Default)]
pub struct CapacitySetup {
    /// yarn-site.xml.
    pub site: Properties,
    /// capacity-scheduler.xml.
    pub capacity: Properties,
    /// Lines of the capacity properties when they came from a file (for errors).
    pub lines: Option<Lines>,
    /// Countable resource types beyond memory and vcores (besides `yarn.resource-types`).
    pub extra_types: Vec<String>,
}

impl CapacitySetup {
    /// yarn-site overlaid by capacity-scheduler.xml: what YARN's scheduler configuration reads.
    fn merged(&self) -> Properties {
        let mut m = self.site.clone();
        m.extend(self.capacity.iter().map(|(k, v)| (k.clone(), v.clone())));
        m
    }

    fn load(&self) -> Result<(SchedulerProperties, CapacityConfig, PreemptionConfig), ConfigError> {
        let props = self.load_site()?;
        let conf = self.load_queues(&props)?;
        let policy = PreemptionConfig::from_properties(&self.merged()).map_err(|e| e.in_file("capacity-scheduler"))?;
        Ok((props, conf, policy))
    }

    /// The scheduler-wide properties (what YARN's `validateConf` checks before the queues).
    fn load_site(&self) -> Result<SchedulerProperties, ConfigError> {
        SchedulerProperties::from_properties(&self.merged(), &self.extra_types).map_err(|e| e.in_file("yarn-site"))
    }

    /// The queues (what YARN parses while it builds them).
    fn load_queues(&self, props: &SchedulerProperties) -> Result<CapacityConfig, ConfigError> {
        parse_capacity_config(&self.capacity, &self.site, self.lines.as_ref(), &props.resource_types)
            .map_err(|e| e.in_file("capacity-scheduler"))
    }
}

pub struct CapacityScheduler {
    pub(crate) setup: CapacitySetup,
    pub(crate) props: SchedulerProperties,
    pub(crate) conf: CapacityConfig,
    pub(crate) policy: PreemptionConfig,
    pub(crate) calc: Calc,
    pub(crate) cluster: Cluster,
    pub(crate) queues: IdVec<QueueId, CsQueue>,
    pub(crate) queue_index: HashMap<String, QueueId>,
    /// By [`AppId::slot`]; a forgotten application's slot is the next one's.
    pub(crate) apps: crate::cluster::app_table::AppTable<CsApp>,
    pub(crate) max_app_priority: i32,
    pub(crate) acl_enabled: bool,
    pub(crate) groups: BTreeMap<String, Vec<String>>,
    pub(crate) monitor: preempt::Monitor,
    pub(crate) cluster_timestamp: i64,
    /// Orders the waits recorded on applications and the limit notes on queues.
    pub(crate) wait_seq: u64,
    pub counters: Counters,
    pub phases: PhaseTimes,
    pub(crate) phase_clock: crate::phases::PhaseTimer,
}

impl Clone for CapacityScheduler {
    /// A copy of the state (the dry run's); the phase clock stays with the original.
    fn clone(&self) -> Self {
        Self {
            setup: self.setup.clone(),
            props: self.props.clone(),
            conf: self.conf.clone(),
            policy: self.policy.clone(),
            calc: self.calc,
            cluster: self.cluster.clone(),
            queues: self.queues.clone(),
            queue_index: self.queue_index.clone(),
            apps: self.apps.clone(),
            max_app_priority: self.max_app_priority,
            acl_enabled: self.acl_enabled,
            groups: self.groups.clone(),
            monitor: self.monitor.clone(),
            cluster_timestamp: self.cluster_timestamp,
            wait_seq: self.wait_seq,
            counters: self.counters.clone(),
            phases: self.phases.clone(),
            phase_clock: Default::default(),
        }
    }
}

fn int_property(props: &Properties, key: &str, default: i64) -> Result<i64, ConfigError> {
    match props.get(key).map(|v| v.trim()) {
        None | Some("") => Ok(default),
        Some(v) => v.parse().map_err(|_| ConfigError::new(format!("'{v}' is not an integer")).element(key)),
    }
}

impl CapacityScheduler {
    /// A scheduler over an empty cluster whose partitions are `labels` (name, exclusive).
    pub fn new(setup: CapacitySetup, labels: &[(String, bool)]) -> Result<Self, SchedulerError> {
        let (props, conf, policy) = setup.load()?;
        let merged = setup.merged();
        let max_app_priority = int_property(&merged, MAX_APP_PRIORITY, 0)? as i32;
        let acl_enabled = merged.get(ACL_ENABLE).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let mut cluster = Cluster::default();
        for (name, exclusive) in labels {
            cluster.add_partition(name, *exclusive)?;
        }
        let calc = Calc::new(conf.calculator, props.resource_types.len());
        let mut s = Self {
            setup,
            props,
            conf: conf.clone(),
            policy,
            calc,
            cluster,
            queues: IdVec::new(),
            queue_index: HashMap::new(),
            apps: Default::default(),
            max_app_priority,
            acl_enabled,
            groups: BTreeMap::new(),
            monitor: preempt::Monitor::default(),
            cluster_timestamp: 0,
            wait_seq: 0,
            counters: Counters::default(),
            phases: PhaseTimes::default(),
            phase_clock: Default::default(),
        };
        s.build_tree(&conf)?;
        Ok(s)
    }

    /// User → groups (ACLs). Users not listed have one group named like the user.
    pub fn set_groups(&mut self, groups: BTreeMap<String, Vec<String>>) {
        self.groups = groups;
    }

    pub fn config(&self) -> &CapacityConfig {
        &self.conf
    }

    pub fn preemption_config(&self) -> &PreemptionConfig {
        &self.policy
    }

    pub fn properties(&self) -> &SchedulerProperties {
        &self.props
    }

    pub fn calculator(&self) -> Calc {
        self.calc
    }

    /// Every queue of the tree, parents before children.
    pub fn queues(&self) -> impl Iterator<Item = (QueueId, &CsQueue)> {
        self.queues.iter().enumerate().filter(|(_, q)| !q.removed).map(|(i, q)| (QueueId(i as u32), q))
    }

    pub fn queue(&self, id: QueueId) -> &CsQueue {
        &self.queues[id]
    }

    pub fn queue_id(&self, path: &str) -> Option<QueueId> {
        self.queue_index.get(path).copied()
    }

    /// The scheduler's own record of an application (the driver's view is [`Scheduler::app`]).
    pub fn app_record(&self, id: AppId) -> &CsApp {
        &self.apps[id]
    }

    /// Every application not forgotten, in submission order.
    pub fn apps(&self) -> impl Iterator<Item = (AppId, &CsApp)> {
        let mut held: Vec<(AppId, &CsApp)> = self.apps.iter().filter(|a| !a.forgotten).map(|a| (a.id, a)).collect();
        held.sort_unstable_by_key(|(id, _)| *id);
        held.into_iter()
    }

    /// Whether `id` names an application this scheduler holds (not one forgotten, whose
    /// slot another may have taken).
    pub fn holds(&self, id: AppId) -> bool {
        self.apps.get(id.index()).is_some_and(|a| a.id == id && !a.forgotten)
    }

    pub fn partition_name(&self, p: PartitionId) -> &str {
        &self.cluster.partition(p).name
    }

    /// The partitions: the default one first, then the labels in declaration order.
    pub fn partitions(&self) -> impl Iterator<Item = PartitionId> {
        (0..self.cluster.partitions.len() as u32).map(PartitionId)
    }

    /// A queue's guaranteed resource in the default partition (YARN's effective capacity).
    pub fn guaranteed(&self, id: QueueId) -> Resource {
        self.queues[id].parts[0].guaranteed
    }

    /// Hot reload (a queue refresh): a valid new configuration applies at once; an invalid
    /// one is rejected whole and the old one stays. `site` and `capacity` each replace their
    /// file when given. A refresh never deactivates an application.
    pub(crate) fn reload_with(
        &mut self,
        site: Option<Properties>,
        capacity: Option<Properties>,
    ) -> Result<(), SchedulerError> {
        let mut setup = self.setup.clone();
        if let Some(site) = site {
            setup.site = site;
        }
        if let Some(capacity) = capacity {
            setup.capacity = capacity;
            setup.lines = None;
        }
        let props = setup.load_site()?;
        if props.resource_types != self.props.resource_types {
            return Err(ConfigError::new("resource types cannot change on reload").into());
        }
        let merged = setup.merged();
        let policy = PreemptionConfig::from_properties(&merged).map_err(|e| e.in_file("capacity-scheduler"))?;
        let max_app_priority = int_property(&merged, MAX_APP_PRIORITY, 0)? as i32;
        let acl_enabled = merged.get(ACL_ENABLE).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        // What fails from here fails in YARN while the new queues are built, and YARN then
        // re-initialises the old ones (reinitialize's catch): updateClusterResource runs down
        // the tree, so every leaf publishes the limit its ancestors leave it now and more room
        // may activate applications. (What failed above fails in YARN before the queues.)
        match self.with_new_queues(setup, props, policy, max_app_priority, acl_enabled) {
            Ok(mut next) => {
                next.phase_clock = std::mem::take(&mut self.phase_clock);
                *self = next;
                self.forget_all_resorts();
                Ok(())
            }
            Err(e) => {
                self.forget_all_resorts();
                self.reorder_children_as_reinitialised();
                self.cluster_changed();
                Err(e)
            }
        }
    }

    /// A copy of the scheduler under the new configuration, its queues rebuilt, or why the
    /// new queues fail.
    fn with_new_queues(
        &self,
        setup: CapacitySetup,
        props: SchedulerProperties,
        policy: PreemptionConfig,
        max_app_priority: i32,
        acl_enabled: bool,
    ) -> Result<Self, SchedulerError> {
        let conf = setup.load_queues(&props)?;
        self.check_reload(&conf)?;
        let mut next = self.clone();
        next.setup = setup;
        next.props = props;
        next.policy = policy;
        // The calculator stays the one the scheduler started with: YARN's CapacityScheduler
        // sets it in initScheduler only, and every queue, old or new, takes the scheduler's.
        next.max_app_priority = max_app_priority;
        next.acl_enabled = acl_enabled;
        next.rebuild_tree(&conf)?;
        Ok(next)
    }

    pub(crate) fn q(&self, id: QueueId) -> &CsQueue {
        &self.queues[id]
    }

    pub(crate) fn q_mut(&mut self, id: QueueId) -> &mut CsQueue {
        &mut self.queues[id]
    }

    /// `q` is `ancestor` or lies below it.
    pub fn is_under(&self, q: QueueId, ancestor: QueueId) -> bool {
        self.path_to_root(q).any(|x| x == ancestor)
    }

    /// The queue and its ancestors up to root, leaf first.
    pub(crate) fn path_to_root(&self, id: QueueId) -> impl Iterator<Item = QueueId> + '_ {
        std::iter::successors(Some(id), move |q| self.q(*q).parent)
    }

    /// Time the allocation's phases with the driver's clock (counters are kept regardless).
    pub(crate) fn set_phase_clock(&mut self, clock: Box<dyn PhaseClock>) {
        self.phase_clock.set(clock);
    }

    pub(crate) fn groups_of(&self, user: &str) -> Vec<String> {
        self.groups.get(user).cloned().unwrap_or_else(|| vec![user.to_string()])
    }

    pub(crate) fn nparts(&self) -> usize {
        self.cluster.partitions.len()
    }
}

pub const ROOT: QueueId = QueueId(0);
