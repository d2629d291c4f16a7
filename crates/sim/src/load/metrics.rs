//! What a simulation measures: time inside the scheduler by phase, allocations per
//! simulated minute, validSchedule, utilization and pending over time, per-queue usage
//! against fair share, ask-to-allocation latency, peak memory, auditor results.

use std::io::{IsTerminal, Write};
use std::time::Instant;

use fairloom_model::Resource;
use fairloom_scheduler::driver::{AnyScheduler, AppState};

use super::figures::{
    AppCounts, CorePhases, Latency, MinuteFigures, PhaseFigures, SampleFigures, SchedulerCounters, SimReport,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Node heartbeats: the completions they report, then the allocation walk.
    Heartbeat,
    /// The periodic update: demand and fair shares.
    Update,
    /// AM allocate() calls.
    Asks,
    /// Containers an AM gives back because it no longer needs them. Finished containers
    /// arrive in heartbeats instead.
    Completions,
    /// Submissions and finishes.
    AppLifecycle,
}

const PHASES: [(Phase, &str); 5] = [
    (Phase::Heartbeat, "heartbeat"),
    (Phase::Update, "update"),
    (Phase::Asks, "asks"),
    (Phase::Completions, "completions"),
    (Phase::AppLifecycle, "app_lifecycle"),
];

fn phase_index(p: Phase) -> usize {
    PHASES.iter().position(|(q, _)| *q == p).expect("every phase is listed")
}

#[derive(Debug, Clone, Default)]
pub struct Minute {
    pub allocations: u64,
    pub scheduler_ns: u64,
    pub valid: Option<bool>,
}

#[derive(Debug, Clone)]
pub struct Metrics {
    pub duration_ms: i64,
    pub scheduler_ns: u64,
    phase_ns: [u64; 5],
    phase_calls: [u64; 5],
    pub allocations: u64,
    pub completions: u64,
    pub reservations: u64,
    pub apps_submitted: u64,
    pub apps_rejected: u64,
    pub apps_finished: u64,
    pub minutes: Vec<Minute>,
    pub samples: Vec<SampleFigures>,
    pub latency_ms: Vec<u32>,
    pub audit_runs: u64,
    pub audit_mismatches: u64,
    pub queue_names: Vec<String>,
}

impl Metrics {
    pub fn new(duration_ms: i64) -> Self {
        Self {
            duration_ms,
            scheduler_ns: 0,
            phase_ns: [0; 5],
            phase_calls: [0; 5],
            allocations: 0,
            completions: 0,
            reservations: 0,
            apps_submitted: 0,
            apps_rejected: 0,
            apps_finished: 0,
            minutes: vec![Minute::default(); (duration_ms / 60_000 + 1) as usize],
            samples: Vec::new(),
            latency_ms: Vec::new(),
            audit_runs: 0,
            audit_mismatches: 0,
            queue_names: Vec::new(),
        }
    }

    /// Time spent in one scheduler call that started at `start`, at simulated time `t`.
    #[inline]
    pub fn record(&mut self, phase: Phase, start: Instant, t: i64) {
        let ns = start.elapsed().as_nanos() as u64;
        let i = phase_index(phase);
        self.phase_ns[i] += ns;
        self.phase_calls[i] += 1;
        self.scheduler_ns += ns;
        if let Some(m) = self.minutes.get_mut((t / 60_000) as usize) {
            m.scheduler_ns += ns;
        }
    }

    #[inline]
    pub fn allocated(&mut self, t: i64) {
        self.allocations += 1;
        if let Some(m) = self.minutes.get_mut((t / 60_000) as usize) {
            m.allocations += 1;
        }
    }

    pub fn sample(&mut self, s: &AnyScheduler, t: i64, top: &[String]) {
        let cluster = s.cluster().total;
        let queues = s.queue_summaries();
        let used = queues.first().map_or(Resource::none(), |root| root.usage);
        let ratio = |u: i64, c: i64| if c > 0 { u as f64 / c as f64 } else { 0.0 };
        let mut pending = Resource::none();
        let mut valid_pending = false;
        for q in queues.iter().filter(|q| q.leaf) {
            pending.add_assign(q.pending);
            // Meituan's valid pending: min(queue pending, queue max).
            if q.pending.componentwise_min(q.max).any_positive() {
                valid_pending = true;
            }
        }
        let running = (s.app_ids().into_iter())
            .map(|i| s.app(i))
            .filter(|a| a.state == AppState::Running)
            .map(|a| a.live_containers as u64)
            .sum();
        let um = ratio(used.memory(), cluster.memory());
        let uv = ratio(used.vcores(), cluster.vcores());
        if t % 60_000 == 0 && t > 0 {
            if let Some(m) = self.minutes.get_mut((t / 60_000 - 1) as usize) {
                m.valid = Some(um.max(uv) > 0.9 || !valid_pending);
            }
        }
        if self.queue_names.is_empty() {
            self.queue_names = top.to_vec();
        }
        let by_name = |name: &String| queues.iter().find(|q| &q.name == name);
        self.samples.push(SampleFigures {
            t_ms: t,
            utilization_memory: um,
            utilization_vcores: uv,
            pending_memory_mb: pending.memory(),
            running_containers: running,
            queues: top.iter().filter_map(by_name).map(|q| (q.usage.memory(), q.share.memory())).collect(),
        });
    }

