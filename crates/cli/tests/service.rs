//! The service end to end, as processes on loopback: `fairloom rm`, `fairloom nm` and
//! `fairloom shell` run real containers; the RM restarts without losing an application;
//! lost nodes, dead AMs and kills behave as YARN's; bad input gets YARN's errors.

mod service_support;

use std::time::Duration;

use serde_json::Value;
use service_support::*;

#[test]
fn a_shell_app_runs_its_command_in_every_container_and_succeeds() {
    let dir = TempDir::new("shell");
    let c = write_conf(&dir.0, &[], None);
    let _rm = start_rm(&c);
    let _nm1 = start_nm(&c, &dir.0, "nm1", "4096 mb, 4 vcores");
    let _nm2 = start_nm(&c, &dir.0, "nm2", "4096 mb, 4 vcores");
    wait_nodes(&c, 2);
    // A list with output on both streams: all of it lands in the log files (the redirection
    // once went to the last command of the list alone).
    let command = "echo hello from $CONTAINER_ID; echo to stderr >&2; echo done";
    let mut s = shell(&c, &["--num-containers", "4", "--", command]);
    let id = submitted_id(&mut s);
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");
    assert!(out.iter().any(|l| l.contains("FINISHED with final status SUCCEEDED")), "{out:?}");
    let a = app(&c, &id);
    assert_eq!(a["state"], "FINISHED");
    assert_eq!(a["finalStatus"], "SUCCEEDED");
    assert_eq!(a["diagnostics"], "", "DistributedShell unregisters a success with no message");
    assert_eq!(a["user"], "alice");
    assert_eq!(a["queue"], "root.default");
    // Every container wrote its own id and then "done" to its stdout under the node's log dir,
    // and a line to its stderr.
    let (mut said, mut errors) = (Vec::new(), Vec::new());
    for nm in ["nm1", "nm2"] {
        let logs = dir.0.join(nm).join("userlogs").join(&id);
        for entry in std::fs::read_dir(&logs).into_iter().flatten().flatten() {
            if entry.file_name().to_string_lossy().ends_with("_000001") {
                continue; // the AM's
            }
            if let Ok(text) = std::fs::read_to_string(entry.path().join("stdout")) {
                let lines: Vec<&str> = text.lines().collect();
                assert_eq!(lines.len(), 2, "{text:?}");
                assert_eq!(lines[1], "done");
                said.push(lines[0].to_string());
            }
            errors.push(std::fs::read_to_string(entry.path().join("stderr")).unwrap_or_default());
        }
    }
    said.sort();
    assert_eq!(said.len(), 4, "{said:?}");
    assert!(said.iter().all(|l| l.starts_with("hello from container_") && l.contains(&id[12..])), "{said:?}");
    assert_eq!(errors, vec!["to stderr\n"; 4]);
    let attempts = get(&format!("http://{}/ws/v1/cluster/apps/{id}/appattempts", c.web)).unwrap();
    assert_eq!(attempts["appAttempts"]["appAttempt"].as_array().unwrap().len(), 1);
}

#[test]
fn a_nodemanager_given_a_relative_directory_runs_containers() {
    let dir = TempDir::new("relative");
    let c = write_conf(&dir.0, &[], None);
    let _rm = start_rm(&c);
    // `--dir nm1` from the temp directory: the launch script's path must not depend on the
    // container's own working directory.
    let args = ["nm", "--rm", &c.tracker, "--resource", "4096 mb, 4 vcores", "--dir", "nm1", "--conf"];
    let mut args: Vec<&str> = args.to_vec();
    args.push(c.conf.to_str().unwrap());
    let mut nm = Proc::spawn_in(&dir.0, &args);
    nm.wait_line("fairloom NodeManager", Duration::from_secs(20));
    wait_nodes(&c, 1);
    let mut s = shell(&c, &["--num-containers", "1", "--", "echo relative"]);
    let _ = submitted_id(&mut s);
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");
    assert!(out.iter().any(|l| l.contains("FINISHED with final status SUCCEEDED")), "{out:?}");
}

