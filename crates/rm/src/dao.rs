//! YARN's REST DAOs (ClusterInfo, ClusterMetricsInfo, AppInfo, AppAttemptInfo, NodeInfo and
//! the two scheduler layouts) rendered from the RM's state, with the Java field names as
//! JSON keys.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use fairloom_model::{ApplicationAttemptId, Millis, Resource};
use fairloom_protocol::Res;
use fairloom_scheduler::{Layout, QueueId};

use crate::core::{AppState, Core, NodeNames, NodeState, RmApp, RmNode};
use crate::service::AppSnap;

pub const VERSION: &str = concat!("fairloom ", env!("CARGO_PKG_VERSION"));

pub fn resource(r: Resource) -> Value {
    json!({ "memory": r.memory(), "vCores": r.vcores() })
}

pub fn cluster_info(core: &Core) -> Value {
    json!({ "clusterInfo": {
        "id": core.started_on,
        "startedOn": core.started_on,
        "state": "STARTED",
        "haState": "ACTIVE",
        "rmStateStoreName": core.store.name(),
        "resourceManagerVersion": VERSION,
        "resourceManagerBuildVersion": VERSION,
        "resourceManagerVersionBuiltOn": "",
        "hadoopVersion": "3.4.0 (fairloom-compatible)",
        "hadoopBuildVersion": VERSION,
        "hadoopVersionBuiltOn": "",
        "haZooKeeperConnectionState": "Could not find leader elector. Verify both HA and automatic failover are enabled.",
    }})
}

pub fn cluster_metrics(core: &Core) -> Value {
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
    json!({ "clusterMetrics": {
        "appsSubmitted": core.apps.len(),
        "appsCompleted": count(AppState::Finished) + count(AppState::Failed) + count(AppState::Killed),
        "appsPending": pending_apps,
        "appsRunning": count(AppState::Running),
        "appsFailed": count(AppState::Failed),
        "appsKilled": count(AppState::Killed),
        "reservedMB": reserved.memory(),
        "availableMB": available.memory(),
        "allocatedMB": allocated.memory(),
        "pendingMB": pending.memory(),
        "reservedVirtualCores": reserved.vcores(),
        "availableVirtualCores": available.vcores(),
        "allocatedVirtualCores": allocated.vcores(),
        "pendingVirtualCores": pending.vcores(),
        "containersAllocated": containers,
        "containersReserved": reserved_containers,
        // The driver's views carry pending resources, not container counts.
        "containersPending": 0,
        "totalMB": total_mb,
        "totalVirtualCores": total_vc,
        "utilizedMBPercent": percent(allocated.memory(), total.memory()),
        "utilizedVirtualCoresPercent": percent(allocated.vcores(), total.vcores()),
        "totalNodes": active + lost + decommissioned + shutdown,
        "lostNodes": lost,
        "unhealthyNodes": 0,
        "decommissioningNodes": 0,
        "decommissionedNodes": decommissioned,
        "rebootedNodes": 0,
        "activeNodes": active,
        "shutdownNodes": shutdown,
        "totalUsedResourcesAcrossPartition": resource(allocated),
        "totalClusterResourcesAcrossPartition": resource(total),
        "totalReservedResourcesAcrossPartition": resource(reserved),
        "totalAllocatedContainersAcrossPartition": containers,
        "crossPartitionMetricsAvailable": true,
        "rmSchedulerBusyPercent": -1,
        "rmEventQueueSize": 0,
        "schedulerEventQueueSize": 0,
    }})
}

fn percent(part: i64, whole: i64) -> i64 {
    if whole <= 0 {
        0
    } else {
        // Wide enough for any part: a percentage never overflows, whatever the sizes.
        (i128::from(part) * 100 / i128::from(whole)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }
}

/// What YARN's AppInfo shows of an application beyond what its [`AppSnap`] names, taken at a
/// publish as plain values. The JSON is built from it by the first reader that asks, off the
/// loop: building it for every running application at every publish was a tenth of the
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
        }
    }

    /// The application's priority (YARN's AppInfo field).
    pub fn priority(&self) -> i32 {
        self.priority
    }
}

