//! Observations: the scheduler's state as the scenario format reports it.

use fairloom_config::Acl;
use fairloom_model::{Resource, ResourceTypes};
use fairloom_scheduler::capacity::CapacityScheduler;
use fairloom_scheduler::driver::{Layout, Scheduler};
use fairloom_scheduler::{AppState, FairScheduler, PartitionId, QueueId};
use serde_json::{json, Map, Value};

use super::runner::Runner;

pub(crate) fn resource_json(types: &ResourceTypes, r: &Resource) -> Value {
    let mut m = Map::new();
    for (i, name) in types.names().iter().enumerate() {
        m.insert(name.clone(), json!(r.get(i)));
    }
    Value::Object(m)
}

/// A Java float as the decimal it was written as (0.1f shows as 0.1, not 0.100000001).
pub(crate) fn float_json(x: f32) -> Value {
    let shortest: f64 = x.to_string().parse().unwrap_or(x as f64);
    json!(shortest)
}

fn acl_json(acl: &Acl) -> Value {
    Value::String(acl.to_string())
}

fn queue_json(s: &FairScheduler, id: QueueId) -> Value {
    let types = s.resource_types();
    let r = |x: &Resource| resource_json(types, x);
    let q = s.queue(id);
    let st = &q.settings;
    let config = json!({
        "type": if q.leaf { "leaf" } else { "parent" },
        "weight": float_json(st.weight),
        "min_resources": r(&st.min_share),
        "max_resources": r(&s.configured_max_resources(id)),
        "max_child_resources": st.max_child_resources.map_or(Value::Null, |m| r(&m.resolve(s.cluster_resource(), types.len()))),
        "max_running_apps": st.max_running_apps,
        "max_am_share": float_json(st.max_am_share),
        "scheduling_policy": q.policy.name(),
        "fair_share_preemption_timeout_ms": st.fair_share_preemption_timeout_ms,
        "fair_share_preemption_threshold": float_json(st.fair_share_preemption_threshold),
        "min_share_preemption_timeout_ms": st.min_share_preemption_timeout_ms,
        "allow_preemption_from": st.allow_preemption_from,
        "max_container_allocation": r(&s.max_container_allocation(id)),
        "acl_submit_apps": acl_json(&st.acl_submit_apps),
        "acl_administer_apps": acl_json(&st.acl_administer_apps),
    });
    let (runnable, waiting) = if q.leaf {
        (q.runnable_apps.len() as u32, q.non_runnable_apps.len())
    } else {
        (q.runnable_count, s.waiting_apps_under(id))
    };
    let mut o = json!({
        "steady_fair_share": r(&q.steady_fair_share),
        "fair_share": r(&q.fair_share),
        "usage": r(&q.usage),
        "demand": r(&q.demand),
        "min_share": r(&st.min_share),
        "max_share": r(&s.max_share(id)),
        "am_usage": r(&q.am_usage),
        "weight": float_json(st.weight),
        "policy": q.policy.name(),
        "runnable_apps": runnable,
        "non_runnable_apps": waiting,
        "active": q.is_active(),
        "dynamic": q.dynamic,
        "config": config,
    });
    if q.leaf {
        o["am_limit"] = r(&s.am_limit(id));
    }
    o
}

pub(crate) fn observe(runner: &Runner, label: &str) -> Value {
    // The scenario format reports each scheduler's own queue and application fields.
    let (queues, apps, nodes) = match runner.scheduler.layout() {
        Layout::Fair(s) => observe_fair(runner, s),
        Layout::Capacity(s) => observe_capacity(runner, s),
    };
    json!({"label": label, "time_ms": runner.now, "queues": queues, "apps": apps, "nodes": nodes})
}

fn observe_fair(runner: &Runner, s: &FairScheduler) -> (Map<String, Value>, Map<String, Value>, Map<String, Value>) {
    let types = s.resource_types();
    let r = |x: &Resource| resource_json(types, x);
    let mut queues = Map::new();
    for (id, q) in s.queues() {
        queues.insert(q.name.clone(), queue_json(s, id));
    }
    let mut apps = Map::new();
    for name in &runner.app_order {
        let id = runner.apps[name];
        let a = s.app_record(id);
        let alive = !matches!(a.state, AppState::Finished | AppState::Rejected);
        let queue = match a.state {
            AppState::Rejected => Value::Null,
            _ => a.queue.map_or(Value::Null, |q| Value::String(s.queue(q).name.clone())),
        };
        apps.insert(
            name.clone(),
            json!({
                "queue": queue,
                "state": a.state.name(),
                "rejection": a.rejection,
                "runnable": a.runnable,
                "am_running": a.am_running && alive,
                "live_containers": a.live.len(),
                "usage": r(&a.usage),
                "demand": r(&a.demand),
                "pending": r(&a.pending),
                "fair_share": r(&a.fair_share),
                // A finished application is out of the scheduler: nothing is owed to it.
                "starved": if alive { r(&s.starvation(id)) } else { r(&Resource::none()) },
                "preempted": a.preempted,
                "preemption_marked": a.marked,
                "wait_reason": if alive { s.wait_reason(id).map(ToString::to_string) } else { None },
            }),
        );
    }
    let mut nodes = Map::new();
    for (_, n) in s.nodes() {
        nodes.insert(
            n.name.clone(),
            json!({
                "allocated": r(&n.allocated),
                "available": r(&n.unallocated()),
                "containers": n.containers.len(),
                "reserved_for": n.reservation.map(|res| s.app_record(res.app).name.clone()),
            }),
        );
    }
    (queues, apps, nodes)
}

