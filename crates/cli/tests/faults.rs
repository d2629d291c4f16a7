//! Faults at the worst moment: `fairloom up` killed with SIGKILL mid-application (its
//! NodeManagers taking their containers back, or killing and reporting them), stopped with
//! Ctrl-C and started again, an RM restarted mid-run (usage and launch time kept), an AM
//! whose attempt ended elsewhere. No application is left hanging, no process is left behind.

mod service_support;

use std::time::{Duration, Instant};

use serde_json::Value;
use service_support::*;

/// What each of `pids` is (command line and state), for a failure's message.
fn describe(pids: &[i32]) -> Vec<String> {
    pids.iter()
        .map(|p| {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            format!("{p}: {} [{}]", String::from_utf8_lossy(&cmd).replace('\0', " "), stat)
        })
        .collect()
}

/// The pids of every process running for `app` under `dir` (its containers' environments name
/// both: another test's RM, started in the same millisecond, hands out the same ids).
fn container_pids(app: &str, dir: &std::path::Path) -> Vec<i32> {
    let dir = format!("{}/", dir.display());
    let needle = format!("CONTAINER_ID=container_{}_", app.trim_start_matches("application_"));
    let needle_epoch = format!("_{}_", app.trim_start_matches("application_"));
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(env) = std::fs::read(entry.path().join("environ")) else { continue };
        let here = String::from_utf8_lossy(&env).contains(&dir);
        let hit = here
            && env.split(|b| *b == 0).any(|kv| {
                let kv = String::from_utf8_lossy(kv);
                kv.starts_with(&needle) || (kv.starts_with("CONTAINER_ID=container_e") && kv.contains(&needle_epoch))
            });
        if hit {
            pids.push(pid);
        }
    }
    pids
}

fn up(c: &Cluster, state: &std::path::Path, nodes: &str) -> Proc {
    let mut p =
        Proc::spawn(&["up", "--nodes", nodes, "--conf", c.conf.to_str().unwrap(), "--dir", state.to_str().unwrap()]);
    p.wait_line("Ctrl-C stops everything.", Duration::from_secs(30));
    p
}

fn attempts(c: &Cluster, id: &str) -> Vec<Value> {
    get(&format!("http://{}/ws/v1/cluster/apps/{id}/appattempts", c.web))
        .ok()
        .and_then(|a| a["appAttempts"]["appAttempt"].as_array().cloned())
        .unwrap_or_default()
}

/// How many times the app's containers wrote "done" to their stdout, on any node.
fn dones(state: &std::path::Path, id: &str) -> usize {
    let mut n = 0;
    for node in std::fs::read_dir(state).into_iter().flatten().flatten() {
        let logs = node.path().join("userlogs").join(id);
        for c in std::fs::read_dir(&logs).into_iter().flatten().flatten() {
            n += std::fs::read_to_string(c.path().join("stdout")).unwrap_or_default().matches("done").count();
        }
    }
    n
}

#[test]
fn up_killed_mid_app_takes_its_containers_back_and_the_app_succeeds() {
    let dir = TempDir::new("upkill");
    let c = write_conf(&dir.0, &[], None);
    let state = dir.0.join("state");
    let mut first = up(&c, &state, "2");
    wait_nodes(&c, 2);
    let mut s = shell(&c, &["--num-containers", "3", "--", "sleep 6; echo done"]);
    let id = submitted_id(&mut s);
    wait_running_on_nodes(&c, 4);
    let before = container_pids(&id, &dir.0);
    assert!(before.len() >= 4, "the AM and three tasks run: {before:?}");
    first.sigkill();
    // The containers outlive their NodeManagers' process (each is a process group of its own).
    assert!(!container_pids(&id, &dir.0).is_empty(), "orphans, until a NodeManager takes them back");
    let _second = up(&c, &state, "2");
    let (code, out) = s.finish(Duration::from_secs(90));
    assert_eq!(code, Some(0), "{out:?}");
    let a = app(&c, &id);
    assert_eq!(a["finalStatus"], "SUCCEEDED", "{a}");
    assert_eq!(attempts(&c, &id).len(), 1, "the AM was taken back, not started again");
    assert_eq!(dones(&state, &id), 3, "every task ran once, to its end");
    eventually(Duration::from_secs(10), "no process of the app left", || {
        container_pids(&id, &dir.0).is_empty().then_some(())
    });
}