#[test]
fn a_failing_command_fails_the_app_with_the_exit_codes() {
    let dir = TempDir::new("fail");
    let c = write_conf(&dir.0, &[], None);
    let _rm = start_rm(&c);
    let _nm = start_nm(&c, &dir.0, "nm1", "8192 mb, 8 vcores");
    wait_nodes(&c, 1);
    let mut s = shell(&c, &["--num-containers", "2", "--", "exit 3"]);
    let id = submitted_id(&mut s);
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(1), "{out:?}");
    let a = app(&c, &id);
    assert_eq!(a["state"], "FINISHED");
    assert_eq!(a["finalStatus"], "FAILED");
    let d = a["diagnostics"].as_str().unwrap();
    // DistributedShell's own line, then the exit codes.
    assert!(d.starts_with("Diagnostics., total=2, completed=2, allocated=2, failed=2; "), "{d}");
    assert!(d.contains("exited with 3"), "{d}");
    // The NodeManager's metrics: the AM and the two containers launched, the two failed.
    let http = get(&format!("http://{}/ws/v1/cluster/nodes", c.web)).unwrap()["nodes"]["node"][0]["nodeHTTPAddress"]
        .as_str()
        .unwrap()
        .to_string();
    let value = |text: &str, name: &str| -> f64 {
        text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok()).unwrap_or(-1.0)
    };
    eventually(Duration::from_secs(10), "the NM's container metrics", || {
        let text = ureq::get(&format!("http://{http}/metrics")).call().ok()?.into_string().ok()?;
        let ended = ["completed", "failed", "killed"]
            .iter()
            .map(|k| value(&text, &format!("fairloom_nm_containers_{k}_total")))
            .sum::<f64>();
        let ok = value(&text, "fairloom_nm_containers_launched_total") == 3.0
            && value(&text, "fairloom_nm_containers_failed_total") >= 2.0
            && ended == 3.0
            && value(&text, "fairloom_nm_containers_running") == 0.0;
        ok.then_some(())
    });
    eventually(Duration::from_secs(10), "the RM's queue metrics", || {
        let text = ureq::get(&format!("http://{}/metrics", c.web)).call().ok()?.into_string().ok()?;
        text.contains("fairloom_queue_apps_completed_total{queue=\"root.default\"} 1").then_some(())
    });
}

#[test]
fn an_rm_killed_mid_app_restarts_and_the_app_still_succeeds() {
    let dir = TempDir::new("restart");
    let c = write_conf(&dir.0, &[], None);
    let mut rm = start_rm(&c);
    let _nm1 = start_nm(&c, &dir.0, "nm1", "4096 mb, 4 vcores");
    let _nm2 = start_nm(&c, &dir.0, "nm2", "4096 mb, 4 vcores");
    wait_nodes(&c, 2);
    let mut s = shell(&c, &["--num-containers", "3", "--", "sleep 4; echo done"]);
    let id = submitted_id(&mut s);
    // Mid-run: the AM and all three containers are running.
    eventually(Duration::from_secs(30), "containers to run", || {
        (app(&c, &id)["runningContainers"].as_u64()? == 4).then_some(())
    });
    wait_running_on_nodes(&c, 4);
    rm.sigkill();
    let _rm2 = start_rm(&c);
    let recovered = app(&c, &id);
    assert_eq!(recovered["state"], "RUNNING", "the stored app is back at once: {recovered}");
    // The nodes re-register with their containers; the scheduler takes them back.
    eventually(Duration::from_secs(20), "usage restored", || {
        let a = app(&c, &id);
        (a["runningContainers"].as_u64()? >= 1 && a["allocatedMB"].as_i64()? >= 1024).then_some(())
    });
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");
    let a = app(&c, &id);
    assert_eq!(a["finalStatus"], "SUCCEEDED", "{a}");
    let attempts = get(&format!("http://{}/ws/v1/cluster/apps/{id}/appattempts", c.web)).unwrap();
    assert_eq!(attempts["appAttempts"]["appAttempt"].as_array().unwrap().len(), 1, "no second attempt: {attempts}");
    // No container started twice: each of the three wrote "done" exactly once.
    let mut done = 0;
    for nm in ["nm1", "nm2"] {
        let logs = dir.0.join(nm).join("userlogs").join(&id);
        for entry in std::fs::read_dir(&logs).into_iter().flatten().flatten() {
            done += std::fs::read_to_string(entry.path().join("stdout")).unwrap_or_default().matches("done").count();
        }
    }
    assert_eq!(done, 3);
}

