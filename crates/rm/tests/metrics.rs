//! `/metrics`: YARN's QueueMetrics and ClusterMetrics in the Prometheus text format, the
//! same numbers the REST API shows, and the heartbeat latency histogram.

mod support;

use serde_json::json;
use support::{start, FAIR};

const ALLOCATIONS: &str = r#"<allocations>
  <queue name="a"><weight>1</weight></queue>
  <queue name="b"><weight>3</weight></queue>
</allocations>"#;

/// The value of `name` (with `queue` or `state` label `label`, when given).
fn metric(text: &str, name: &str, label: Option<&str>) -> Option<f64> {
    text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let (key, value) = l.rsplit_once(' ')?;
        let (metric, labels) = key.split_once('{').unwrap_or((key, ""));
        let wanted = label.is_none_or(|v| labels.contains(&format!("=\"{v}\"")));
        (metric == name && wanted).then(|| value.parse().ok()).flatten()
    })
}

#[test]
fn queue_and_cluster_metrics_follow_the_scheduler() {
    let rm = start("metrics", &[("yarn.resourcemanager.scheduler.class", FAIR)], Some(ALLOCATIONS));
    rm.register_node("n1:1", 8192, 8);
    let (s, id, body) = rm.submit("alice", "a", json!({}));
    assert_eq!(s, 202, "{body}");
    let started = rm.heartbeat_until_started("n1:1");
    assert_eq!(started.len(), 1, "the AM container is started on the node");

    let text = rm.scrape_until("the AM's allocation", |t| {
        metric(t, "fairloom_queue_allocated_mb", Some("root.a")) == Some(1024.0)
    });
    assert_eq!(metric(&text, "fairloom_queue_allocated_vcores", Some("root.a")), Some(1.0));
    assert_eq!(metric(&text, "fairloom_queue_allocated_mb", Some("root.b")), Some(0.0));
    assert_eq!(metric(&text, "fairloom_queue_apps_submitted_total", Some("root.a")), Some(1.0));
    assert_eq!(
        metric(&text, "fairloom_queue_apps_pending", Some("root.a")),
        Some(1.0),
        "ACCEPTED until the AM registers"
    );
    assert_eq!(metric(&text, "fairloom_queue_containers_allocated_total", Some("root.a")), Some(1.0));
    assert_eq!(metric(&text, "fairloom_queue_am_resource_usage_mb", Some("root.a")), Some(1024.0));
    assert_eq!(metric(&text, "fairloom_queue_available_mb", Some("root.a")), Some(8192.0 - 1024.0));
    assert_eq!(metric(&text, "fairloom_cluster_nodes", Some("active")), Some(1.0));
    assert_eq!(metric(&text, "fairloom_cluster_nodes", Some("lost")), Some(0.0));
    assert_eq!(metric(&text, "fairloom_cluster_apps", Some("accepted")), Some(1.0));
    assert!(metric(&text, "fairloom_rm_node_heartbeat_seconds_count", None).unwrap() >= 1.0, "{text}");
    assert_eq!(metric(&text, "fairloom_scheduler_containers_allocated_total", None), Some(1.0));
    assert_eq!(metric(&text, "fairloom_scheduler_audit_mismatches", None), Some(0.0));
    assert!(text.contains("fairloom_scheduler_phase_seconds_total{phase=\"assignment\"}"), "{text}");

    // Shares are the REST scheduler's numbers.
    let (_, sched) = support::call("GET", &rm.url("/ws/v1/cluster/scheduler", None), None);
    let queues = sched["scheduler"]["schedulerInfo"]["rootQueue"]["childQueues"]["queue"].as_array().unwrap().clone();
    for q in &queues {
        let name = q["queueName"].as_str().unwrap();
        let steady = q["steadyFairResources"]["memory"].as_f64().unwrap();
        let fair = q["fairResources"]["memory"].as_f64().unwrap();
        assert_eq!(metric(&text, "fairloom_queue_steady_fair_share_mb", Some(name)), Some(steady), "{name}");
        assert_eq!(metric(&text, "fairloom_queue_fair_share_mb", Some(name)), Some(fair), "{name}");
    }
    let steady = |n: &str| metric(&text, "fairloom_queue_steady_fair_share_mb", Some(n)).unwrap();
    // Weights 1 and 3 over 8192 MB (no root.default: YARN 3.x creates it only when an
    // application is placed there).
    assert_eq!((steady("root.a"), steady("root.b")), (2048.0, 6144.0));

    // A kill: counted as killed, its container released.
    let (s, body) = rm.put(&id, "state", "alice", json!({"state": "KILLED"}));
    assert_eq!(s, 200, "{body}");
    let text =
        rm.scrape_until("the kill", |t| metric(t, "fairloom_queue_apps_killed_total", Some("root.a")) == Some(1.0));
    assert_eq!(metric(&text, "fairloom_queue_containers_released_total", Some("root.a")), Some(1.0));
    assert_eq!(metric(&text, "fairloom_queue_apps_pending", Some("root.a")), Some(0.0));
}

