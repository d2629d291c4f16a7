//! YARN's REST DAOs as typed records: ClusterInfo, ClusterMetricsInfo, AppInfo,
//! AppAttemptInfo, ContainerInfo, NodeInfo and the two scheduler layouts, each serialised
//! with the Java field names as JSON keys, in the Java classes' field order. The RM's loop
//! copies plain rows at a publish; the records are made from them (the application's once,
//! the others when read), so a reader costs the loop nothing. The same records are what the
//! client protocol's reports are made from.

mod apps;
mod nodes;
mod scheduler;

use serde::ser::{Serialize, SerializeMap, Serializer};

use fairloom_model::{Millis, Resource};
use fairloom_protocol::Res;
use fairloom_scheduler::Layout;

use crate::core::{AppState, Core, NodeState};

pub use apps::{
    container_rows, lifetime, AppAttemptInfo, AppFigures, AppInfo, AttemptRow, ContainerInfo, ContainerRow, Timeout,
};
pub use nodes::{NodeInfo, NodeRow};
pub use scheduler::{scheduler, SchedulerInfo};

pub const VERSION: &str = concat!("fairloom ", env!("CARGO_PKG_VERSION"));

/// YARN's ResourceInfo as the REST API shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ResourceInfo {
    pub memory: i64,
    #[serde(rename = "vCores")]
    pub vcores: i64,
}

impl From<Resource> for ResourceInfo {
    fn from(r: Resource) -> Self {
        Self { memory: r.memory(), vcores: r.vcores() }
    }
}

impl From<Res> for ResourceInfo {
    fn from(r: Res) -> Self {
        Self { memory: r.memory, vcores: r.vcores }
    }
}

pub fn resource(r: Resource) -> ResourceInfo {
    r.into()
}

/// `{ "<key>": value }`: YARN's REST answers wrap each DAO in an object named after it.
pub struct Wrapped<'a, T: ?Sized>(pub &'static str, pub &'a T);

impl<T: Serialize + ?Sized> Serialize for Wrapped<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(self.0, self.1)?;
        m.end()
    }
}

/// A list as YARN's REST API wraps one: `{ "<item>": [...] }`, or `null` when empty (as
/// Jackson writes an empty JAXB list).
pub struct List<'a, T>(pub &'static str, pub &'a [T]);

impl<T: Serialize> Serialize for List<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.1.is_empty() {
            return s.serialize_none();
        }
        Wrapped(self.0, self.1).serialize(s)
    }
}

/// YARN's ClusterInfo.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInfo {
    pub id: Millis,
    pub started_on: Millis,
    pub state: &'static str,
    pub ha_state: &'static str,
    pub rm_state_store_name: &'static str,
    pub resource_manager_version: &'static str,
    pub resource_manager_build_version: &'static str,
    pub resource_manager_version_built_on: &'static str,
    pub hadoop_version: &'static str,
    pub hadoop_build_version: &'static str,
    pub hadoop_version_built_on: &'static str,
    pub ha_zoo_keeper_connection_state: &'static str,
}

pub fn cluster_info(core: &Core) -> ClusterInfo {
    ClusterInfo {
        id: core.started_on,
        started_on: core.started_on,
        state: "STARTED",
        ha_state: "ACTIVE",
        rm_state_store_name: core.store.name(),
        resource_manager_version: VERSION,
        resource_manager_build_version: VERSION,
        resource_manager_version_built_on: "",
        hadoop_version: "3.4.0 (fairloom-compatible)",
        hadoop_build_version: VERSION,
        hadoop_version_built_on: "",
        ha_zoo_keeper_connection_state:
            "Could not find leader elector. Verify both HA and automatic failover are enabled.",
    }
}

/// YARN's ClusterMetricsInfo.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterMetricsInfo {
    pub apps_submitted: usize,
    pub apps_completed: usize,
    pub apps_pending: usize,
    pub apps_running: usize,
    pub apps_failed: usize,
    pub apps_killed: usize,
    #[serde(rename = "reservedMB")]
    pub reserved_mb: i64,
    #[serde(rename = "availableMB")]
    pub available_mb: i64,
    #[serde(rename = "allocatedMB")]
    pub allocated_mb: i64,
    #[serde(rename = "pendingMB")]
    pub pending_mb: i64,
    pub reserved_virtual_cores: i64,
    pub available_virtual_cores: i64,
    pub allocated_virtual_cores: i64,
    pub pending_virtual_cores: i64,
    pub containers_allocated: usize,
    pub containers_reserved: usize,
    /// The scheduler's views carry pending resources, not container counts.
    pub containers_pending: usize,
    #[serde(rename = "totalMB")]
    pub total_mb: i64,
    pub total_virtual_cores: i64,
    #[serde(rename = "utilizedMBPercent")]
    pub utilized_mb_percent: i64,
    pub utilized_virtual_cores_percent: i64,
    pub total_nodes: usize,
    pub lost_nodes: usize,
    pub unhealthy_nodes: usize,
    pub decommissioning_nodes: usize,
    pub decommissioned_nodes: usize,
    pub rebooted_nodes: usize,
    pub active_nodes: usize,
    pub shutdown_nodes: usize,
    pub total_used_resources_across_partition: ResourceInfo,
    pub total_cluster_resources_across_partition: ResourceInfo,
    pub total_reserved_resources_across_partition: ResourceInfo,
    pub total_allocated_containers_across_partition: usize,
    pub cross_partition_metrics_available: bool,
    pub rm_scheduler_busy_percent: i64,
    pub rm_event_queue_size: i64,
    pub scheduler_event_queue_size: i64,
}

