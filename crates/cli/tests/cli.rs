//! The `fairloom` binary end to end: exit codes and output contracts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fairloom(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairloom")).args(args).output().expect("the binary runs")
}

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim/tests/scenarios").join(name)
}

fn temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fairloom-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn scenario_run_prints_observations() {
    let path = scenario("reference/fs-min-alloc.json");
    let o = fairloom(&["scenario", "run", path.to_str().unwrap()]);
    assert!(o.status.success());
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["name"], "fs-min-alloc");
    assert_eq!(json["observations"][0]["queues"]["root.queueB"]["fair_share"]["memory-mb"], 2048);
}

#[test]
fn scenario_run_reports_config_errors_with_exit_0() {
    let path = scenario("reference/af-err-empty-queue-name.json");
    let o = fairloom(&["scenario", "run", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["error"]["kind"], "config");
    assert_eq!(json["error"]["line"], 1);
}

#[test]
fn scenario_run_reports_bad_documents_with_exit_2() {
    let bad = temp("bad.json", "{\"name\": \"x\",\n \"stepz\": []}");
    let o = fairloom(&["scenario", "run", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["error"]["kind"], "document");
    assert_eq!(json["error"]["line"], 2);
    let broken_step = temp("step.json", "{\"name\": \"x\", \"steps\": [{\"update\": {}}, {\"finish\": \"ghost\"}]}");
    let o = fairloom(&["scenario", "run", broken_step.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["error"]["kind"], "scenario");
    assert_eq!(json["error"]["step"], 1);
}

#[test]
fn scenario_check_counts_and_fails() {
    let good = scenario("reference/cfs-min-shares.json");
    let text = std::fs::read_to_string(&good)
        .unwrap()
        .replace("\"memory-mb\":18", "\"memory-mb\":19")
        .replace("\"memory-mb\": 18", "\"memory-mb\": 19");
    let wrong = temp("wrong.json", &text);
    let o = fairloom(&["scenario", "check", good.to_str().unwrap(), wrong.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("PASS cfs-min-shares"), "{out}");
    assert!(
        out.contains(
            "FAIL cfs-min-shares: observe[after-update].queues.root.s2.fair_share.memory-mb: expected 19, got 18"
        ),
        "{out}"
    );
    assert!(out.trim_end().ends_with("1 passed, 1 failed"), "{out}");
}

#[test]
fn shares_runs_on_the_built_in_example() {
    let o = fairloom(&["shares"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(out.contains("built-in example"));
    assert!(out.contains("etl"));
    let o =
        fairloom(&["shares", "--json", "--nodes", "4", "--node-resource", "8192 mb, 8 vcores", "--active", "research"]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let research = json["queues"].as_array().unwrap().iter().find(|q| q["name"] == "root.research").unwrap();
    // research alone is active but capped at 40% of the 32768 MB cluster
    assert_eq!(research["fair_share"]["memory-mb"], 13107);
    assert_eq!(research["max_share"]["memory-mb"], 13107);
}

#[test]
fn shares_explains_capacities() {
    let o = fairloom(&["shares", "--scheduler", "capacity", "--nodes", "10", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let find = |name: &str, partition: &str| {
        json["queues"].as_array().unwrap().iter().find(|q| q["name"] == name && q["partition"] == partition).cloned()
    };
    // etl: weight 2 of 3 under prod's 60% = 40% of 10 × 65536 MB.
    let etl = find("root.prod.etl", "default").unwrap();
    assert_eq!(etl["guarantee"]["resource"]["memory-mb"], 262144);
    assert!(etl["guarantee"]["why"].as_str().unwrap().contains("weight 2 of 3"), "{etl}");
    // research: maximum 40%, a lone user at user-limit-factor 2 × 30% is held by it.
    let research = find("root.research", "default").unwrap();
    assert_eq!(research["maximum"]["resource"]["memory-mb"], 262144);
    assert_eq!(research["user_limit"]["resource"]["memory-mb"], 262144);
    // ml owns the two gpu nodes; -1 lifts its user limit to its maximum.
    let ml = find("root.ml", "gpu").unwrap();
    assert_eq!(ml["guarantee"]["resource"]["memory-mb"], 131072);
    assert!(ml["user_limit"]["why"].as_str().unwrap().contains("-1"));
    // A given file is recognised as capacity-scheduler.xml, partitions from the flag.
    let file = temp(
        "cs.xml",
        "<configuration>\n<property><name>yarn.scheduler.capacity.root.queues</name><value>a,b</value></property>\n\
         <property><name>yarn.scheduler.capacity.root.a.capacity</name><value>[memory=4096,vcores=4]</value></property>\n\
         <property><name>yarn.scheduler.capacity.root.b.capacity</name><value>[memory=8192,vcores=8]</value></property>\n\
         </configuration>",
    );
    let o = fairloom(&["shares", file.to_str().unwrap(), "--nodes", "1", "--node-resource", "8192 mb, 8 vcores"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(out.contains("scaled down to 2730 MB"), "{out}");
    let o = fairloom(&["shares", file.to_str().unwrap(), "--partition", "gpu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--partition 'gpu'"));
}

#[test]
fn shares_reports_bad_files() {
    let bad =
        temp("bad.xml", "<allocations>\n<queue name=\"a\">\n<maxResources>lots</maxResources></queue></allocations>");
    let o = fairloom(&["shares", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.xml:3: maxResources:"), "{err}");
    let o = fairloom(&["shares", "--node-resource", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--node-resource"));
}

#[test]
fn preempt_dry_run_explains_without_acting() {
    // pre-sibling-leaves, stopped right after the starving app asks (before any update).
    let text = std::fs::read_to_string(scenario("reference/pre-sibling-leaves.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let steps = doc["steps"].as_array().unwrap().clone();
    let second_ask = steps.iter().enumerate().filter(|(_, s)| s.get("ask").is_some()).nth(1).unwrap().0;
    let mut kept: Vec<serde_json::Value> = steps[..=second_ask].to_vec();
    kept.push(serde_json::json!({"observe": "asked"}));
    doc["steps"] = serde_json::Value::Array(kept);
    let path = temp("dry.json", &doc.to_string());
    let o = fairloom(&["preempt", "--dry-run", path.to_str().unwrap(), "--at", "asked", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan["gate_open"], true);
    assert_eq!(plan["starved"][0]["app"], "starving");
    assert_eq!(plan["starved"][0]["minshare_starvation"]["memory-mb"], 4096);
    let victims = plan["would_preempt"].as_array().unwrap();
    assert_eq!(victims.len(), 4);
    assert!(victims.iter().all(|v| v["app"] == "greedy" && v["for"] == "starving" && v["am"] == false));
    // A text run says why in words.
    let o = fairloom(&["preempt", "--dry-run", path.to_str().unwrap()]);
    assert!(stdout(&o).contains("STARVED starving in root.preemptable.child-2"));
    // Unknown label and missing --dry-run are clear errors.
    let o = fairloom(&["preempt", "--dry-run", path.to_str().unwrap(), "--at", "nowhere"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nowhere"));
    let o = fairloom(&["preempt", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn preempt_dry_run_explains_a_host_request_served_elsewhere() {
    // 1 GB on n2 and 3 GB anywhere at one priority; n2 would cost an AM container.
    let path = scenario("fairloom/pre-host-request-spares-ams.json");
    let o = fairloom(&["preempt", "--dry-run", path.to_str().unwrap(), "--at", "asked", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let walked = plan["starved"][0]["requests"].as_array().expect("the requests walked");
    assert_eq!(walked.len(), 2, "{walked:?}");
    assert!(walked[0].as_str().unwrap().contains("<memory:1024, vCores:1> at node n2: served"), "{walked:?}");
    assert!(walked[1].as_str().unwrap().contains("at *: not served"), "{walked:?}");
    let victims = plan["would_preempt"].as_array().unwrap();
    assert_eq!(victims.len(), 1, "{victims:?}");
    let v = &victims[0];
    assert_eq!((v["app"].as_str(), v["node"].as_str(), v["am"].as_bool()), (Some("greedy1"), Some("n1"), Some(false)));
    assert!(v["request"].as_str().unwrap().ends_with("at node n2"), "{v}");
    let relaxed = v["relaxed"].as_str().expect("the relaxation is explained");
    assert!(relaxed.contains("on n2 it would take 1 AM container") && relaxed.contains("n1 takes 0"), "{relaxed}");
    let o = fairloom(&["preempt", "--dry-run", path.to_str().unwrap(), "--at", "asked"]);
    let text = stdout(&o);
    assert!(text.contains("for starving's request priority 1, 1 × <memory:1024, vCores:1> at node n2:"), "{text}");
    assert!(text.contains("(YARN-7655)"), "{text}");
}

#[test]
fn am_plan_reproduces_the_worked_example() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/am-state.json");
    let mut state: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(example).unwrap()).unwrap();
    state["pending"] = serde_json::json!([]);
    let path = temp("am.json", &state.to_string());
    let o = fairloom(&["am", "plan", "--input", path.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(plan["cancel"], serde_json::json!([]));
    let hosts: Vec<Vec<String>> = plan["add"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["hosts"].as_array().unwrap().iter().map(|h| h.as_str().unwrap().to_string()).collect())
        .collect();
    let mut want = vec![vec!["host1", "host2", "host3", "host4"]; 3];
    want.extend(vec![vec!["host1", "host2", "host3"]; 6]);
    want.extend(vec![vec!["host1", "host2"]; 3]);
    assert_eq!(hosts, want);
    let bad = temp("bad-am.json", "{\"target_executors\": 1,\n \"runing\": 2}");
    let o = fairloom(&["am", "plan", "--input", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 2"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn daemons_refuse_a_configuration_directory_that_is_not_there() {
    // Each would otherwise start on every default (and, for an RM, take ports a real one uses).
    let state = std::env::temp_dir().join(format!("fairloom-cli-noconf-{}", std::process::id()));
    let state = state.to_str().unwrap();
    let runs: [&[&str]; 3] = [&["rm"], &["nm", "--rm", "127.0.0.1:1", "--dir", state], &["up", "--dir", state]];
    for args in runs {
        let daemon = args[0];
        let o = fairloom(&[args, &["--conf", "/no/such/fairloom-conf"]].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{daemon}: {err}");
        assert!(err.contains("/no/such/fairloom-conf: no such configuration directory"), "{daemon}: {err}");
    }
    let _ = std::fs::remove_dir_all(state);
}

#[test]
fn a_port_in_use_is_named_once() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = std::env::temp_dir().join(format!("fairloom-cli-port-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let site = format!(
        "<configuration>\
         <property><name>yarn.resourcemanager.webapp.address</name><value>127.0.0.1:{port}</value></property>\
         <property><name>yarn.resourcemanager.resource-tracker.address</name><value>127.0.0.1:0</value></property>\
         <property><name>yarn.resourcemanager.scheduler.address</name><value>127.0.0.1:0</value></property>\
         </configuration>"
    );
    std::fs::write(dir.join("yarn-site.xml"), site).unwrap();
    let o = fairloom(&["rm", "--conf", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains(&format!("cannot listen on 127.0.0.1:{port} (webapp)")), "{err}");
    assert_eq!(err.matches("Address already in use").count(), 1, "{err}");
    drop(taken);
    let _ = std::fs::remove_dir_all(&dir);
}