/// YARN's AppInfo.
pub fn app_info(a: &AppSnap) -> Value {
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
    let mut v = json!({
        "id": a.id,
        "user": a.user,
        "name": a.name,
        "queue": a.queue,
        "state": a.state.name(),
        "finalStatus": a.final_status,
        "progress": (f.progress * 100.0) as f64,
        "trackingUI": tracking_ui,
        "diagnostics": f.diagnostics,
        "clusterId": f.cluster_ts,
        "applicationType": a.app_type,
        "applicationTags": a.tags.join(","),
        "priority": f.priority,
        "startedTime": a.started,
        "launchTime": f.launched,
        "submitTime": f.submitted,
        "finishedTime": a.finished,
        "elapsedTime": f.elapsed,
        "amContainerLogs": am_logs,
        "amHostHttpAddress": f.am_http,
        "amRPCAddress": "N/A",
        "allocatedMB": used.memory(),
        "allocatedVCores": used.vcores(),
        "reservedMB": 0,
        "reservedVCores": 0,
        "runningContainers": f.running,
        "memorySeconds": f.memory_seconds,
        "vcoreSeconds": f.vcore_seconds,
        "queueUsagePercentage": 0.0,
        "clusterUsagePercentage": if f.cluster_memory > 0 { used.memory() as f64 * 100.0 / f.cluster_memory as f64 } else { 0.0 },
        "resourceSecondsMap": { "entry": { "key": "memory-mb", "value": f.memory_seconds.to_string() } },
        "preemptedResourceMB": f.preempted.memory,
        "preemptedResourceVCores": f.preempted.vcores,
        "numNonAMContainerPreempted": f.preempted_non_am,
        "numAMContainerPreempted": f.preempted_am,
        "preemptedMemorySeconds": 0,
        "preemptedVcoreSeconds": 0,
        "logAggregationStatus": "DISABLED",
        "unmanagedApplication": false,
        "appNodeLabelExpression": "",
        "amNodeLabelExpression": "",
        "resourceInfo": { "resourceUsagesByPartition": [] },
        "timeouts": { "timeout": [{ "type": "LIFETIME", "expiryTime": "UNLIMITED", "remainingTime": -1 }] },
    });
    if let Some(url) = &f.tracking_url {
        v["trackingUrl"] = json!(url);
    }
    v
}

/// An application as a caller without VIEW_APP sees it: YARN's AppInfo fills its times, AM
/// address, resource use and log aggregation only for callers who may view the application.
pub fn restricted_app_info(info: &Value) -> Value {
    let mut v = info.clone();
    if let Some(m) = v.as_object_mut() {
        // YARN's AppInfo sets these only `if (hasAccess)`; usage totals (memory-seconds,
        // preemptions) and diagnostics it shows to every reader, and so does this.
        for k in [
            "startedTime",
            "launchTime",
            "finishedTime",
            "elapsedTime",
            "allocatedMB",
            "allocatedVCores",
            "reservedMB",
            "reservedVCores",
            "runningContainers",
        ] {
            m.insert(k.to_string(), json!(0));
        }
        for k in ["queueUsagePercentage", "clusterUsagePercentage"] {
            m.insert(k.to_string(), json!(0.0));
        }
        for k in ["amContainerLogs", "amHostHttpAddress", "amRPCAddress", "logAggregationStatus"] {
            m.remove(k);
        }
    }
    v
}

