//! `fairloom sim`: the load simulator.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use fairloom_scheduler::SchedulerKind;
use fairloom_sim::load::{assemble, simulate, SimOptions, Workload};
use serde_json::Value;

#[derive(clap::Args)]
pub struct SimArgs {
    /// A built-in workload: meituan-1k, meituan-12k, hyperscale-100k, yunikorn-10k, preempt-1k, preempt-1k-am, spark-locality
    #[arg(long, conflicts_with_all = ["trace", "synth"])]
    preset: Option<String>,
    /// An SLS JSON trace (a stream of job objects)
    #[arg(long)]
    trace: Option<PathBuf>,
    /// An SLS SYNTH workload
    #[arg(long, conflicts_with = "trace")]
    synth: Option<PathBuf>,
    /// An SLS nodes file (with --trace; SYNTH files size their own cluster)
    #[arg(long)]
    nodes: Option<PathBuf>,
    /// fair-scheduler.xml
    #[arg(long)]
    allocations: Option<PathBuf>,
    /// capacity-scheduler.xml (runs the Capacity Scheduler)
    #[arg(long)]
    capacity: Option<PathBuf>,
    /// The scheduler: fair or capacity (default: capacity with --capacity or when
    /// yarn.resourcemanager.scheduler.class names the CapacityScheduler, else fair). A preset
    /// or an allocation file run on capacity gets capacities from its queues' weights
    #[arg(long, value_parser = ["fair", "capacity"])]
    scheduler: Option<String>,
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
    /// Time the core's phases inside heartbeats (pre-check, ordering, assignment, reservations);
    /// reading the clock there costs about a quarter more heartbeat time, so CPS is lower
    #[arg(long)]
    phase_timers: bool,
    /// Write DIR/report.html (self-contained, SVG charts), DIR/report.json and the charts as SVG files
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// Run the workload once per optimisation step, from YARN 2.7's setting to all on, and
    /// print each step's figures and its ratio to the baseline
    #[arg(long, value_parser = ["baseline"])]
    compare: Option<String>,
}

/// Cumulative optimisation steps: (label, ordering, skip-no-demand, usage).
const STEPS: [(&str, &str, &str, &str); 4] = [
    ("YARN 2.7 (sorted, all children, usage recomputed)", "sorted", "false", "recomputed"),
    ("+ incremental usage", "sorted", "false", "incremental"),
    ("+ skip children without demand", "sorted", "true", "incremental"),
    ("+ incremental ordering (fairloom default)", "incremental", "true", "incremental"),
];

fn compare(w: &Workload, duration_ms: i64, args: &SimArgs) -> Result<ExitCode> {
    let mut rows = Vec::new();
    for (label, ordering, skip, usage) in STEPS {
        let mut w = w.clone();
        w.properties.insert("fairloom.scheduler.ordering".into(), ordering.into());
        w.properties.insert("fairloom.scheduler.skip-no-demand".into(), skip.into());
        w.properties.insert("fairloom.scheduler.usage".into(), usage.into());
        let opts = SimOptions { duration_ms, progress: !args.json, ..SimOptions::default() };
        let report = simulate(&w, opts, args.seed)?;
        rows.push((label, report));
    }
    let base = rows[0].1.cps.max(f64::MIN_POSITIVE);
    if args.json {
        let steps: Vec<Value> = rows
            .iter()
            .map(|(label, r)| {
                serde_json::json!({"step": label, "cps": r.cps, "allocations": r.allocations,
                    "scheduler_seconds": r.scheduler_seconds, "ratio": r.cps / base,
                    "audit_mismatches": r.audit_mismatches, "decisions_digest": r.decisions_digest})
            })
            .collect();
        crate::outln!("{}", serde_json::to_string_pretty(&serde_json::json!({"workload": w.name, "compare": steps}))?);
    } else {
        crate::outln!("workload  {}  ({:.0} simulated s)", w.name, duration_ms as f64 / 1000.0);
        crate::outln!(
            "{:<52} {:>12} {:>12} {:>10} {:>8}  {}",
            "switches",
            "allocations",
            "sched. s",
            "CPS",
            "ratio",
            "decisions digest"
        );
        for (label, r) in &rows {
            crate::outln!(
                "{:<52} {:>12} {:>12.3} {:>10.0} {:>7.1}x  {}",
                label,
                r.allocations,
                r.scheduler_seconds,
                r.cps,
                r.cps / base,
                r.decisions_digest
            );
        }
    }
    let same = rows.iter().all(|(_, r)| r.decisions_digest == rows[0].1.decisions_digest);
    if !same {
        eprintln!("warning: the steps made different decisions (their digests differ); the switches should not");
    }
    Ok(ExitCode::SUCCESS)
}

