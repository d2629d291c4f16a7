//! What the daemons log: one line per event an operator needs (start-up, an application's
//! life, nodes coming and going, recovery, refusals with who and why), none per heartbeat.

mod service_support;

use std::time::Duration;

use service_support::*;

fn log(dir: &std::path::Path, role: &str) -> String {
    std::fs::read_to_string(dir.join(format!("fairloom-{role}.log"))).unwrap_or_default()
}

/// The lines of `text` that contain every one of `parts`.
fn lines_with<'a>(text: &'a str, parts: &[&str]) -> Vec<&'a str> {
    text.lines().filter(|l| parts.iter().all(|p| l.contains(p))).collect()
}

#[test]
fn the_daemons_log_what_an_operator_needs_and_no_heartbeat() {
    let dir = TempDir::new("logs");
    // ACLs on, and only alice may submit to or administer the queues (YARN's root ACLs are `*`).
    let allocations = r#"<allocations><queue name="root"><aclSubmitApps>alice</aclSubmitApps>
        <aclAdministerApps>alice</aclAdministerApps><queue name="default"/></queue></allocations>"#;
    let c = write_conf(&dir.0, &[("yarn.acl.enable", "true"), ("yarn.admin.acl", "root")], Some(allocations));
    let logs = dir.0.join("logs");
    let logs_arg = logs.to_str().unwrap();
    let mut rm = start_rm_with(&c, &["--log-dir", logs_arg]);
    let mut nm = start_nm_with(&c, &dir.0, "nm1", "8192 mb, 8 vcores", &["--log-dir", logs_arg]);
    wait_nodes(&c, 1);
    let mut s = shell(&c, &["--num-containers", "2", "--", "true"]);
    let id = submitted_id(&mut s);
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");

    // bob may not kill alice's application: refused, and the refusal says who and why.
    let url = format!("http://{}/ws/v1/cluster/apps/{id}/state?user.name=bob", c.web);
    let e = send("PUT", &url, r#"{"state":"KILLED"}"#).unwrap_err();
    assert_eq!(e.0, 403, "{e:?}");
    // Malformed input is refused with its reason too.
    let e = send("POST", &format!("http://{}/ws/v1/cluster/apps?user.name=carol", c.web), "{").unwrap_err();
    assert_eq!(e.0, 400, "{e:?}");

    // Let the node heartbeat (every 100 ms here) well past the number of lines logged.
    let heartbeats = eventually(Duration::from_secs(20), "60 heartbeats", || {
        let metrics = ureq::get(&format!("http://{}/metrics", c.web)).call().ok()?.into_string().ok()?;
        let n: f64 =
            metrics.lines().find_map(|l| l.strip_prefix("fairloom_rm_node_heartbeat_seconds_count ")?.parse().ok())?;
        (n >= 60.0).then_some(n)
    });

    // The node goes away: LOST after the expiry (3 s here).
    let node = node_id(&nm);
    nm.sigkill();
    eventually(Duration::from_secs(15), "the node to be LOST", || {
        let n = get(&format!("http://{}/ws/v1/cluster/nodes/{node}", c.web)).ok()?;
        (n["node"]["state"] == "LOST").then_some(())
    });
    // The RM restarts and says what it recovered.
    rm.sigkill();
    let _rm2 = start_rm_with(&c, &["--log-dir", logs_arg]);

    let rm_log = log(&logs, "resourcemanager");
    let nm_log = log(&logs, "nodemanager");
    let expect = |text: &str, parts: &[&str]| {
        assert!(!lines_with(text, parts).is_empty(), "no line with {parts:?} in:\n{text}");
    };
    expect(&rm_log, &["INFO", "ResourceManager started", "scheduler=\"fair\"", &c.web, "recovery=true"]);
    expect(&rm_log, &["INFO", &format!("NodeManager from node {node}"), "<memory:8192, vCores:8>"]);
    expect(&rm_log, &["INFO", &format!("Application {id} submitted by user alice to queue root.default")]);
    expect(&rm_log, &[&id, "State change from SUBMITTED to ACCEPTED"]);
    expect(&rm_log, &["LAUNCHED: AM container", &id[12..]]);
    expect(&rm_log, &["RUNNING: the AM registered", &id[12..]]);
    expect(&rm_log, &[&id, "State change to FINISHED with final status SUCCEEDED"]);
    expect(
        &rm_log,
        &[&format!("appId={id}"), "user=alice", "state=FINISHED", "finalStatus=SUCCEEDED", "memorySeconds="],
    );
    expect(&rm_log, &["WARN", "refused (403 Forbidden)", "Unauthorized attempt to kill", &id, "user=bob"]);
    expect(&rm_log, &["WARN", "refused (400 Bad Request)", "malformed application submission body", "user=carol"]);
    expect(&rm_log, &["WARN", &format!("Deactivating node {node}"), "LOST"]);
    expect(&rm_log, &["INFO", "Recovered 1 applications from the state store: 0 to resume, 1 finished"]);
    expect(&nm_log, &["INFO", "NodeManager started", &node]);
    expect(&nm_log, &["INFO", "Registered with the ResourceManager", &node]);
    expect(&nm_log, &["INFO", "Container container_", "started"]);
    expect(&nm_log, &["INFO", "Container container_", "exited with code 0"]);
    // One line per event, none per heartbeat: the whole logs are shorter than the heartbeats.
    for text in [&rm_log, &nm_log] {
        assert!((text.lines().count() as f64) < heartbeats / 2.0, "{heartbeats} heartbeats, log:\n{text}");
    }
}
