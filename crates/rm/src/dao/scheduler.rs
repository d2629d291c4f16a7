//! YARN's scheduler DAO, in its two layouts: FairSchedulerInfo with its queue tree, and
//! CapacitySchedulerInfo with its queues (leaves listed before parents, YARN-4785).

use fairloom_model::Resource;
use fairloom_scheduler::capacity::CapacityScheduler;
use fairloom_scheduler::{FairScheduler, Layout, PartitionId, QueueId};

use super::{resource, ResourceInfo};
use crate::core::Core;

/// `{ "queue": [...] }`, as both layouts list child queues.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Queues<T> {
    pub queue: Vec<T>,
}

/// The scheduler DAO: which layout is the scheduler's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum SchedulerInfo {
    Fair(FairSchedulerInfo),
    Capacity(CapacitySchedulerInfo),
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FairSchedulerInfo {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub root_queue: Box<FairQueueInfo>,
}

/// YARN's FairSchedulerQueueInfo (and FairSchedulerLeafQueueInfo for a leaf).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FairQueueInfo {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    pub queue_name: String,
    pub scheduling_policy: &'static str,
    pub max_apps: i32,
    pub min_resources: ResourceInfo,
    pub max_resources: ResourceInfo,
    pub used_resources: ResourceInfo,
    pub am_used_resources: ResourceInfo,
    pub am_max_resources: ResourceInfo,
    pub demand_resources: ResourceInfo,
    pub steady_fair_resources: ResourceInfo,
    pub fair_resources: ResourceInfo,
    pub cluster_resources: ResourceInfo,
    pub reserved_resources: ResourceInfo,
    pub max_container_allocation: ResourceInfo,
    pub pending_containers: usize,
    pub allocated_containers: usize,
    pub reserved_containers: usize,
    pub preemptable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_pending_apps: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_active_apps: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub child_queues: Option<Queues<FairQueueInfo>>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacitySchedulerInfo {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub capacity: f64,
    pub used_capacity: f64,
    pub max_capacity: f64,
    pub queue_name: &'static str,
    pub queue_path: &'static str,
    pub queues: Queues<CapacityQueueInfo>,
    pub maximum_allocation: ResourceInfo,
}

/// A queue's capacities in one partition (YARN's PartitionQueueCapacitiesInfo).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionCapacities {
    pub partition_name: &'static str,
    pub capacity: f64,
    pub used_capacity: f64,
    pub max_capacity: f64,
    pub absolute_capacity: f64,
    pub absolute_used_capacity: f64,
    pub absolute_max_capacity: f64,
    #[serde(rename = "maxAMLimitPercentage")]
    pub max_am_limit_percentage: f64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Capacities {
    pub queue_capacities_by_partition: Vec<PartitionCapacities>,
}

/// YARN's CapacitySchedulerQueueInfo: a leaf adds [`CapacityLeafInfo`], a parent its queues.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityQueueInfo {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    pub queue_path: String,
    pub queue_name: String,
    pub capacity: f64,
    pub used_capacity: f64,
    pub max_capacity: f64,
    pub absolute_capacity: f64,
    pub absolute_max_capacity: f64,
    pub absolute_used_capacity: f64,
    pub num_applications: usize,
    pub is_absolute_resource: bool,
    pub state: String,
    pub resources_used: ResourceInfo,
    pub node_labels: [&'static str; 1],
    pub allocated_containers: usize,
    pub reserved_containers: usize,
    pub pending_containers: usize,
    pub capacities: Capacities,
    pub min_effective_capacity: ResourceInfo,
    pub max_effective_capacity: ResourceInfo,
    pub maximum_allocation: ResourceInfo,
    pub queue_priority: i32,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub leaf: Option<CapacityLeafInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queues: Option<Queues<CapacityQueueInfo>>,
}

/// What YARN's CapacitySchedulerLeafQueueInfo adds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityLeafInfo {
    pub num_active_applications: usize,
    pub num_pending_applications: usize,
    pub num_containers: usize,
    pub user_limit: f32,
    pub user_limit_factor: f32,
    #[serde(rename = "AMResourceLimit")]
    pub am_resource_limit: ResourceInfo,
    #[serde(rename = "usedAMResource")]
    pub used_am_resource: ResourceInfo,
    pub preemption_disabled: bool,
    pub intra_queue_preemption_disabled: bool,
    /// Per-user figures are not reported: `null`.
    pub users: Option<()>,
}

pub fn scheduler(core: &Core) -> SchedulerInfo {
    match core.sched.layout() {
        Layout::Fair(f) => SchedulerInfo::Fair(FairSchedulerInfo {
            kind: "fairScheduler",
            root_queue: Box::new(fair_queue(core, f, QueueId(0))),
        }),
        Layout::Capacity(c) => SchedulerInfo::Capacity(capacity_root(core, c)),
    }
}