#[test]
fn a_lost_node_is_reported_and_its_containers_are_asked_for_again() {
    let dir = TempDir::new("lost");
    let c = write_conf(&dir.0, &[], None);
    let _rm = start_rm(&c);
    // One small node for the AM and one container, one for the rest.
    let _nm1 = start_nm(&c, &dir.0, "nm1", "2048 mb, 2 vcores");
    wait_nodes(&c, 1);
    let mut nm2 = start_nm(&c, &dir.0, "nm2", "2048 mb, 2 vcores");
    wait_nodes(&c, 2);
    let mut s = shell(&c, &["--num-containers", "3", "--", "sleep 3"]);
    let id = submitted_id(&mut s);
    eventually(Duration::from_secs(30), "containers to run", || {
        (app(&c, &id)["runningContainers"].as_u64()? == 4).then_some(())
    });
    wait_running_on_nodes(&c, 4);
    let node_id = node_id(&nm2);
    nm2.sigkill();
    eventually(Duration::from_secs(15), "the node to be LOST", || {
        let n = get(&format!("http://{}/ws/v1/cluster/nodes/{node_id}", c.web)).ok()?;
        (n["node"]["state"] == "LOST").then_some(())
    });
    let lost = get(&format!("http://{}/ws/v1/cluster/nodes?states=LOST", c.web)).unwrap();
    assert_eq!(lost["nodes"]["node"].as_array().unwrap().len(), 1);
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "the lost containers ran again elsewhere: {out:?}");
    let m = get(&format!("http://{}/ws/v1/cluster/metrics", c.web)).unwrap();
    assert_eq!(m["clusterMetrics"]["lostNodes"], 1);
}

fn submit_raw(c: &Cluster, command: &str, extra: &str) -> String {
    let new = send("POST", &format!("http://{}/ws/v1/cluster/apps/new-application?user.name=bob", c.web), "").unwrap();
    let id = new["application-id"].as_str().unwrap().to_string();
    let body = format!(
        r#"{{"application-id":"{id}","application-name":"raw","am-container-spec":{{"commands":{{"command":"{command}"}}}},"resource":{{"memory":1024,"vCores":1}}{extra}}}"#
    );
    send("POST", &format!("http://{}/ws/v1/cluster/apps?user.name=bob", c.web), &body).unwrap();
    id
}

#[test]
fn a_dying_am_fails_its_attempt_and_the_app_fails_after_max_attempts() {
    let dir = TempDir::new("amfail");
    let c = write_conf(&dir.0, &[], None);
    let _rm = start_rm(&c);
    let _nm = start_nm(&c, &dir.0, "nm1", "8192 mb, 8 vcores");
    wait_nodes(&c, 1);
    let id = submit_raw(&c, "exit 7", "");
    let a = eventually(Duration::from_secs(30), "the app to fail", || {
        let a = app(&c, &id);
        (a["state"] == "FAILED").then_some(a)
    });
    assert_eq!(a["finalStatus"], "FAILED");
    let d = a["diagnostics"].as_str().unwrap();
    assert!(d.contains("failed 2 times") && d.contains("exitCode: 7"), "{d}");
    let attempts = get(&format!("http://{}/ws/v1/cluster/apps/{id}/appattempts", c.web)).unwrap();
    let list = attempts["appAttempts"]["appAttempt"].as_array().unwrap();
    assert_eq!(list.len(), 2, "yarn.resourcemanager.am.max-attempts is 2: {attempts}");
    assert!(list.iter().all(|a| a["appAttemptState"] == "FAILED"));
}