fn capacity_queue_json(s: &CapacityScheduler, id: QueueId) -> Value {
    let types = Scheduler::resource_types(s);
    let r = |x: &Resource| resource_json(types, x);
    let q = s.queue(id);
    let part = q.part(PartitionId::DEFAULT);
    let (ideal, to_preempt) = s.last_round(id, PartitionId::DEFAULT);
    let st = &q.settings;
    let config = json!({
        "type": if q.leaf { "leaf" } else { "parent" },
        "capacity": float_json(part.capacity * 100.0),
        "maximum_capacity": float_json(part.max_capacity * 100.0),
        "absolute_capacity": float_json(part.abs_capacity * 100.0),
        "absolute_maximum_capacity": float_json(part.abs_max_capacity * 100.0),
        "user_limit_factor": float_json(st.user_limit_factor),
        "minimum_user_limit_percent": float_json(st.min_user_limit_percent),
        "maximum_am_resource_percent": float_json(part.max_am_percent),
        "maximum_applications": s.max_applications(id).0,
        "state": format!("{:?}", st.state).to_uppercase(),
        "priority": st.priority,
        "ordering_policy": match (q.leaf, st.app_ordering, st.queue_ordering) {
            (true, fairloom_config::capacity::AppOrdering::Fifo, _) => "fifo",
            (true, _, _) => "fair",
            (false, _, fairloom_config::capacity::QueueOrdering::Utilization) => "utilization",
            (false, _, _) => "priority-utilization",
        },
        "disable_preemption": st.preemption_disabled,
        "intra_queue_disable_preemption": st.intra_disabled(),
        "acl_submit_applications": acl_json(&st.acl_submit),
        "acl_administer_queue": acl_json(&st.acl_administer),
    });
    let mut partitions = Map::new();
    for p in s.partitions().skip(1) {
        let x = q.part(p);
        let (ideal, to_preempt) = s.last_round(id, p);
        partitions.insert(
            s.partition_name(p).to_string(),
            json!({
                "capacity": r(&x.guaranteed), "max_capacity": r(&x.maximum), "ideal_assigned": r(&ideal),
                "to_preempt": r(&to_preempt), "usage": r(&x.used), "accessible": x.accessible,
            }),
        );
    }
    let active = s.queues().any(|(c, cq)| cq.leaf && !cq.active.is_empty() && s.is_under(c, id));
    let mut o = json!({
        "capacity": r(&part.guaranteed),
        "max_capacity": r(&part.maximum),
        "usage": r(&part.used),
        "reserved": r(&part.usage_reserved()),
        "pending": r(&part.pending),
        "used_capacity": float_json(s.used_capacity(id, PartitionId::DEFAULT)),
        "ideal_assigned": r(&ideal),
        "to_preempt": r(&to_preempt),
        "runnable_apps": q.active.len(),
        "non_runnable_apps": q.waiting.len(),
        "active": active,
        "dynamic": false,
        "partitions": partitions,
        "config": config,
    });
    if q.leaf {
        o["am_usage"] = r(&part.am_used);
        o["am_limit"] = r(&s.am_limit(id, PartitionId::DEFAULT));
        o["user_limit"] = r(&s.user_limit(id, PartitionId::DEFAULT, true));
        o["user_am_limit"] = r(&s.user_am_limit(id, PartitionId::DEFAULT));
    }
    o
}

fn observe_capacity(
    runner: &Runner,
    s: &CapacityScheduler,
) -> (Map<String, Value>, Map<String, Value>, Map<String, Value>) {
    let types = Scheduler::resource_types(s);
    let r = |x: &Resource| resource_json(types, x);
    let mut queues = Map::new();
    for (id, q) in s.queues() {
        queues.insert(q.name.clone(), capacity_queue_json(s, id));
    }
    let mut apps = Map::new();
    for name in &runner.app_order {
        let id = runner.apps[name];
        let a = s.app_record(id);
        let v = Scheduler::app(s, id);
        let alive = !matches!(a.state, AppState::Finished | AppState::Rejected);
        apps.insert(
            name.clone(),
            json!({
                "queue": v.queue,
                "state": a.state.name(),
                "rejection": a.rejection,
                "runnable": a.activated,
                "am_running": a.am_running && alive,
                "live_containers": a.live.len(),
                "usage": r(&a.usage),
                "demand": r(&a.usage.saturating_add(a.total_pending())),
                "pending": r(&a.total_pending()),
                "priority": a.priority,
                "user": a.user,
                "preempted": a.preempted,
                "preemption_marked": a.marked,
                "wait_reason": if alive { s.wait_reason(id).map(|w| w.to_string()) } else { None },
            }),
        );
    }
    let mut nodes = Map::new();
    for (_, n) in s.cluster().nodes() {
        nodes.insert(
            n.name.clone(),
            json!({
                "allocated": r(&n.allocated),
                "available": r(&n.total.saturating_sub(n.allocated)),
                "containers": n.containers.len(),
                "reserved_for": n.reservation.map(|res| s.app_record(res.app).name.clone()),
                "preemption_marked": n.marked,
                "partition": s.partition_name(n.partition),
            }),
        );
    }
    (queues, apps, nodes)
}
