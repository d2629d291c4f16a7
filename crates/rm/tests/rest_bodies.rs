//! REST write bodies as YARN's Jersey resources take them: JSON only (`@Consumes`), anything
//! else refused with 415 before the call is looked at, and a body past the limit refused with
//! 413, both in the RemoteException shape, changing nothing.

mod support;

use serde_json::{json, Value};
use support::{start, Rm, FAIR};

/// (status, JSON body or Null) of a raw call with the given Content-Type (none when `None`).
fn raw(method: &str, url: &str, content_type: Option<&str>, body: &[u8]) -> (u16, Value) {
    let mut req = ureq::request(method, url);
    if let Some(t) = content_type {
        req = req.set("Content-Type", t);
    }
    match req.send_bytes(body) {
        Ok(r) => (r.status(), r.into_json().unwrap_or(Value::Null)),
        Err(ureq::Error::Status(s, r)) => (s, r.into_json().unwrap_or(Value::Null)),
        Err(e) => panic!("{method} {url}: {e}"),
    }
}

fn web_exception(v: &Value, status: u16, s: u16, says: &str) {
    assert_eq!(s, status, "{v}");
    let e = &v["RemoteException"];
    assert_eq!(e["exception"], "WebApplicationException", "{v}");
    assert_eq!(e["javaClassName"], "javax.ws.rs.WebApplicationException", "{v}");
    assert!(e["message"].as_str().unwrap_or_default().contains(says), "{v}");
}

fn app_count(rm: &Rm) -> usize {
    let (_, v) = support::call("GET", &rm.url("/ws/v1/cluster/apps", None), None);
    v["apps"]["app"].as_array().map_or(0, Vec::len)
}

#[test]
fn a_write_body_must_be_json_and_not_too_large() {
    let rm = start("rest-bodies", &[("yarn.resourcemanager.scheduler.class", FAIR)], None);
    let (s, id, body) = rm.submit("alice", "default", json!({}));
    assert_eq!(s, 202, "{body}");
    let submit = rm.url("/ws/v1/cluster/apps", Some("alice"));
    let (_, new) = support::call("POST", &rm.url("/ws/v1/cluster/apps/new-application", Some("alice")), None);
    let submission = json!({
        "application-id": new["application-id"],
        "application-name": "typed",
        "am-container-spec": { "commands": { "command": "sleep 1" } },
        "resource": { "memory": 1024, "vCores": 1 },
    })
    .to_string();
    for (t, says) in [
        (Some("text/plain"), "text/plain"),
        (Some("application/x-www-form-urlencoded"), "application/x-www-form-urlencoded"),
        (None, "(none given)"),
        (Some("application/xml"), "not supported"),
    ] {
        let (s, v) = raw("POST", &submit, t, submission.as_bytes());
        web_exception(&v, 415, s, says);
    }
    // Refused before the caller is looked at: no user, still 415 (not 403).
    let (s, v) = raw("POST", &rm.url("/ws/v1/cluster/apps", None), Some("text/plain"), submission.as_bytes());
    web_exception(&v, 415, s, "Unsupported Media Type");
    for (what, body) in
        [("state", r#"{"state":"KILLED"}"#), ("queue", r#"{"queue":"root.b"}"#), ("priority", r#"{"priority":3}"#)]
    {
        let url = rm.url(&format!("/ws/v1/cluster/apps/{id}/{what}"), Some("alice"));
        let (s, v) = raw("PUT", &url, Some("text/plain"), body.as_bytes());
        web_exception(&v, 415, s, "Content-Type: application/json");
    }
    // A charset or other parameters are fine.
    let (s, v) = raw("POST", &submit, Some("application/json; charset=utf-8"), submission.as_bytes());
    assert_eq!(s, 202, "{v}");
    // Past 2 MiB: 413 in the same shape, whatever the type.
    let big = vec![b' '; 2 * 1024 * 1024 + 1];
    let (s, v) = raw("POST", &submit, Some("application/json"), &big);
    web_exception(&v, 413, s, "larger than 2097152 bytes");
    assert_eq!(app_count(&rm), 2, "only the two good submissions are in");
    let (s, app) = rm.app(&id);
    assert_eq!((s, app["app"]["state"].as_str()), (200, Some("ACCEPTED")), "{app}");
}
