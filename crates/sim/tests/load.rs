//! The load simulator on the project's own small SLS inputs and on the presets.

use std::path::Path;

use fairloom_config::Properties;
use fairloom_sim::load::{presets, simulate, sls, SimOptions, SimReport};

fn data(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)).unwrap()
}

fn opts(seconds: i64) -> SimOptions {
    SimOptions { duration_ms: seconds * 1000, audit_every_ms: 5_000, ..SimOptions::default() }
}

/// The figures that must repeat exactly (timings aside).
fn decisions(r: &SimReport) -> impl PartialEq + std::fmt::Debug + '_ {
    let minutes: Vec<u64> = r.per_minute.iter().map(|m| m.allocations).collect();
    (
        (r.allocations, r.completions, r.reservations),
        &r.samples,
        minutes,
        &r.apps,
        &r.ask_to_allocation_ms,
        &r.decisions_digest,
    )
}

#[test]
fn sls_trace_runs_every_job_to_the_end() {
    let w =
        sls::from_trace(&data("trace.json"), Some(&data("nodes.json")), &data("allocations.xml"), Properties::new())
            .unwrap();
    assert_eq!(w.nodes.len(), 4);
    let r = simulate(&w, opts(120), 1).unwrap();
    // 2 AMs + 5 tasks of etl_1 (4 maps, one entry with count 2, and a reduce) + 2 of dag_1
    assert_eq!(r.allocations, 9);
    assert_eq!(r.completions, 7);
    assert_eq!(r.apps.finished, 2);
    assert_eq!(r.audit_mismatches, 0);
}

#[test]
fn nodes_come_from_the_trace_without_a_nodes_file() {
    let w = sls::from_trace(&data("trace.json"), None, &data("allocations.xml"), Properties::new()).unwrap();
    let names: Vec<&str> = w.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["host1", "host2", "host3", "host4"]);
    assert_eq!(w.nodes[2].rack, "/rackB");
}

#[test]
fn synth_workload_runs_and_repeats_with_its_seed() {
    let w = sls::from_synth(&data("synth.json"), &data("allocations.xml"), Properties::new(), 1).unwrap();
    assert_eq!((w.apps.len(), w.nodes.len()), (6, 8));
    let a = simulate(&w, opts(120), 1).unwrap();
    assert_eq!(a.apps.finished, 6);
    assert_eq!(a.audit_mismatches, 0);
    let w2 = sls::from_synth(&data("synth.json"), &data("allocations.xml"), Properties::new(), 1).unwrap();
    let b = simulate(&w2, opts(120), 1).unwrap();
    assert_eq!(decisions(&a), decisions(&b));
}

#[test]
fn same_seed_same_allocations() {
    let shape = presets::shape("meituan-1k").unwrap();
    let a = simulate(&presets::generate(shape, 3), opts(50), 3).unwrap();
    let b = simulate(&presets::generate(shape, 3), opts(50), 3).unwrap();
    assert_eq!(decisions(&a), decisions(&b));
    assert!(a.allocations > 30_000, "{}", a.allocations);
    assert_eq!(a.audit_mismatches, 0);
    assert!(a.utilization_mean > 0.5);
    // a different seed gives a different queue tree (weights), so different shares
    let c = simulate(&presets::generate(shape, 4), opts(50), 4).unwrap();
    assert_ne!(decisions(&a), decisions(&c));
    assert_ne!(a.decisions_digest, c.decisions_digest);
}

#[test]
fn the_decisions_digest_follows_the_decisions() {
    let w =
        sls::from_trace(&data("trace.json"), Some(&data("nodes.json")), &data("allocations.xml"), Properties::new())
            .unwrap();
    let a = simulate(&w, opts(120), 1).unwrap();
    let digest = a.decisions_digest.clone();
    assert_eq!(digest.len(), 16);
    assert_eq!(simulate(&w, opts(120), 1).unwrap().decisions_digest, digest.as_str());
    // Stopping before the last allocation leaves it out.
    let early = simulate(&w, SimOptions { duration_ms: 1_000, ..opts(1) }, 1).unwrap();
    assert!(early.allocations < a.allocations);
    assert_ne!(early.decisions_digest, digest.as_str());
}

#[test]
fn every_preset_generates_its_shape() {
    for shape in presets::PRESETS {
        let w = presets::generate(shape, 1);
        assert_eq!(w.nodes.len(), shape.nodes, "{}", shape.name);
        assert_eq!(w.apps.len(), shape.apps, "{}", shape.name);
        let leaves = w.allocations.matches("<queue name=\"q").count();
        assert_eq!(leaves, shape.parents * shape.leaves_per_parent, "{}", shape.name);
        // demand exceeds supply
        let supply =
            shape.nodes as u64 * (shape.node.0 / shape.container.0).min(shape.node.1 / shape.container.1) as u64;
        assert!(
            shape.apps as u64 * shape.outstanding >= supply.min(shape.apps as u64 * shape.tasks_per_app),
            "{}",
            shape.name
        );
    }
}

#[test]
fn yunikorn_preset_places_every_ask() {
    let shape = presets::shape("yunikorn-10k").unwrap();
    let r = simulate(&presets::generate(shape, 1), opts(5), 1).unwrap();
    assert_eq!(r.allocations, 10_000);
    assert_eq!(r.audit_mismatches, 0);
}

#[test]
fn locality_aware_am_runs_more_tasks_node_local_than_a_naive_one() {
    use fairloom_sim::load::spark::{locality_preset, run, Strategy};
    // A smaller cut of the preset: 6 apps of 60 tasks (the nodes and queues as in the preset).
    let mut w = locality_preset(2);
    w.apps.truncate(6);
    for a in &mut w.apps {
        a.tasks.truncate(60);
        a.max_executors = 8;
    }
    let local = run(&w, Strategy::Locality, 400_000).unwrap();
    let naive = run(&w, Strategy::Naive, 400_000).unwrap();
    assert_eq!(local.tasks, 360);
    assert_eq!(naive.tasks, 360);
    assert_eq!((local.audit_mismatches, naive.audit_mismatches), (0, 0));
    let share = |f: &fairloom_sim::load::spark::LocalityFigures| {
        *f.by_level.get("node_local").unwrap_or(&0) as f64 / f.tasks as f64
    };
    assert!(share(&local) > share(&naive) + 0.3, "locality {:.2} vs naive {:.2}", share(&local), share(&naive));
}

#[test]
fn spark_traces_run_both_ams() {
    let text = data("spark-trace.json");
    assert!(sls::is_spark_trace(&text));
    assert!(!sls::is_spark_trace(&data("trace.json")));
    let w =
        sls::spark_from_trace(&text, Some(&data("nodes.json")), &data("allocations.xml"), Properties::new()).unwrap();
    assert_eq!((w.apps.len(), w.apps[0].tasks.len(), w.apps[0].cores_per_executor), (2, 12, 2));
    let r = fairloom_sim::load::spark::compare(&w, 120_000).unwrap();
    for run in &r.runs {
        assert_eq!(run.tasks, 16, "{run:?}");
        assert_eq!(run.audit_mismatches, 0);
    }
    let mixed = format!("{}\n{}", data("trace.json"), text);
    assert!(sls::from_trace(&mixed, None, "<allocations/>", Properties::new()).unwrap_err().contains("spark"));
}