fn read(p: &PathBuf) -> Result<String> {
    std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
}

fn site_properties(args: &SimArgs) -> Result<fairloom_config::Properties> {
    Ok(match &args.properties {
        Some(p) => fairloom_config::parse_site_xml(&read(p)?).map_err(|e| e.in_file(p.display().to_string()))?,
        None => Default::default(),
    })
}

/// Whether the run uses the Capacity Scheduler.
fn wants_capacity(args: &SimArgs, site: &fairloom_config::Properties) -> Result<bool> {
    let asked = args.scheduler.as_deref().map(str::parse::<SchedulerKind>).transpose().map_err(|e| anyhow!(e))?;
    Ok(assemble::wants_capacity(asked, args.capacity.is_some(), site))
}

/// The fair-scheduler.xml of a trace or SYNTH run; with the Capacity Scheduler and its own
/// file it may be left out.
fn allocations(args: &SimArgs, capacity: bool) -> Result<String> {
    match &args.allocations {
        Some(p) => read(p),
        None if capacity && args.capacity.is_some() => Ok("<allocations/>".to_string()),
        None => bail!("--allocations is required (or --capacity FILE for the Capacity Scheduler)"),
    }
}

/// `--capacity`'s properties, checked with their line numbers.
fn capacity_file(args: &SimArgs, site: &fairloom_config::Properties) -> Result<Option<fairloom_config::Properties>> {
    let Some(p) = &args.capacity else { return Ok(None) };
    Ok(Some(assemble::capacity_file(&p.display().to_string(), &read(p)?, site).map_err(|e| anyhow!(e))?))
}

fn workload(args: &SimArgs) -> Result<(Workload, i64)> {
    let site = site_properties(args)?;
    let capacity = wants_capacity(args, &site)?;
    let (mut w, end) = if let Some(name) = &args.preset {
        assemble::preset(name, args.seed).map_err(|e| anyhow!(e))?
    } else if let Some(trace) = &args.trace {
        let nodes = args.nodes.as_ref().map(read).transpose()?;
        assemble::trace(&read(trace)?, nodes.as_deref(), &allocations(args, capacity)?, site)
            .map_err(|e| anyhow!("{}: {e}", trace.display()))?
    } else if let Some(synth) = &args.synth {
        assemble::synth(&read(synth)?, &allocations(args, capacity)?, site, args.seed)
            .map_err(|e| anyhow!("{}: {e}", synth.display()))?
    } else {
        bail!("give --preset NAME, or --trace FILE (or --synth FILE) with --allocations FILE (or --capacity FILE)")
    };
    if capacity {
        let file = capacity_file(args, &w.properties)?;
        assemble::use_capacity(&mut w, file, args.preset.as_deref())?;
    } else if args.capacity.is_some() {
        bail!("--capacity needs the Capacity Scheduler (drop --scheduler fair)");
    }
    Ok((w, end))
}

fn spark(args: &SimArgs, w: fairloom_sim::load::spark::SparkWorkload, started: Instant) -> Result<ExitCode> {
    let duration_ms = args.duration.map_or(600_000, |s| (s * 1000.0) as i64);
    let mut report = fairloom_sim::load::spark::compare(&w, duration_ms)?;
    report.wall_seconds = Some(started.elapsed().as_secs_f64());
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    crate::outln!("workload  {}", w.name);
    crate::outln!("          {}", w.description);
    crate::outln!(
        "{:<10} {:>7} {:>11} {:>11} {:>11} {:>11} {:>10} {:>9}",
        "AM",
        "tasks",
        "node-local",
        "rack-local",
        "off-switch",
        "makespan s",
        "executors",
        "released"
    );
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    for r in &report.runs {
        crate::outln!(
            "{:<10} {:>7} {:>11} {:>11} {:>11} {:>11.0} {:>10} {:>9}",
            r.strategy,
            r.tasks,
            pct(r.node_local),
            pct(r.rack_local),
            pct(r.off_switch),
            r.makespan_s,
            r.executors_started,
            r.containers_released
        );
    }
    for r in &report.runs {
        crate::outln!("decisions digest ({}) {}", r.strategy, r.decisions_digest);
    }
    crate::outln!("wall time  {:.3} s", report.wall_seconds.unwrap_or(0.0));
    Ok(ExitCode::SUCCESS)
}

/// A Spark workload, switched to the Capacity Scheduler when asked.
fn spark_on(args: &SimArgs, mut w: fairloom_sim::load::spark::SparkWorkload, started: Instant) -> Result<ExitCode> {
    if wants_capacity(args, &w.properties)? {
        let file = capacity_file(args, &w.properties)?;
        assemble::spark_use_capacity(&mut w, file)?;
    }
    spark(args, w, started)
}