    pub fn cps(&self) -> f64 {
        if self.scheduler_ns == 0 {
            0.0
        } else {
            self.allocations as f64 / (self.scheduler_ns as f64 / 1e9)
        }
    }

    /// Fraction of simulated minutes that were valid (Meituan's validSchedule).
    pub fn valid_schedule_per_min(&self) -> Option<f64> {
        let judged: Vec<bool> = self.minutes.iter().filter_map(|m| m.valid).collect();
        (!judged.is_empty()).then(|| judged.iter().filter(|v| **v).count() as f64 / judged.len() as f64)
    }

    pub fn utilization_mean(&self) -> f64 {
        if self.samples.is_empty() {
            return 0.0;
        }
        self.samples.iter().map(|s| s.utilization_memory.max(s.utilization_vcores)).sum::<f64>()
            / self.samples.len() as f64
    }

    fn latency(&mut self) -> Option<Latency> {
        if self.latency_ms.is_empty() {
            return None;
        }
        self.latency_ms.sort_unstable();
        let n = self.latency_ms.len();
        let at = |q: f64| self.latency_ms[((n as f64 - 1.0) * q).round() as usize];
        let mean = self.latency_ms.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        Some(Latency { count: n, mean, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: self.latency_ms[n - 1] })
    }

    /// The run's figures (`core_phases` aside: the scheduler's, filled by the caller).
    pub fn report(
        &mut self,
        workload: &str,
        description: &str,
        seed: u64,
        counters: &fairloom_scheduler::Counters,
        preemption: &[(&'static str, i64)],
    ) -> SimReport {
        let phases = PHASES
            .iter()
            .enumerate()
            .map(|(i, (_, name))| {
                let figures = PhaseFigures { seconds: self.phase_ns[i] as f64 / 1e9, calls: self.phase_calls[i] };
                (name.to_string(), figures)
            })
            .collect();
        let per_minute = self
            .minutes
            .iter()
            .enumerate()
            .filter(|(i, _)| (*i as i64) * 60_000 < self.duration_ms)
            .map(|(i, m)| {
                let cps = if m.scheduler_ns > 0 { m.allocations as f64 / (m.scheduler_ns as f64 / 1e9) } else { 0.0 };
                MinuteFigures { minute: i, allocations: m.allocations, cps, valid: m.valid }
            })
            .collect();
        let valid = self.valid_schedule_per_min();
        SimReport {
            workload: workload.to_string(),
            description: description.to_string(),
            seed,
            cps: self.cps(),
            allocations: self.allocations,
            completions: self.completions,
            reservations: self.reservations,
            scheduler_seconds: self.scheduler_ns as f64 / 1e9,
            simulated_seconds: self.duration_ms as f64 / 1e3,
            valid_schedule_per_min: valid,
            valid_schedule_per_day: valid.map(|v| v * 1440.0),
            utilization_mean: self.utilization_mean(),
            apps: AppCounts {
                submitted: self.apps_submitted,
                rejected: self.apps_rejected,
                finished: self.apps_finished,
            },
            ask_to_allocation_ms: self.latency(),
            phases,
            scheduler_counters: SchedulerCounters {
                heartbeats: counters.heartbeats,
                updates: counters.updates,
                containers_allocated: counters.containers_allocated,
                reservations_made: counters.reservations_made,
            },
            decisions_digest: counters.decisions.hex(),
            preemption: preemption.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            audit_runs: self.audit_runs,
            audit_mismatches: self.audit_mismatches,
            peak_rss_bytes: peak_rss_bytes(),
            per_minute,
            samples: self.samples.clone(),
            queue_names: self.queue_names.clone(),
            core_phases: CorePhases::default(),
            wall_seconds: None,
        }
    }
}

/// The process's peak resident set (VmHWM), where the platform reports it.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A progress bar on stderr when it is a terminal.
pub struct Progress {
    on: bool,
    total: i64,
    started: Instant,
}

impl Progress {
    pub fn new(wanted: bool, total: i64) -> Self {
        Self { on: wanted && std::io::stderr().is_terminal(), total, started: Instant::now() }
    }

    pub fn show(&mut self, t: i64, allocations: u64) {
        if !self.on {
            return;
        }
        let frac = (t as f64 / self.total.max(1) as f64).clamp(0.0, 1.0);
        let filled = (frac * 30.0) as usize;
        let _ = write!(
            std::io::stderr(),
            "\r[{}{}] {:>3.0}%  simulated {}s of {}s  {} allocations  {:.1}s elapsed ",
            "=".repeat(filled),
            " ".repeat(30 - filled),
            frac * 100.0,
            t / 1000,
            self.total / 1000,
            allocations,
            self.started.elapsed().as_secs_f64()
        );
    }

    pub fn finish(&mut self) {
        if self.on {
            let _ = writeln!(std::io::stderr());
        }
    }
}