fn fair_queue(core: &Core, f: &FairScheduler, id: QueueId) -> FairQueueInfo {
    let q = f.queue(id);
    let cluster = core.sched.cluster().total;
    let max = Resource::new(q.max_share.memory().min(cluster.memory()), q.max_share.vcores().min(cluster.vcores()));
    let live: usize = if q.leaf {
        q.runnable_apps.iter().chain(q.non_runnable_apps.iter()).map(|&a| core.sched.app(a).live_containers).sum()
    } else {
        0
    };
    let children: Vec<FairQueueInfo> =
        q.children.iter().filter(|&&c| !f.queue(c).removed).map(|&c| fair_queue(core, f, c)).collect();
    FairQueueInfo {
        kind: q.leaf.then_some("fairSchedulerLeafQueueInfo"),
        queue_name: q.name.clone(),
        scheduling_policy: q.policy.name(),
        max_apps: q.settings.max_running_apps,
        min_resources: resource(q.settings.min_share),
        max_resources: resource(max),
        used_resources: resource(q.usage.get()),
        am_used_resources: resource(q.am_usage),
        am_max_resources: resource(if q.leaf { f.am_limit(id) } else { Resource::none() }),
        demand_resources: resource(q.demand),
        steady_fair_resources: resource(q.steady_fair_share),
        fair_resources: resource(q.fair_share),
        cluster_resources: resource(cluster),
        reserved_resources: resource(Resource::none()),
        max_container_allocation: q
            .settings
            .max_container_allocation
            .map(resource)
            .unwrap_or_else(|| core.max_allocation().into()),
        pending_containers: 0,
        // QueueMetrics.allocatedContainers: a parent's count is its subtree's.
        allocated_containers: live + children.iter().map(|c| c.allocated_containers).sum::<usize>(),
        reserved_containers: 0,
        preemptable: q.settings.allow_preemption_from,
        num_pending_apps: q.leaf.then_some(q.non_runnable_apps.len()),
        num_active_apps: q.leaf.then_some(q.runnable_apps.len()),
        child_queues: (!children.is_empty()).then_some(Queues { queue: children }),
    }
}

fn capacity_root(core: &Core, c: &CapacityScheduler) -> CapacitySchedulerInfo {
    let root = c.queue(QueueId(0));
    let p = root.part(PartitionId::DEFAULT);
    let cluster = core.sched.cluster().total;
    CapacitySchedulerInfo {
        kind: "capacityScheduler",
        capacity: 100.0,
        used_capacity: used_percent(p.used.get(), cluster),
        max_capacity: 100.0,
        queue_name: "root",
        queue_path: "root",
        queues: Queues { queue: capacity_children(core, c, QueueId(0)) },
        maximum_allocation: core.max_allocation().into(),
    }
}

fn used_percent(used: Resource, of: Resource) -> f64 {
    if of.memory() <= 0 {
        0.0
    } else {
        used.memory() as f64 * 100.0 / of.memory() as f64
    }
}

fn capacity_children(core: &Core, c: &CapacityScheduler, id: QueueId) -> Vec<CapacityQueueInfo> {
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

fn capacity_queue(core: &Core, c: &CapacityScheduler, id: QueueId) -> CapacityQueueInfo {
    let q = c.queue(id);
    let p = q.part(PartitionId::DEFAULT);
    let cluster = core.sched.cluster().total;
    let short = q.name.rsplit('.').next().unwrap_or(&q.name).to_string();
    let abs_used = used_percent(p.used.get(), cluster);
    let used_capacity = if p.abs_capacity > 0.0 { abs_used / p.abs_capacity as f64 } else { 0.0 };
    let live: usize = q.active.iter().chain(q.waiting.iter()).map(|&a| core.sched.app(a).live_containers).sum();
    let children = (!q.leaf).then(|| Queues { queue: capacity_children(core, c, id) });
    // QueueMetrics.allocatedContainers: a parent's count is its subtree's.
    let subtree_live = live + children.iter().flat_map(|q| &q.queue).map(|c| c.allocated_containers).sum::<usize>();
    let leaf = q.leaf.then(|| CapacityLeafInfo {
        num_active_applications: q.active.len(),
        num_pending_applications: q.waiting.len(),
        num_containers: live,
        user_limit: q.settings.min_user_limit_percent,
        user_limit_factor: q.settings.user_limit_factor,
        am_resource_limit: resource(c.am_limit(id, PartitionId::DEFAULT)),
        used_am_resource: resource(p.am_used),
        preemption_disabled: q.settings.preemption_disabled,
        intra_queue_preemption_disabled: q.settings.intra_preemption_disabled,
        users: None,
    });
    CapacityQueueInfo {
        kind: q.leaf.then_some("capacitySchedulerLeafQueueInfo"),
        queue_path: q.name.clone(),
        queue_name: short,
        capacity: f32_percent(p.capacity),
        used_capacity,
        max_capacity: f32_percent(p.max_capacity),
        absolute_capacity: f32_percent(p.abs_capacity),
        absolute_max_capacity: f32_percent(p.abs_max_capacity),
        absolute_used_capacity: abs_used,
        num_applications: q.active.len() + q.waiting.len(),
        is_absolute_resource: p.min_absolute.is_some(),
        state: format!("{:?}", q.settings.state).to_uppercase(),
        resources_used: resource(p.used.get()),
        node_labels: ["*"],
        allocated_containers: subtree_live,
        reserved_containers: 0,
        pending_containers: 0,
        capacities: Capacities {
            queue_capacities_by_partition: vec![PartitionCapacities {
                partition_name: "",
                capacity: f32_percent(p.capacity),
                used_capacity,
                max_capacity: f32_percent(p.max_capacity),
                absolute_capacity: f32_percent(p.abs_capacity),
                absolute_used_capacity: abs_used,
                absolute_max_capacity: f32_percent(p.abs_max_capacity),
                max_am_limit_percentage: f32_percent(p.max_am_percent),
            }],
        },
        min_effective_capacity: resource(p.guaranteed),
        max_effective_capacity: resource(p.maximum),
        maximum_allocation: core.max_allocation().into(),
        queue_priority: q.settings.priority,
        leaf,
        queues: children,
    }
}

/// A fraction kept as float32 (as YARN keeps capacities), as the percent YARN's DAO shows.
fn f32_percent(fraction: f32) -> f64 {
    // Multiplied in float32 as Java does, so 0.4 shows as 40.0 and not 40.00000059604645.
    (fraction * 100.0) as f64
}
