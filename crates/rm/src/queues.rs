//! One row per queue in tree order: the numbers behind the web UI's bars and status blocks
//! and the Prometheus queue gauges. (The REST scheduler DAO keeps YARN's own two layouts.)

use fairloom_model::Resource;
use fairloom_scheduler::capacity::CapacityScheduler;
use fairloom_scheduler::{FairScheduler, PartitionId, QueueId, Scheduler};

use crate::core::Core;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueRow {
    /// The full path (`root.a.b`).
    pub name: String,
    pub depth: usize,
    pub leaf: bool,
    pub used: Resource,
    /// Steady fair share (Fair) or configured capacity (Capacity).
    pub steady: Resource,
    /// Instantaneous fair share (Fair) or guaranteed capacity (Capacity).
    pub share: Resource,
    pub min: Resource,
    /// Max share or maximum capacity, capped at the cluster.
    pub max: Resource,
    pub demand: Resource,
    /// Outstanding asks of its runnable (activated) applications.
    pub pending: Resource,
    pub am_used: Resource,
    pub am_limit: Resource,
    pub active_apps: usize,
    pub pending_apps: usize,
    /// `maxRunningApps` / `maximum-applications` when finite.
    pub max_apps: Option<i64>,
    /// The queue's policy (Fair) or ordering policy (Capacity).
    pub policy: String,
}

/// Every live queue, each parent followed by its subtree.
pub fn rows(core: &Core) -> Vec<QueueRow> {
    let pending: std::collections::HashMap<String, Resource> =
        core.sched.queue_summaries().into_iter().map(|s| (s.name, s.pending)).collect();
    let mut out = Vec::new();
    if let Some(f) = core.sched.as_fair() {
        fair_rows(f, fairloom_scheduler::ROOT, &mut out);
    } else if let Some(c) = core.sched.as_capacity() {
        capacity_rows(c, QueueId(0), &mut out);
    }
    let cluster = core.sched.cluster().total;
    for r in &mut out {
        r.pending = pending.get(&r.name).copied().unwrap_or_default();
        r.max = Resource::new(r.max.memory().min(cluster.memory()), r.max.vcores().min(cluster.vcores()));
    }
    out
}

fn fair_rows(f: &FairScheduler, id: QueueId, out: &mut Vec<QueueRow>) {
    let q = f.queue(id);
    out.push(QueueRow {
        name: q.name.clone(),
        depth: q.name.matches('.').count(),
        leaf: q.leaf,
        used: q.usage,
        steady: q.steady_fair_share,
        share: q.fair_share,
        min: q.settings.min_share,
        max: q.max_share,
        demand: q.demand,
        pending: Resource::none(),
        am_used: q.am_usage,
        am_limit: if q.leaf { f.am_limit(id) } else { Resource::none() },
        active_apps: q.runnable_apps.len(),
        pending_apps: q.non_runnable_apps.len(),
        max_apps: (q.settings.max_running_apps < i32::MAX).then_some(q.settings.max_running_apps as i64),
        policy: q.policy.name().to_string(),
    });
    for &c in q.children.iter().filter(|&&c| !f.queue(c).removed) {
        fair_rows(f, c, out);
    }
}

fn capacity_rows(c: &CapacityScheduler, id: QueueId, out: &mut Vec<QueueRow>) {
    let q = c.queue(id);
    let p = q.part(PartitionId::DEFAULT);
    out.push(QueueRow {
        name: q.name.clone(),
        depth: q.depth,
        leaf: q.leaf,
        used: p.used,
        steady: p.guaranteed,
        share: p.guaranteed,
        min: p.guaranteed,
        max: p.maximum,
        demand: p.used.saturating_add(p.pending),
        pending: Resource::none(),
        am_used: p.am_used,
        am_limit: if q.leaf { c.am_limit(id, PartitionId::DEFAULT) } else { Resource::none() },
        active_apps: q.active.len(),
        pending_apps: q.waiting.len(),
        max_apps: q.settings.max_applications.map(i64::from),
        policy: if q.leaf {
            format!("{:?}", q.settings.app_ordering)
        } else {
            format!("{:?}", q.settings.queue_ordering)
        }
        .to_lowercase(),
    });
    for &child in q.children.iter().filter(|&&ch| !c.queue(ch).removed) {
        capacity_rows(c, child, out);
    }
}
