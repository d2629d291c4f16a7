//! `fairloom bench rm`'s run: start an RM in this process, put the simulated cluster on it,
//! measure, and report (the service's CPS per second of event-loop work, heartbeat and REST
//! latencies, and for a soak the slopes of memory and of every collection the RM keeps).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use fairloom_config::properties::Properties;
use fairloom_model::Resource;
use fairloom_rm::conf::{RmConf, FAIR_CLASS};
use fairloom_sim::load::{AppDef, NodeDef, SimOptions, Stage, TaskGroup, Workload};

use crate::cluster::{self, lock, Load, NODE_MB, NODE_VCORES, TASK};
use crate::soak::{self, Sample, Verdict};
use crate::LoadError;

/// The load to apply.
#[derive(Debug, Clone)]
pub struct BenchSpec {
    /// Simulated NodeManagers.
    pub nodes: usize,
    /// Node heartbeat interval (ms).
    pub heartbeat_ms: u64,
    /// Applications kept running at once (a finished one is replaced).
    pub apps: usize,
    /// Containers each application asks for.
    pub containers: u32,
    /// How long each container runs (ms).
    pub task_ms: u64,
    /// `yarn.scheduler.fair.assignmultiple`, in the service and in the in-process run alike.
    pub assign_multiple: bool,
    /// How long to measure, after every node registered.
    pub duration: Duration,
    /// A soak: sample every `sample_every` and report each figure's slope after `warmup_minutes`.
    pub soak: Option<SoakSpec>,
}

#[derive(Debug, Clone, Copy)]
pub struct SoakSpec {
    pub warmup_minutes: f64,
    pub sample_every: Duration,
}

/// A soak's samples and their verdict.
#[derive(Debug, Clone, Serialize)]
pub struct SoakFigures {
    pub minutes: f64,
    pub samples: Vec<Sample>,
    pub verdict: Verdict,
}

/// The in-process simulator on the same workload.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct InProcess {
    pub in_process_cps: f64,
    /// Its CPS per second of the scheduler's node walk (phase timers on).
    pub in_process_cps_walk: f64,
    pub service_to_in_process: f64,
}

/// What a bench run measured (`--json` prints it as it is).
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub nodes: usize,
    pub heartbeat_ms: u64,
    pub seconds: f64,
    pub heartbeats: u64,
    pub heartbeats_per_second: f64,
    pub heartbeat_p50_ms: f64,
    pub heartbeat_p99_ms: f64,
    pub heartbeat_max_ms: f64,
    pub rest_reads: u64,
    pub rest_p50_ms: f64,
    pub rest_p99_ms: f64,
    pub errors: u64,
    /// The first few errors' messages.
    pub first_errors: Vec<String>,
    pub apps_submitted: usize,
    pub allocations: f64,
    pub wall_cps: f64,
    pub loop_busy_seconds: f64,
    /// Containers allocated per second of the event loop's work.
    pub service_cps: f64,
    pub loop_cpu_seconds: f64,
    pub service_cps_cpu: f64,
    pub service_walk_seconds: f64,
    pub service_cps_walk: f64,
    /// The whole process's CPU (RM, simulated NMs and AMs together).
    pub cpu_seconds: f64,
    pub soak: Option<SoakFigures>,
    /// Filled in by the caller from [`in_process`] (a soak has none).
    #[serde(flatten)]
    pub in_process: Option<InProcess>,
}

impl Figures {
    /// Set the in-process comparison.
    pub fn compare(&mut self, in_process_cps: f64, in_process_cps_walk: f64) {
        self.in_process = Some(InProcess {
            in_process_cps,
            in_process_cps_walk,
            service_to_in_process: if in_process_cps > 0.0 { self.service_cps / in_process_cps } else { 0.0 },
        });
    }
}

