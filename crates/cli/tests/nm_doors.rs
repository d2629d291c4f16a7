//! The NodeManager's doors: starting, stopping and asking about containers takes the NM token
//! the RM gave the application's AM, and reaches that application's containers only. Two
//! users' AMs are played here, with the AMRM tokens their credentials files hold.

mod service_support;

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use service_support::*;

use fairloom_protocol::token::{Credentials, MasterKey, NmTokenId, Token, AMRM_TOKEN_KIND, KEY_BYTES};

/// POST JSON with `header`: (status, body).
fn post(url: &str, header: Option<(&str, &str)>, body: Value) -> (u16, Value) {
    let mut req = ureq::post(url);
    if let Some((k, v)) = header {
        req = req.set(k, v);
    }
    match req.send_json(body) {
        Ok(r) => (r.status(), r.into_json().unwrap_or(Value::Null)),
        Err(ureq::Error::Status(s, r)) => (s, r.into_json().unwrap_or(Value::Null)),
        Err(e) => panic!("POST {url}: {e}"),
    }
}

/// An application of `user` whose AM is played by this test.
struct Am {
    app: String,
    am_container: String,
    /// Its one task container, the container token to start it, and its node's NM token.
    task: String,
    task_token: Value,
    nm_token: String,
}

fn submit(c: &Cluster, user: &str) -> String {
    let new =
        send("POST", &format!("http://{}/ws/v1/cluster/apps/new-application?user.name={user}", c.web), "").unwrap();
    let id = new["application-id"].as_str().unwrap().to_string();
    let body = json!({ "application-id": id, "am-container-spec": { "commands": { "command": "sleep 60" } },
        "resource": { "memory": 1024, "vCores": 1 } });
    send("POST", &format!("http://{}/ws/v1/cluster/apps?user.name={user}", c.web), &body.to_string()).unwrap();
    id
}

/// Play the AM of `app` (whose AM container runs `sleep`): register with the AMRM token
/// its credentials file holds, get one container and its NM token, start it.
fn play_am(c: &Cluster, nm_dir: &Path, user: &str, app: &str, nm_http: &str) -> Am {
    let appcache = nm_dir.join("nm-local-dir/usercache").join(user).join("appcache").join(app);
    let (am_container, creds) = eventually(Duration::from_secs(20), "the AM's credentials file", || {
        let dir = std::fs::read_dir(&appcache).ok()?.flatten().next()?;
        let bytes = std::fs::read(dir.path().join("container_tokens")).ok()?;
        Some((dir.file_name().to_string_lossy().to_string(), Credentials::from_bytes(&bytes).ok()?))
    });
    let amrm = creds.token(AMRM_TOKEN_KIND).expect("an AMRM token").to_header();
    let am = |path: &str, body: Value| {
        post(&format!("http://{}{path}", c.sched), Some(("X-Fairloom-AMRM-Token", &amrm)), body)
    };
    let (s, r) = am("/fairloom/v1/am/register", json!({ "host": "h", "rpc_port": 0, "tracking_url": "" }));
    assert_eq!(s, 200, "{r}");
    let ask = json!([{ "priority": 1, "resource_name": "*", "capability": { "memory": 1024, "vCores": 1 }, "num_containers": 1 }]);
    let mut rid = 0;
    let mut asks = ask;
    let (task, task_token, nm_token) = eventually(Duration::from_secs(20), "a container and its NM token", || {
        let (s, r) = am(
            "/fairloom/v1/am/allocate",
            json!({ "response_id": rid, "asks": std::mem::replace(&mut asks, json!([])), "releases": [], "progress": 0.0 }),
        );
        assert_eq!(s, 200, "{r}");
        rid = r["response_id"].as_i64().unwrap();
        let c = r["allocated"].as_array()?.first()?.clone();
        let t: Token = serde_json::from_value(r["nm_tokens"][0]["token"].clone()).ok()?;
        Some((c["id"].as_str()?.to_string(), c["token"].clone(), t.to_header()))
    });
    let start = json!({ "containers": [{ "token": task_token, "launch": { "commands": ["sleep 60"], "environment": [], "local_resources": [] } }] });
    let (s, r) = post(
        &format!("http://{nm_http}/fairloom/v1/containers/start"),
        Some(("X-Fairloom-NM-Token", &nm_token)),
        start,
    );
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["started"], json!([task]), "{r}");
    Am { app: app.to_string(), am_container, task, task_token, nm_token }
}

