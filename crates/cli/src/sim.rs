//! `fairloom sim`: the load simulator.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use fairloom_sim::load::{presets, simulate, SimOptions, Workload};
use serde_json::Value;

#[derive(clap::Args)]
pub struct SimArgs {
    /// A built-in workload: meituan-1k, meituan-12k, hyperscale-100k, yunikorn-10k
    #[arg(long, conflicts_with_all = ["trace", "synth"])]
    preset: Option<String>,
    /// An SLS JSON trace (a stream of job objects)
    #[arg(long, requires = "allocations")]
    trace: Option<PathBuf>,
    /// An SLS SYNTH workload
    #[arg(long, requires = "allocations", conflicts_with = "trace")]
    synth: Option<PathBuf>,
    /// An SLS nodes file (with --trace; SYNTH files size their own cluster)
    #[arg(long)]
    nodes: Option<PathBuf>,
    /// fair-scheduler.xml
    #[arg(long)]
    allocations: Option<PathBuf>,
    /// yarn-site.xml
    #[arg(long)]
    properties: Option<PathBuf>,
    /// Seed of every random choice (same seed, same allocations)
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Simulated seconds (default: the preset's, or until the trace's last job ends)
    #[arg(long)]
    duration: Option<f64>,
    /// Print the figures as JSON
    #[arg(long)]
    json: bool,
}

fn read(p: &PathBuf) -> Result<String> {
    std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
}

fn workload(args: &SimArgs) -> Result<(Workload, i64)> {
    if let Some(name) = &args.preset {
        let shape = presets::shape(name).ok_or_else(|| {
            let names: Vec<&str> = presets::PRESETS.iter().map(|p| p.name).collect();
            anyhow!("unknown preset '{name}': choose one of {}", names.join(", "))
        })?;
        return Ok((presets::generate(shape, args.seed), shape.default_duration_ms));
    }
    let allocations = read(args.allocations.as_ref().ok_or_else(|| anyhow!("--allocations is required"))?)?;
    let properties = match &args.properties {
        Some(p) => fairloom_config::parse_site_xml(&read(p)?).map_err(|e| e.in_file(p.display().to_string()))?,
        None => Default::default(),
    };
    if let Some(trace) = &args.trace {
        let nodes = args.nodes.as_ref().map(read).transpose()?;
        let w = fairloom_sim::load::sls::from_trace(&read(trace)?, nodes.as_deref(), &allocations, properties)
            .map_err(|e| anyhow!("{}: {e}", trace.display()))?;
        let end = w.apps.iter().map(|a| a.arrival_ms).max().unwrap_or(0) + 600_000;
        return Ok((w, end));
    }
    if let Some(synth) = &args.synth {
        let w = fairloom_sim::load::sls::from_synth(&read(synth)?, &allocations, properties, args.seed)
            .map_err(|e| anyhow!("{}: {e}", synth.display()))?;
        let end = w.apps.iter().map(|a| a.arrival_ms).max().unwrap_or(0) + 600_000;
        return Ok((w, end));
    }
    bail!("give --preset NAME, or --trace FILE (or --synth FILE) with --allocations FILE")
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

pub fn run(args: &SimArgs) -> Result<ExitCode> {
    let (w, default_ms) = workload(args)?;
    let duration_ms = match args.duration {
        Some(s) if s > 0.0 && s.is_finite() => (s * 1000.0) as i64,
        Some(s) => bail!("--duration must be a positive number of seconds, got {s}"),
        None => default_ms,
    };
    let opts = SimOptions { duration_ms, progress: !args.json, ..SimOptions::default() };
    let report = simulate(&w, opts, args.seed)?;
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    let lat = &report["ask_to_allocation_ms"];
    crate::outln!("workload            {}", w.name);
    crate::outln!("                    {}", w.description);
    crate::outln!("simulated           {:.0} s", num(&report["simulated_seconds"]));
    crate::outln!("allocations         {}", report["allocations"]);
    crate::outln!("scheduler time      {:.3} s", num(&report["scheduler_seconds"]));
    crate::outln!("CPS                 {:.0} containers scheduled per second of scheduler time", num(&report["cps"]));
    match report["valid_schedule_per_min"].as_f64() {
        Some(v) => crate::outln!("validSchedule       {:.2} of simulated minutes valid ({:.0} per day)", v, v * 1440.0),
        None => crate::outln!("validSchedule       - (under a minute simulated)"),
    }
    crate::outln!("utilization (mean)  {:.1}%", num(&report["utilization_mean"]) * 100.0);
    if !lat.is_null() {
        crate::outln!("ask → allocation    p50 {} ms, p99 {} ms, max {} ms", lat["p50"], lat["p99"], lat["max"]);
    }
    crate::outln!("phases (s / calls)");
    for (name, p) in report["phases"].as_object().into_iter().flatten() {
        crate::outln!("  {name:<16}  {:>10.3}  {:>12}", num(&p["seconds"]), p["calls"]);
    }
    crate::outln!("audit               {} runs, {} mismatches", report["audit_runs"], report["audit_mismatches"]);
    if let Some(rss) = report["peak_rss_bytes"].as_u64() {
        crate::outln!("peak memory         {:.1} MiB", rss as f64 / (1024.0 * 1024.0));
    }
    Ok(if report["audit_mismatches"].as_u64() == Some(0) { ExitCode::SUCCESS } else { ExitCode::from(3) })
}
