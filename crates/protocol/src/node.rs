//! The node protocol (YARN's ResourceTracker): register, heartbeat, and the RM's commands back.

use serde::{Deserialize, Serialize};

use crate::{ContainerStatus, LaunchContext, Res};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegisterNodeRequest {
    /// `host:port`, the NodeManager's id.
    pub node_id: String,
    /// `host:port` of its web server (NM REST and container management).
    pub http_address: String,
    pub rack: Option<String>,
    pub resource: Res,
    /// Containers still running, or finished and not yet acknowledged (work-preserving restart).
    #[serde(default)]
    pub containers: Vec<ContainerStatus>,
    pub version: String,
}

/// YARN's NodeAction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NodeAction {
    Normal,
    /// Register again (the RM restarted or forgot the node).
    Resync,
    Shutdown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegisterNodeResponse {
    pub action: NodeAction,
    /// The key container tokens are signed with (YARN's container-token master key), hex.
    pub container_token_key: String,
    pub heartbeat_interval_ms: u64,
    pub rm_identifier: i64,
    pub diagnostics: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeHeartbeatRequest {
    pub node_id: String,
    pub response_id: u64,
    /// Every container's status: running ones, and finished ones until the RM acknowledges them.
    pub containers: Vec<ContainerStatus>,
    pub healthy: bool,
    pub health_report: String,
}

/// A container the RM asks the node to start (an AM container).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartContainer {
    pub container_id: String,
    pub user: String,
    pub resource: Res,
    pub priority: i32,
    pub token: String,
    pub launch: LaunchContext,
}

/// A container the RM asks the node to kill, with the exit status to report for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KillContainer {
    pub container_id: String,
    pub exit_status: i32,
    pub diagnostics: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeHeartbeatResponse {
    pub response_id: u64,
    pub action: NodeAction,
    pub start: Vec<StartContainer>,
    pub kill: Vec<KillContainer>,
    /// Finished containers the RM has taken note of: the node may forget them.
    pub acknowledged: Vec<String>,
    pub next_heartbeat_ms: u64,
    pub diagnostics: String,
}

/// ContainerManagementProtocol.startContainers, called by an AM on the node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartContainersRequest {
    pub containers: Vec<StartContainer>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartContainersResponse {
    pub started: Vec<String>,
    /// Container id → why it was refused.
    pub failed: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopContainersRequest {
    pub container_ids: Vec<String>,
}
