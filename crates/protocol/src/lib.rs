//! The wire types fairloom's ResourceManager, NodeManagers and application masters exchange,
//! with YARN's semantics (ResourceTracker, ApplicationMasterProtocol,
//! ContainerManagementProtocol) carried as JSON over HTTP. Types and token arithmetic only:
//! the handlers live in `rm` and `nm`, so another transport (Hadoop IPC) can reach the same
//! handlers later.

pub mod am;
pub mod node;
pub mod token;

use serde::{Deserialize, Serialize};

/// YARN's `ContainerExitStatus` values.
pub use fairloom_model::exit;

/// Paths of the node protocol (on `yarn.resourcemanager.resource-tracker.address`).
pub mod paths {
    pub const REGISTER_NODE: &str = "/fairloom/v1/tracker/register";
    pub const NODE_HEARTBEAT: &str = "/fairloom/v1/tracker/heartbeat";
    pub const UNREGISTER_NODE: &str = "/fairloom/v1/tracker/unregister";
    pub const REGISTER_AM: &str = "/fairloom/v1/am/register";
    pub const ALLOCATE: &str = "/fairloom/v1/am/allocate";
    pub const FINISH_AM: &str = "/fairloom/v1/am/finish";
    /// On a NodeManager: ContainerManagementProtocol's startContainers / stopContainers.
    pub const START_CONTAINERS: &str = "/fairloom/v1/containers/start";
    pub const STOP_CONTAINERS: &str = "/fairloom/v1/containers/stop";
    pub const CONTAINER_STATUSES: &str = "/fairloom/v1/containers/status";
    /// The header an AM proves itself with to the RM: its AMRM token
    /// ([`crate::token::Token::to_header`]).
    pub const AMRM_TOKEN_HEADER: &str = "X-Fairloom-AMRM-Token";
    /// The header an AM proves itself with to a NodeManager: its NM token for that node.
    pub const NM_TOKEN_HEADER: &str = "X-Fairloom-NM-Token";
}

/// What the RM's and the NodeManagers' `/metrics` answer with: prometheus-client's text.
pub const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Environment variables the RM gives an AM container beside YARN's own.
pub mod env {
    /// `host:port` of the application-master protocol.
    pub const RM_SCHEDULER_ADDRESS: &str = "FAIRLOOM_RM_SCHEDULER_ADDRESS";
    /// `host:port` of the RM's web address (REST).
    pub const RM_WEBAPP_ADDRESS: &str = "FAIRLOOM_RM_WEBAPP_ADDRESS";
    /// YARN's own: the container's credentials file (an AM's AMRM token is in it).
    pub const TOKEN_FILE: &str = "HADOOP_TOKEN_FILE_LOCATION";
    /// YARN's own: the attempt's AM container id.
    pub const CONTAINER_ID: &str = "CONTAINER_ID";
    pub const APP_SUBMITTER_USER: &str = "APP_SUBMITTER";
    pub const MAX_APP_ATTEMPTS: &str = "MAX_APP_ATTEMPTS";
    pub const APP_SUBMIT_TIME_ENV: &str = "APP_SUBMIT_TIME_ENV";
}

/// YARN's `Resource` as the REST API spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Res {
    pub memory: i64,
    #[serde(rename = "vCores")]
    pub vcores: i64,
}

impl Res {
    pub fn new(memory: i64, vcores: i64) -> Self {
        Self { memory, vcores }
    }
}

/// A file:// resource to fetch into the container's work dir (YARN's LocalResource).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalResource {
    /// The link name in the work dir.
    pub key: String,
    /// `file:///abs/path` (other schemes are refused by the NodeManager).
    pub resource: String,
    /// FILE, ARCHIVE or PATTERN.
    #[serde(rename = "type", default = "LocalResource::default_type")]
    pub kind: String,
    #[serde(default = "LocalResource::default_visibility")]
    pub visibility: String,
}

impl LocalResource {
    fn default_type() -> String {
        "FILE".to_string()
    }
    fn default_visibility() -> String {
        "APPLICATION".to_string()
    }
}

/// What to run in a container (YARN's ContainerLaunchContext).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LaunchContext {
    /// Joined with spaces into one shell command, as YARN's launch script does.
    pub commands: Vec<String>,
    pub environment: Vec<(String, String)>,
    pub local_resources: Vec<LocalResource>,
}

/// YARN's ContainerState.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ContainerState {
    New,
    Running,
    Complete,
}

/// A container's status as a NodeManager reports it and an AM receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerStatus {
    pub container_id: String,
    pub state: ContainerState,
    /// The process's exit code, or one of YARN's [`exit`] statuses; 0 while running.
    pub exit_status: i32,
    #[serde(default)]
    pub diagnostics: String,
    /// What the container was started with (so a restarted RM can take it back).
    #[serde(default)]
    pub resource: Res,
    #[serde(default)]
    pub priority: i32,
    /// When the RM allocated it, from its container token (epoch ms; 0 when unknown): a
    /// restarted RM counts its usage from there.
    #[serde(default)]
    pub creation_time: i64,
    /// When it ended, as its node saw it (epoch ms; 0 while it runs).
    #[serde(default)]
    pub finish_time: i64,
}

/// The error body every fairloom endpoint answers with, in YARN's REST shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteException {
    pub exception: String,
    pub message: String,
    #[serde(rename = "javaClassName")]
    pub java_class_name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteExceptionBody {
    #[serde(rename = "RemoteException")]
    pub remote_exception: RemoteException,
}