#[test]
fn a_silent_am_times_out_and_a_new_attempt_starts() {
    let dir = TempDir::new("amexpiry");
    let c = write_conf(&dir.0, &[("yarn.am.liveness-monitor.expiry-interval-ms", "1500")], None);
    let _rm = start_rm(&c);
    let _nm = start_nm(&c, &dir.0, "nm1", "8192 mb, 8 vcores");
    wait_nodes(&c, 1);
    // An AM that never registers nor heartbeats.
    let id = submit_raw(&c, "sleep 30", r#","max-app-attempts":2"#);
    let a = eventually(Duration::from_secs(30), "both attempts to time out", || {
        let a = app(&c, &id);
        (a["state"] == "FAILED").then_some(a)
    });
    assert!(a["diagnostics"].as_str().unwrap().contains("timed out"), "{a}");
    // The timed-out AMs' processes were killed on the node.
    let node = get(&format!("http://{}/ws/v1/cluster/nodes", c.web)).unwrap()["nodes"]["node"][0]["nodeHTTPAddress"]
        .as_str()
        .unwrap()
        .to_string();
    eventually(Duration::from_secs(10), "the AM containers to be killed", || {
        let cs = get(&format!("http://{node}/ws/v1/node/containers")).ok()?;
        let list = cs["containers"]["container"].as_array()?.clone();
        (list.len() == 2 && list.iter().all(|c| c["state"] == "COMPLETE" && c["exitCode"] == -106)).then_some(())
    });
}

#[test]
fn a_kill_over_rest_stops_every_container_of_the_app() {
    let dir = TempDir::new("kill");
    let c = write_conf(&dir.0, &[], None);
    let _rm = start_rm(&c);
    let _nm = start_nm(&c, &dir.0, "nm1", "8192 mb, 8 vcores");
    wait_nodes(&c, 1);
    let mut s = shell(&c, &["--num-containers", "2", "--", "sleep 60"]);
    let id = submitted_id(&mut s);
    let node = get(&format!("http://{}/ws/v1/cluster/nodes", c.web)).unwrap()["nodes"]["node"][0]["nodeHTTPAddress"]
        .as_str()
        .unwrap()
        .to_string();
    // Allocated is not started: wait until the node runs the AM and both containers.
    eventually(Duration::from_secs(30), "containers to run on the node", || {
        let cs = get(&format!("http://{node}/ws/v1/node/containers")).ok()?;
        let list = cs["containers"]["container"].as_array()?.clone();
        (list.len() == 3 && list.iter().all(|c| c["state"] == "RUNNING")).then_some(())
    });
    let url = format!("http://{}/ws/v1/cluster/apps/{id}/state", c.web);
    let e = send("PUT", &url, r#"{"state":"KILLED"}"#).unwrap_err();
    assert_eq!(e.0, 403, "a kill needs a user: {e:?}");
    let e = send("PUT", &format!("{url}?user.name=alice"), r#"{"state":"RUNNING"}"#).unwrap_err();
    assert_eq!(e.0, 400);
    assert_eq!(e.1["RemoteException"]["message"], "Only 'KILLED' is allowed as a target state.");
    let r = send("PUT", &format!("{url}?user.name=alice"), r#"{"state":"KILLED"}"#).unwrap();
    assert_eq!(r["state"], "KILLED");
    let (code, _) = s.finish(Duration::from_secs(30));
    assert_eq!(code, Some(1));
    eventually(Duration::from_secs(10), "every container to stop", || {
        let cs = get(&format!("http://{node}/ws/v1/node/containers")).ok()?;
        let list = cs["containers"]["container"].as_array()?.clone();
        (list.len() == 3 && list.iter().all(|c| c["state"] == "COMPLETE")).then_some(())
    });
    assert_eq!(app(&c, &id)["finalStatus"], "KILLED");
}

#[test]
fn bad_input_gets_yarns_errors_and_changes_nothing() {
    let dir = TempDir::new("bad");
    let alloc = r#"<allocations><queue name="only"/><queuePlacementPolicy><rule name="specified" create="false"/><rule name="reject"/></queuePlacementPolicy></allocations>"#;
    let c = write_conf(&dir.0, &[], Some(alloc));
    let _rm = start_rm(&c);
    let nm = start_nm(&c, &dir.0, "nm1", "8192 mb, 8 vcores");
    wait_nodes(&c, 1);
    let base = format!("http://{}/ws/v1/cluster", c.web);
    let exception = |e: (u16, Value)| (e.0, e.1["RemoteException"]["exception"].as_str().unwrap_or("").to_string());
    // Malformed JSON.
    let e = send("POST", &format!("{base}/apps?user.name=bob"), "{not json").unwrap_err();
    assert_eq!(exception(e), (400, "BadRequestException".to_string()));
    // Unknown ids.
    assert_eq!(
        exception(get(&format!("{base}/apps/application_1_9999")).unwrap_err()),
        (404, "NotFoundException".to_string())
    );
    assert_eq!(exception(get(&format!("{base}/apps/nonsense")).unwrap_err()), (400, "BadRequestException".to_string()));
    assert_eq!(exception(get(&format!("{base}/nodes/nohost:1")).unwrap_err()), (404, "NotFoundException".to_string()));
    // An AM larger than the maximum allocation.
    let new = send("POST", &format!("{base}/apps/new-application?user.name=bob"), "").unwrap();
    let id = new["application-id"].as_str().unwrap().to_string();
    assert_eq!(new["maximum-resource-capability"]["memory"], 8192);
    let body = format!(
        r#"{{"application-id":"{id}","queue":"only","am-container-spec":{{"commands":{{"command":"true"}}}},"resource":{{"memory":100000,"vCores":1}}}}"#
    );
    let e = send("POST", &format!("{base}/apps?user.name=bob"), &body).unwrap_err();
    assert_eq!(exception(e), (400, "InvalidResourceRequestException".to_string()));
    // A queue the placement policy rejects.
    let body = format!(
        r#"{{"application-id":"{id}","queue":"nosuch","am-container-spec":{{"commands":{{"command":"true"}}}}}}"#
    );
    let e = send("POST", &format!("{base}/apps?user.name=bob"), &body).unwrap_err();
    assert_eq!(e.0, 400);
    assert!(e.1["RemoteException"]["message"].as_str().unwrap().contains("rejected"), "{e:?}");
    // A container start without a valid token.
    let node =
        get(&format!("{base}/nodes")).unwrap()["nodes"]["node"][0]["nodeHTTPAddress"].as_str().unwrap().to_string();
    let forged = format!(
        r#"{{"containers":[{{"container_id":"container_1_0001_01_000002","user":"bob","resource":{{"memory":1024,"vCores":1}},"priority":0,"token":"00ff","launch":{{"commands":["touch {}/pwned"],"environment":[],"local_resources":[]}}}}]}}"#,
        dir.0.display()
    );
    let e = send("POST", &format!("http://{node}/fairloom/v1/containers/start"), &forged).unwrap_err();
    assert_eq!(e.0, 403, "{e:?}");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!dir.0.join("pwned").exists());
    // The RM still runs and still knows nothing of the refused submissions.
    let apps = get(&format!("{base}/apps")).unwrap();
    assert_eq!(apps["apps"], Value::Null);
    // The id is still free: a good submission to the right queue goes through.
    let body = format!(
        r#"{{"application-id":"{id}","queue":"only","am-container-spec":{{"commands":{{"command":"sleep 1"}}}}}}"#
    );
    send("POST", &format!("{base}/apps?user.name=bob"), &body).unwrap();
    assert_eq!(app(&c, &id)["queue"], "root.only");
    drop(nm);
}

#[test]
fn preemption_reaches_the_am_and_the_node_kills_with_preempted() {
    let dir = TempDir::new("preempt");
    let alloc = r#"<allocations>
      <queue name="a"/><queue name="b"/>
      <defaultFairSharePreemptionTimeout>1</defaultFairSharePreemptionTimeout>
      <defaultFairSharePreemptionThreshold>1.0</defaultFairSharePreemptionThreshold>
    </allocations>"#;
    let c = write_conf(
        &dir.0,
        &[("yarn.scheduler.fair.preemption", "true"), ("yarn.scheduler.fair.waitTimeBeforeKill", "1000")],
        Some(alloc),
    );
    let _rm = start_rm(&c);
    let _nm = start_nm(&c, &dir.0, "nm1", "4096 mb, 4 vcores");
    wait_nodes(&c, 1);
    // Queue a fills the node: its AM and three containers.
    let mut hog = shell(&c, &["--queue", "a", "--num-containers", "3", "--", "sleep 6"]);
    let hog_id = submitted_id(&mut hog);
    eventually(Duration::from_secs(30), "queue a to fill the node", || {
        (app(&c, &hog_id)["runningContainers"].as_u64()? == 4).then_some(())
    });
    wait_running_on_nodes(&c, 4);
    // Queue b's app is starved below its fair share: the scheduler takes from queue a.
    let mut small = shell(&c, &["--queue", "b", "--num-containers", "1", "--", "true"]);
    let small_id = submitted_id(&mut small);
    let (code, out) = small.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");
    assert_eq!(app(&c, &small_id)["queue"], "root.b");
    let hog_app = eventually(Duration::from_secs(30), "the preemption to be counted", || {
        let a = app(&c, &hog_id);
        (a["numNonAMContainerPreempted"].as_u64()? + a["numAMContainerPreempted"].as_u64()? >= 1).then_some(a)
    });
    assert!(hog_app["preemptedResourceMB"].as_i64().unwrap() >= 1024, "{hog_app}");
    let node = get(&format!("http://{}/ws/v1/cluster/nodes", c.web)).unwrap()["nodes"]["node"][0]["nodeHTTPAddress"]
        .as_str()
        .unwrap()
        .to_string();
    let cs = get(&format!("http://{node}/ws/v1/node/containers")).unwrap();
    let preempted = cs["containers"]["container"].as_array().unwrap().iter().filter(|c| c["exitCode"] == -102).count();
    assert!(preempted >= 1, "the node reports PREEMPTED (-102): {cs}");
    // The AM asked again for what it lost, and its app still succeeds.
    let (code, out) = hog.finish(Duration::from_secs(90));
    assert_eq!(code, Some(0), "{out:?}");
    // Its log shows the allocate responses: the preemption message, then the -102 completion.
    let logs = dir.0.join("nm1").join("userlogs").join(&hog_id);
    let am_log: String = std::fs::read_dir(&logs)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path().join("AppMaster.stderr")).unwrap_or_default())
        .collect();
    assert!(am_log.contains("preemption warning"), "{am_log}");
    assert!(am_log.contains("was lost (-102)"), "{am_log}");
}

#[test]
fn the_shell_is_refused_by_the_queues_acl_and_nothing_is_submitted() {
    let dir = TempDir::new("acl");
    let alloc = r#"<allocations><queue name="root"><aclSubmitApps> </aclSubmitApps><aclAdministerApps> </aclAdministerApps><queue name="eng"><aclSubmitApps>alice</aclSubmitApps></queue></queue></allocations>"#;
    let c = write_conf(&dir.0, &[("yarn.acl.enable", "true"), ("yarn.admin.acl", "admin")], Some(alloc));
    let _rm = start_rm(&c);
    let rm = format!("http://{}", c.web);
    // --timeout bounds the run should the refusal not come.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fairloom"))
        .args(["shell", "--rm", &rm, "--user", "mallory", "--queue", "eng", "--timeout", "20", "--", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("HTTP 403 ForbiddenException") && text.contains("User mallory does not have permission"),
        "{text}"
    );
    let apps = get(&format!("{rm}/ws/v1/cluster/apps")).unwrap();
    assert!(apps["apps"].is_null(), "{apps}");
}

#[test]
fn bench_rm_drives_the_service_through_both_protocols() {
    // A smoke run of `fairloom bench rm` at toy size: figures are for the README, not asserted
    // here beyond that the run did work and met no errors.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fairloom"))
        .args([
            "bench",
            "rm",
            "--nodes",
            "40",
            "--seconds",
            "3",
            "--apps",
            "4",
            "--containers",
            "20",
            "--task-ms",
            "500",
        ])
        .arg("--json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["errors"], 0, "{v}");
    assert!(v["heartbeats"].as_u64().unwrap() >= 40, "{v}");
    assert!(v["allocations"].as_f64().unwrap() > 0.0, "{v}");
    assert!(v["rest_reads"].as_u64().unwrap() > 0, "{v}");
    assert!(v["in_process_cps"].as_f64().unwrap() > 0.0, "{v}");
}

#[test]
fn rmadmin_refresh_nodes_decommissions_a_node_which_kills_its_containers_and_exits() {
    let dir = TempDir::new("decommission");
    let exclude = dir.0.join("exclude");
    std::fs::write(&exclude, "").unwrap();
    let c = write_conf(
        &dir.0,
        &[("yarn.resourcemanager.nodes.exclude-path", exclude.to_str().unwrap()), ("yarn.admin.acl", "ops")],
        None,
    );
    let _rm = start_rm(&c);
    let nm = start_nm(&c, &dir.0, "nm1", "8192 mb, 8 vcores");
    wait_nodes(&c, 1);
    let mut s = shell(&c, &["--num-containers", "1", "--", "sleep 60"]);
    let id = submitted_id(&mut s);
    wait_running_on_nodes(&c, 2);
    std::fs::write(&exclude, "127.0.0.1\n").unwrap();
    let rm = format!("http://{}", c.web);
    let refused = Proc::spawn(&["rmadmin", "refresh-nodes", "--rm", &rm, "--user", "alice"]);
    let (code, _) = refused.finish(Duration::from_secs(20));
    assert_eq!(code, Some(2), "alice is not in yarn.admin.acl");
    let admin = Proc::spawn(&["rmadmin", "refresh-nodes", "--rm", &rm, "--user", "ops"]);
    let (code, out) = admin.finish(Duration::from_secs(20));
    assert_eq!(code, Some(0), "{out:?}");
    let node = node_id(&nm);
    assert!(out.iter().any(|l| l.contains(&format!("decommissioned {node}"))), "{out:?}");
    // Its next heartbeat tells it to shut down: it kills its containers and exits 1.
    let (code, _) = nm.finish(Duration::from_secs(20));
    assert_eq!(code, Some(1));
    let m = get(&format!("http://{}/ws/v1/cluster/metrics", c.web)).unwrap();
    assert_eq!(m["clusterMetrics"]["decommissionedNodes"], 1, "{m}");
    let logs = dir.0.join("nm1/userlogs").join(&id);
    let exited = eventually(Duration::from_secs(10), "the node's containers to be gone", || {
        let state = std::fs::read_to_string(dir.0.join("nm1/nm-recovery/state.json")).ok()?;
        let v: Value = serde_json::from_str(&state).ok()?;
        let cs = v["containers"].as_array()?.clone();
        cs.iter().all(|c| c["state"] == "COMPLETE").then_some(cs)
    });
    // The AM container went with its node (ABORTED), unless the AM, told by the RM that its
    // attempt was over, stopped its task (KILLED_BY_APPMASTER) and exited first: whichever
    // of the node's heartbeat and the AM's allocate reaches the RM first.
    for c in &exited {
        let id = c["id"].as_str().unwrap();
        let ok = if id.ends_with("_000001") {
            let told = || {
                let stderr = std::fs::read_to_string(logs.join(id).join("AppMaster.stderr")).unwrap_or_default();
                stderr.contains("the RM says this attempt is over")
            };
            c["exit_status"] == -100 || (c["exit_status"] != 0 && told())
        } else {
            c["exit_status"] == -100 || c["exit_status"] == -105
        };
        assert!(ok, "{exited:?}");
    }
    assert!(logs.exists());
    let url = format!("http://{}/ws/v1/cluster/apps/{id}/state?user.name=alice", c.web);
    send("PUT", &url, r#"{"state":"KILLED"}"#).unwrap();
    let _ = s.finish(Duration::from_secs(30));
}

#[test]
fn clients_find_the_rm_in_the_hadoop_configuration() {
    // The RM listens on ports of its own (write_conf picks free ones): the clients find them
    // in yarn-site.xml, from --conf or $HADOOP_CONF_DIR, as Hadoop's clients do.
    let dir = TempDir::new("client-conf");
    let c = write_conf(&dir.0, &[], None);
    let _rm = start_rm(&c);
    let _nm = start_nm(&c, &dir.0, "nm1", "4096 mb, 4 vcores");
    wait_nodes(&c, 1);
    let conf = c.conf.to_str().unwrap();
    let args = ["shell", "--conf", conf, "--timeout", "90", "--user", "alice", "--num-containers", "1", "--", "true"];
    let mut s = Proc::spawn(&args);
    let id = submitted_id(&mut s);
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");
    let explain = |env: Option<&str>, extra: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_fairloom"));
        cmd.env_remove("HADOOP_CONF_DIR").env_remove("YARN_CONF_DIR").args(["explain", "app", &id, "--json"]);
        if let Some(d) = env {
            cmd.env("HADOOP_CONF_DIR", d);
        }
        cmd.args(extra).output().unwrap()
    };
    let o = explain(Some(conf), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["explain"]["id"], id.as_str());
    // --rm overrides the configuration (here, with nothing listening there).
    let o = explain(Some(conf), &["--rm", "http://127.0.0.1:9"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("http://127.0.0.1:9/ws/v1/cluster/apps/"));
    // A configuration directory that is not there is an error, not the default RM.
    let o = explain(Some("/no/such/hadoop-conf"), &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("no such configuration directory (from HADOOP_CONF_DIR)"), "{err}");
}

/// (status, body as text, Location) of a GET that does not follow redirects.
fn fetch(url: &str) -> (u16, String, Option<String>) {
    let agent = ureq::AgentBuilder::new().redirects(0).build();
    let r = match agent.get(url).call() {
        Ok(r) | Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{url}: {e}"),
    };
    let location = r.header("location").map(String::from);
    (r.status(), r.into_string().unwrap_or_default(), location)
}

#[test]
fn an_apps_links_answer_with_its_logs_and_pages() {
    let dir = TempDir::new("links");
    let c = write_conf(&dir.0, &[], None);
    let _rm = start_rm(&c);
    let _nm = start_nm(&c, &dir.0, "nm1", "4096 mb, 4 vcores");
    wait_nodes(&c, 1);
    let mut s = shell(&c, &["--num-containers", "1", "--", "echo the output; echo the error >&2"]);
    let id = submitted_id(&mut s);
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");
    let a = app(&c, &id);
    // amContainerLogs: the AM container's log page on its node, every file with its text.
    let logs = a["amContainerLogs"].as_str().unwrap().to_string();
    let (status, page, _) = fetch(&logs);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("AppMaster.stderr") && page.contains("registered"), "{page}");
    // The attempt's logsLink is the same page; a file of it is its text whole.
    let attempts = get(&format!("http://{}/ws/v1/cluster/apps/{id}/appattempts", c.web)).unwrap();
    let link = attempts["appAttempts"]["appAttempt"][0]["logsLink"].as_str().unwrap().to_string();
    assert_eq!(link, logs);
    let (status, text, _) = fetch(&format!("{link}/AppMaster.stderr"));
    assert_eq!(status, 200);
    assert!(text.contains("finishing: SUCCEEDED"), "{text}");
    // The worker container's own stdout and stderr, by the same address scheme.
    let worker = logs.replace("_000001/", "_000002/");
    assert_eq!(fetch(&format!("{worker}/stdout")).1, "the output\n");
    assert_eq!(fetch(&format!("{worker}/stderr")).1, "the error\n");
    // Another user's, a path out of the directory, a container this node never ran: refused.
    let (status, text, _) = fetch(&logs.replace("/alice", "/mallory"));
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("doesn't own requested log file"), "{text}");
    assert_eq!(fetch(&format!("{link}/..%2F..%2Fnm-state")).0, 400);
    let (status, text, _) = fetch(&logs.replace(&id[12..], "1_9999"));
    assert_eq!(status, 404, "{text}");
    // trackingUrl: YARN's /proxy/APP/; DistributedShell registers no page of its own, so it
    // leads to the RM's page of the application, which answers.
    let tracking = a["trackingUrl"].as_str().unwrap().to_string();
    assert_eq!(tracking, format!("http://{}/proxy/{id}/", c.web));
    let (status, _, location) = fetch(&tracking);
    assert_eq!((status, location.as_deref()), (302, Some(format!("/cluster/app/{id}").as_str())));
    let (status, page, _) = fetch(&format!("http://{}/cluster/app/{id}", c.web));
    assert_eq!(status, 200);
    assert!(page.contains(&id));
    assert_eq!(fetch(&format!("http://{}/proxy/application_1_0099/", c.web)).0, 404);
}

#[test]
fn with_acls_on_a_node_refuses_container_logs_it_cannot_guard() {
    // The NodeManager is not given the applications' ACLs: rather than show logs to anyone,
    // it says it cannot.
    let dir = TempDir::new("links-acl");
    let c = write_conf(&dir.0, &[("yarn.acl.enable", "true")], None);
    let _rm = start_rm(&c);
    let _nm = start_nm(&c, &dir.0, "nm1", "4096 mb, 4 vcores");
    wait_nodes(&c, 1);
    let mut s = shell(&c, &["--num-containers", "1", "--", "true"]);
    let id = submitted_id(&mut s);
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");
    let logs = app(&c, &id)["amContainerLogs"].as_str().unwrap().to_string();
    let (status, text, _) = fetch(&logs);
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("not supported: with yarn.acl.enable"), "{text}");
}