pub fn cluster_metrics(core: &Core) -> ClusterMetricsInfo {
    let count = AppState::tally(&core.apps);
    let pending_apps =
        count(AppState::Accepted) + count(AppState::Submitted) + count(AppState::New) + count(AppState::NewSaving);
    let cluster = core.sched.cluster();
    let mut allocated = Resource::none();
    let mut reserved = Resource::none();
    let mut total = Resource::none();
    let mut containers = 0usize;
    let mut reserved_containers = 0usize;
    for n in cluster.nodes.iter().filter(|n| !n.removed) {
        allocated.add_assign(n.allocated);
        total.add_assign(n.total);
        containers += n.containers.len();
        if let Some(r) = n.reservation {
            reserved.add_assign(r.resource);
            reserved_containers += 1;
        }
    }
    let mut pending = Resource::none();
    for s in core.apps.values().filter_map(|a| a.sched) {
        pending.add_assign(core.sched.app(s).pending);
    }
    let available = total.saturating_sub(allocated);
    let nodes_in = |s: NodeState| core.nodes.values().filter(|n| n.state == s).count();
    let (active, lost) = (nodes_in(NodeState::Running), nodes_in(NodeState::Lost));
    let (decommissioned, shutdown) = (nodes_in(NodeState::Decommissioned), nodes_in(NodeState::Shutdown));
    // YARN's ClusterMetricsInfo adds the reserved resource to the total for the Capacity
    // Scheduler only (an instanceof there).
    let capacity = matches!(core.sched.layout(), Layout::Capacity(_));
    let total_mb = if capacity { available.memory() + allocated.memory() + reserved.memory() } else { total.memory() };
    let total_vc = if capacity { available.vcores() + allocated.vcores() + reserved.vcores() } else { total.vcores() };
    ClusterMetricsInfo {
        apps_submitted: core.apps.len(),
        apps_completed: count(AppState::Finished) + count(AppState::Failed) + count(AppState::Killed),
        apps_pending: pending_apps,
        apps_running: count(AppState::Running),
        apps_failed: count(AppState::Failed),
        apps_killed: count(AppState::Killed),
        reserved_mb: reserved.memory(),
        available_mb: available.memory(),
        allocated_mb: allocated.memory(),
        pending_mb: pending.memory(),
        reserved_virtual_cores: reserved.vcores(),
        available_virtual_cores: available.vcores(),
        allocated_virtual_cores: allocated.vcores(),
        pending_virtual_cores: pending.vcores(),
        containers_allocated: containers,
        containers_reserved: reserved_containers,
        containers_pending: 0,
        total_mb,
        total_virtual_cores: total_vc,
        utilized_mb_percent: percent(allocated.memory(), total.memory()),
        utilized_virtual_cores_percent: percent(allocated.vcores(), total.vcores()),
        total_nodes: active + lost + decommissioned + shutdown,
        lost_nodes: lost,
        unhealthy_nodes: 0,
        decommissioning_nodes: 0,
        decommissioned_nodes: decommissioned,
        rebooted_nodes: 0,
        active_nodes: active,
        shutdown_nodes: shutdown,
        total_used_resources_across_partition: allocated.into(),
        total_cluster_resources_across_partition: total.into(),
        total_reserved_resources_across_partition: reserved.into(),
        total_allocated_containers_across_partition: containers,
        cross_partition_metrics_available: true,
        rm_scheduler_busy_percent: -1,
        rm_event_queue_size: 0,
        scheduler_event_queue_size: 0,
    }
}

fn percent(part: i64, whole: i64) -> i64 {
    if whole <= 0 {
        0
    } else {
        // Wide enough for any part: a percentage never overflows, whatever the sizes.
        (i128::from(part) * 100 / i128::from(whole)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }
}
