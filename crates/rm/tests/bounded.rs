//! What the RM keeps is bounded by configuration or by live work, whatever its history:
//! applications that came and went leave nothing in the scheduler, nodes that left are kept
//! up to `fairloom.resourcemanager.max-inactive-nodes`, and `/metrics` shows every
//! collection's size and the process's resident memory so an operator can watch them.

mod support;

use std::time::Duration;

use serde_json::json;
use support::{call, start, FAIR};

fn metric(text: &str, name: &str, label: &str) -> Option<f64> {
    text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let (key, value) = l.rsplit_once(' ')?;
        (key == format!("{name}{label}")).then(|| value.parse().ok()).flatten()
    })
}

fn entries(text: &str, collection: &str) -> Option<f64> {
    metric(text, "fairloom_rm_entries", &format!("{{collection=\"{collection}\"}}"))
}

fn table(text: &str, table: &str) -> Option<f64> {
    metric(text, "fairloom_scheduler_entries", &format!("{{table=\"{table}\"}}"))
}

#[test]
fn applications_that_came_and_went_leave_nothing_behind() {
    let site =
        [("yarn.resourcemanager.scheduler.class", FAIR), ("yarn.resourcemanager.max-completed-applications", "5")];
    let rm = start("bounded-apps", &site, None);
    let mut text = String::new();
    for _ in 0..8 {
        // Each to a queue of its own user's (created for it, removed once empty).
        let (s, id, body) = rm.submit("alice", "root.alice", json!({}));
        assert_eq!(s, 202, "{body}");
        let (s, body) = rm.put(&id, "state", "alice", json!({"state": "KILLED"}));
        assert!(s == 200 || s == 202, "{s} {body}");
        // The scheduler forgets it after its next update (every 500 ms), which the loop
        // publishes within 200 ms more: a scrape before that would show the last round's.
        std::thread::sleep(Duration::from_millis(800));
        text = rm.scrape_until("the application forgotten by the scheduler", |t| {
            table(t, "apps_held") == Some(0.0) && entries(t, "scheduler_apps_retired") == Some(0.0)
        });
    }
    assert_eq!(entries(&text, "apps_finished_kept"), Some(5.0), "max-completed-applications");
    assert_eq!(entries(&text, "apps_live"), Some(0.0));
    assert_eq!(entries(&text, "scheduler_apps"), Some(0.0));
    // Eight submissions, one slot: each application's slot was free for the next.
    assert!(table(&text, "app_slots").is_some_and(|n| n <= 2.0), "{text}");
    assert!(table(&text, "queue_slots").is_some_and(|n| n <= 4.0), "root, default, alice: {text}");
    assert_eq!(table(&text, "users"), Some(0.0));
    assert!(metric(&text, "process_resident_memory_bytes", "").is_some_and(|b| b > 1e6), "{text}");
    // The REST API still shows the five kept, as YARN would.
    let (s, apps) = call("GET", &rm.url("/ws/v1/cluster/apps", None), None);
    assert_eq!(s, 200);
    assert_eq!(apps["apps"]["app"].as_array().map(Vec::len), Some(5), "{apps}");
}

#[test]
fn nodes_that_left_are_kept_up_to_the_bound() {
    let site = [
        ("yarn.resourcemanager.scheduler.class", FAIR),
        ("yarn.nm.liveness-monitor.expiry-interval-ms", "1000"),
        ("fairloom.resourcemanager.max-inactive-nodes", "2"),
    ];
    let rm = start("bounded-nodes", &site, None);
    for i in 0..6 {
        rm.register_node(&format!("gone{i}:1"), 4096, 4);
    }
    // None heartbeats: each is LOST a second later; the RM keeps the two last silent.
    let text = rm.scrape_until("six nodes lost and four forgotten", |t| {
        entries(t, "nodes") == Some(2.0) && entries(t, "nodes_inactive") == Some(2.0)
    });
    assert_eq!(entries(&text, "node_changes"), Some(2.0), "a forgotten node's change goes with it");
    assert_eq!(table(&text, "node_slots"), Some(6.0), "the scheduler's slots wait for new nodes");
    // A node registering now takes a free slot.
    rm.register_node("new:1", 4096, 4);
    let text = rm.scrape_until("the new node", |t| entries(t, "nodes") == Some(3.0));
    assert_eq!(table(&text, "node_slots"), Some(6.0), "{text}");
    let (s, nodes) = call("GET", &rm.url("/ws/v1/cluster/nodes?states=LOST", None), None);
    assert_eq!(s, 200);
    assert_eq!(nodes["nodes"]["node"].as_array().map(Vec::len), Some(2), "{nodes}");
}

#[test]
fn a_finished_applications_exiting_am_ends_with_its_lost_node() {
    // Its node's scheduler slot goes to the next node that registers: no record may still
    // point at it.
    let site =
        [("yarn.resourcemanager.scheduler.class", FAIR), ("yarn.nm.liveness-monitor.expiry-interval-ms", "1500")];
    let rm = start("bounded-exiting-am", &site, None);
    rm.register_node("n1:1", 8192, 8);
    let (s, id, body) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202, "{body}");
    let am = rm.heartbeat_until_started("n1:1").pop().expect("the AM container is started");
    let am_id = am.id().unwrap().container.to_string();
    let (token, _) = rm.register_am(&id, &am);
    let (s, out) = rm.am_call(
        fairloom_protocol::paths::FINISH_AM,
        &token,
        json!({ "final_status": "SUCCEEDED", "diagnostics": "", "tracking_url": "" }),
    );
    assert_eq!(s, 200, "{out}");
    // The AM's container is the RM's until it exits (YARN's AM-finishing wait); its node
    // goes silent and is LOST first.
    // The application goes at the scheduler's next update, while the container still lives
    // (waited for together: on a loaded machine the update may come a little later).
    rm.scrape_until("the exiting AM's container without its application", |t| {
        entries(t, "containers_live") == Some(1.0) && entries(t, "apps_live") == Some(0.0)
    });
    let text = rm.scrape_until("the node lost and its AM's container ended", |t| {
        entries(t, "nodes_inactive") == Some(1.0) && entries(t, "containers_live") == Some(0.0)
    });
    assert_eq!(table(&text, "node_slots"), Some(1.0));
    // A node in the freed slot reporting that container finds no record of it to end.
    rm.register_node("n2:1", 8192, 8);
    let done = support::status(&am_id, fairloom_protocol::ContainerState::Complete, 0);
    rm.heartbeat("n2:1", 1, vec![done]);
    let text = rm.scrape_until("n2", |t| entries(t, "nodes") == Some(2.0));
    assert_eq!(table(&text, "node_slots"), Some(1.0), "n2 took n1's slot");
    assert_eq!(entries(&text, "containers_live"), Some(0.0));
    assert_eq!(rm.app(&id).1["app"]["finalStatus"], "SUCCEEDED");
}
