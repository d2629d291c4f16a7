//! The node protocol (YARN's ResourceTracker): register, heartbeat, and the RM's commands back.

use serde::{Deserialize, Serialize};

use crate::token::{ContainerTokenId, MasterKey, Token, TokenError};
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
    /// The session of the node's last registration, when it kept it: a node registered and
    /// heartbeating is taken over only by a registration that shows it (or comes from its
    /// own address).
    #[serde(default)]
    pub previous_session: String,
    /// With a registration secret: [`crate::token::registration_proof`] of `node_id`.
    #[serde(default)]
    pub proof: String,
    /// A random value the NodeManager process sends with every registration it makes: if
    /// the answer to one was lost, the RM knows the retry for the same process by it.
    #[serde(default)]
    pub instance: String,
}

/// YARN's unRegisterNodeManager, with what fairloom adds: the statuses of the containers the
/// node killed as it stopped, so the RM ends them (and their attempts) at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnregisterNodeRequest {
    pub node_id: String,
    pub session: String,
    pub containers: Vec<ContainerStatus>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnregisterNodeResponse {
    /// The containers the RM has taken note of: the node may forget them.
    pub acknowledged: Vec<String>,
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
    /// The RM's current container-token and NM-token master keys (none when refused): what
    /// the node checks the tokens of what it starts, and the AMs that call it, with.
    pub container_token_master_key: Option<MasterKey>,
    pub nm_token_master_key: Option<MasterKey>,
    /// This registration's session: every heartbeat must carry it, so that no one else
    /// speaks for the node without registering it again.
    pub session: String,
    pub heartbeat_interval_ms: u64,
    pub rm_identifier: i64,
    pub diagnostics: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeHeartbeatRequest {
    pub node_id: String,
    /// What the node's registration answered with.
    pub session: String,
    pub response_id: u64,
    /// Every container's status: running ones, and finished ones until the RM acknowledges them.
    pub containers: Vec<ContainerStatus>,
    pub healthy: bool,
    pub health_report: String,
    /// The ids of the master keys the node has (-1: none), so the RM sends the next ones once.
    pub last_known_container_token_key_id: i32,
    pub last_known_nm_token_key_id: i32,
}

/// A container to start: by the RM for an AM (in a heartbeat answer), by an AM for its own
/// containers (startContainers). Who, what and where come from the container token, which
/// the node checks; nothing else in the request says them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartContainer {
    pub token: Token,
    pub launch: LaunchContext,
    /// Hadoop's credentials file (HDTS) for the container's `container_tokens`: an AM's
    /// AMRM token. Hex in JSON.
    #[serde(default, with = "optional_hex")]
    pub credentials: Option<Vec<u8>>,
}

impl StartContainer {
    /// What its token says (unchecked: the node checks it before acting on it).
    pub fn id(&self) -> Result<ContainerTokenId, TokenError> {
        self.token.identifier()
    }
}

mod optional_hex {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match bytes {
            Some(b) => s.serialize_some(&crate::token::to_hex(b)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|t| crate::token::from_hex(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
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
    /// A master key the node does not know yet (YARN sends the next key before it is used).
    #[serde(default)]
    pub container_token_master_key: Option<MasterKey>,
    #[serde(default)]
    pub nm_token_master_key: Option<MasterKey>,
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

/// stopContainers and getContainerStatuses name containers by id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopContainersRequest {
    pub container_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopContainersResponse {
    pub stopped: Vec<String>,
    /// Container id → why it was refused.
    pub failed: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerStatusesResponse {
    pub statuses: Vec<ContainerStatus>,
    /// Container id → why it was refused.
    pub failed: Vec<(String, String)>,
}
