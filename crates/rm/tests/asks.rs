//! An AM's asks are bounded in request keys: the allocate that would pass the bound is
//! refused whole with YARN's InvalidResourceRequestException, the asks held stay as they were,
//! and the AM goes on with the same response id.

mod support;

use serde_json::{json, Value};
use support::{start, FAIR};

fn asks(priorities: impl Iterator<Item = i32>) -> Value {
    let list: Vec<Value> = priorities
        .map(|p| json!({ "priority": p, "resource_name": "*", "capability": { "memory": 1024, "vCores": 1 }, "num_containers": 1 }))
        .collect();
    Value::Array(list)
}

#[test]
fn an_am_cannot_hold_more_request_keys_than_the_bound() {
    let rm = start("asks", &[("yarn.resourcemanager.scheduler.class", FAIR)], None);
    rm.register_node("n1:1", 8192, 8);
    let (s, id, body) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202, "{body}");
    let am = rm.heartbeat_until_started("n1:1").pop().expect("the AM container is started");
    let (token, _) = rm.register_am(&id, &am);
    let allocate = |response_id: i64, asks: Value| {
        rm.am_call(
            "/fairloom/v1/am/allocate",
            &token,
            json!({ "response_id": response_id, "asks": asks, "releases": [], "progress": 0.0 }),
        )
    };
    let limit = fairloom_scheduler::MAX_REQUEST_KEYS as i32;
    // The AM's own request (priority 0) is one key already.
    let (s, out) = allocate(0, asks(1..limit));
    assert_eq!(s, 200, "{out}");
    let (s, e) = allocate(1, asks(limit..=limit + 1));
    assert_eq!(s, 400, "{e}");
    assert_eq!(e["RemoteException"]["exception"], "InvalidResourceRequestException", "{e}");
    let message = e["RemoteException"]["message"].as_str().unwrap();
    assert!(message.contains(&format!("limit is {limit}")), "{message}");
    // The refused call did not use up the response id; a key already held takes a new count.
    let mut two = asks(1..=1);
    two[0]["num_containers"] = json!(2);
    let (s, out) = allocate(1, two);
    assert_eq!(s, 200, "{out}");
    // (The default placement puts alice in root.alice.) Pending is the held keys' asks and nothing of the refused call: limit − 1 keys, one of
    // them for two containers, of 1 GiB each.
    let want = format!("fairloom_queue_pending_mb{{queue=\"root.alice\"}} {}", limit as i64 * 1024);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (_, text) = rm.text("/metrics");
        if text.lines().any(|l| l == want) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no '{want}' within 10 s in:\n{text}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
