//! The reference scenarios (`scenarios/reference` and `scenarios/capacity-reference`, each
//! one of YARN's own Fair Scheduler or ProportionalCapacityPreemptionPolicy tests
//! transcribed) and fairloom's own scenarios must pass, with the auditor run after every step.

use std::path::{Path, PathBuf};

use fairloom_sim::scenario::{check, run_text};

fn files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

fn assert_all_pass(paths: &[PathBuf]) {
    let mut failures = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path).expect("readable scenario");
        let outcome = run_text(&text, true);
        if let Err(f) = check(&outcome) {
            failures.push(format!("{}: {}", path.display(), f.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{} of {} scenarios failed:\n{}", failures.len(), paths.len(), failures.join("\n"));
}

#[test]
fn reference_scenarios_pass() {
    let paths = files("reference");
    assert_eq!(paths.len(), 69, "the reference set has 69 files");
    assert_all_pass(&paths);
}

#[test]
fn capacity_reference_scenarios_pass() {
    let paths = files("capacity-reference");
    assert_eq!(paths.len(), 43, "the capacity reference set has 43 files");
    assert_all_pass(&paths);
}

#[test]
fn capacity_scenarios_pass() {
    let paths = files("capacity");
    assert!(!paths.is_empty());
    assert_all_pass(&paths);
}

#[test]
fn fairloom_scenarios_pass() {
    let paths = files("fairloom");
    assert!(!paths.is_empty());
    assert_all_pass(&paths);
}

#[test]
fn runs_are_deterministic() {
    let all = ["reference", "fairloom", "capacity-reference", "capacity"].map(files);
    for path in all.iter().flatten() {
        let text = std::fs::read_to_string(path).expect("readable scenario");
        let a = run_text(&text, false).to_json();
        let b = run_text(&text, false).to_json();
        assert_eq!(a, b, "{}", path.display());
    }
}
