//! What readers see of containers and nodes: an application's containers are asked of the
//! event loop when read (not copied into every snapshot), nodes are rendered from plain rows.
//! Both must still say what YARN's REST API and the web UI say.

mod support;

use std::time::{Duration, Instant};

use fairloom_protocol::{ContainerState, ContainerStatus};
use serde_json::json;
use support::{call, start, status, Rm, FAIR};

/// A Fair Scheduler RM with one 8 GB node and alice's app submitted to `default`.
fn one_app(name: &str) -> (Rm, String) {
    let rm = start(name, &[("yarn.resourcemanager.scheduler.class", FAIR)], None);
    rm.register_node("n1:1", 8192, 8);
    let (s, id, body) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202, "{body}");
    (rm, id)
}

/// One allocate of the AM: what it is told has completed and been allocated.
fn allocate(rm: &Rm, token: &str, attempt: &str, response_id: i64, asks: serde_json::Value) -> serde_json::Value {
    let (s, out) = rm.am_call(
        "/fairloom/v1/am/allocate",
        token,
        json!({ "attempt_id": attempt, "response_id": response_id, "asks": asks, "releases": [], "progress": 0.0 }),
    );
    assert_eq!(s, 200, "{out}");
    out
}

#[test]
fn an_attempts_containers_and_its_node_are_shown_as_the_core_has_them() {
    let (rm, id) = one_app("views");
    let started: Vec<String> =
        rm.heartbeat_until_started("n1:1").into_iter().map(|c| c.id().unwrap().container.to_string()).collect();
    assert_eq!(started.len(), 1, "the AM container is started on the node");
    let am = &started[0];

    let base = format!("/ws/v1/cluster/apps/{id}/appattempts/1/containers");
    let (s, list) = call("GET", &rm.url(&base, None), None);
    assert_eq!(s, 200, "{list}");
    let containers = list["containers"]["container"].as_array().expect("one container listed");
    assert_eq!(containers.len(), 1, "{list}");
    let c = &containers[0];
    assert_eq!(c["containerId"], am.as_str());
    assert_eq!(c["nodeId"], "n1:1");
    assert_eq!(c["allocatedMB"], 1024);
    // The node has not reported it yet.
    assert_eq!(c["containerState"], "ALLOCATED");
    assert_eq!(c["logUrl"], format!("http://127.0.0.1:1/node/containerlogs/{am}/alice"));

    let (s, one) = call("GET", &rm.url(&format!("{base}/{am}"), None), None);
    assert_eq!(s, 200, "{one}");
    assert_eq!(one["container"]["containerId"], am.as_str());
    let (s, missing) = call("GET", &rm.url(&format!("{base}/container_1_0001_01_999999"), None), None);
    assert_eq!(s, 404, "{missing}");
    let (s, _) = call("GET", &rm.url(&format!("/ws/v1/cluster/apps/{id}/appattempts/2/containers"), None), None);
    assert_eq!(s, 404, "no second attempt");

    let (s, page) = rm.text(&format!("/cluster/app/{id}"));
    assert_eq!(s, 200);
    let table = page.split("id=\"containers\"").nth(1).expect("a containers table");
    assert!(table.contains(am.as_str()) && table.contains("ALLOCATED"), "{table}");
    // Its allocation is summed from the same live list, so the page never disagrees with itself.
    let overview = page.split("id=\"app-overview\"").nth(1).expect("an overview table");
    assert!(overview.contains("Allocated Resources</th><td>&lt;memory:1024, vCores:1&gt;"), "{overview}");

    // The node's view follows at the next publish: one container, its memory used.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (s, node) = call("GET", &rm.url("/ws/v1/cluster/nodes/n1:1", None), None);
        assert_eq!(s, 200, "{node}");
        let n = &node["node"];
        if n["numContainers"] == 1 {
            assert_eq!(n["usedMemoryMB"], 1024);
            assert_eq!(n["availMemoryMB"], 8192 - 1024);
            assert_eq!(n["state"], "RUNNING");
            assert_eq!(n["rack"], "/default-rack");
            assert_eq!(n["version"], "test");
            break;
        }
        assert!(Instant::now() < deadline, "the node never showed its container: {node}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (s, nodes) = call("GET", &rm.url("/ws/v1/cluster/nodes?states=LOST", None), None);
    assert_eq!(s, 200);
    assert_eq!(nodes["nodes"], serde_json::Value::Null, "no node is lost: {nodes}");
    let (s, page) = rm.text("/cluster/nodes");
    assert_eq!(s, 200);
    assert!(page.contains("data-node=\"n1:1\""), "the nodes page lists the node");
}

const CAPPED: &str = r#"<allocations>
  <queue name="capped"><maxResources>4096 mb, 4 vcores</maxResources></queue>
</allocations>"#;

#[test]
fn an_allocate_answers_the_queues_room_within_the_clusters() {
    let rm = start("headroom", &[("yarn.resourcemanager.scheduler.class", FAIR)], Some(CAPPED));
    rm.register_node("n1:1", 8192, 8);
    rm.register_node("n2:1", 2048, 2);
    let (s, id, body) = rm.submit("alice", "capped", json!({}));
    assert_eq!(s, 202, "{body}");
    let mut started = rm.heartbeat_until_started("n1:1");
    let am = started.pop().expect("the AM container is started on n1");
    let (token, attempt) = rm.register_am(&id, &am);
    let ask = json!({ "priority": 1, "resource_name": "*", "capability": { "memory": 1024, "vCores": 1 }, "num_containers": 1 });
    let out = allocate(&rm, &token, &attempt, 0, json!([ask]));
    // The queue may grow to 4096 MB and holds the AM's 1024: 3072 MB, 3 vcores of room, less
    // than the cluster's 9216 MB free.
    assert_eq!(out["headroom"], json!({ "memory": 3072, "vCores": 3 }), "{out}");
    assert_eq!(out["num_cluster_nodes"], 2);
    assert_eq!(out["updated_nodes"].as_array().map(Vec::len), Some(0), "nothing changed since register: {out}");
}

/// Poll the app until its state and diagnostics are `state` and `diagnostics` (the REST view
/// follows the loop's publish), at most 10 s.
fn await_app(rm: &Rm, id: &str, state: &str, diagnostics: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (s, a) = rm.app(id);
        assert_eq!(s, 200, "{a}");
        if a["app"]["state"] == state && a["app"]["diagnostics"] == diagnostics {
            return;
        }
        assert!(Instant::now() < deadline, "wanted {state} with {diagnostics:?}, still: {a}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_accepted_apps_diagnostics_follow_its_am_until_it_registers() {
    let (rm, id) = one_app("amstate");
    let am = rm.heartbeat_until_started("n1:1").pop().expect("the AM container is started");
    // YARN's AMState messages: assigned, then launched once the node reports it running.
    await_app(
        &rm,
        &id,
        "ACCEPTED",
        "Scheduler has assigned a container for AM, waiting for AM container to be launched",
    );
    let running = status(&am.id().unwrap().container.to_string(), ContainerState::Running, 0);
    rm.heartbeat_reporting("n1:1", 100, vec![running]);
    await_app(&rm, &id, "ACCEPTED", "AM container is launched, waiting for AM container to Register with RM");
    rm.register_am(&id, &am);
    // Registered: YARN clears the AM launch diagnostics.
    await_app(&rm, &id, "RUNNING", "");
}

#[test]
fn a_running_apps_resource_seconds_include_its_live_containers() {
    let (rm, id) = one_app("resource-seconds");
    assert!(!rm.heartbeat_until_started("n1:1").is_empty(), "the AM container is started");
    // Nothing has finished: all of it is the live AM's 1024 MB, 1 vcore so far.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, a) = rm.app(&id);
        let (memory, vcores) =
            (a["app"]["memorySeconds"].as_i64().unwrap(), a["app"]["vcoreSeconds"].as_i64().unwrap());
        if memory >= 2048 {
            assert!((memory / 1024 - vcores).abs() <= 1, "one vcore per 1024 MB: {memory} {vcores}");
            assert_eq!(a["app"]["resourceSecondsMap"]["entry"]["value"], memory.to_string());
            break;
        }
        assert!(Instant::now() < deadline, "memorySeconds never grew: {a}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_finished_container_a_node_registers_with_again_is_reported_to_the_am_once() {
    let rm = start("ended", &[("yarn.resourcemanager.scheduler.class", FAIR)], None);
    // n1 holds the AM and nothing else; the task goes to n2.
    rm.register_node("n1:1", 1024, 1);
    rm.register_node("n2:1", 8192, 8);
    let (s, id, body) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202, "{body}");
    let am = rm.heartbeat_until_started("n1:1").pop().expect("the AM container is started");
    let (token, attempt) = rm.register_am(&id, &am);
    let ask = json!([{ "priority": 1, "resource_name": "*", "capability": { "memory": 1024, "vCores": 1 }, "num_containers": 1 }]);
    allocate(&rm, &token, &attempt, 0, ask);
    let mut rid = 0;
    // The scheduler's update places the ask a tick after the allocate: heartbeat until it has.
    let mut task = None;
    for response_id in 1..50 {
        rm.heartbeat_reporting(
            "n1:1",
            response_id,
            vec![status(&am.id().unwrap().container.to_string(), ContainerState::Running, 1)],
        );
        rm.heartbeat_reporting("n2:1", response_id, Vec::new());
        rid += 1;
        let out = allocate(&rm, &token, &attempt, rid, json!([]));
        if let Some(c) = out["allocated"].as_array().and_then(|a| a.first()) {
            assert_eq!(c["node_id"], "n2:1", "{out}");
            task = c["id"].as_str().map(String::from);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let task = task.expect("the task container is allocated");
    let completed = |out: &serde_json::Value| -> Vec<String> {
        out["completed"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["container_id"].as_str())
            .map(String::from)
            .collect()
    };

    // n2 restarts: registering again ends what it ran (the AM hears of the task once) and
    // reports the task finished, which must not reach the AM a second time.
    rm.register_node_with("n2:1", 8192, 8, vec![status(&task, ContainerState::Complete, 1)]);
    let out = allocate(&rm, &token, &attempt, rid + 1, json!([]));
    assert_eq!(completed(&out), vec![task.clone()], "{out}");
    rm.heartbeat_reporting("n2:1", 1, Vec::new());
    let out = allocate(&rm, &token, &attempt, rid + 2, json!([]));
    assert_eq!(completed(&out), Vec::<String>::new(), "told once is enough: {out}");
    let (_, app) = rm.app(&id);
    assert_eq!(app["app"]["state"], "RUNNING", "{app}");
}

#[test]
fn an_am_that_unregistered_and_lingers_is_stopped_after_the_am_expiry() {
    let rm = start(
        "finishing",
        &[("yarn.resourcemanager.scheduler.class", FAIR), ("yarn.am.liveness-monitor.expiry-interval-ms", "1500")],
        None,
    );
    rm.register_node("n1:1", 8192, 8);
    let (s, id, body) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202, "{body}");
    let am = rm.heartbeat_until_started("n1:1").pop().expect("the AM container is started");
    let am_id = am.id().unwrap().container.to_string();
    let (token, _) = rm.register_am(&id, &am);
    let (s, out) = rm.am_call(
        "/fairloom/v1/am/finish",
        &token,
        json!({ "final_status": "SUCCEEDED", "diagnostics": "", "tracking_url": "" }),
    );
    assert_eq!(s, 200, "{out}");
    // The AM's process keeps running: the node keeps reporting it. It has the wait to exit.
    let finished = Instant::now();
    let mut rid = 100;
    loop {
        let out = rm.heartbeat("n1:1", rid, vec![status(&am_id, ContainerState::Running, 0)]);
        rid += 1;
        if let Some(k) = out.kill.iter().find(|k| k.container_id == am_id) {
            assert!(
                finished.elapsed() >= Duration::from_millis(1400),
                "stopped before the wait: {:?}",
                finished.elapsed()
            );
            assert_eq!(k.exit_status, fairloom_protocol::exit::KILLED_AFTER_APP_COMPLETION);
            assert!(k.diagnostics.contains("did not exit"), "{k:?}");
            break;
        }
        assert!(finished.elapsed() < Duration::from_secs(8), "the lingering AM was never stopped");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (_, a) = rm.app(&id);
    assert_eq!(a["app"]["finalStatus"], "SUCCEEDED", "{a}");
}

#[test]
fn a_node_is_told_an_end_was_noted_only_once_its_usage_is_stored() {
    // A store that keeps usage (recovery on), and one attempt only: no second AM accrues
    // usage while this is read.
    let rm = start(
        "deferred-ack",
        &[("yarn.resourcemanager.scheduler.class", FAIR), ("yarn.resourcemanager.recovery.enabled", "true")],
        None,
    );
    rm.register_node("n1:1", 8192, 8);
    let (s, id, body) = rm.submit("alice", "default", json!({ "max-app-attempts": 1 }));
    assert_eq!(s, 202, "{body}");
    let am = rm.heartbeat_until_started("n1:1").pop().expect("the AM container is started");
    let am_id = am.id().unwrap().container.to_string();
    let done = ContainerStatus { exit_status: 0, ..status(&am_id, ContainerState::Complete, 0) };
    let first = rm.heartbeat("n1:1", 200, vec![done.clone()]);
    assert!(first.acknowledged.is_empty(), "not before its usage is stored: {first:?}");
    // The node keeps reporting it; within a store batch it is acknowledged, counted once.
    let started = Instant::now();
    let mut rid = 201;
    loop {
        let out = rm.heartbeat("n1:1", rid, vec![done.clone()]);
        rid += 1;
        if out.acknowledged.contains(&am_id) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(3), "never acknowledged");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The view is the loop's last publish (every 200 ms): it may lag the acknowledgment.
    let a = loop {
        let (_, a) = rm.app(&id);
        if a["app"]["state"] == "FAILED" || started.elapsed() > Duration::from_secs(5) {
            break a;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(a["app"]["state"], "FAILED", "{a}");
    let memory = a["app"]["memorySeconds"].as_i64().unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let again = rm.heartbeat("n1:1", rid, vec![done]);
    assert!(again.acknowledged.contains(&am_id), "once stored, a repeat is acknowledged at once");
    let (_, a) = rm.app(&id);
    assert_eq!(a["app"]["memorySeconds"].as_i64().unwrap(), memory, "reported again, counted once");
}

#[test]
fn with_nothing_stored_an_end_is_acknowledged_at_once() {
    let (rm, _) = one_app("immediate-ack");
    let am = rm.heartbeat_until_started("n1:1").pop().expect("the AM container is started");
    let am_id = am.id().unwrap().container.to_string();
    let done = ContainerStatus { exit_status: 0, ..status(&am_id, ContainerState::Complete, 0) };
    let out = rm.heartbeat("n1:1", 200, vec![done]);
    assert!(out.acknowledged.contains(&am_id), "recovery off: nothing to wait for: {out:?}");
}

#[test]
fn the_proxy_sends_a_reader_to_the_page_the_am_registered() {
    let rm = start("proxy", &[("yarn.resourcemanager.scheduler.class", FAIR)], None);
    rm.register_node("n1:1", 8192, 8);
    let mut ids = Vec::new();
    for (user, url) in [("alice", "http://127.0.0.1:4040/jobs/"), ("bob", "javascript:alert(1)")] {
        let (s, id, body) = rm.submit(user, "default", json!({}));
        assert_eq!(s, 202, "{body}");
        let am = rm.heartbeat_until_started("n1:1").pop().expect("the AM container is started");
        let token = support::am_token(&am);
        let reg = json!({ "host": "h", "rpc_port": 0, "tracking_url": url });
        let (s, reg) = rm.am_call("/fairloom/v1/am/register", &token, reg);
        assert_eq!(s, 200, "{reg}");
        ids.push(id);
    }
    let agent = ureq::AgentBuilder::new().redirects(0).build();
    let location = |path: &str| {
        let r = match agent.get(&rm.url(path, None)).call() {
            Ok(r) | Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("{path}: {e}"),
        };
        (r.status(), r.header("location").map(String::from))
    };
    let mut waited = 0;
    // The registration shows at the next publish.
    while location(&format!("/proxy/{}/", ids[0])).1.as_deref() != Some("http://127.0.0.1:4040/jobs/") && waited < 50 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    }
    assert_eq!(location(&format!("/proxy/{}/", ids[0])), (302, Some("http://127.0.0.1:4040/jobs/".to_string())));
    assert_eq!(
        location(&format!("/proxy/{}/stages/stage?id=1", ids[0])).1.as_deref(),
        Some("http://127.0.0.1:4040/jobs/stages/stage?id=1"),
        "a path below the proxy stays below the AM's page"
    );
    // Only http and https: anything else leads to the RM's page of the application.
    assert_eq!(location(&format!("/proxy/{}", ids[1])), (302, Some(format!("/cluster/app/{}", ids[1]))));
    assert_eq!(location("/proxy/application_1_0042/").0, 404);
    assert_eq!(location("/proxy/not-an-app/").0, 400);
}
