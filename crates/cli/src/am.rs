//! `fairloom am plan`: the container requests Spark's AM would add and cancel, and why.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use fairloom_am::{explain, AmState};

#[derive(clap::Subcommand)]
pub enum AmCommand {
    /// Plan the AM's container requests from its state (JSON)
    Plan {
        /// The AM's state: target_executors, running, starting, cores, locality-aware tasks,
        /// host_to_local_task_count, allocated, pending, host_to_rack
        #[arg(long)]
        input: PathBuf,
        /// Print {"cancel": [...], "add": [...]}
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: &AmCommand) -> Result<ExitCode> {
    let AmCommand::Plan { input, json } = cmd;
    let text = std::fs::read_to_string(input).with_context(|| format!("cannot read {}", input.display()))?;
    let state: AmState = serde_json::from_str(&text)
        .map_err(|e| anyhow!("{}: line {}, column {}: {e}", input.display(), e.line(), e.column()))?;
    let e = explain(&state).map_err(|e| anyhow!("{}: {e}", input.display()))?;
    if *json {
        crate::outln!("{}", serde_json::to_string_pretty(&e.plan)?);
        return Ok(ExitCode::SUCCESS);
    }
    for note in &e.notes {
        crate::outln!("{note}");
    }
    crate::outln!(
        "{} locality-aware tasks need {} executors ({} cores each, {} per task)",
        state.locality_aware_tasks,
        e.executors_for_local_tasks,
        state.cores_per_executor,
        state.cores_per_task
    );
    for (host, want) in &e.expected {
        crate::outln!("  {host}: {want} more wanted (its share of the tasks, less what runs or is asked there)");
    }
    let name = |i: usize| match &state.pending[i].hosts {
        Some(h) => format!("#{i} [{}]", h.join(", ")),
        None => format!("#{i} [any host]"),
    };
    for &i in &e.plan.cancel {
        let why = if e.stale.contains(&i) {
            "stale: none of its hosts is wanted any more"
        } else if e.locality_free.contains(&i) {
            "any host: traded for a local request, or not needed"
        } else {
            "more pending than needed"
        };
        crate::outln!("cancel {}: {why}", name(i));
    }
    for r in &e.plan.add {
        match (&r.hosts, &r.racks) {
            (Some(h), Some(k)) => crate::outln!("add [{}] racks [{}]", h.join(", "), k.join(", ")),
            _ => crate::outln!("add [any host]"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
