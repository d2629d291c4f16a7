//! User names as they enter over REST: percent-decoded like every other parameter, and a name
//! that could not be a user on a node (a path, whitespace, control characters, too long) is
//! refused with 400 before anything is created.

mod support;

use serde_json::json;
use support::{call, start, FAIR};

#[test]
fn a_bad_user_name_is_refused_before_anything_is_created() {
    let rm = start("users", &[("yarn.resourcemanager.scheduler.class", FAIR)], None);
    for bad in ["..%2F..%2F..%2Fx", "../../../x", "a+b", "%00", "tab%09x", ".."] {
        let url = format!("{}/ws/v1/cluster/apps/new-application?user.name={bad}", rm.base);
        let (s, body) = call("POST", &url, None);
        assert_eq!(s, 400, "{bad}: {body}");
        assert_eq!(body["RemoteException"]["exception"], "BadRequestException");
        let msg = body["RemoteException"]["message"].as_str().unwrap();
        assert!(msg.starts_with("Invalid user name"), "{msg}");
        // Reads refuse it too, rather than answering as someone else.
        let (s, _) = call("GET", &format!("{}/ws/v1/cluster/apps?user.name={bad}", rm.base), None);
        assert_eq!(s, 400, "{bad}");
    }
    let long = "a".repeat(300);
    let (s, _) = call("POST", &format!("{}/ws/v1/cluster/apps/new-application?user.name={long}", rm.base), None);
    assert_eq!(s, 400);

    // Nothing was handed out for the refused calls: the first id is still 0001.
    let (s, new) = call("POST", &format!("{}/ws/v1/cluster/apps/new-application?user.name=al%69ce", rm.base), None);
    assert_eq!(s, 200, "{new}");
    let id = new["application-id"].as_str().unwrap().to_string();
    assert!(id.ends_with("_0001"), "{id}");
    let body = json!({
        "application-id": id,
        "am-container-spec": { "commands": { "command": "sleep 1" } },
        "resource": { "memory": 1024, "vCores": 1 },
    });
    let (s, err) = call("POST", &format!("{}/ws/v1/cluster/apps?user.name=..%2Fx", rm.base), Some(body.clone()));
    assert_eq!(s, 400, "{err}");
    let (s, apps) = call("GET", &format!("{}/ws/v1/cluster/apps", rm.base), None);
    assert_eq!(s, 200);
    assert_eq!(apps["apps"], serde_json::Value::Null, "no application was created: {apps}");
    // A percent-encoded name is the name it encodes, as everywhere else in the API.
    let (s, err) = call("POST", &format!("{}/ws/v1/cluster/apps?user.name=al%69ce", rm.base), Some(body));
    assert_eq!(s, 202, "{err}");
    let (_, app) = rm.app(&id);
    assert_eq!(app["app"]["user"], "alice", "{app}");
}
