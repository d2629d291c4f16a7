//! One secret per purpose, and the doors they guard: a node's keys sign no cookie; AMRM and
//! node keys roll as YARN rolls them; a heartbeat speaks for a node only with its
//! registration's session; which nodes may register, with what, and `refreshNodes`.

mod support;

use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use fairloom_protocol::node::NodeAction;
use fairloom_protocol::token::{to_hex, AmrmTokenId, Token, AMRM_TOKEN_KIND};
use fairloom_protocol::{ContainerState, ContainerStatus};
use support::{call, start, Rm, FAIR};

fn fair(name: &str, extra: &[(&str, &str)]) -> Rm {
    let mut site = vec![("yarn.resourcemanager.scheduler.class", FAIR)];
    site.extend_from_slice(extra);
    start(name, &site, None)
}

/// A `hadoop.auth` cookie for `user`, signed with `secret` as fairloom signs them.
fn cookie(user: &str, secret: &[u8]) -> String {
    let signed = format!("u={user}&p={user}&t=simple&e={}", i64::MAX / 2);
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap();
    mac.update(signed.as_bytes());
    format!("hadoop.auth=\"{signed}&s={}\"", to_hex(&mac.finalize().into_bytes()))
}

/// PUT the app's state to KILLED with only a cookie to say who asks.
fn kill_with_cookie(rm: &Rm, id: &str, cookie: &str) -> (u16, Value) {
    let url = format!("{}/ws/v1/cluster/apps/{id}/state", rm.base);
    match ureq::put(&url).set("cookie", cookie).send_json(json!({ "state": "KILLED" })) {
        Ok(r) => (r.status(), r.into_json().unwrap_or(Value::Null)),
        Err(ureq::Error::Status(s, r)) => (s, r.into_json().unwrap_or(Value::Null)),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn what_a_node_is_given_cannot_sign_a_cookie_or_an_amrm_token() {
    let rm = fair("node-keys", &[("yarn.acl.enable", "true"), ("yarn.admin.acl", "admin")]);
    let reg = rm.try_register_node("n1:1", 8192, 8, Vec::new());
    let (container_key, nm_key) = (reg.container_token_master_key.unwrap(), reg.nm_token_master_key.unwrap());
    assert_ne!(container_key.bytes(), nm_key.bytes(), "one key per purpose");
    let (s, id, body) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202, "{body}");
    // A node (any process that registered as one) has these keys: with them it forges an
    // admin's cookie, and an AMRM token for alice's attempt. Neither gets in.
    for key in [&container_key, &nm_key] {
        let (s, e) = kill_with_cookie(&rm, &id, &cookie("admin", key.bytes()));
        assert_eq!(s, 403, "{e}");
        assert_eq!(e["RemoteException"]["exception"], "AuthorizationException", "not even a user: {e}");
        let attempt = format!("appattempt_{}_000001", id.trim_start_matches("application_")).parse().unwrap();
        let forged = key.issue(&AmrmTokenId { attempt, key_id: key.key_id }, "");
        let (s, e) = rm.am_call(
            "/fairloom/v1/am/register",
            &forged.to_header(),
            json!({ "host": "h", "rpc_port": 0, "tracking_url": "" }),
        );
        assert_eq!(s, 403, "{e}");
        assert_eq!(e["RemoteException"]["exception"], "InvalidToken", "{e}");
    }
    assert_eq!(rm.app(&id).1["app"]["state"], "ACCEPTED", "nothing changed");
    // The cookie the RM itself gives out does work.
    let (s, _) = call("GET", &rm.url("/ws/v1/cluster", Some("admin")), None);
    assert_eq!(s, 200);
}

#[test]
fn the_cookie_secret_comes_from_its_file_and_outlives_a_restart() {
    let dir = std::env::temp_dir().join(format!("fairloom-secret-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("http-auth-signature-secret");
    std::fs::write(&file, "a secret only the RM reads\n").unwrap();
    let site = [("hadoop.http.authentication.signature.secret.file", file.to_str().unwrap())];
    let rm = fair("secret-file", &site);
    let (s, id, _) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202);
    // Signed with the file's secret: alice may kill her own app with it.
    let (s, e) = kill_with_cookie(&rm, &id, &cookie("alice", b"a secret only the RM reads"));
    assert_eq!(s, 200, "{e}");
    // Another RM with the same file (a restart) takes the same cookies; with any other
    // secret, nobody gets in.
    drop(rm);
    let rm2 = fair("secret-file-2", &site);
    let (s, id2, _) = rm2.submit("alice", "default", json!({}));
    assert_eq!(s, 202);
    let (s, _) = kill_with_cookie(&rm2, &id2, &cookie("alice", b"a guess"));
    assert_eq!(s, 403);
    let (s, e) = kill_with_cookie(&rm2, &id2, &cookie("alice", b"a secret only the RM reads"));
    assert_eq!(s, 200, "{e}");
    std::fs::write(&file, "").unwrap();
    let e =
        fairloom_rm::conf::RmConf::from_site(site.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(), &dir)
            .unwrap_err();
    assert!(e.to_string().contains("No secret in secret file"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_heartbeat_without_the_nodes_session_changes_nothing() {
    let rm = fair("session", &[]);
    rm.register_node("n1:1", 8192, 8);
    let (s, id, _) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202);
    let am = rm.heartbeat_until_started("n1:1").pop().expect("the AM container is started");
    let am_id = am.id().unwrap().container.to_string();
    rm.register_am(&id, &am);
    // Someone who knows the node's id (it is on /ws/v1/cluster/nodes) reports the AM dead.
    let dead = ContainerStatus {
        exit_status: 1,
        diagnostics: "forged".into(),
        ..support::status(&am_id, ContainerState::Complete, 0)
    };
    for session in ["", "00112233445566778899aabbccddeeff"] {
        let out = rm.heartbeat_as("n1:1", session, 1, vec![dead.clone()]);
        assert_eq!(out.action, NodeAction::Resync, "{out:?}");
        assert!(out.acknowledged.is_empty());
    }
    std::thread::sleep(Duration::from_millis(300));
    let (_, a) = rm.app(&id);
    assert_eq!(a["app"]["state"], "RUNNING", "the attempt did not fail: {a}");
    assert_eq!(a["app"]["runningContainers"], 1, "{a}");
}

#[test]
fn only_nodes_the_host_lists_allow_register_and_refresh_nodes_sends_others_away() {
    let dir = std::env::temp_dir().join(format!("fairloom-hosts-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (include, exclude) = (dir.join("include"), dir.join("exclude"));
    std::fs::write(&include, "127.0.0.1 127.0.0.3 # the cluster\nbad\n").unwrap();
    std::fs::write(&exclude, "bad\n").unwrap();
    let rm = fair(
        "hosts",
        &[
            ("yarn.resourcemanager.nodes.include-path", include.to_str().unwrap()),
            ("yarn.resourcemanager.nodes.exclude-path", exclude.to_str().unwrap()),
            ("yarn.admin.acl", "ops"),
        ],
    );
    for (node, listed) in [("bad:1", "bad"), ("stranger:1", "stranger")] {
        let out = rm.try_register_node(node, 8192, 8, Vec::new());
        assert_eq!(out.action, NodeAction::Shutdown);
        assert_eq!(
            out.diagnostics,
            format!("Disallowed NodeManager from  {listed}, Sending SHUTDOWN signal to the NodeManager.")
        );
        assert!(out.container_token_master_key.is_none() && out.nm_token_master_key.is_none(), "no keys for it");
    }
    // Each node registers from its own address (with host lists, they must).
    rm.register_node("127.0.0.1:1", 8192, 8);
    let tracker = rm.handle.as_ref().unwrap().tracker;
    let reg = format!("http://{tracker}/fairloom/v1/tracker/register");
    let (s, out) = post_from("127.0.0.3", &reg, &registration("127.0.0.3:1", json!([]), ""));
    assert_eq!((s, out["action"].as_str()), (200, Some("NORMAL")), "{out}");
    let (s, id, _) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202);
    let am = rm.heartbeat_until_started("127.0.0.1:1").pop().expect("the AM is placed on 127.0.0.1");
    rm.register_am(&id, &am);

    // 127.0.0.1's node leaves the cluster: an admin refreshes the lists.
    std::fs::write(&exclude, "bad 127.0.0.1\n").unwrap();
    let url = |user: &str| rm.url("/ws/v1/cluster/admin/refresh-nodes", Some(user));
    let (s, e) = call("POST", &url("alice"), None);
    assert_eq!(s, 403, "{e}");
    assert!(e["RemoteException"]["message"]
        .as_str()
        .unwrap()
        .contains("doesn't have permission to call 'refreshNodes'"));
    let (s, e) = call("POST", &format!("{}/ws/v1/cluster/admin/refresh-nodes", rm.base), None);
    assert_eq!(s, 403, "anonymous: {e}");
    let (s, out) = call("POST", &url("ops"), None);
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["decommissioned"], json!(["127.0.0.1:1"]));
    let hb = rm.heartbeat("127.0.0.1:1", 2, Vec::new());
    assert_eq!(hb.action, NodeAction::Shutdown);
    assert_eq!(hb.diagnostics, "Disallowed NodeManager nodeId: 127.0.0.1:1 hostname: 127.0.0.1");
    // Its AM ended as on a lost node: a framework failure, so a new attempt starts.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, n) = call("GET", &rm.url("/ws/v1/cluster/nodes/127.0.0.1:1", None), None);
        let (_, m) = call("GET", &rm.url("/ws/v1/cluster/metrics", None), None);
        if n["node"]["state"] == "DECOMMISSIONED" && m["clusterMetrics"]["decommissionedNodes"] == 1 {
            assert_eq!(m["clusterMetrics"]["activeNodes"], 1);
            break;
        }
        assert!(Instant::now() < deadline, "{n} {m}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (_, attempts) = call("GET", &rm.url(&format!("/ws/v1/cluster/apps/{id}/appattempts"), None), None);
    let list = attempts["appAttempts"]["appAttempt"].as_array().unwrap();
    assert_eq!(list[0]["appAttemptState"], "FAILED", "{attempts}");
    assert!(list[0]["diagnosticsInfo"].as_str().unwrap().contains("exitCode: -100"), "{attempts}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn nodes_below_the_minimum_or_beyond_any_real_size_are_sent_away() {
    let rm = fair("sizes", &[]);
    let out = rm.try_register_node("small:1", 512, 1, Vec::new());
    assert_eq!(out.action, NodeAction::Shutdown);
    assert_eq!(
        out.diagnostics,
        "NodeManager from  small doesn't satisfy minimum allocations, Sending SHUTDOWN signal to the NodeManager. Node capabilities are <memory:512, vCores:1>; minimums are 1024mb and 1 vcores"
    );
    for (mb, vc) in [(i64::MAX, 8), (1 << 40, 8), (8192, i64::MAX), (-5, 1), (8192, 0)] {
        let out = rm.try_register_node("odd:1", mb, vc, Vec::new());
        assert_eq!(out.action, NodeAction::Shutdown, "{mb} {vc}");
    }
    // The largest nodes allowed still add up exactly.
    let big = fairloom_rm::core::MAX_NODE_MEMORY_MB;
    for i in 0..3 {
        rm.register_node(&format!("big{i}:1"), big, 1 << 20);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, m) = call("GET", &rm.url("/ws/v1/cluster/metrics", None), None);
        if m["clusterMetrics"]["activeNodes"] == 3 {
            assert_eq!(m["clusterMetrics"]["totalMB"].as_i64(), Some(3 * big), "{m}");
            assert_eq!(m["clusterMetrics"]["totalVirtualCores"].as_i64(), Some(3 << 20), "{m}");
            break;
        }
        assert!(Instant::now() < deadline, "{m}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (s, _) = call("GET", &rm.url("/ws/v1/cluster/nodes/odd:1", None), None);
    assert_eq!(s, 404, "a refused node is not one");
}

#[test]
fn the_amrm_key_rolls_and_the_am_is_handed_its_new_token_before_the_old_one_lapses() {
    // An AM expiry of 1 s: a roll every 4 s, the next key active 1.5 s after it is made.
    let rm = fair(
        "amrm-roll",
        &[
            ("yarn.am.liveness-monitor.expiry-interval-ms", "1000"),
            ("yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs", "4"),
        ],
    );
    rm.register_node("n1:1", 8192, 8);
    let (s, id, _) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202);
    let am = rm.heartbeat_until_started("n1:1").pop().expect("the AM container is started");
    let (first, _) = rm.register_am(&id, &am);
    let old_key = Token::from_header(AMRM_TOKEN_KIND, &first).unwrap().identifier::<AmrmTokenId>().unwrap().key_id;
    let mut token = first.clone();
    let mut response_id = 0;
    let mut rolled = None;
    let deadline = Instant::now() + Duration::from_secs(10);
    while rolled.is_none() {
        assert!(Instant::now() < deadline, "no new AMRM token within 10 s");
        let (s, out) = rm.am_call(
            "/fairloom/v1/am/allocate",
            &token,
            json!({ "response_id": response_id, "asks": [], "releases": [], "progress": 0.0 }),
        );
        assert_eq!(s, 200, "{out}");
        response_id = out["response_id"].as_i64().unwrap();
        if !out["amrm_token"].is_null() {
            let t: Token = serde_json::from_value(out["amrm_token"].clone()).unwrap();
            let id: AmrmTokenId = t.identifier().unwrap();
            assert_eq!(id.key_id, old_key.wrapping_add(1), "the next key");
            rolled = Some(t.to_header());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    token = rolled.unwrap();
    // Once the next key is active (1.5 s) the old token is refused, the new one taken. The AM
    // keeps heartbeating meanwhile (its expiry is 1 s).
    for _ in 0..8 {
        let body = json!({ "response_id": response_id, "asks": [], "releases": [], "progress": 0.0 });
        let (s, out) = rm.am_call("/fairloom/v1/am/allocate", &token, body);
        assert_eq!(s, 200, "{out}");
        response_id = out["response_id"].as_i64().unwrap();
        std::thread::sleep(Duration::from_millis(250));
    }
    let body = json!({ "response_id": response_id, "asks": [], "releases": [], "progress": 0.0 });
    let (s, e) = rm.am_call("/fairloom/v1/am/allocate", &first, body.clone());
    assert_eq!(s, 403, "{e}");
    assert_eq!(e["RemoteException"]["exception"], "InvalidToken");
    let (s, out) = rm.am_call("/fairloom/v1/am/allocate", &token, body);
    assert_eq!(s, 200, "{out}");
    assert!(out["amrm_token"].is_null(), "nothing more to switch to: {out}");
}

#[test]
fn a_node_is_sent_the_next_keys_once_before_they_are_used() {
    // An NM expiry of 1 s: container and NM token keys roll every 4 s, 1.5 s of notice.
    let rm = fair(
        "node-roll",
        &[
            ("yarn.nm.liveness-monitor.expiry-interval-ms", "1000"),
            ("yarn.resourcemanager.container-tokens.master-key-rolling-interval-secs", "4"),
            ("yarn.resourcemanager.nm-tokens.master-key-rolling-interval-secs", "4"),
        ],
    );
    let reg = rm.try_register_node("n1:1", 8192, 8, Vec::new());
    let (c0, n0) = (reg.container_token_master_key.unwrap(), reg.nm_token_master_key.unwrap());
    let session = rm.sessions.lock().unwrap()["n1:1"].clone();
    let tracker = rm.handle.as_ref().unwrap().tracker;
    let beat = |rid: u64, known_c: i32, known_n: i32| -> Value {
        let body = json!({ "node_id": "n1:1", "session": session, "response_id": rid, "containers": [],
            "healthy": true, "health_report": "", "last_known_container_token_key_id": known_c,
            "last_known_nm_token_key_id": known_n });
        let (s, out) = call("POST", &format!("http://{tracker}/fairloom/v1/tracker/heartbeat"), Some(body));
        assert_eq!(s, 200, "{out}");
        out
    };
    let out = beat(1, c0.key_id, n0.key_id);
    assert!(out["container_token_master_key"].is_null() && out["nm_token_master_key"].is_null(), "{out}");
    // Within 4 s plus a tick, the next keys come; a node that has them is not sent them again.
    let deadline = Instant::now() + Duration::from_secs(8);
    let (mut rid, mut next) = (2, None);
    while next.is_none() {
        assert!(Instant::now() < deadline, "no next keys");
        let out = beat(rid, c0.key_id, n0.key_id);
        rid += 1;
        if !out["container_token_master_key"].is_null() {
            assert!(!out["nm_token_master_key"].is_null(), "{out}");
            next = Some((
                out["container_token_master_key"]["key_id"].as_i64().unwrap() as i32,
                out["nm_token_master_key"]["key_id"].as_i64().unwrap() as i32,
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let (c1, n1) = next.unwrap();
    assert_eq!((c1, n1), (c0.key_id.wrapping_add(1), n0.key_id.wrapping_add(1)));
    let out = beat(rid, c1, n1);
    assert!(out["container_token_master_key"].is_null() && out["nm_token_master_key"].is_null(), "{out}");
}

/// POST `body` to `url` (http://127.0.0.1:PORT/PATH) from the local address `from`: another
/// host, as far as the RM can tell.
fn post_from(from: &str, url: &str, body: &Value) -> (u16, Value) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_at(rest.find('/').unwrap());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let stream = rt.block_on(async {
        let s = tokio::net::TcpSocket::new_v4().unwrap();
        s.bind(format!("{from}:0").parse().unwrap()).unwrap();
        s.connect(addr.parse().unwrap()).await.unwrap().into_std().unwrap()
    });
    stream.set_nonblocking(false).unwrap();
    let mut stream = stream;
    let text = body.to_string();
    write!(stream, "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}", text.len()).unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    let status = out.split_whitespace().nth(1).unwrap().parse().unwrap();
    let json =
        out.split_once("\r\n\r\n").map(|(_, b)| serde_json::from_str(b).unwrap_or(Value::Null)).unwrap_or(Value::Null);
    (status, json)
}

fn registration(node: &str, containers: Value, previous_session: &str) -> Value {
    json!({ "node_id": node, "http_address": "127.0.0.1:1", "rack": null, "resource": { "memory": 8192, "vCores": 8 },
        "containers": containers, "version": "x", "previous_session": previous_session })
}

#[test]
fn a_node_speaks_only_for_its_own_containers_and_only_plausible_ones() {
    let rm = fair("foreign-reports", &[]);
    rm.register_node("127.0.0.1:11", 8192, 8);
    let (s, id, _) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202);
    let am = rm.heartbeat_until_started("127.0.0.1:11").pop().expect("the AM is placed");
    let am_id = am.id().unwrap().container.to_string();
    rm.register_am(&id, &am);
    // Another registered node reports alice's AM ended: not taken.
    rm.register_node("127.0.0.1:12", 8192, 8);
    let dead = json!([{ "container_id": am_id, "state": "COMPLETE", "exit_status": 1, "diagnostics": "forged" }]);
    let out = rm.heartbeat("127.0.0.1:12", 1, serde_json::from_value(dead.clone()).unwrap());
    assert!(!out.kill.iter().any(|k| k.container_id == am_id), "{out:?}");
    // Nor from a node registering with it.
    let tracker = rm.handle.as_ref().unwrap().tracker;
    let reg = format!("http://{tracker}/fairloom/v1/tracker/register");
    let (s, out) = call("POST", &reg, Some(registration("127.0.0.1:13", dead, "")));
    assert_eq!(s, 200, "{out}");
    // A phantom container of alice's live attempt, of a size no container has, or made in the
    // future: not taken (it would have made the cluster's numbers absurd and stalled it).
    let attempt = format!("{}_01", id.replace("application_", "container_"));
    for (n, (mb, vc, t)) in
        [(i64::MAX, i64::MAX, 1i64), (1i64 << 40, 1i64 << 30, 1), (-1024, 1, 1), (1024, 1, i64::MAX)]
            .into_iter()
            .enumerate()
    {
        let phantom = json!([{ "container_id": format!("{attempt}_00009{n}"), "state": "RUNNING", "exit_status": 0,
            "resource": { "memory": mb, "vCores": vc }, "creation_time": t }]);
        let (s, out) = call("POST", &reg, Some(registration(&format!("127.0.0.1:2{n}"), phantom, "")));
        assert_eq!(s, 200, "{out}");
    }
    std::thread::sleep(Duration::from_millis(400));
    let (_, a) = rm.app(&id);
    assert_eq!(a["app"]["state"], "RUNNING", "{a}");
    assert_eq!(a["app"]["allocatedMB"], 1024, "only the AM: {a}");
    let (_, m) = call("GET", &rm.url("/ws/v1/cluster/metrics", None), None);
    assert!(m["clusterMetrics"]["availableMB"].as_i64().unwrap() > 0, "{m}");
    // The RM is alive and well (a percentage of such sizes once overflowed in its loop).
    let (s, _) = call("GET", &rm.url("/ws/v1/cluster/apps", None), None);
    assert_eq!(s, 200);
    let (s, _) = call("POST", &rm.url("/ws/v1/cluster/apps/new-application", Some("bob")), None);
    assert_eq!(s, 200);
}

#[test]
fn a_running_node_is_taken_over_only_with_its_session() {
    let rm = fair("takeover", &[]);
    rm.register_node("127.0.0.1:11", 8192, 8);
    let (s, id, _) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202);
    let am = rm.heartbeat_until_started("127.0.0.1:11").pop().expect("the AM is placed");
    rm.register_am(&id, &am);
    let tracker = rm.handle.as_ref().unwrap().tracker;
    let reg = format!("http://{tracker}/fairloom/v1/tracker/register");
    // Another host claims the node, or a process on its own host (a container runs there):
    // refused, the node and its AM untouched.
    for from in ["127.0.0.2", "127.0.0.1"] {
        let (s, out) = post_from(from, &reg, &registration("127.0.0.1:11", json!([]), ""));
        assert_eq!(s, 200, "{out}");
        assert_eq!(out["action"], "RESYNC", "{from}: {out}");
        assert!(out["diagnostics"].as_str().unwrap().contains("needs its session"), "{out}");
        assert!(out["container_token_master_key"].is_null(), "no keys for it");
    }
    let hb = rm.heartbeat("127.0.0.1:11", 5, vec![]);
    assert_eq!(hb.action, NodeAction::Normal, "the real node's session still holds");
    let deadline = Instant::now() + Duration::from_secs(3);
    while rm.app(&id).1["app"]["state"] != "RUNNING" {
        assert!(Instant::now() < deadline, "{}", rm.app(&id).1);
        std::thread::sleep(Duration::from_millis(50));
    }
    let (_, attempts) = call("GET", &rm.url(&format!("/ws/v1/cluster/apps/{id}/appattempts"), None), None);
    assert_eq!(attempts["appAttempts"]["appAttempt"][0]["appAttemptState"], "RUNNING", "{attempts}");
    // With the node's session, from anywhere, it is the node's own NodeManager come back.
    let session = rm.sessions.lock().unwrap()["127.0.0.1:11"].clone();
    let am_running = json!([{ "container_id": am.id().unwrap().container.to_string(), "state": "RUNNING",
        "exit_status": 0, "resource": { "memory": 1024, "vCores": 1 }, "creation_time": 1 }]);
    let (s, out) = post_from("127.0.0.2", &reg, &registration("127.0.0.1:11", am_running, &session));
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["action"], "NORMAL", "{out}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(rm.app(&id).1["app"]["runningContainers"], 1, "its AM kept through the reconnect");
}

#[test]
fn with_host_lists_a_node_registers_from_its_hosts_address() {
    let dir = std::env::temp_dir().join(format!("fairloom-hosts-peer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let include = dir.join("include");
    std::fs::write(&include, "127.0.0.1\n127.0.0.2\n").unwrap();
    let rm = fair("hosts-peer", &[("yarn.resourcemanager.nodes.include-path", include.to_str().unwrap())]);
    let tracker = rm.handle.as_ref().unwrap().tracker;
    let reg = format!("http://{tracker}/fairloom/v1/tracker/register");
    // From 127.0.0.2, claiming to be a node of 127.0.0.1: refused.
    let (s, out) = post_from("127.0.0.2", &reg, &registration("127.0.0.1:7777", json!([]), ""));
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["action"], "SHUTDOWN", "{out}");
    assert!(out["diagnostics"].as_str().unwrap().contains("registers from 127.0.0.2"), "{out}");
    // As itself: taken.
    let (s, out) = post_from("127.0.0.2", &reg, &registration("127.0.0.2:7777", json!([]), ""));
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["action"], "NORMAL", "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_ams_response_id_is_compared_never_computed_with() {
    let rm = fair("response-id", &[]);
    rm.register_node("n1:1", 8192, 8);
    let (s, id, _) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202);
    let am = rm.heartbeat_until_started("n1:1").pop().expect("the AM is placed");
    let (token, _) = rm.register_am(&id, &am);
    for rid in [i64::MAX, i64::MIN, -1] {
        let (s, e) = rm.am_call(
            "/fairloom/v1/am/allocate",
            &token,
            json!({ "response_id": rid, "asks": [], "releases": [], "progress": 0.0 }),
        );
        assert_eq!(s, 400, "{e}");
        assert_eq!(e["RemoteException"]["exception"], "InvalidApplicationMasterRequestException");
    }
    let (s, out) = rm.am_call(
        "/fairloom/v1/am/allocate",
        &token,
        json!({ "response_id": 0, "asks": [], "releases": [], "progress": 0.0 }),
    );
    assert_eq!(s, 200, "the RM is alive: {out}");
}

#[test]
fn a_node_claims_no_more_than_it_has_nor_older_than_its_application() {
    let rm = fair("capacity-claims", &[]);
    rm.register_node("127.0.0.1:11", 8192, 8);
    let (s, id, _) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202);
    let am = rm.heartbeat_until_started("127.0.0.1:11").pop().expect("the AM is placed");
    rm.register_am(&id, &am);
    let (_, before) = rm.app(&id);
    let submitted = before["app"]["startedTime"].as_i64().unwrap();
    let attempt = format!("{}_01", id.replace("application_", "container_"));
    // 50 containers of the maximum size from a 8 GB node: at most what fits is taken.
    let claims: Vec<Value> = (0..50)
        .map(|n| {
            json!({ "container_id": format!("{attempt}_0005{n:02}"), "state": "RUNNING", "exit_status": 0,
            "resource": { "memory": 8192, "vCores": 4 }, "creation_time": submitted + 1 })
        })
        .collect();
    let tracker = rm.handle.as_ref().unwrap().tracker;
    let reg = format!("http://{tracker}/fairloom/v1/tracker/register");
    let (s, out) = call("POST", &reg, Some(registration("127.0.0.1:12", Value::Array(claims), "")));
    assert_eq!(s, 200, "{out}");
    // Ended containers that started before the application existed add no usage.
    let old = json!([{ "container_id": format!("{attempt}_000600"), "state": "COMPLETE", "exit_status": 0,
        "resource": { "memory": 8192, "vCores": 4 }, "creation_time": 1, "finish_time": submitted }]);
    let (s, out) = call("POST", &reg, Some(registration("127.0.0.1:13", old, "")));
    assert_eq!(s, 200, "{out}");
    std::thread::sleep(Duration::from_millis(400));
    let (_, m) = call("GET", &rm.url("/ws/v1/cluster/metrics", None), None);
    assert!(m["clusterMetrics"]["availableMB"].as_i64().unwrap() >= 0, "{m}");
    let (_, a) = rm.app(&id);
    assert!(a["app"]["allocatedMB"].as_i64().unwrap() <= 1024 + 8192, "{a}");
    assert!(a["app"]["memorySeconds"].as_i64().unwrap() < 8192 * 1000, "no usage from before the app: {a}");
}

#[test]
fn with_a_registration_secret_only_nodemanagers_that_know_it_register() {
    let dir = std::env::temp_dir().join(format!("fairloom-reg-secret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("secret");
    std::fs::write(&file, "only the nodes know\n").unwrap();
    let rm = fair("reg-secret", &[("fairloom.nodemanager.registration-secret.file", file.to_str().unwrap())]);
    let tracker = rm.handle.as_ref().unwrap().tracker;
    let reg = format!("http://{tracker}/fairloom/v1/tracker/register");
    for proof in
        ["".to_string(), "00".repeat(32), fairloom_protocol::token::registration_proof(b"a guess", "127.0.0.1:5")]
    {
        let mut r = registration("127.0.0.1:5", json!([]), "");
        r["proof"] = json!(proof);
        let (s, out) = call("POST", &reg, Some(r));
        assert_eq!(s, 200, "{out}");
        assert_eq!(out["action"], "SHUTDOWN", "{out}");
        assert!(out["diagnostics"].as_str().unwrap().contains("no proof of the registration secret"), "{out}");
    }
    // A proof for another node id does not carry over.
    let mut r = registration("127.0.0.1:5", json!([]), "");
    r["proof"] = json!(fairloom_protocol::token::registration_proof(b"only the nodes know", "127.0.0.1:6"));
    assert_eq!(call("POST", &reg, Some(r)).1["action"], "SHUTDOWN");
    let mut r = registration("127.0.0.1:5", json!([]), "");
    r["proof"] = json!(fairloom_protocol::token::registration_proof(b"only the nodes know", "127.0.0.1:5"));
    let (s, out) = call("POST", &reg, Some(r));
    assert_eq!((s, out["action"].as_str()), (200, Some("NORMAL")), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_nodes_and_ams_say_is_bounded() {
    let rm = fair("bounded", &[]);
    let tracker = rm.handle.as_ref().unwrap().tracker;
    let reg = format!("http://{tracker}/fairloom/v1/tracker/register");
    let mut r = registration("127.0.0.1:5", json!([]), "");
    r["http_address"] = json!("h".repeat(300));
    let (s, e) = call("POST", &reg, Some(r));
    assert_eq!(s, 400, "{e}");
    let mut r = registration("127.0.0.1:5", json!([]), "");
    r["rack"] = json!("/rack\n1");
    assert_eq!(call("POST", &reg, Some(r)).0, 400);
    rm.register_node("n1:1", 8192, 8);
    let (s, id, _) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202);
    let am = rm.heartbeat_until_started("n1:1").pop().expect("the AM is placed");
    let (token, _) = rm.register_am(&id, &am);
    let long = format!("start{}end", "x".repeat(300_000));
    let (s, out) = rm.am_call(
        "/fairloom/v1/am/finish",
        &token,
        json!({ "final_status": "SUCCEEDED", "diagnostics": long, "tracking_url": "" }),
    );
    assert_eq!(s, 200, "{out}");
    let (_, a) = rm.app(&id);
    let d = a["app"]["diagnostics"].as_str().unwrap();
    assert!(d.len() < 70 * 1024 && d.ends_with("end") && d.starts_with("Diagnostic messages truncated"), "{}", d.len());
}

#[test]
fn a_registration_whose_answer_was_lost_may_be_made_again_until_the_first_heartbeat() {
    let rm = fair("lost-answer", &[]);
    rm.register_node("n1:1", 8192, 8);
    // Another process on the node's host claims the node before its first heartbeat: it
    // does not know the NodeManager's instance, and is refused.
    let tracker = rm.handle.as_ref().unwrap().tracker;
    let claim = json!({
        "node_id": "n1:1", "http_address": "127.0.0.1:1", "rack": null,
        "resource": { "memory": 1024, "vCores": 1 }, "containers": [], "version": "x",
        "instance": "someone-else"
    });
    let (s, out) = call("POST", &format!("http://{tracker}{}", fairloom_protocol::paths::REGISTER_NODE), Some(claim));
    assert_eq!(s, 200, "{out}");
    assert_eq!(out["action"], "RESYNC", "{out}");
    // The NodeManager never saw its answer (it timed out waiting): it registers again with
    // no session, from the same address and the same instance, and is let in.
    rm.sessions.lock().unwrap().remove("n1:1");
    let again = rm.try_register_node("n1:1", 8192, 8, Vec::new());
    assert_eq!(again.action, NodeAction::Normal, "{}", again.diagnostics);
    let out = rm.heartbeat("n1:1", 0, Vec::new());
    assert_eq!(out.action, NodeAction::Normal, "the new session heartbeats: {out:?}");
    // Once it has heartbeated, a registration without its session is refused as before.
    rm.sessions.lock().unwrap().remove("n1:1");
    let taken = rm.try_register_node("n1:1", 8192, 8, Vec::new());
    assert_eq!(taken.action, NodeAction::Resync, "{}", taken.diagnostics);
    assert!(taken.diagnostics.contains("needs its session"), "{}", taken.diagnostics);
}
