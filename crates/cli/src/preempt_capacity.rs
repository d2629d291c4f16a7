//! `fairloom preempt --dry-run` on a Capacity Scheduler scenario: the policy round as YARN
//! would run it now, per queue and partition, then each selected container and why.

use std::process::ExitCode;

use anyhow::Result;
use fairloom_model::Resource;
use fairloom_scheduler::capacity::preempt::{PickedContainer, PreemptionReport};
use fairloom_scheduler::capacity::CapacityScheduler;
use serde_json::{json, Value};

fn show(r: &Resource) -> String {
    format!("{}/{}", r.memory(), r.vcores())
}

fn res(r: &Resource) -> Value {
    json!({"memory-mb": r.memory(), "vcores": r.vcores()})
}

fn picked_json(p: &PickedContainer) -> Value {
    json!({
        "container": p.name, "app": p.app, "queue": p.queue, "node": p.node, "partition": p.partition,
        "resource": res(&p.resource), "am": p.is_am, "reservation": p.reservation, "selector": p.selector,
        "why": p.why, "action": p.action,
    })
}

pub fn to_json(r: &PreemptionReport) -> Value {
    json!({
        "scheduler": "capacity",
        "time_ms": r.time_ms,
        "monitor_enabled": r.enabled,
        "observe_only": r.observe_only,
        "budget": res(&r.budget),
        "selectors": r.selectors,
        "queues": r.queues.iter().map(|q| json!({
            "queue": q.queue, "partition": q.partition, "leaf": q.leaf, "guaranteed": res(&q.guaranteed),
            "max": res(&q.max), "used": res(&q.used), "pending": res(&q.pending), "reserved": res(&q.reserved),
            "ideal_assigned": res(&q.ideal), "to_preempt": res(&q.to_preempt), "to_obtain": res(&q.to_obtain),
            "untouchable": res(&q.untouchable), "preemption_disabled": q.preemption_disabled,
            "in_dead_zone": q.in_dead_zone,
        })).collect::<Vec<_>>(),
        "selected": r.picked.iter().map(picked_json).collect::<Vec<_>>(),
        "reservations_dropped": r.dropped.iter().map(picked_json).collect::<Vec<_>>(),
        "notes": r.notes,
    })
}

pub fn run(s: &CapacityScheduler, now: i64, as_json: bool) -> Result<ExitCode> {
    let r = s.preemption_dry_run(now);
    if as_json {
        crate::outln!("{}", serde_json::to_string_pretty(&to_json(&r))?);
        return Ok(ExitCode::SUCCESS);
    }
    let monitor = if r.enabled { "on" } else { "off" };
    let observe = if r.observe_only { ", observe_only" } else { "" };
    crate::outln!(
        "at {now} ms: ProportionalCapacityPreemptionPolicy (monitor {monitor}{observe}); selectors {}; budget {} (MB/vcores)",
        r.selectors.join(", "),
        show(&r.budget)
    );
    crate::outln!(
        "{:<28} {:<9} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}",
        "QUEUE",
        "PARTITION",
        "GUARANTEED",
        "MAX",
        "USED",
        "PENDING",
        "IDEAL",
        "TO-PREEMPT",
        "TO-OBTAIN"
    );
    for q in &r.queues {
        let mut flags = Vec::new();
        if q.preemption_disabled {
            flags.push("preemption disabled");
        }
        if q.leaf && q.in_dead_zone && q.to_preempt.any_positive() {
            flags.push("dead zone");
        }
        let partition = if q.partition.is_empty() { "default" } else { q.partition.as_str() };
        crate::outln!(
            "{:<28} {:<9} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {}",
            q.queue,
            partition,
            show(&q.guaranteed),
            show(&q.max),
            show(&q.used),
            show(&q.pending),
            show(&q.ideal),
            show(&q.to_preempt),
            show(&q.to_obtain),
            flags.join(", ")
        );
    }
    if r.picked.is_empty() {
        crate::outln!("nothing selected.");
    } else {
        crate::outln!("selected:");
    }
    for p in &r.picked {
        let what = if p.reservation {
            " (reservation)"
        } else if p.is_am {
            " (AM)"
        } else {
            ""
        };
        crate::outln!(
            "  {}{what} of {} in {} on {} [{}], {} → {} by {}: {}",
            p.name,
            p.app,
            p.queue,
            p.node,
            if p.partition.is_empty() { "default" } else { &p.partition },
            show(&p.resource),
            p.action,
            p.selector,
            p.why
        );
    }
    for d in &r.dropped {
        crate::outln!("  reservation {} of {} on {} → {}: {}", d.name, d.app, d.node, d.action, d.why);
    }
    for n in &r.notes {
        crate::outln!("note: {n}");
    }
    Ok(ExitCode::SUCCESS)
}