const QUEUE_TOTALS: [&str; 6] = [
    "queue_apps_submitted",
    "queue_apps_completed",
    "queue_apps_killed",
    "queue_apps_failed",
    "queue_containers_allocated",
    "queue_containers_released",
];

#[test]
fn the_metrics_page_is_prometheus_text() {
    let rm = start("metrics-format", &[], None);
    let r = ureq::get(&rm.url("/metrics", None)).call().unwrap();
    assert!(r.header("content-type").unwrap().starts_with("application/openmetrics-text"));
    let text = r.into_string().unwrap();
    assert!(text.ends_with("# EOF\n"), "{text}");
    assert!(text.contains("# TYPE fairloom_queue_allocated_mb gauge"));
    assert!(text.contains("# TYPE fairloom_rm_node_heartbeat_seconds histogram"));
    // What counts since the RM started is a counter (rates and resets work in PromQL).
    for name in QUEUE_TOTALS {
        assert!(text.contains(&format!("# TYPE fairloom_{name} counter")), "{name}: {text}");
    }
}

#[test]
fn the_loops_cpu_time_is_counted() {
    let rm = start("metrics-loop-cpu", &[], None);
    let value = || {
        let text = ureq::get(&rm.url("/metrics", None)).call().unwrap().into_string().unwrap();
        assert!(text.contains("# TYPE fairloom_rm_loop_cpu_seconds counter"), "{text}");
        text.lines()
            .find_map(|l| l.strip_prefix("fairloom_rm_loop_cpu_seconds_total "))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // The loop adds its thread's CPU time at each publish (at least once a second).
    let mut seen = value();
    for _ in 0..60 {
        if seen > 0.0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        seen = value();
    }
    assert!(seen > 0.0, "the loop used some CPU by now");
}

#[test]
fn a_queue_name_cannot_forge_a_series() {
    // YARN lets a submission name a new queue with quotes, braces and backslashes (only
    // leading and trailing blanks are refused); the label value is escaped. Control
    // characters fairloom refuses in queue names outright.
    let rm = start("metrics-escape", &[("yarn.resourcemanager.scheduler.class", FAIR)], Some(ALLOCATIONS));
    let queue = r#"root.x\"} 1 fairloom_forged_total{a="b"} 99"#;
    let (s, _, body) = rm.submit("alice", queue, json!({}));
    assert_eq!(s, 202, "{body}");
    let text = rm.scrape_until("the new queue", |t| t.contains("root.x"));
    assert!(
        text.contains(
            r#"fairloom_queue_apps_submitted_total{queue="root.x\\\"} 1 fairloom_forged_total{a=\"b\"} 99"} 1"#
        ),
        "{text}"
    );
    for line in text.lines().filter(|l| l.contains("forged")) {
        let labels = line.split_once('{').map_or("", |(_, rest)| rest);
        assert!(labels.starts_with("queue=\"root.x"), "one label, escaped: {line}");
    }
    let (s, _, body) = rm.submit("alice", "root.y\nfairloom_forged_total 99", json!({}));
    assert_eq!(s, 400, "{body}");
    assert!(body.to_string().contains("control character"), "{body}");
}

#[test]
fn a_queue_that_goes_keeps_its_counts() {
    // A queue placement created goes once empty (at the next update); YARN's QueueMetrics stay
    // registered, so what happened in it stays counted. Before, an application that finished
    // just before its queue went was never seen as completed (a flaky service test found it).
    let rm = start("metrics-gone", &[("yarn.resourcemanager.scheduler.class", FAIR)], Some(ALLOCATIONS));
    rm.register_node("n1:1", 8192, 8);
    let (s, id, body) = rm.submit("alice", "root.dyn", json!({}));
    assert_eq!(s, 202, "{body}");
    rm.scrape_until("the dynamic queue", |t| metric(t, "fairloom_queue_allocated_mb", Some("root.dyn")).is_some());
    let (s, body) = rm.put(&id, "state", "alice", json!({"state": "KILLED"}));
    assert_eq!(s, 200, "{body}");
    let text = rm.scrape_until("the emptied queue to go", |t| {
        metric(t, "fairloom_queue_allocated_mb", Some("root.dyn")).is_none()
            && metric(t, "fairloom_queue_apps_killed_total", Some("root.dyn")).is_some()
    });
    assert_eq!(metric(&text, "fairloom_queue_apps_submitted_total", Some("root.dyn")), Some(1.0), "{text}");
    assert_eq!(metric(&text, "fairloom_queue_apps_killed_total", Some("root.dyn")), Some(1.0), "{text}");
}

#[test]
fn a_parent_queue_counts_its_subtree_and_series_come_sorted() {
    let rm = start("metrics-parent", &[("yarn.resourcemanager.scheduler.class", FAIR)], Some(ALLOCATIONS));
    rm.register_node("n1:1", 8192, 8);
    for (user, queue) in [("alice", "a"), ("bob", "b"), ("carol", "b")] {
        let (s, _, body) = rm.submit(user, queue, json!({}));
        assert_eq!(s, 202, "{body}");
    }
    let mut started = 0;
    for _ in 0..20 {
        started += rm.heartbeat_until_started("n1:1").len();
        if started >= 3 {
            break;
        }
    }
    assert_eq!(started, 3, "three AM containers");
    let text = rm.scrape_until("three AMs counted at root", |t| {
        metric(t, "fairloom_queue_containers_allocated_total", Some("root")) == Some(3.0)
    });
    // YARN's parent QueueMetrics add up their children's.
    for (name, a, b) in [
        ("fairloom_queue_apps_submitted_total", 1.0, 2.0),
        ("fairloom_queue_containers_allocated_total", 1.0, 2.0),
        ("fairloom_queue_apps_pending", 1.0, 2.0),
        ("fairloom_queue_allocated_mb", 1024.0, 2048.0),
    ] {
        assert_eq!(metric(&text, name, Some("root.a")), Some(a), "{name}");
        assert_eq!(metric(&text, name, Some("root.b")), Some(b), "{name}");
        assert_eq!(metric(&text, name, Some("root")), Some(a + b), "{name} at root: {text}");
    }
    // The scheduler DAO's allocatedContainers is QueueMetrics' too: a parent's is its subtree's.
    let mut root = serde_json::Value::Null;
    for _ in 0..50 {
        let (_, sched) = support::call("GET", &rm.url("/ws/v1/cluster/scheduler", None), None);
        root = sched["scheduler"]["schedulerInfo"]["rootQueue"].clone();
        if root["allocatedContainers"] == 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(root["allocatedContainers"], 3, "{root}");
    // Every gauge and counter family lists its series sorted, scrape after scrape.
    let families = |t: &str| -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        let mut sortable = false;
        for line in t.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                sortable = rest.ends_with(" gauge") || rest.ends_with(" counter");
                out.push(Vec::new());
            } else if !line.starts_with('#') && sortable {
                // The series without its value (values move between scrapes).
                out.last_mut().unwrap().push(line.rsplit_once(' ').unwrap().0.to_string());
            }
        }
        out
    };
    let first = families(&text);
    assert!(first.iter().any(|f| f.len() >= 3), "families with several series: {text}");
    for f in &first {
        let mut sorted = f.clone();
        sorted.sort();
        assert_eq!(f, &sorted);
    }
    let (_, again) = rm.text("/metrics");
    assert_eq!(families(&again), first);
}
