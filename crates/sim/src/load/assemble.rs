//! Putting a workload together from what a user gives `fairloom sim`: a preset by name, an
//! SLS trace or SYNTH file, and the switch to the Capacity Scheduler (its own
//! capacity-scheduler.xml, or the allocation file's tree with weights as capacities). The
//! command reads the files and checks its flags; what a workload is made of is decided here.

use fairloom_config::{load_capacity_file, Properties};
use fairloom_scheduler::SchedulerKind;

use super::spark::SparkWorkload;
use super::{capacity, presets, SimError, Workload};

/// A workload and how long it runs unless told otherwise (ms).
pub type Timed = (Workload, i64);

/// How long a trace or SYNTH workload runs by default: ten minutes past its last arrival.
fn trace_duration(w: &Workload) -> i64 {
    w.apps.iter().map(|a| a.arrival_ms).max().unwrap_or(0) + 600_000
}

/// A preset by name (`spark-locality` is a Spark workload: see [`super::spark`]).
pub fn preset(name: &str, seed: u64) -> Result<Timed, String> {
    match name {
        "preempt-1k" => return Ok((presets::preemption_demo(seed, false), 180_000)),
        "preempt-1k-am" => return Ok((presets::preemption_demo(seed, true), 180_000)),
        _ => {}
    }
    let shape = presets::shape(name).ok_or_else(|| {
        let names: Vec<&str> = presets::PRESETS.iter().map(|p| p.name).collect();
        format!("unknown preset '{name}': choose one of {}", names.join(", "))
    })?;
    Ok((presets::generate(shape, seed), shape.default_duration_ms))
}

/// An SLS JSON trace with its nodes file (when given) under `allocations`.
pub fn trace(text: &str, nodes: Option<&str>, allocations: &str, site: Properties) -> Result<Timed, String> {
    let w = super::sls::from_trace(text, nodes, allocations, site)?;
    let end = trace_duration(&w);
    Ok((w, end))
}

/// An SLS SYNTH workload under `allocations`.
pub fn synth(text: &str, allocations: &str, site: Properties, seed: u64) -> Result<Timed, String> {
    let w = super::sls::from_synth(text, allocations, site, seed)?;
    let end = trace_duration(&w);
    Ok((w, end))
}

/// Whether a run uses the Capacity Scheduler: the one asked for, else the Capacity
/// Scheduler when its file is given or yarn-site names it.
pub fn wants_capacity(asked: Option<SchedulerKind>, capacity_file: bool, site: &Properties) -> bool {
    match asked {
        Some(kind) => kind == SchedulerKind::Capacity,
        None => {
            capacity_file
                || site.get("yarn.resourcemanager.scheduler.class").is_some_and(|c| c.contains("CapacityScheduler"))
        }
    }
}

/// A capacity-scheduler.xml's properties, checked against `site` (errors name `name` and
/// the line).
pub fn capacity_file(name: &str, text: &str, site: &Properties) -> Result<Properties, String> {
    Ok(load_capacity_file(text, name, site).map_err(|e| e.to_string())?.0)
}

/// Switch a workload to the Capacity Scheduler: `file`'s properties, or the tree of its
/// allocation file with weights as capacities. A preset (`preset`: its name) also lifts
/// YARN's one off-switch container per heartbeat (presets ask only at `*`), and the
/// preemption presets turn the monitor on.
pub fn use_capacity(w: &mut Workload, file: Option<Properties>, preset: Option<&str>) -> Result<(), SimError> {
    let capacity = match file {
        Some(c) => c,
        None => {
            let mut c = capacity::from_fair(&w.allocations, &w.properties)?;
            if preset.is_some() {
                c.insert(
                    "yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments".into(),
                    "100".into(),
                );
            }
            c
        }
    };
    if matches!(preset, Some("preempt-1k" | "preempt-1k-am")) {
        w.properties.insert("yarn.resourcemanager.scheduler.monitor.enable".into(), "true".into());
    }
    w.capacity.get_or_insert_with(Default::default).extend(capacity);
    Ok(())
}

/// Switch a Spark workload to the Capacity Scheduler, as [`use_capacity`] does.
pub fn spark_use_capacity(w: &mut SparkWorkload, file: Option<Properties>) -> Result<(), SimError> {
    w.capacity = Some(match file {
        Some(c) => c,
        None => capacity::from_fair(&w.allocations, &w.properties)?,
    });
    if let Some((before, _)) = w.description.split_once("; the Fair Scheduler's delay scheduling") {
        w.description = format!(
            "{before}; the Capacity Scheduler's delay scheduling (node-locality-delay, then off-switch by YARN's locality wait factor)"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheduler_asked_for_wins_else_the_files_say() {
        let site: Properties = [(
            "yarn.resourcemanager.scheduler.class".to_string(),
            fairloom_scheduler::factory::CAPACITY_CLASS.to_string(),
        )]
        .into();
        assert!(!wants_capacity(Some(SchedulerKind::Fair), true, &site));
        assert!(wants_capacity(Some(SchedulerKind::Capacity), false, &Properties::new()));
        assert!(wants_capacity(None, false, &site));
        assert!(wants_capacity(None, true, &Properties::new()));
        assert!(!wants_capacity(None, false, &Properties::new()));
    }

    #[test]
    fn a_preset_on_the_capacity_scheduler_gets_capacities_and_its_switches() {
        let (mut w, ms) = preset("preempt-1k", 1).unwrap();
        assert_eq!(ms, 180_000);
        use_capacity(&mut w, None, Some("preempt-1k")).unwrap();
        let c = w.capacity.as_ref().unwrap();
        assert_eq!(c["yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments"], "100");
        assert!(c.contains_key("yarn.scheduler.capacity.root.queues"));
        assert_eq!(w.properties["yarn.resourcemanager.scheduler.monitor.enable"], "true");
        // A file given is taken as it is.
        let (mut w, _) = preset("meituan-1k", 1).unwrap();
        let file: Properties = [("yarn.scheduler.capacity.root.queues".to_string(), "x".to_string())].into();
        use_capacity(&mut w, Some(file.clone()), Some("meituan-1k")).unwrap();
        assert_eq!(w.capacity, Some(file));
        assert!(!w.properties.contains_key("yarn.resourcemanager.scheduler.monitor.enable"));
        assert!(preset("nope", 1).unwrap_err().contains("unknown preset 'nope'"));
    }
}
