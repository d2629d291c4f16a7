//! An application's DAOs: AppInfo (whole, or as a reader without VIEW_APP sees it),
//! AppAttemptInfo and the live containers' ContainerInfo, with the rows the loop copies at a
//! publish to make them from.

use fairloom_model::{ApplicationAttemptId, Millis, Resource};
use fairloom_protocol::Res;

use super::ResourceInfo;
use crate::core::{AppState, Attempt, Core, RmApp};
use crate::service::AppSnap;

/// What YARN's AppInfo shows of an application beyond what its [`AppSnap`] names, taken at a
/// publish as plain values. The AppInfo is made from it by the first reader that asks, off
/// the loop: building it for every running application at every publish was a tenth of the
/// loop's time under `bench rm`.
#[derive(Debug, Clone)]
pub struct AppFigures {
    progress: f32,
    diagnostics: String,
    cluster_ts: Millis,
    priority: i32,
    launched: Millis,
    submitted: Millis,
    elapsed: Millis,
    /// The AM's node HTTP address and container, once it has one.
    am_http: String,
    am_container: Option<String>,
    used: Resource,
    running: usize,
    memory_seconds: i64,
    vcore_seconds: i64,
    cluster_memory: i64,
    preempted: Res,
    preempted_am: u32,
    preempted_non_am: u32,
    tracking_url: Option<String>,
    /// What the AM registered as its tracking URL (http or https only), where `/proxy/APP/`
    /// sends a reader.
    am_tracking_url: Option<String>,
}

impl AppFigures {
    pub fn of(core: &Core, app: &RmApp) -> Self {
        let view = app.sched.map(|s| core.sched.app(s));
        let (used, running) = view.as_ref().map(|v| (v.usage, v.live_containers)).unwrap_or((Resource::none(), 0));
        let attempt = app.attempt();
        let mut diagnostics = app.diagnostics.clone();
        // Until its AM has a container, an accepted app waits on the scheduler, which says
        // why; after, on its AM (whose state `diagnostics` holds).
        if app.state == AppState::Accepted && attempt.is_none_or(|a| a.am_container.is_none()) {
            if let Some(w) = view.as_ref().and_then(|v| v.wait.as_ref()) {
                diagnostics = format!("[fairloom] {w}");
            }
        }
        let elapsed = if app.finish_time > 0 { app.finish_time - app.start_time } else { core.now - app.start_time };
        // Finished containers' usage plus what the live ones have used so far, as YARN's
        // aggregate resource usage of a running app counts its running containers.
        let (running_memory, running_vcores) = core.containers.running_seconds(app.id, core.now);
        let am_container = attempt.filter(|a| a.am_node.is_some()).and_then(|a| a.am_container.clone());
        Self {
            progress: app.progress,
            diagnostics,
            cluster_ts: core.cluster_ts,
            priority: app.priority,
            launched: app.launch_time,
            submitted: app.submit_time,
            elapsed: elapsed.max(0),
            am_http: attempt.and_then(|a| a.am_node_http.clone()).unwrap_or_default(),
            am_container,
            used,
            running,
            memory_seconds: app.memory_seconds + running_memory,
            vcore_seconds: app.vcore_seconds + running_vcores,
            cluster_memory: core.sched.cluster().total.memory(),
            preempted: app.preempted,
            preempted_am: app.preempted_am,
            preempted_non_am: app.preempted_non_am,
            tracking_url: (matches!(app.state, AppState::Running) || app.state.is_final())
                .then(|| format!("http://{}/proxy/{}/", core.conf.webapp, app.id)),
            am_tracking_url: attempt
                .map(|a| a.tracking_url.trim())
                .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
                .map(str::to_string),
        }
    }

    /// Where the AM said its own page is (http or https), if it said.
    pub fn am_tracking_url(&self) -> Option<&str> {
        self.am_tracking_url.as_deref()
    }

    /// The application's priority (YARN's AppInfo field).
    pub fn priority(&self) -> i32 {
        self.priority
    }
}

/// YARN's ResourceSecondsMap entry of AppInfo.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MapEntry {
    pub key: &'static str,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ResourceSecondsMap {
    pub entry: MapEntry,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesInfo {
    pub resource_usages_by_partition: Vec<ResourceInfo>,
}

/// YARN's AppTimeoutInfo: fairloom runs every application without a lifetime.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeout {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub expiry_time: &'static str,
    pub remaining_time: i64,
}

