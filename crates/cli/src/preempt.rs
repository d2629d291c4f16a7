//! `fairloom preempt --dry-run`: which apps are starved and why, and which containers
//! preemption would take from whom, without taking them.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use fairloom_model::Resource;
use fairloom_scheduler::preempt::PreemptionPlan;
use fairloom_scheduler::Layout;
use serde_json::{json, Value};

#[derive(clap::Args)]
pub struct PreemptArgs {
    /// Explain without acting (the only mode: fairloom never preempts from the command line)
    #[arg(long)]
    dry_run: bool,
    /// A scenario file: its state at the end, or at the observation --at names
    scenario: PathBuf,
    /// The observation label to stop at
    #[arg(long)]
    at: Option<String>,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

fn show(r: &Resource) -> String {
    format!("{} MB {} vc", r.memory(), r.vcores())
}

fn res(r: &Resource) -> Value {
    json!({"memory-mb": r.memory(), "vcores": r.vcores()})
}

fn timeout(t: Option<i64>) -> String {
    t.map_or("never".to_string(), |t| format!("{t} ms"))
}

fn to_json(plan: &PreemptionPlan, now: i64) -> Value {
    json!({
        "time_ms": now,
        "gate_open": plan.gate_open,
        "gate": plan.gate,
        "starved": plan.starved.iter().map(|s| json!({
            "app": s.name, "queue": s.queue, "usage": res(&s.usage), "fair_share": res(&s.fair_share),
            "demand": res(&s.demand), "threshold": s.threshold, "owed": res(&s.fair_demand),
            "fair_share_timeout_ms": s.fair_share_timeout_ms, "below_owed_for_ms": s.below_fair_demand_for_ms,
            "fairshare_starvation": res(&s.fairshare_starvation), "queue_min_share": res(&s.queue_min_share),
            "min_share_timeout_ms": s.min_share_timeout_ms, "minshare_starvation": res(&s.minshare_starvation),
            "requests": plan.requests.get(&s.name),
        })).collect::<Vec<_>>(),
        "would_preempt": plan.victims.iter().map(|v| json!({
            "container": v.name, "app": v.app, "queue": v.queue, "node": v.node, "resource": res(&v.resource),
            "am": v.is_am, "for": v.for_app, "app_usage_after": res(&v.app_usage_after), "app_fair_share": res(&v.app_fair_share),
            "request": v.request, "relaxed": v.relaxed,
        })).collect::<Vec<_>>(),
        "not_starved": plan.not_starved.iter().map(|(a, why)| json!({"app": a, "why": why})).collect::<Vec<_>>(),
    })
}

pub fn run(args: &PreemptArgs) -> Result<ExitCode> {
    if !args.dry_run {
        bail!("only --dry-run is supported: fairloom explains preemption here, it does not act on a live cluster");
    }
    let text =
        std::fs::read_to_string(&args.scenario).with_context(|| format!("cannot read {}", args.scenario.display()))?;
    let (s, now) = fairloom_sim::scenario::state_at(&text, args.at.as_deref())
        .map_err(|f| anyhow!("{}: the scenario did not run: {f:?}", args.scenario.display()))?;
    // Each scheduler explains its own preemption: YARN's two have nothing in common.
    let s = match s.layout() {
        Layout::Fair(s) => s,
        Layout::Capacity(c) => return crate::preempt_capacity::run(c, now, args.json),
    };
    let plan = s.preemption_dry_run(now);
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&to_json(&plan, now))?);
        return Ok(ExitCode::SUCCESS);
    }
    crate::outln!("at {now} ms: {}", plan.gate);
    if plan.starved.is_empty() {
        crate::outln!("no application is starved.");
    }
    for st in &plan.starved {
        crate::outln!("STARVED {} in {}", st.name, st.queue);
        crate::outln!(
            "  fair share: usage {} is below what it is owed, {} (fair share {} × threshold {}, capped by demand {}),",
            show(&st.usage),
            show(&st.fair_demand),
            show(&st.fair_share),
            st.threshold,
            show(&st.demand)
        );
        crate::outln!(
            "    for {} ms against a timeout of {}: starved of {}",
            st.below_fair_demand_for_ms,
            timeout(st.fair_share_timeout_ms),
            show(&st.fairshare_starvation)
        );
        crate::outln!(
            "  min share: queue min {} (timeout {}): attributed {}",
            show(&st.queue_min_share),
            timeout(st.min_share_timeout_ms),
            show(&st.minshare_starvation)
        );
        if let Some(walked) = plan.requests.get(&st.name) {
            crate::outln!(
                "  its requests, as preemption walks them (in YARN's order; the first level of each priority and size hides the others):"
            );
            for line in walked {
                crate::outln!("    {line}");
            }
        }
    }
    if !plan.victims.is_empty() {
        crate::outln!("WOULD PREEMPT (one node per starved container; non-AM containers first; victims stay at or above their fair share)");
        crate::outln!(
            "  {:<16} {:<20} {:<10} {:<18} {:<4} {:<14} victim usage after all marks / fair share",
            "container",
            "queue",
            "node",
            "size",
            "AM",
            "for"
        );
        let mut serving = None;
        for v in &plan.victims {
            // Victims come grouped by the starved request they free room for.
            let now_serving = (&v.for_app, &v.request, &v.relaxed);
            if serving != Some(now_serving) {
                crate::outln!("  for {}'s request {}:", v.for_app, v.request);
                if let Some(why) = &v.relaxed {
                    crate::outln!("    {why}");
                }
                serving = Some(now_serving);
            }
            crate::outln!(
                "  {:<16} {:<20} {:<10} {:<18} {:<4} {:<14} {} / {}",
                v.name,
                v.queue,
                v.node,
                show(&v.resource),
                if v.is_am { "yes" } else { "no" },
                v.for_app,
                show(&v.app_usage_after),
                show(&v.app_fair_share)
            );
        }
    } else if !plan.starved.is_empty() {
        crate::outln!("nothing can be preempted: no node frees enough room from apps that would stay at or above their fair share.");
    }
    for (app, why) in &plan.not_starved {
        crate::outln!("not starved: {app}: {why}");
    }
    Ok(ExitCode::SUCCESS)
}