fn states(nm_http: &str) -> Vec<(String, String)> {
    let cs = get(&format!("http://{nm_http}/ws/v1/node/containers")).unwrap();
    let mut out: Vec<(String, String)> = cs["containers"]["container"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|c| (c["id"].as_str().unwrap().to_string(), c["state"].as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn only_an_applications_own_nm_token_starts_stops_or_reads_its_containers() {
    let dir = TempDir::new("nmdoors");
    let c = write_conf(&dir.0, &[], None);
    let _rm = start_rm(&c);
    let nm = start_nm(&c, &dir.0, "nm1", "8192 mb, 8 vcores");
    wait_nodes(&c, 1);
    let nm_http = node_id(&nm);
    let alice_app = submit(&c, "alice");
    let bob_app = submit(&c, "bob");
    let alice = play_am(&c, &dir.0.join("nm1"), "alice", &alice_app, &nm_http);
    let bob = play_am(&c, &dir.0.join("nm1"), "bob", &bob_app, &nm_http);
    eventually(Duration::from_secs(20), "four containers running", || {
        (states(&nm_http).iter().filter(|(_, s)| s == "RUNNING").count() == 4).then_some(())
    });
    let before = states(&nm_http);
    let nm_url = |p: &str| format!("http://{nm_http}/fairloom/v1/containers/{p}");
    let stop = |token: Option<&str>, ids: Vec<&str>| {
        post(&nm_url("stop"), token.map(|t| ("X-Fairloom-NM-Token", t)), json!({ "container_ids": ids }))
    };

    // No token, garbage, a token made with a guessed key: refused outright.
    let attempt = format!("appattempt_{}_000001", alice.app.trim_start_matches("application_")).parse().unwrap();
    let guessed = MasterKey::new(1, vec![7; KEY_BYTES])
        .issue(&NmTokenId { attempt, node: nm_http.clone(), user: "alice".into(), key_id: 1 }, "");
    for t in [None, Some("garbage"), Some(guessed.to_header().as_str())] {
        let (s, r) = stop(t, vec![alice.task.as_str(), alice.am_container.as_str()]);
        assert_eq!(s, 403, "{t:?}: {r}");
        assert_eq!(r["RemoteException"]["exception"], "InvalidToken", "{r}");
    }
    // bob's own, valid token reaches none of alice's containers.
    let (s, r) = stop(Some(&bob.nm_token), vec![alice.task.as_str(), alice.am_container.as_str()]);
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["stopped"], json!([]), "{r}");
    let why = r["failed"][0][1].as_str().unwrap();
    assert!(why.ends_with(&format!("attempted to stop non-application container : {}", alice.task)), "{why}");
    let (s, r) =
        post(&nm_url("status"), Some(("X-Fairloom-NM-Token", &bob.nm_token)), json!({ "container_ids": [alice.task] }));
    assert_eq!(s, 200);
    assert_eq!(r["statuses"], json!([]), "{r}");
    assert!(
        r["failed"][0][1].as_str().unwrap().contains("attempted to get status for non-application container"),
        "{r}"
    );
    // Nor does it start alice's container with her container token, and alice cannot start
    // hers a second time.
    let again = json!({ "containers": [{ "token": alice.task_token, "launch": { "commands": ["echo pwned"], "environment": [], "local_resources": [] } }] });
    let (s, r) = post(&nm_url("start"), Some(("X-Fairloom-NM-Token", &bob.nm_token)), again.clone());
    assert_eq!(s, 403, "{r}");
    assert!(
        r["failed"][0][1]
            .as_str()
            .unwrap()
            .contains("was used for starting container with container token issued for application attempt"),
        "{r}"
    );
    let (s, r) = post(&nm_url("start"), Some(("X-Fairloom-NM-Token", &alice.nm_token)), again);
    assert_eq!(s, 403, "{r}");
    assert!(r["failed"][0][1].as_str().unwrap().contains("Attempt to relaunch the same container"), "{r}");
    // Nothing changed on the node, nor in the RM.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(states(&nm_http), before);
    for id in [&alice.app, &bob.app] {
        assert_eq!(app(&c, id)["state"], "RUNNING");
    }
    // alice's own token stops her container, and she reads its status.
    let (s, r) = stop(Some(&alice.nm_token), vec![alice.task.as_str()]);
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["stopped"], json!([alice.task]), "{r}");
    eventually(Duration::from_secs(10), "the stopped container's status", || {
        let (_, r) = post(
            &nm_url("status"),
            Some(("X-Fairloom-NM-Token", &alice.nm_token)),
            json!({ "container_ids": [alice.task] }),
        );
        (r["statuses"][0]["state"] == "COMPLETE" && r["statuses"][0]["exit_status"] == -105).then_some(())
    });
}
