//! Bad input gives a clear, located error and never a panic.

use fairloom_sim::scenario::{check, run_text, Failure};
use proptest::prelude::*;

const VALID: &str = r#"{
  "name": "small",
  "allocations": "<allocations><queue name=\"a\"/></allocations>",
  "nodes": [{"name": "n1", "resource": {"memory-mb": 4096, "vcores": 4}}],
  "steps": [
    {"submit": {"app": "app1", "queue": "a", "user": "u"}},
    {"ask": {"app": "app1", "requests": [{"priority": 1, "resource_name": "*", "capability": {"memory-mb": 1024, "vcores": 1}, "num_containers": 2}]}},
    {"update": {}},
    {"heartbeat": "n1"},
    {"observe": "one", "expect": {"apps": {"app1": {"live_containers": 1}}}}
  ]
}"#;

fn failure(text: &str) -> Failure {
    run_text(text, true).result.expect_err("the scenario should fail")
}

#[test]
fn the_valid_scenario_passes() {
    assert!(check(&run_text(VALID, true)).is_ok());
}

#[test]
fn malformed_json_has_line_and_column() {
    let text = VALID.replace("\"update\": {}", "\"update\": {");
    match failure(&text) {
        Failure::Document { line: Some(line), column: Some(_), .. } => assert!(line >= 7, "line {line}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_top_level_key_is_located() {
    let text = VALID.replace("\"nodes\":", "\"nodez\":");
    match failure(&text) {
        Failure::Document { message, line, .. } => {
            assert!(message.contains("nodez"), "{message}");
            assert_eq!(line, Some(4));
        }
        other => panic!("{other:?}"),
    }
    // comment keys are fine
    let text = VALID.replace("\"name\": \"small\",", "\"name\": \"small\", \"_why\": \"because\",");
    assert!(check(&run_text(&text, true)).is_ok());
}

#[test]
fn step_errors_name_the_step() {
    let cases = [
        ("\"user\": \"u\"", "\"usr\": \"u\"", 0, "usr"),
        ("{\"update\": {}}", "{\"update\": {}, \"heartbeat\": \"n1\"}", 2, "exactly one step key"),
        ("{\"heartbeat\": \"n1\"}", "{\"heartbeat\": \"n9\"}", 3, "unknown node 'n9'"),
        ("\"app\": \"app1\", \"requests\"", "\"app\": \"app7\", \"requests\"", 1, "unknown application 'app7'"),
        (
            "\"memory-mb\": 1024, \"vcores\": 1}, \"num",
            "\"memory\": 1024, \"gpus\": 1}, \"num",
            1,
            "unknown resource type",
        ),
        ("\"num_containers\": 2", "\"num_containers\": -2", 1, "negative container count"),
    ];
    for (from, to, step, needle) in cases {
        let text = VALID.replacen(from, to, 1);
        assert_ne!(text, VALID, "{from}");
        match failure(&text) {
            Failure::Scenario { step: s, message } => {
                assert_eq!(s, step, "{message}");
                assert!(message.contains(needle), "{message} should mention {needle}");
            }
            other => panic!("{to}: {other:?}"),
        }
    }
}

#[test]
fn configuration_errors_have_lines() {
    let text = VALID.replace("<queue name=\\\"a\\\"/>", "<queue name=\\\"a\\\">\\n<weight>x</weight></queue>");
    match failure(&text) {
        Failure::Config { message, line } => {
            assert_eq!(line, Some(2), "{message}");
            assert!(message.starts_with("allocations:2: weight:"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let text = VALID.replace(
        "\"nodes\":",
        "\"properties\": {\"yarn.scheduler.fair.assignmultiple\": \"sometimes\"},\n  \"nodes\":",
    );
    match failure(&text) {
        Failure::Config { message, .. } => assert!(message.contains("yarn.scheduler.fair.assignmultiple"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn expect_error_config_must_fail_to_load() {
    let text = VALID.replace("\"name\": \"small\",", "\"name\": \"small\", \"expect_error\": \"config\",");
    let verdict = check(&run_text(&text, true));
    assert!(verdict.unwrap_err()[0].contains("expected the configuration to fail"));
}

#[test]
fn a_wrong_expectation_fails_check() {
    let text = VALID.replace("\"live_containers\": 1", "\"live_containers\": 2");
    let failures = check(&run_text(&text, true)).unwrap_err();
    assert_eq!(failures, ["observe[one].apps.app1.live_containers: expected 2, got 1"]);
}

#[test]
fn unsupported_schedulers_say_so() {
    let text = VALID.replace("\"name\": \"small\",", "\"name\": \"small\", \"scheduler\": \"fifo\",");
    assert!(matches!(failure(&text), Failure::Unsupported { .. }));
}

#[test]
fn fair_scenarios_with_node_labels_say_so() {
    let text = VALID.replace("\"name\": \"small\",", "\"name\": \"small\", \"node_labels\": [{\"name\": \"x\"}],");
    assert!(matches!(failure(&text), Failure::Unsupported { .. }));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Any truncation or byte damage of a scenario gives an error or a run, never a panic.
    #[test]
    fn damaged_scenarios_never_panic(cut in 0usize..VALID.len(), at in 0usize..VALID.len(), byte in 32u8..127) {
        let _ = run_text(&VALID[..cut], true);
        let mut damaged = VALID.as_bytes().to_vec();
        damaged[at] = byte;
        if let Ok(text) = String::from_utf8(damaged) {
            let outcome = run_text(&text, true);
            let _ = check(&outcome);
            let _ = outcome.to_json();
        }
    }
}
