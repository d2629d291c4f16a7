//! What one simulation run reports: the document `fairloom sim --json` prints and
//! `--report` writes, as types (the CLI, the HTML report and the tests read fields, not
//! strings). The field names are the JSON keys, documented in docs/simulator.md.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One run's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SimReport {
    pub workload: String,
    pub description: String,
    pub seed: u64,
    /// Containers allocated per second of time inside the scheduler.
    pub cps: f64,
    pub allocations: u64,
    pub completions: u64,
    pub reservations: u64,
    /// Time inside the scheduler's calls.
    pub scheduler_seconds: f64,
    pub simulated_seconds: f64,
    /// Meituan's validSchedule: the fraction of simulated minutes that were valid (none
    /// before the first minute ends).
    pub valid_schedule_per_min: Option<f64>,
    pub valid_schedule_per_day: Option<f64>,
    /// Mean over samples of the larger of memory and vcores utilization.
    pub utilization_mean: f64,
    pub apps: AppCounts,
    /// From an ask to its allocation, in simulated ms (none when nothing was allocated).
    pub ask_to_allocation_ms: Option<Latency>,
    /// Time inside the scheduler by the driver's call.
    pub phases: BTreeMap<String, PhaseFigures>,
    pub scheduler_counters: SchedulerCounters,
    pub decisions_digest: String,
    /// The scheduler's preemption counters by name.
    pub preemption: BTreeMap<String, i64>,
    pub audit_runs: u64,
    pub audit_mismatches: u64,
    /// The process's peak resident set, where the platform reports it.
    pub peak_rss_bytes: Option<u64>,
    pub per_minute: Vec<MinuteFigures>,
    pub samples: Vec<SampleFigures>,
    /// The top-level queues each sample's `queues` follow, in order.
    pub queue_names: Vec<String>,
    /// The heartbeat walk's own phases (timed only with `--phase-timers`) and counters.
    pub core_phases: CorePhases,
    /// Wall time of the whole run (workload, driver and scheduler), set by the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppCounts {
    pub submitted: u64,
    pub rejected: u64,
    pub finished: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub count: usize,
    pub mean: f64,
    pub p50: u32,
    pub p90: u32,
    pub p99: u32,
    pub max: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseFigures {
    pub seconds: f64,
    pub calls: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedulerCounters {
    pub heartbeats: u64,
    pub updates: u64,
    pub containers_allocated: u64,
    pub reservations_made: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MinuteFigures {
    pub minute: usize,
    pub allocations: u64,
    pub cps: f64,
    /// Whether the minute was valid (Meituan's validSchedule); none for the last, unjudged one.
    pub valid: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleFigures {
    pub t_ms: i64,
    pub utilization_memory: f64,
    pub utilization_vcores: f64,
    pub pending_memory_mb: i64,
    pub running_containers: u64,
    /// (usage MB, instantaneous fair share MB) of each of `queue_names`.
    pub queues: Vec<(i64, i64)>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CorePhases {
    pub reservations_seconds: Option<f64>,
    pub precheck_seconds: Option<f64>,
    pub ordering_seconds: Option<f64>,
    pub assignment_seconds: Option<f64>,
    pub parents_visited: u64,
    pub children_skipped: u64,
    pub apps_tried: u64,
}

impl CorePhases {
    /// The walk's timed seconds, when they were timed.
    pub fn walk_seconds(&self) -> f64 {
        [self.reservations_seconds, self.precheck_seconds, self.ordering_seconds, self.assignment_seconds]
            .into_iter()
            .flatten()
            .sum()
    }
}

/// What a Spark simulation reports: both AMs (locality-aware and naive) on one workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SparkReport {
    pub workload: String,
    pub description: String,
    pub simulated_seconds: f64,
    pub runs: Vec<SparkRun>,
    /// Wall time of the whole run, set by the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
}

/// One AM strategy's run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SparkRun {
    /// `locality` or `naive`.
    pub strategy: String,
    pub tasks: u64,
    /// Fractions of the tasks run at each locality level.
    pub node_local: f64,
    pub rack_local: f64,
    pub off_switch: f64,
    pub no_pref: f64,
    pub makespan_s: f64,
    pub executors_started: u64,
    pub containers_released: u64,
    pub scheduler_seconds: f64,
    pub audit_mismatches: u64,
    pub decisions_digest: String,
}
