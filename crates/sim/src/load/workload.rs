//! What a simulation runs: nodes, applications with their task stages, configuration.

use fairloom_config::Properties;
use fairloom_model::Resource;

#[derive(Debug, Clone)]
pub struct NodeDef {
    pub name: String,
    pub rack: String,
    pub resource: Resource,
}

/// Tasks of one kind: same priority, size and duration; optionally preferring a host.
#[derive(Debug, Clone)]
pub struct TaskGroup {
    pub priority: i32,
    pub resource: Resource,
    pub count: u64,
    /// `None`: runs until the simulation ends.
    pub duration_ms: Option<i64>,
    pub host: Option<String>,
    /// Asked this long after the stage starts (SLS's `container.request.delay`).
    pub request_delay_ms: i64,
}

/// Stages run one after the other (maps, then reduces); a stage's tasks are asked at once.
#[derive(Debug, Clone)]
pub struct Stage {
    pub groups: Vec<TaskGroup>,
}

#[derive(Debug, Clone)]
pub struct AppDef {
    pub name: String,
    pub queue: String,
    pub user: String,
    pub arrival_ms: i64,
    /// The AM container; `None` for an unmanaged AM.
    pub am: Option<Resource>,
    pub stages: Vec<Stage>,
}

#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
    pub nodes: Vec<NodeDef>,
    pub apps: Vec<AppDef>,
    /// fair-scheduler.xml (the Fair Scheduler's configuration).
    pub allocations: String,
    /// capacity-scheduler.xml properties: when given, the workload runs on the Capacity
    /// Scheduler instead.
    pub capacity: Option<Properties>,
    pub properties: Properties,
    /// The most containers an AM keeps asked for at once (`None`: its whole stage).
    pub max_outstanding: Option<u64>,
    /// What the workload is, for the report.
    pub description: String,
}
