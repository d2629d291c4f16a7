//! `fairloom bench rm`: the ResourceManager under load. An RM runs in this process and
//! thousands of simulated NodeManagers heartbeat it over loopback; applications are
//! submitted over REST and their simulated AMs ask, receive and release containers through
//! the AM protocol (all of it `fairloom_loadgen`). Reported: heartbeats handled per second,
//! heartbeat and REST read latency, and containers allocated per second of the event loop's
//! work next to the in-process simulator's CPS on the same workload.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use fairloom_loadgen::soak::{Sample, Verdict};
use fairloom_loadgen::{BenchSpec, SoakSpec};

use crate::outln;

#[derive(Args)]
pub struct BenchRmArgs {
    /// Simulated NodeManagers.
    #[arg(long, default_value_t = 5000)]
    nodes: usize,
    /// How long to measure, after every node registered.
    #[arg(long, default_value_t = 30)]
    seconds: u64,
    /// Node heartbeat interval (ms).
    #[arg(long, default_value_t = 1000)]
    heartbeat_ms: u64,
    /// Applications kept running at once (a finished one is replaced).
    #[arg(long, default_value_t = 100)]
    apps: usize,
    /// Containers each application asks for.
    #[arg(long, default_value_t = 500)]
    containers: u32,
    /// How long each container runs (ms).
    #[arg(long, default_value_t = 4000)]
    task_ms: u64,
    /// Let a heartbeat assign more than one container (`yarn.scheduler.fair.assignmultiple`),
    /// in the service and in the in-process run alike.
    #[arg(long)]
    assign_multiple: bool,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
    /// Run for this many minutes instead of `--seconds`, sampling the process's resident
    /// memory and the RM's collections, and report each one's slope after the warm-up.
    #[arg(long, value_name = "MINUTES")]
    soak: Option<f64>,
    /// Minutes of the soak left out of the slopes (at most half of it).
    #[arg(long, value_name = "MINUTES", default_value_t = 10.0)]
    warmup: f64,
    /// Seconds between the soak's samples.
    #[arg(long, default_value_t = 60)]
    sample_seconds: u64,
}

impl BenchRmArgs {
    fn spec(&self) -> BenchSpec {
        let duration = match self.soak {
            Some(m) => Duration::from_secs_f64(m.max(0.0) * 60.0),
            None => Duration::from_secs(self.seconds),
        };
        BenchSpec {
            nodes: self.nodes,
            heartbeat_ms: self.heartbeat_ms,
            apps: self.apps,
            containers: self.containers,
            task_ms: self.task_ms,
            assign_multiple: self.assign_multiple,
            duration,
            soak: self.soak.map(|_| SoakSpec {
                warmup_minutes: self.warmup,
                sample_every: Duration::from_secs(self.sample_seconds.max(1)),
            }),
        }
    }
}

pub fn run(args: &BenchRmArgs) -> Result<ExitCode> {
    let spec = args.spec();
    if let (Some(soak), false) = (&spec.soak, args.json) {
        outln!("fairloom bench rm --soak: {} simulated NodeManagers, {} apps at once × {} containers of {} ms; a sample every {} s", args.nodes, args.apps, args.containers, args.task_ms, soak.sample_every.as_secs());
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let mut figures = rt.block_on(fairloom_loadgen::bench(&spec, |s, every| {
        if !args.json {
            print_sample(s, every);
        }
    }))?;
    for e in &figures.first_errors {
        eprintln!("bench: {e}");
    }
    if let Some(soak) = &figures.soak {
        // A soak is about what stays; the in-process comparison is the short run's.
        if args.json {
            outln!("{}", serde_json::to_string_pretty(&figures)?);
        } else {
            print_verdict(&soak.verdict);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let (sim_cps, sim_walk_cps) = fairloom_loadgen::in_process(&spec, figures.apps_submitted)?;
    figures.compare(sim_cps, sim_walk_cps);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&figures)?);
        return Ok(ExitCode::SUCCESS);
    }
    let f = &figures;
    outln!("fairloom bench rm: {} simulated NodeManagers every {} ms, {} apps at once × {} containers of {} ms, {:.1} s measured", args.nodes, args.heartbeat_ms, args.apps, args.containers, args.task_ms, f.seconds);
    outln!("  node heartbeats handled     {:>10.0} /s  ({} errors)", f.heartbeats_per_second, f.errors);
    outln!(
        "  heartbeat latency           p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        f.heartbeat_p50_ms,
        f.heartbeat_p99_ms,
        f.heartbeat_max_ms
    );
    outln!(
        "  REST read latency           p50 {:.2} ms, p99 {:.2} ms ({} reads)",
        f.rest_p50_ms,
        f.rest_p99_ms,
        f.rest_reads
    );
    outln!("  containers allocated        {:.0} ({:.0} /s of wall time)", f.allocations, f.wall_cps);
    outln!(
        "  event loop busy             {:.1} s of {} s ({:.0}%)",
        f.loop_busy_seconds,
        args.seconds,
        100.0 * f.loop_busy_seconds / args.seconds.max(1) as f64
    );
    outln!("  CPS through the service     {:.0} per second of event-loop work", f.service_cps);
    outln!(
        "                              {:.0} per CPU second of the loop's thread ({:.1} s CPU)",
        f.service_cps_cpu,
        f.loop_cpu_seconds
    );
    outln!(
        "                              {:.0} per second of the scheduler's node walk inside it ({:.2} s)",
        f.service_cps_walk,
        f.service_walk_seconds
    );
    outln!(
        "  CPS in process (simulator)  {sim_cps:.0} on the same workload ({:.2}× the service)",
        if f.service_cps > 0.0 { sim_cps / f.service_cps } else { 0.0 }
    );
    outln!("                              {sim_walk_cps:.0} per second of its node walk (phase timers on)");
    outln!("  process CPU                 {:.1} s (RM, simulated NMs and AMs together)", f.cpu_seconds);
    Ok(ExitCode::SUCCESS)
}

fn print_sample(s: &Sample, interval_secs: f64) {
    let v = |k: &str| s.values.get(k).copied().unwrap_or(0.0);
    outln!(
        "  {:>6.1} min  resident {:>7.1} MB  apps {:>4.0} live {:>5.0} kept  containers {:>6.0}  nodes {:>5.0}  ended {:>6.0}  allocated {:>7.0}/s",
        s.minute,
        v("resident_mb"),
        v("apps_live"),
        v("apps_finished_kept"),
        v("containers_live"),
        v("nodes"),
        v("ended_containers"),
        v("allocated") / interval_secs.max(1e-9),
    );
}

fn print_verdict(verdict: &Verdict) {
    outln!(
        "soak: slopes over the {:.1} minutes after a {:.1}-minute warm-up (per minute):",
        verdict.window_minutes,
        verdict.warmup_minutes
    );
    for (name, t) in &verdict.figures {
        outln!(
            "  {:<22} {:>+12.4}  ({:.1} → {:.1}){}",
            name,
            t.slope_per_minute,
            t.first,
            t.last,
            if t.flat { "" } else { "  GROWING" }
        );
    }
    outln!(
        "soak: {}",
        if verdict.flat {
            "flat (resident memory and every count)"
        } else {
            "NOT flat: see the figures marked GROWING"
        }
    );
}