/// The one timeout every application has: an unlimited lifetime.
pub fn lifetime() -> Timeout {
    Timeout { kind: "LIFETIME", expiry_time: "UNLIMITED", remaining_time: -1 }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Timeouts {
    pub timeout: Vec<Timeout>,
}

/// YARN's AppInfo.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppInfo {
    pub id: String,
    pub user: String,
    pub name: String,
    pub queue: String,
    pub state: &'static str,
    pub final_status: &'static str,
    pub progress: f64,
    #[serde(rename = "trackingUI")]
    pub tracking_ui: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracking_url: Option<String>,
    pub diagnostics: String,
    pub cluster_id: Millis,
    pub application_type: String,
    pub application_tags: String,
    pub priority: i32,
    pub started_time: Millis,
    pub launch_time: Millis,
    pub submit_time: Millis,
    pub finished_time: Millis,
    pub elapsed_time: Millis,
    // The four below are left out for a reader without VIEW_APP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub am_container_logs: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub am_host_http_address: Option<String>,
    #[serde(rename = "amRPCAddress", skip_serializing_if = "Option::is_none")]
    pub am_rpc_address: Option<&'static str>,
    #[serde(rename = "allocatedMB")]
    pub allocated_mb: i64,
    #[serde(rename = "allocatedVCores")]
    pub allocated_vcores: i64,
    #[serde(rename = "reservedMB")]
    pub reserved_mb: i64,
    #[serde(rename = "reservedVCores")]
    pub reserved_vcores: i64,
    pub running_containers: usize,
    pub memory_seconds: i64,
    pub vcore_seconds: i64,
    pub queue_usage_percentage: f64,
    pub cluster_usage_percentage: f64,
    pub resource_seconds_map: ResourceSecondsMap,
    #[serde(rename = "preemptedResourceMB")]
    pub preempted_resource_mb: i64,
    #[serde(rename = "preemptedResourceVCores")]
    pub preempted_resource_vcores: i64,
    #[serde(rename = "numNonAMContainerPreempted")]
    pub num_non_am_container_preempted: u32,
    #[serde(rename = "numAMContainerPreempted")]
    pub num_am_container_preempted: u32,
    pub preempted_memory_seconds: i64,
    pub preempted_vcore_seconds: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_aggregation_status: Option<&'static str>,
    pub unmanaged_application: bool,
    pub app_node_label_expression: &'static str,
    pub am_node_label_expression: &'static str,
    pub resource_info: ResourcesInfo,
    pub timeouts: Timeouts,
}

impl AppInfo {
    pub fn of(a: &AppSnap) -> Self {
        let f = &a.figures;
        let tracking_ui = match a.state {
            AppState::Running => "ApplicationMaster",
            s if s.is_final() => "History",
            _ => "UNASSIGNED",
        };
        let am_logs = match &f.am_container {
            Some(c) => format!("http://{}/node/containerlogs/{c}/{}", f.am_http, a.user),
            None => String::new(),
        };
        let used = f.used;
        Self {
            id: a.id.clone(),
            user: a.user.clone(),
            name: a.name.clone(),
            queue: a.queue.clone(),
            state: a.state.name(),
            final_status: a.final_status,
            progress: (f.progress * 100.0) as f64,
            tracking_ui,
            tracking_url: f.tracking_url.clone(),
            diagnostics: f.diagnostics.clone(),
            cluster_id: f.cluster_ts,
            application_type: a.app_type.clone(),
            application_tags: a.tags.join(","),
            priority: f.priority,
            started_time: a.started,
            launch_time: f.launched,
            submit_time: f.submitted,
            finished_time: a.finished,
            elapsed_time: f.elapsed,
            am_container_logs: Some(am_logs),
            am_host_http_address: Some(f.am_http.clone()),
            am_rpc_address: Some("N/A"),
            allocated_mb: used.memory(),
            allocated_vcores: used.vcores(),
            reserved_mb: 0,
            reserved_vcores: 0,
            running_containers: f.running,
            memory_seconds: f.memory_seconds,
            vcore_seconds: f.vcore_seconds,
            queue_usage_percentage: 0.0,
            cluster_usage_percentage: if f.cluster_memory > 0 {
                used.memory() as f64 * 100.0 / f.cluster_memory as f64
            } else {
                0.0
            },
            resource_seconds_map: ResourceSecondsMap {
                entry: MapEntry { key: "memory-mb", value: f.memory_seconds.to_string() },
            },
            preempted_resource_mb: f.preempted.memory,
            preempted_resource_vcores: f.preempted.vcores,
            num_non_am_container_preempted: f.preempted_non_am,
            num_am_container_preempted: f.preempted_am,
            preempted_memory_seconds: 0,
            preempted_vcore_seconds: 0,
            log_aggregation_status: Some("DISABLED"),
            unmanaged_application: false,
            app_node_label_expression: "",
            am_node_label_expression: "",
            resource_info: ResourcesInfo::default(),
            timeouts: Timeouts { timeout: vec![lifetime()] },
        }
    }

    /// The application as a caller without VIEW_APP sees it: YARN's AppInfo fills its times,
    /// AM address, resource use and log aggregation only `if (hasAccess)`; usage totals
    /// (memory-seconds, preemptions) and diagnostics it shows to every reader, and so does
    /// this.
    pub fn restricted(&self) -> Self {
        Self {
            started_time: 0,
            launch_time: 0,
            finished_time: 0,
            elapsed_time: 0,
            allocated_mb: 0,
            allocated_vcores: 0,
            reserved_mb: 0,
            reserved_vcores: 0,
            running_containers: 0,
            queue_usage_percentage: 0.0,
            cluster_usage_percentage: 0.0,
            am_container_logs: None,
            am_host_http_address: None,
            am_rpc_address: None,
            log_aggregation_status: None,
            ..self.clone()
        }
    }
}