pub fn run(args: &SimArgs) -> Result<ExitCode> {
    // What an operator waits for: building the workload, the driver and the scheduler.
    let started = Instant::now();
    if args.preset.as_deref() == Some("spark-locality") {
        return spark_on(args, fairloom_sim::load::spark::locality_preset(args.seed), started);
    }
    if let Some(trace) = &args.trace {
        let text = read(trace)?;
        if fairloom_sim::load::sls::is_spark_trace(&text) {
            let properties = site_properties(args)?;
            let allocations = allocations(args, wants_capacity(args, &properties)?)?;
            let nodes = args.nodes.as_ref().map(read).transpose()?;
            let w = fairloom_sim::load::sls::spark_from_trace(&text, nodes.as_deref(), &allocations, properties)
                .map_err(|e| anyhow!("{}: {e}", trace.display()))?;
            return spark_on(args, w, started);
        }
    }
    let (w, default_ms) = workload(args)?;
    let duration_ms = match args.duration {
        Some(s) if s > 0.0 && s.is_finite() => (s * 1000.0) as i64,
        Some(s) => bail!("--duration must be a positive number of seconds, got {s}"),
        None => default_ms,
    };
    if args.compare.is_some() {
        if w.capacity.is_some() {
            bail!("--compare steps through the Fair Scheduler's optimisation switches; run it with --scheduler fair");
        }
        return compare(&w, duration_ms, args);
    }
    let opts =
        SimOptions { duration_ms, progress: !args.json, phase_timers: args.phase_timers, ..SimOptions::default() };
    let mut report = simulate(&w, opts, args.seed)?;
    report.wall_seconds = Some(started.elapsed().as_secs_f64());
    if let Some(dir) = &args.report {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
        };
        write("report.html", &fairloom_sim::load::report::html(&report))?;
        write("report.json", &serde_json::to_string_pretty(&report)?)?;
        for (name, svg) in fairloom_sim::load::report::charts(&report) {
            write(&format!("{name}.svg"), &svg)?;
        }
        eprintln!("report written to {}", dir.join("report.html").display());
    }
    if args.json {
        crate::outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    crate::outln!("workload            {}", w.name);
    crate::outln!("                    {}", w.description);
    crate::outln!("simulated           {:.0} s", report.simulated_seconds);
    crate::outln!("allocations         {}", report.allocations);
    crate::outln!("scheduler time      {:.3} s", report.scheduler_seconds);
    crate::outln!("CPS                 {:.0} containers scheduled per second of scheduler time", report.cps);
    crate::outln!("wall time           {:.3} s (workload, driver and scheduler)", report.wall_seconds.unwrap_or(0.0));
    crate::outln!("decisions digest    {}", report.decisions_digest);
    match report.valid_schedule_per_min {
        Some(v) => crate::outln!("validSchedule       {:.2} of simulated minutes valid ({:.0} per day)", v, v * 1440.0),
        None => crate::outln!("validSchedule       - (under a minute simulated)"),
    }
    crate::outln!("utilization (mean)  {:.1}%", report.utilization_mean * 100.0);
    if let Some(lat) = &report.ask_to_allocation_ms {
        crate::outln!("ask → allocation    p50 {} ms, p99 {} ms, max {} ms", lat.p50, lat.p99, lat.max);
    }
    crate::outln!("phases (s / calls)");
    for (name, p) in &report.phases {
        crate::outln!("  {name:<16}  {:>10.3}  {:>12}", p.seconds, p.calls);
    }
    let core = &report.core_phases;
    if args.phase_timers {
        let secs = |s: Option<f64>| s.unwrap_or(0.0);
        crate::outln!(
            "inside heartbeats   reservations {:.3} s, pre-checks {:.3} s, ordering {:.3} s, assignment {:.3} s",
            secs(core.reservations_seconds),
            secs(core.precheck_seconds),
            secs(core.ordering_seconds),
            secs(core.assignment_seconds)
        );
    }
    crate::outln!(
        "                    {} parents visited, {} children skipped (no demand), {} app attempts",
        core.parents_visited,
        core.children_skipped,
        core.apps_tried
    );
    crate::outln!("audit               {} runs, {} mismatches", report.audit_runs, report.audit_mismatches);
    if let Some(rss) = report.peak_rss_bytes {
        crate::outln!("peak memory         {:.1} MiB", rss as f64 / (1024.0 * 1024.0));
    }
    Ok(if report.audit_mismatches == 0 { ExitCode::SUCCESS } else { ExitCode::from(3) })
}
