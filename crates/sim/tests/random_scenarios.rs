//! The random scenario generator (fairloom_sim::scenario::random): every generated file is a
//! valid scenario that fairloom's runner runs to its end (auditor on), and the same
//! scheduler and seed always give the same bytes.

use std::collections::HashSet;

use fairloom_sim::scenario::random::{generate, generate_detailed, scenario_name, SchedulerKind};
use fairloom_sim::scenario::run_text;
use serde_json::Value;

const SEEDS: u64 = 300;

/// Generate SEEDS files, run each, and fail with every problem found.
fn all_seeds_run(kind: SchedulerKind) {
    let mut problems = Vec::new();
    let (mut repaired_files, mut changed_steps, mut total_steps) = (0, 0, 0);
    for seed in 0..SEEDS {
        let generated = generate_detailed(kind, seed);
        let doc: Value = serde_json::from_str(&generated.text).expect("generated text is JSON");
        let steps = doc["steps"].as_array().expect("steps");
        total_steps += steps.len();
        if generated.repairs.changed() > 0 {
            repaired_files += 1;
            changed_steps += generated.repairs.changed();
        }
        problems.extend(generated.repairs.anomalies.iter().map(|a| format!("seed {seed}: {a}")));
        if generated.repairs.truncated {
            problems.push(format!("seed {seed}: the validity check gave up: {:?}", generated.repairs.notes.last()));
        }
        if let Err(e) = run_text(&generated.text, true).result {
            problems.push(format!("seed {seed}: {e:?}"));
        }
        if let Err(e) = shape(&doc, kind, seed) {
            problems.push(format!("seed {seed}: {e}"));
        }
    }
    eprintln!(
        "{}: {SEEDS} files, {total_steps} steps; {repaired_files} files needed repairs, {changed_steps} steps dropped or trimmed",
        kind.name()
    );
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// What every file has: its name, the scheduler, 2–20 nodes, at least five observations
/// with one at the end, and no `place` step.
fn shape(doc: &Value, kind: SchedulerKind, seed: u64) -> Result<(), String> {
    if doc["name"] != scenario_name(kind, seed).as_str() {
        return Err(format!("name {}", doc["name"]));
    }
    let capacity = doc["scheduler"] == "capacity";
    if capacity != (kind == SchedulerKind::Capacity) {
        return Err(format!("scheduler {}", doc["scheduler"]));
    }
    let nodes = doc["nodes"].as_array().map_or(0, Vec::len);
    if !(2..=20).contains(&nodes) {
        return Err(format!("{nodes} nodes"));
    }
    let steps = doc["steps"].as_array().ok_or("no steps")?;
    let observes = steps.iter().filter(|s| s.get("observe").is_some()).count();
    if observes < 5 || steps.last().and_then(|s| s.get("observe")).is_none() {
        return Err(format!("{observes} observations, the last step {:?}", steps.last()));
    }
    if steps.iter().any(|s| s.get("place").is_some()) {
        return Err("a place step".into());
    }
    Ok(())
}

#[test]
fn fair_scenarios_run() {
    all_seeds_run(SchedulerKind::Fair);
}

#[test]
fn capacity_scenarios_run() {
    all_seeds_run(SchedulerKind::Capacity);
}

#[test]
fn same_seed_same_text() {
    for kind in [SchedulerKind::Fair, SchedulerKind::Capacity] {
        for seed in [0, 1, 42, 299, u64::MAX] {
            assert_eq!(generate(kind, seed), generate(kind, seed), "{} seed {seed}", kind.name());
        }
    }
}

/// Different seeds give different scenarios, not only different names.
#[test]
fn different_seeds_different_text() {
    for kind in [SchedulerKind::Fair, SchedulerKind::Capacity] {
        let mut seen = HashSet::new();
        for seed in 0..50 {
            let mut doc: Value = serde_json::from_str(&generate(kind, seed)).expect("JSON");
            let body = doc.as_object_mut().expect("an object");
            body.remove("name");
            body.remove("_comment");
            assert!(seen.insert(doc.to_string()), "{} seed {seed} repeats an earlier seed", kind.name());
        }
    }
}

#[test]
fn scheduler_names_parse() {
    assert_eq!("fair".parse::<SchedulerKind>(), Ok(SchedulerKind::Fair));
    assert_eq!("capacity".parse::<SchedulerKind>(), Ok(SchedulerKind::Capacity));
    assert!("fifo".parse::<SchedulerKind>().is_err());
}