/// One attempt as YARN's AppAttemptInfo shows it, taken at a publish as plain values.
#[derive(Debug, Clone)]
pub struct AttemptRow {
    pub number: u32,
    id: ApplicationAttemptId,
    state: &'static str,
    started: Millis,
    finished: Millis,
    am_container: Option<String>,
    am_node: Option<String>,
    am_node_http: Option<String>,
    diagnostics: String,
}

impl AttemptRow {
    pub fn of(app: &RmApp, a: &Attempt) -> Self {
        Self {
            number: a.number,
            id: app.attempt_id(a.number),
            state: a.state.name(),
            started: a.start_time,
            finished: a.finish_time,
            am_container: a.am_container.clone(),
            am_node: a.am_node.clone(),
            am_node_http: a.am_node_http.clone(),
            diagnostics: a.diagnostics.clone(),
        }
    }
}

/// YARN's AppAttemptInfo.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppAttemptInfo {
    pub id: u32,
    pub start_time: Millis,
    pub finished_time: Millis,
    pub container_id: String,
    pub node_http_address: String,
    pub node_id: String,
    pub logs_link: String,
    pub blacklisted_nodes: &'static str,
    pub nodes_blacklisted_by_system: &'static str,
    pub app_attempt_id: String,
    pub app_attempt_state: &'static str,
    pub diagnostics_info: String,
    pub export_ports: &'static str,
}

impl AppAttemptInfo {
    /// The attempt `a` of `user`'s application.
    pub fn of(a: &AttemptRow, user: &str) -> Self {
        Self {
            id: a.number,
            start_time: a.started,
            finished_time: a.finished,
            container_id: a.am_container.clone().unwrap_or_default(),
            node_http_address: a.am_node_http.clone().unwrap_or_default(),
            node_id: a.am_node.clone().unwrap_or_default(),
            logs_link: match (&a.am_node_http, &a.am_container) {
                (Some(h), Some(c)) => format!("http://{h}/node/containerlogs/{c}/{user}"),
                _ => String::new(),
            },
            blacklisted_nodes: "",
            nodes_blacklisted_by_system: "",
            app_attempt_id: a.id.to_string(),
            app_attempt_state: a.state,
            diagnostics_info: a.diagnostics.clone(),
            export_ports: "",
        }
    }
}

/// A live container as views need it: copied for a reader, made into a ContainerInfo as it
/// reads.
#[derive(Debug, Clone)]
pub struct ContainerRow {
    pub id: String,
    pub attempt: u32,
    pub node: String,
    pub node_http: String,
    pub resource: Res,
    pub priority: i32,
    pub allocated_at: Millis,
    pub running: bool,
}

/// `app`'s live containers, every attempt, in id order.
pub fn container_rows(core: &Core, app: &RmApp) -> Vec<ContainerRow> {
    core.containers
        .of_app(app.id)
        .map(|c| ContainerRow {
            id: c.id.clone(),
            attempt: c.attempt,
            node: c.node.clone(),
            node_http: core.nodes.get(&c.node).map(|n| n.names.http.clone()).unwrap_or_default(),
            resource: c.resource,
            priority: c.priority,
            allocated_at: c.allocated_at,
            running: c.running,
        })
        .collect()
}

/// YARN's ContainerInfo (of the AHS layer) of a live container.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerInfo<'a> {
    pub container_id: &'a str,
    #[serde(rename = "allocatedMB")]
    pub allocated_mb: i64,
    #[serde(rename = "allocatedVCores")]
    pub allocated_vcores: i64,
    pub assigned_node_id: &'a str,
    pub priority: i32,
    pub started_time: Millis,
    pub finished_time: Millis,
    pub elapsed_time: Millis,
    pub log_url: String,
    pub container_exit_status: i32,
    pub container_state: &'static str,
    pub node_http_address: String,
    pub node_id: &'a str,
}

impl<'a> ContainerInfo<'a> {
    /// Container `c` of `user`'s application.
    pub fn of(c: &'a ContainerRow, user: &str) -> Self {
        Self {
            container_id: &c.id,
            allocated_mb: c.resource.memory,
            allocated_vcores: c.resource.vcores,
            assigned_node_id: &c.node,
            priority: c.priority,
            started_time: c.allocated_at,
            finished_time: 0,
            elapsed_time: 0,
            log_url: format!("http://{}/node/containerlogs/{}/{user}", c.node_http, c.id),
            container_exit_status: 0,
            container_state: if c.running { "RUNNING" } else { "ALLOCATED" },
            node_http_address: format!("http://{}", c.node_http),
            node_id: &c.node,
        }
    }
}
