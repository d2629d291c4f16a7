//! YARN's NodeInfo, made when read from the row the loop copies at a publish.

use std::sync::Arc;

use fairloom_model::{Millis, Resource};
use fairloom_protocol::Res;

use super::ResourceInfo;
use crate::core::{Core, NodeNames, NodeState, RmNode};

/// A node as views need it: copied at a publish (nothing rendered), made into a NodeInfo
/// when read.
#[derive(Debug, Clone)]
pub struct NodeRow {
    pub names: Arc<NodeNames>,
    pub state: &'static str,
    pub last_health_update: Millis,
    pub health_report: String,
    pub containers: usize,
    pub used: Resource,
    pub total: Res,
}

impl NodeRow {
    pub fn of(core: &Core, n: &RmNode) -> Self {
        let (used, containers) = if n.state == NodeState::Running {
            let node = core.sched.cluster().node(n.sched);
            (node.allocated, node.containers.len())
        } else {
            (Resource::none(), 0)
        };
        Self {
            names: n.names.clone(),
            state: n.state.name(),
            last_health_update: n.last_heartbeat,
            health_report: n.health_report.clone(),
            containers,
            used,
            total: n.resource,
        }
    }

    pub fn avail_memory(&self) -> i64 {
        self.total.memory - self.used.memory()
    }

    pub fn avail_vcores(&self) -> i64 {
        self.total.vcores - self.used.vcores()
    }
}

/// YARN's ResourceUtilizationInfo: fairloom's NodeManagers do not measure it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceUtilizationInfo {
    #[serde(rename = "nodePhysicalMemoryMB")]
    pub node_physical_memory_mb: i64,
    #[serde(rename = "nodeVirtualMemoryMB")]
    pub node_virtual_memory_mb: i64,
    #[serde(rename = "nodeCPUUsage")]
    pub node_cpu_usage: f64,
    #[serde(rename = "aggregatedContainersPhysicalMemoryMB")]
    pub aggregated_containers_physical_memory_mb: i64,
    #[serde(rename = "aggregatedContainersVirtualMemoryMB")]
    pub aggregated_containers_virtual_memory_mb: i64,
    #[serde(rename = "containersCPUUsage")]
    pub containers_cpu_usage: f64,
}

/// YARN's NodeInfo.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfo<'a> {
    pub rack: &'a str,
    pub state: &'static str,
    pub id: &'a str,
    pub node_host_name: &'a str,
    #[serde(rename = "nodeHTTPAddress")]
    pub node_http_address: &'a str,
    pub last_health_update: Millis,
    pub version: &'a str,
    pub health_report: &'a str,
    pub num_containers: usize,
    #[serde(rename = "usedMemoryMB")]
    pub used_memory_mb: i64,
    #[serde(rename = "availMemoryMB")]
    pub avail_memory_mb: i64,
    pub used_virtual_cores: i64,
    pub available_virtual_cores: i64,
    pub num_running_opport_containers: i64,
    #[serde(rename = "usedMemoryOpportGB")]
    pub used_memory_opport_gb: i64,
    pub used_virtual_cores_opport: i64,
    pub num_queued_containers: i64,
    pub node_labels: [&'static str; 0],
    pub total_resource: ResourceInfo,
    pub used_resource: ResourceInfo,
    pub available_resource: ResourceInfo,
    pub resource_utilization: ResourceUtilizationInfo,
}

impl<'a> NodeInfo<'a> {
    pub fn of(n: &'a NodeRow) -> Self {
        Self {
            rack: &n.names.rack,
            state: n.state,
            id: &n.names.id,
            node_host_name: n.names.id.split(':').next().unwrap_or_default(),
            node_http_address: &n.names.http,
            last_health_update: n.last_health_update,
            version: &n.names.version,
            health_report: &n.health_report,
            num_containers: n.containers,
            used_memory_mb: n.used.memory(),
            avail_memory_mb: n.avail_memory(),
            used_virtual_cores: n.used.vcores(),
            available_virtual_cores: n.avail_vcores(),
            num_running_opport_containers: 0,
            used_memory_opport_gb: 0,
            used_virtual_cores_opport: 0,
            num_queued_containers: 0,
            node_labels: [],
            total_resource: n.total.into(),
            used_resource: n.used.into(),
            available_resource: ResourceInfo { memory: n.avail_memory(), vcores: n.avail_vcores() },
            resource_utilization: ResourceUtilizationInfo::default(),
        }
    }
}
