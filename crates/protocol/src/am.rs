//! The application-master protocol (YARN's ApplicationMasterProtocol).

use serde::{Deserialize, Serialize};

use crate::token::Token;
use crate::{ContainerStatus, Res};

/// Which attempt calls is what its AMRM token says, never a field of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterAmRequest {
    pub host: String,
    pub rpc_port: i32,
    pub tracking_url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegisterAmResponse {
    pub maximum_capability: Res,
    pub queue: String,
    /// Containers of earlier attempts still running (keep-containers-across-attempts), or of
    /// this attempt after an RM restart.
    pub containers_from_previous_attempts: Vec<Container>,
}

/// One resource request: it sets the outstanding count at (priority, resource name, capability).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceRequest {
    pub priority: i32,
    /// `*`, a rack or a host.
    pub resource_name: String,
    pub capability: Res,
    pub num_containers: i32,
    #[serde(default = "yes")]
    pub relax_locality: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocateRequest {
    pub response_id: i64,
    pub asks: Vec<ResourceRequest>,
    pub releases: Vec<String>,
    pub progress: f32,
}

/// An allocated container (YARN's Container).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Container {
    pub id: String,
    pub node_id: String,
    pub node_http_address: String,
    pub resource: Res,
    pub priority: i32,
    /// The container token to start it with on its node (none for containers an AM learns
    /// of again when it registers after an RM restart: it started them already).
    pub token: Option<Token>,
}

/// An NM token for one node (YARN's NMToken): what an AM shows that node to start, stop or
/// ask about its containers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NmToken {
    pub node_id: String,
    pub token: Token,
}

/// YARN's PreemptionMessage: containers the scheduler will take back unless they finish.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PreemptionMessage {
    pub strict_contract: Vec<String>,
    pub contract: Vec<String>,
}

/// YARN's AMCommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AmCommand {
    /// Register again and send every outstanding ask (the RM restarted).
    AmResync,
    AmShutdown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeReport {
    pub node_id: String,
    pub http_address: String,
    pub state: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocateResponse {
    pub response_id: i64,
    pub am_command: Option<AmCommand>,
    pub allocated: Vec<Container>,
    pub completed: Vec<ContainerStatus>,
    pub preemption: Option<PreemptionMessage>,
    pub headroom: Res,
    pub updated_nodes: Vec<NodeReport>,
    pub num_cluster_nodes: u32,
    /// NM tokens for nodes of new containers this attempt has none for (or whose key rolled).
    #[serde(default)]
    pub nm_tokens: Vec<NmToken>,
    /// A new AMRM token, when the RM's AMRM master key is rolling: the AM uses it from now on.
    #[serde(default)]
    pub amrm_token: Option<Token>,
}

/// YARN's FinalApplicationStatus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FinalStatus {
    Undefined,
    Succeeded,
    Failed,
    Killed,
}

impl FinalStatus {
    pub fn name(self) -> &'static str {
        match self {
            Self::Undefined => "UNDEFINED",
            Self::Succeeded => "SUCCEEDED",
            Self::Failed => "FAILED",
            Self::Killed => "KILLED",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinishAmRequest {
    pub final_status: FinalStatus,
    pub diagnostics: String,
    pub tracking_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinishAmResponse {
    pub unregistered: bool,
}