/// The scheduler properties both runs share.
fn scheduler_properties(spec: &BenchSpec) -> Properties {
    let mut p = Properties::new();
    p.insert("yarn.scheduler.fair.assignmultiple".into(), spec.assign_multiple.to_string());
    p
}

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Run the load against an RM started here; `on_sample` hears each soak sample as it is
/// taken (with the sampling interval in seconds).
pub async fn bench(spec: &BenchSpec, mut on_sample: impl FnMut(&Sample, f64)) -> Result<Figures, LoadError> {
    let mut site = scheduler_properties(spec);
    for (k, v) in [
        ("yarn.resourcemanager.scheduler.class", FAIR_CLASS),
        ("yarn.resourcemanager.webapp.address", "127.0.0.1:0"),
        ("yarn.resourcemanager.resource-tracker.address", "127.0.0.1:0"),
        ("yarn.resourcemanager.scheduler.address", "127.0.0.1:0"),
        ("yarn.nm.liveness-monitor.expiry-interval-ms", "600000"),
        ("yarn.am.liveness-monitor.expiry-interval-ms", "600000"),
        ("yarn.scheduler.maximum-allocation-mb", "65536"),
        // Every simulated NM and AM connects from this one address.
        ("fairloom.resource-tracker.max-connections-per-peer", "0"),
        ("fairloom.scheduler.max-connections-per-peer", "0"),
    ] {
        site.insert(k.to_string(), v.to_string());
    }
    site.insert("yarn.resourcemanager.nodemanagers.heartbeat-interval-ms".into(), spec.heartbeat_ms.to_string());
    let conf = RmConf::from_site(site, &std::env::temp_dir()).map_err(|e| LoadError::Rm(e.to_string()))?;
    let rm = fairloom_rm::start(conf).await.map_err(|e| LoadError::Rm(e.to_string()))?;
    let load = Arc::new(Load::new(spec.nodes, Duration::from_millis(spec.task_ms), spec.containers, rm.scheduler));
    let interval = Duration::from_millis(spec.heartbeat_ms);
    let mut tasks = Vec::new();
    for i in 0..spec.nodes {
        tasks.push(tokio::spawn(cluster::nm(load.clone(), i, rm.tracker, interval)));
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    while (load.registered.load(Ordering::Relaxed) as usize) < spec.nodes {
        if Instant::now() > deadline {
            let registered = load.registered.load(Ordering::Relaxed);
            return Err(LoadError::SlowRegistration { registered, nodes: spec.nodes });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    cluster::submit(rm.webapp, spec.apps).await?;
    let mut submitted = spec.apps;
    tasks.push(tokio::spawn(cluster::reader(load.clone(), rm.webapp)));
    // Measure from the first allocations on.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = cluster::scrape(rm.webapp).await?;
    let cpu0 = cpu_seconds();
    load.measuring.store(true, Ordering::Relaxed);
    let started = Instant::now();
    let end = started + spec.duration;
    let mut replaced = 0u64;
    let every = spec.soak.map(|s| s.sample_every.max(Duration::from_secs(1)));
    let (mut samples, mut next_sample, mut allocated_before) = (Vec::new(), started, 0.0);
    while Instant::now() < end {
        if let Some(every) = every.filter(|_| Instant::now() >= next_sample) {
            next_sample += every;
            let now = cluster::scrape(rm.webapp).await?;
            let allocated = now.get("fairloom_scheduler_containers_allocated_total").copied().unwrap_or(0.0);
            let s = soak::sample(started.elapsed().as_secs_f64() / 60.0, &now, allocated - allocated_before);
            allocated_before = allocated;
            on_sample(&s, every.as_secs_f64());
            samples.push(s);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let finished = load.apps_finished.load(Ordering::Relaxed);
        if finished > replaced {
            cluster::submit(rm.webapp, (finished - replaced) as usize).await?;
            submitted += (finished - replaced) as usize;
            replaced = finished;
        }
    }
    load.measuring.store(false, Ordering::Relaxed);
    let secs = started.elapsed().as_secs_f64();
    let after = cluster::scrape(rm.webapp).await?;
    let cpu = cpu_seconds() - cpu0;
    load.stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.abort();
    }
    rm.stop().await;
    let soak = spec.soak.map(|s| {
        let minutes = spec.duration.as_secs_f64() / 60.0;
        let warmup = s.warmup_minutes.clamp(0.0, minutes / 2.0);
        let verdict = soak::verdict(&samples, warmup);
        SoakFigures { minutes, samples, verdict }
    });
    let delta = |k: &str| after.get(k).copied().unwrap_or(0.0) - before.get(k).copied().unwrap_or(0.0);
    let allocations = delta("fairloom_scheduler_containers_allocated_total");
    let busy = delta("fairloom_rm_loop_busy_seconds_total");
    let loop_cpu = delta("fairloom_rm_loop_cpu_seconds_total");
    // The scheduler's node walk inside the service (its phase timers, every phase).
    let walk: f64 =
        after.keys().filter(|k| k.starts_with("fairloom_scheduler_phase_seconds_total{")).map(|k| delta(k)).sum();
    let per = |n: f64, d: f64| if d > 0.0 { n / d } else { 0.0 };
    let hb = lock(&load.heartbeat_us);
    let rest = lock(&load.rest_us);
    let heartbeats = load.heartbeats.load(Ordering::Relaxed);
    let first_errors = lock(&load.first_errors).clone();
    Ok(Figures {
        nodes: spec.nodes,
        heartbeat_ms: spec.heartbeat_ms,
        seconds: secs,
        heartbeats,
        heartbeats_per_second: heartbeats as f64 / secs,
        heartbeat_p50_ms: hb.percentile_ms(0.50),
        heartbeat_p99_ms: hb.percentile_ms(0.99),
        heartbeat_max_ms: hb.percentile_ms(1.0),
        rest_reads: rest.count(),
        rest_p50_ms: rest.percentile_ms(0.50),
        rest_p99_ms: rest.percentile_ms(0.99),
        errors: load.errors.load(Ordering::Relaxed),
        first_errors,
        apps_submitted: submitted,
        allocations,
        wall_cps: allocations / secs,
        loop_busy_seconds: busy,
        service_cps: per(allocations, busy),
        loop_cpu_seconds: loop_cpu,
        service_cps_cpu: per(allocations, loop_cpu),
        service_walk_seconds: walk,
        service_cps_walk: per(allocations, walk),
        cpu_seconds: cpu,
        soak,
        in_process: None,
    })
}

/// The same cluster and `apps` applications (the first `spec.apps` at once, the rest spread
/// over the measured span) in the in-process simulator: its CPS, and its CPS per second of
/// the scheduler's node walk (a second run with the phase timers on, which slow the
/// heartbeats they time).
pub fn in_process(spec: &BenchSpec, apps: usize) -> Result<(f64, f64), LoadError> {
    let nodes = (0..spec.nodes)
        .map(|i| NodeDef {
            name: format!("sim-{i}"),
            rack: format!("/rack{}", i / 40),
            resource: Resource::new(NODE_MB, NODE_VCORES),
        })
        .collect();
    let span = spec.duration.as_secs() as i64 * 1000;
    let apps = (0..apps.max(1))
        .map(|k| AppDef {
            name: format!("bench-{k}"),
            queue: "default".into(),
            user: "bench".into(),
            arrival_ms: if k < spec.apps {
                0
            } else {
                (k - spec.apps) as i64 * span / (apps - spec.apps).max(1) as i64
            },
            am: Some(Resource::new(1024, 1)),
            stages: vec![Stage {
                groups: vec![TaskGroup {
                    priority: 1,
                    resource: Resource::new(TASK.memory, TASK.vcores),
                    count: spec.containers as u64,
                    duration_ms: Some(spec.task_ms as i64),
                    host: None,
                    request_delay_ms: 0,
                }],
            }],
        })
        .collect();
    let w = Workload {
        name: "bench-rm".into(),
        nodes,
        apps,
        allocations: "<allocations/>".into(),
        capacity: None,
        properties: scheduler_properties(spec),
        max_outstanding: None,
        description: "fairloom bench rm's workload, in process".into(),
    };
    let opts =
        SimOptions { duration_ms: span + 10_000, node_heartbeat_ms: spec.heartbeat_ms as i64, ..SimOptions::default() };
    let sim = |o: SimOptions| fairloom_sim::load::simulate(&w, o, 1).map_err(|e| LoadError::Sim(e.to_string()));
    let report = sim(opts.clone())?;
    let timed = sim(SimOptions { phase_timers: true, ..opts })?;
    let walk = timed.core_phases.walk_seconds();
    let allocations = timed.allocations as f64;
    Ok((report.cps, if walk > 0.0 { allocations / walk } else { 0.0 }))
}