#[test]
fn up_killed_without_nm_recovery_kills_the_orphans_and_the_app_retries() {
    let dir = TempDir::new("upkill-norecovery");
    let c = write_conf(&dir.0, &[("yarn.nodemanager.recovery.enabled", "false")], None);
    let state = dir.0.join("state");
    let mut first = up(&c, &state, "2");
    wait_nodes(&c, 2);
    let mut s = shell(&c, &["--num-containers", "2", "--", "sleep 30"]);
    let id = submitted_id(&mut s);
    wait_running_on_nodes(&c, 3);
    let before = container_pids(&id, &dir.0);
    assert!(!before.is_empty());
    first.sigkill();
    let started = Instant::now();
    let _second = up(&c, &state, "2");
    // The new NodeManagers killed what the last run left before registering.
    let alive: Vec<i32> =
        before.iter().copied().filter(|p| std::path::Path::new(&format!("/proc/{p}")).exists()).collect();
    assert!(
        alive.iter().all(|p| !container_pids(&id, &dir.0).contains(p)),
        "first-run processes still alive: {alive:?}"
    );
    // The first attempt failed as its AM was killed (ABORTED: not counted) and a second runs,
    // long before any expiry would have noticed (4 s for AMs here).
    let list = eventually(Duration::from_secs(20), "a second attempt", || {
        let l = attempts(&c, &id);
        (l.len() == 2).then_some(l)
    });
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    assert_eq!(list[0]["appAttemptState"], "FAILED");
    assert!(list[0]["diagnosticsInfo"].as_str().unwrap().contains("-100"), "{list:?}");
    let url = format!("http://{}/ws/v1/cluster/apps/{id}/state?user.name=alice", c.web);
    send("PUT", &url, r#"{"state":"KILLED"}"#).unwrap();
    let _ = s.finish(Duration::from_secs(30));
    eventually(Duration::from_secs(10), "no process of the app left", || {
        container_pids(&id, &dir.0).is_empty().then_some(())
    });
}

#[test]
fn after_ctrl_c_and_a_restart_the_next_attempt_starts_at_once() {
    let dir = TempDir::new("upstop");
    // An AM expiry of a minute: the old way, the app would wait that long after the restart.
    let c = write_conf(&dir.0, &[("yarn.am.liveness-monitor.expiry-interval-ms", "60000")], None);
    let state = dir.0.join("state");
    let first = up(&c, &state, "1");
    wait_nodes(&c, 1);
    let mut s = shell(&c, &["--num-containers", "2", "--", "sleep 3; echo done"]);
    let id = submitted_id(&mut s);
    wait_running_on_nodes(&c, 3);
    // Ctrl-C: the NodeManager kills its containers and tells the RM, which fails the attempt
    // (not counted against the two allowed) before it stops.
    // SAFETY: signalling our own child.
    unsafe { libc_kill(first.child.id() as i32, 2) };
    let (code, out) = first.finish(Duration::from_secs(20));
    assert_eq!(code, Some(0), "{out:?}");
    // The client says at once that the RM went away, and waits for it.
    s.wait_line("is not answering", Duration::from_secs(5));
    let left = container_pids(&id, &dir.0);
    assert!(left.is_empty(), "Ctrl-C left no container running: {:?}", describe(&left));
    let restarted = Instant::now();
    let _second = up(&c, &state, "1");
    s.wait_line("answers again", Duration::from_secs(20));
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");
    assert!(restarted.elapsed() < Duration::from_secs(40), "no expiry waited for: {:?}", restarted.elapsed());
    let list = attempts(&c, &id);
    assert_eq!(list.len(), 2, "{list:?}");
    assert_eq!(list[0]["appAttemptState"], "FAILED");
    assert_eq!(app(&c, &id)["finalStatus"], "SUCCEEDED");
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

/// Run a 3-container job (each `sleep 4`) and give its final report; with `restart`, the RM is
/// killed with SIGKILL and started again while the containers run.
fn usage_of_a_run(name: &str, restart: bool) -> (Value, Value) {
    let dir = TempDir::new(name);
    let c = write_conf(&dir.0, &[], None);
    let mut rm = start_rm(&c);
    let _nm1 = start_nm(&c, &dir.0, "nm1", "4096 mb, 4 vcores");
    let _nm2 = start_nm(&c, &dir.0, "nm2", "4096 mb, 4 vcores");
    wait_nodes(&c, 2);
    let mut s = shell(&c, &["--num-containers", "3", "--", "sleep 4"]);
    let id = submitted_id(&mut s);
    wait_running_on_nodes(&c, 4);
    let during = app(&c, &id);
    let _rm2;
    if restart {
        std::thread::sleep(Duration::from_secs(2));
        rm.sigkill();
        std::thread::sleep(Duration::from_secs(2));
        _rm2 = start_rm(&c);
    }
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");
    (during, app(&c, &id))
}

#[test]
fn usage_and_launch_time_are_the_same_with_an_rm_restart_mid_run() {
    let (_, plain) = usage_of_a_run("usage-plain", false);
    let (during, restarted) = usage_of_a_run("usage-restart", true);
    let mb = |a: &Value| a["memorySeconds"].as_f64().unwrap();
    let (p, r) = (mb(&plain), mb(&restarted));
    // Three 4 s tasks of 1024 MB and the AM: some 16,000 MB·s either way; the restart's two
    // seconds of downtime count as the containers ran through them.
    assert!(p > 12_000.0, "{plain}");
    assert!((r - p).abs() / p < 0.25, "with a restart {r} MB·s, without {p}: {restarted}");
    assert!(restarted["vcoreSeconds"].as_f64().unwrap() > 10.0, "{restarted}");
    assert!(during["launchTime"].as_i64().unwrap() > 0);
    assert_eq!(restarted["launchTime"], during["launchTime"], "the launch time is the stored one");
}

#[test]
fn the_am_of_an_attempt_that_failed_elsewhere_is_told_so_and_exits() {
    let dir = TempDir::new("orphan-am");
    let c = write_conf(&dir.0, &[], None);
    let mut rm = start_rm(&c);
    // nm1 takes the AM only (half of it is the AM share); the 2 GB tasks go to nm2.
    let mut nm1 = start_nm(&c, &dir.0, "nm1", "2048 mb, 2 vcores");
    wait_nodes(&c, 1);
    let mut s = shell(&c, &["--num-containers", "2", "--memory", "2048", "--", "sleep 4; echo done"]);
    let id = submitted_id(&mut s);
    eventually(Duration::from_secs(20), "the AM to run", || (app(&c, &id)["state"] == "RUNNING").then_some(()));
    let _nm2 = start_nm(&c, &dir.0, "nm2", "8192 mb, 8 vcores");
    wait_running_on_nodes(&c, 3);
    let am_pids: Vec<i32> = container_pids(&id, &dir.0);
    // nm1 dies (its AM lives on, an orphan) and so does the RM; the restarted RM waits an NM
    // expiry (3 s) for nm1, then fails the attempt: the AM is lost with its node.
    nm1.sigkill();
    rm.sigkill();
    let _rm2 = start_rm(&c);
    let list = eventually(Duration::from_secs(20), "the first attempt to fail", || {
        let l = attempts(&c, &id);
        (l.first()?["appAttemptState"] == "FAILED").then_some(l)
    });
    assert!(list[0]["diagnosticsInfo"].as_str().unwrap().contains("did not come back"), "{list:?}");
    // The orphaned AM asks the RM, is told its attempt is over, and exits at once.
    let am_dir = dir.0.join("nm1/userlogs").join(&id);
    let said = eventually(Duration::from_secs(15), "the old AM to hear it is over", || {
        let entries = std::fs::read_dir(&am_dir).ok()?;
        for e in entries.flatten() {
            let text = std::fs::read_to_string(e.path().join("AppMaster.stderr")).unwrap_or_default();
            if text.contains("the RM says this attempt is over") {
                return Some(text);
            }
        }
        None
    });
    assert!(said.contains("ApplicationAttemptNotFoundException"), "{said}");
    eventually(Duration::from_secs(10), "the first run's processes to exit", || {
        am_pids.iter().all(|p| !std::path::Path::new(&format!("/proc/{p}")).exists()).then_some(())
    });
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "the second attempt finished the job: {out:?}");
}

#[test]
fn a_nodemanager_killed_and_restarted_with_recovery_keeps_its_containers() {
    let dir = TempDir::new("nmrestart");
    let c = write_conf(&dir.0, &[("yarn.nodemanager.recovery.enabled", "true")], None);
    let _rm = start_rm(&c);
    let mut nm = start_nm(&c, &dir.0, "nm1", "8192 mb, 8 vcores");
    wait_nodes(&c, 1);
    let node = node_id(&nm);
    let mut s = shell(&c, &["--num-containers", "2", "--", "sleep 5; echo done"]);
    let id = submitted_id(&mut s);
    wait_running_on_nodes(&c, 3);
    nm.sigkill();
    let nm2 = start_nm(&c, &dir.0, "nm1", "8192 mb, 8 vcores");
    assert_eq!(node_id(&nm2), node, "the same node again: it listens where it did");
    let (code, out) = s.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");
    assert_eq!(attempts(&c, &id).len(), 1, "the AM kept running through the node's restart");
    assert_eq!(dones(&dir.0, &id), 2, "each task ran once, to its end");
    let log = nm2.stderr().join("\n");
    assert!(log.contains("3 containers taken back"), "{log}");
}