/// One attempt as YARN's AppAttemptInfo shows it, taken at a publish as plain values and
/// rendered by [`attempt_info`] when read.
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
    pub fn of(app: &RmApp, a: &crate::core::Attempt) -> Self {
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

/// YARN's AppAttemptInfo of an attempt of `user`'s application.
pub fn attempt_info(a: &AttemptRow, user: &str) -> Value {
    json!({
        "id": a.number,
        "startTime": a.started,
        "finishedTime": a.finished,
        "containerId": a.am_container.clone().unwrap_or_default(),
        "nodeHttpAddress": a.am_node_http.clone().unwrap_or_default(),
        "nodeId": a.am_node.clone().unwrap_or_default(),
        "logsLink": match (&a.am_node_http, &a.am_container) {
            (Some(h), Some(c)) => format!("http://{h}/node/containerlogs/{c}/{user}"),
            _ => String::new(),
        },
        "blacklistedNodes": "",
        "nodesBlacklistedBySystem": "",
        "appAttemptId": a.id.to_string(),
        "appAttemptState": a.state,
        "diagnosticsInfo": a.diagnostics,
        "exportPorts": "",
    })
}

/// A live container as views need it: copied for a reader, rendered as it reads.
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

/// YARN's ContainerInfo (of the AHS layer) of a live container of `user`'s application.
pub fn container_info(c: &ContainerRow, user: &str) -> Value {
    json!({
        "containerId": c.id,
        "allocatedMB": c.resource.memory,
        "allocatedVCores": c.resource.vcores,
        "assignedNodeId": c.node,
        "priority": c.priority,
        "startedTime": c.allocated_at,
        "finishedTime": 0,
        "elapsedTime": 0,
        "logUrl": format!("http://{}/node/containerlogs/{}/{user}", c.node_http, c.id),
        "containerExitStatus": 0,
        "containerState": if c.running { "RUNNING" } else { "ALLOCATED" },
        "nodeHttpAddress": format!("http://{}", c.node_http),
        "nodeId": c.node,
    })
}

/// A node as views need it: copied at a publish (no JSON built), rendered when read.
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

/// YARN's NodeInfo.
pub fn node_info(n: &NodeRow) -> Value {
    let host = n.names.id.split(':').next().unwrap_or_default();
    json!({
        "rack": n.names.rack,
        "state": n.state,
        "id": n.names.id,
        "nodeHostName": host,
        "nodeHTTPAddress": n.names.http,
        "lastHealthUpdate": n.last_health_update,
        "version": n.names.version,
        "healthReport": n.health_report,
        "numContainers": n.containers,
        "usedMemoryMB": n.used.memory(),
        "availMemoryMB": n.avail_memory(),
        "usedVirtualCores": n.used.vcores(),
        "availableVirtualCores": n.avail_vcores(),
        "numRunningOpportContainers": 0,
        "usedMemoryOpportGB": 0,
        "usedVirtualCoresOpport": 0,
        "numQueuedContainers": 0,
        "nodeLabels": [],
        "totalResource": { "memory": n.total.memory, "vCores": n.total.vcores },
        "usedResource": resource(n.used),
        "availableResource": { "memory": n.avail_memory(), "vCores": n.avail_vcores() },
        "resourceUtilization": { "nodePhysicalMemoryMB": 0, "nodeVirtualMemoryMB": 0, "nodeCPUUsage": 0.0,
            "aggregatedContainersPhysicalMemoryMB": 0, "aggregatedContainersVirtualMemoryMB": 0, "containersCPUUsage": 0.0 },
    })
}

pub fn scheduler(core: &Core) -> Value {
    // YARN's two layouts of the scheduler DAO.
    let info = match core.sched.layout() {
        Layout::Fair(f) => json!({ "type": "fairScheduler", "rootQueue": fair_queue(core, f, QueueId(0)) }),
        Layout::Capacity(c) => capacity_root(core, c),
    };
    json!({ "scheduler": { "schedulerInfo": info } })
}

fn fair_queue(core: &Core, f: &fairloom_scheduler::FairScheduler, id: QueueId) -> Value {
    let q = f.queue(id);
    let cluster = core.sched.cluster().total;
    let max = Resource::new(q.max_share.memory().min(cluster.memory()), q.max_share.vcores().min(cluster.vcores()));
    let mut live = 0usize;
    let mut apps = Vec::new();
    if q.leaf {
        apps.extend(q.runnable_apps.iter().chain(q.non_runnable_apps.iter()).copied());
        live = apps.iter().map(|&a| core.sched.app(a).live_containers).sum();
    }
    let mut v = json!({
        "queueName": q.name,
        "schedulingPolicy": q.policy.name(),
        "maxApps": q.settings.max_running_apps,
        "minResources": resource(q.settings.min_share),
        "maxResources": resource(max),
        "usedResources": resource(q.usage),
        "amUsedResources": resource(q.am_usage),
        "amMaxResources": resource(if q.leaf { f.am_limit(id) } else { Resource::none() }),
        "demandResources": resource(q.demand),
        "steadyFairResources": resource(q.steady_fair_share),
        "fairResources": resource(q.fair_share),
        "clusterResources": resource(cluster),
        "reservedResources": resource(Resource::none()),
        "maxContainerAllocation": resource(q.settings.max_container_allocation.unwrap_or_else(|| res_max(core))),
        "pendingContainers": 0,
        "allocatedContainers": live,
        "reservedContainers": 0,
        "preemptable": q.settings.allow_preemption_from,
    });
    let m = v.as_object_mut().expect("object");
    if q.leaf {
        m.insert("type".into(), json!("fairSchedulerLeafQueueInfo"));
        m.insert("numPendingApps".into(), json!(q.non_runnable_apps.len()));
        m.insert("numActiveApps".into(), json!(q.runnable_apps.len()));
    }
    let children: Vec<Value> =
        q.children.iter().filter(|&&c| !f.queue(c).removed).map(|&c| fair_queue(core, f, c)).collect();
    if !children.is_empty() {
        m.insert("childQueues".into(), json!({ "queue": children }));
    }
    v
}

fn res_max(core: &Core) -> Resource {
    let m = core.max_allocation();
    Resource::new(m.memory, m.vcores)
}

fn capacity_root(core: &Core, c: &fairloom_scheduler::capacity::CapacityScheduler) -> Value {
    let root = c.queue(QueueId(0));
    let p = root.part(fairloom_scheduler::PartitionId::DEFAULT);
    let cluster = core.sched.cluster().total;
    json!({
        "type": "capacityScheduler",
        "capacity": 100.0,
        "usedCapacity": used_percent(p.used, cluster),
        "maxCapacity": 100.0,
        "queueName": "root",
        "queuePath": "root",
        "queues": { "queue": capacity_children(core, c, QueueId(0)) },
        "maximumAllocation": resource(res_max(core)),
    })
}

fn used_percent(used: Resource, of: Resource) -> f64 {
    if of.memory() <= 0 {
        0.0
    } else {
        used.memory() as f64 * 100.0 / of.memory() as f64
    }
}

fn capacity_children(core: &Core, c: &fairloom_scheduler::capacity::CapacityScheduler, id: QueueId) -> Vec<Value> {
    let q = c.queue(id);
    let mut leaves = Vec::new();
    let mut parents = Vec::new();
    for &child in &q.children {
        let cq = c.queue(child);
        if cq.removed {
            continue;
        }
        let v = capacity_queue(core, c, child);
        if cq.leaf {
            leaves.push(v);
        } else {
            parents.push(v);
        }
    }
    // YARN-4785: leaves are listed before parents.
    leaves.extend(parents);
    leaves
}

fn capacity_queue(core: &Core, c: &fairloom_scheduler::capacity::CapacityScheduler, id: QueueId) -> Value {
    let q = c.queue(id);
    let p = q.part(fairloom_scheduler::PartitionId::DEFAULT);
    let cluster = core.sched.cluster().total;
    let short = q.name.rsplit('.').next().unwrap_or(&q.name).to_string();
    let abs_used = used_percent(p.used, cluster);
    let used_capacity = if p.abs_capacity > 0.0 { abs_used / p.abs_capacity as f64 } else { 0.0 };
    let live: usize = q.active.iter().chain(q.waiting.iter()).map(|&a| core.sched.app(a).live_containers).sum();
    let mut v = json!({
        "queuePath": q.name,
        "queueName": short,
        "capacity": f32_percent(p.capacity),
        "usedCapacity": used_capacity,
        "maxCapacity": f32_percent(p.max_capacity),
        "absoluteCapacity": f32_percent(p.abs_capacity),
        "absoluteMaxCapacity": f32_percent(p.abs_max_capacity),
        "absoluteUsedCapacity": abs_used,
        "numApplications": q.active.len() + q.waiting.len(),
        "isAbsoluteResource": p.min_absolute.is_some(),
        "state": format!("{:?}", q.settings.state).to_uppercase(),
        "resourcesUsed": resource(p.used),
        "nodeLabels": ["*"],
        "allocatedContainers": live,
        "reservedContainers": 0,
        "pendingContainers": 0,
        "capacities": { "queueCapacitiesByPartition": [{
            "partitionName": "",
            "capacity": f32_percent(p.capacity),
            "usedCapacity": used_capacity,
            "maxCapacity": f32_percent(p.max_capacity),
            "absoluteCapacity": f32_percent(p.abs_capacity),
            "absoluteUsedCapacity": abs_used,
            "absoluteMaxCapacity": f32_percent(p.abs_max_capacity),
            "maxAMLimitPercentage": f32_percent(p.max_am_percent),
        }]},
        "minEffectiveCapacity": resource(p.guaranteed),
        "maxEffectiveCapacity": resource(p.maximum),
        "maximumAllocation": resource(res_max(core)),
        "queuePriority": q.settings.priority,
    });
    let m: &mut Map<String, Value> = v.as_object_mut().expect("object");
    if q.leaf {
        m.insert("type".into(), json!("capacitySchedulerLeafQueueInfo"));
        m.insert("numActiveApplications".into(), json!(q.active.len()));
        m.insert("numPendingApplications".into(), json!(q.waiting.len()));
        m.insert("numContainers".into(), json!(live));
        m.insert("userLimit".into(), json!(q.settings.min_user_limit_percent));
        m.insert("userLimitFactor".into(), json!(q.settings.user_limit_factor));
        m.insert("AMResourceLimit".into(), resource(c.am_limit(id, fairloom_scheduler::PartitionId::DEFAULT)));
        m.insert("usedAMResource".into(), resource(p.am_used));
        m.insert("preemptionDisabled".into(), json!(q.settings.preemption_disabled));
        m.insert("intraQueuePreemptionDisabled".into(), json!(q.settings.intra_preemption_disabled));
        m.insert("users".into(), Value::Null);
    } else {
        m.insert("queues".into(), json!({ "queue": capacity_children(core, c, id) }));
    }
    v
}

/// A fraction kept as float32 (as YARN keeps capacities), as the percent YARN's DAO shows.
fn f32_percent(fraction: f32) -> f64 {
    // Multiplied in float32 as Java does, so 0.4 shows as 40.0 and not 40.00000059604645.
    (fraction * 100.0) as f64
}
