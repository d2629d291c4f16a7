//! The load simulator: the real scheduler driven in virtual time by SLS traces, SYNTH
//! workloads or generated presets, measured from outside.

mod engine;
pub mod metrics;
pub mod presets;
pub mod report;
pub mod rng;
pub mod sls;
pub mod spark;
pub mod workload;

pub use engine::{SimError, SimOptions, Simulation};
pub use workload::{AppDef, NodeDef, Stage, TaskGroup, Workload};

/// Run a workload and return the `--json` figures.
pub fn simulate(w: &Workload, opts: SimOptions, seed: u64) -> Result<serde_json::Value, SimError> {
    let mut sim = Simulation::new(w, opts)?;
    sim.run();
    let counters = sim.scheduler().counters.clone();
    let preemption = sim.scheduler().preemption.clone();
    Ok(sim.metrics.to_json(&w.name, &w.description, seed, &counters, &preemption))
}
