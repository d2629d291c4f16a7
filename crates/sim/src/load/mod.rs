//! The load simulator: the real scheduler driven in virtual time by SLS traces, SYNTH
//! workloads or generated presets, measured from outside.

pub mod assemble;
pub mod capacity;
mod engine;
pub mod figures;
mod keymap;
pub mod metrics;
pub mod presets;
pub mod report;
pub mod rng;
pub mod sls;
pub mod spark;
pub mod workload;

pub use engine::{SimError, SimOptions, Simulation};
pub use figures::{CorePhases, SimReport};
pub use workload::{AppDef, NodeDef, Stage, TaskGroup, Workload};

/// Run a workload and return its figures.
pub fn simulate(w: &Workload, opts: SimOptions, seed: u64) -> Result<SimReport, SimError> {
    let timed = opts.phase_timers;
    let mut sim = Simulation::new(w, opts)?;
    sim.run();
    let counters = sim.scheduler().counters().clone();
    let preemption = sim.scheduler().preemption_counters();
    let phases = sim.scheduler().phases().clone();
    let mut report = sim.metrics.report(&w.name, &w.description, seed, &counters, &preemption);
    let secs = |ns: u64| timed.then_some(ns as f64 / 1e9);
    report.core_phases = CorePhases {
        reservations_seconds: secs(phases.reservations_ns),
        precheck_seconds: secs(phases.precheck_ns),
        ordering_seconds: secs(phases.ordering_ns),
        assignment_seconds: secs(phases.assignment_ns),
        parents_visited: phases.parents_visited,
        children_skipped: phases.children_skipped,
        apps_tried: phases.apps_tried,
    };
    Ok(report)
}
