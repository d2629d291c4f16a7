//! ACLs over REST: `yarn.acl.enable`, `yarn.admin.acl`, the queues' submit and administer
//! ACLs (inherited from ancestors), the owner and the application's MODIFY_APP ACL. A refused
//! call is a 403 RemoteException and leaves the application as it was.

mod support;

use serde_json::{json, Value};
use support::{start, Rm, FAIR};

const ALLOCATIONS: &str = r#"<?xml version="1.0"?>
<allocations>
  <queue name="root">
    <aclSubmitApps> </aclSubmitApps>
    <aclAdministerApps> </aclAdministerApps>
    <queue name="eng">
      <aclSubmitApps>alice devs</aclSubmitApps>
      <aclAdministerApps>lead</aclAdministerApps>
      <queue name="ml"/>
      <queue name="web"/>
    </queue>
    <queue name="ops">
      <aclSubmitApps>bob</aclSubmitApps>
    </queue>
  </queue>
  <queuePlacementPolicy><rule name="specified"/><rule name="reject"/></queuePlacementPolicy>
</allocations>
"#;

fn fair(name: &str, acl: &str) -> Rm {
    start(
        name,
        &[
            ("yarn.resourcemanager.scheduler.class", FAIR),
            ("yarn.acl.enable", acl),
            ("yarn.admin.acl", "yarnadmin"),
            ("hadoop.user.group.static.mapping.overrides", "carol=devs"),
        ],
        Some(ALLOCATIONS),
    )
}

fn forbidden(status: u16, body: &Value) {
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["RemoteException"]["exception"], "ForbiddenException", "{body}");
}

#[test]
fn submission_needs_the_queue_or_an_ancestors_acl() {
    let rm = fair("acl-submit", "true");
    let (s, _, body) = rm.submit("alice", "eng.web", json!({}));
    assert_eq!(s, 202, "alice holds eng's submit ACL: {body}");
    let (s, _, body) = rm.submit("alice", "eng.ml", json!({}));
    assert_eq!(s, 202, "eng.ml inherits eng's ACL: {body}");
    let (s, _, body) = rm.submit("carol", "eng.web", json!({}));
    assert_eq!(s, 202, "carol is in the group devs: {body}");
    let (s, _, body) = rm.submit("lead", "eng.ml", json!({}));
    assert_eq!(s, 202, "administer implies submit: {body}");

    let (s, id, body) = rm.submit("bob", "eng.web", json!({}));
    forbidden(s, &body);
    let msg = body["RemoteException"]["message"].as_str().unwrap();
    assert!(msg.contains("User bob does not have permission to submit") && msg.contains("root.eng.web"), "{msg}");
    assert_eq!(rm.app(&id).0, 404, "a refused submission creates no application");
    let (s, _, body) = rm.submit("yarnadmin", "ops", json!({}));
    forbidden(s, &body);
    let (_, apps) = support::call("GET", &rm.url("/ws/v1/cluster/apps", None), None);
    assert_eq!(apps["apps"]["app"].as_array().map(Vec::len), Some(4), "{apps}");
}

#[test]
fn kill_move_and_priority_need_the_owner_an_admin_or_a_queue_administrator() {
    let rm = fair("acl-change", "true");
    let (s, id, _) = rm.submit("alice", "eng.ml", json!({}));
    assert_eq!(s, 202);

    // Refused: the application is untouched.
    let (s, body) = rm.put(&id, "state", "bob", json!({"state": "KILLED"}));
    forbidden(s, &body);
    assert!(body["RemoteException"]["message"].as_str().unwrap().contains("Unauthorized attempt to kill"), "{body}");
    assert_eq!(rm.app(&id).1["app"]["state"], "ACCEPTED");
    let (s, body) = rm.put(&id, "queue", "bob", json!({"queue": "ops"}));
    forbidden(s, &body);
    assert_eq!(rm.app(&id).1["app"]["queue"], "root.eng.ml");
    let (s, body) = rm.put(&id, "priority", "carol", json!({"priority": 5}));
    forbidden(s, &body);

    // The owner may move only where she may submit.
    let (s, body) = rm.put(&id, "queue", "alice", json!({"queue": "ops"}));
    forbidden(s, &body);
    assert_eq!(rm.app(&id).1["app"]["queue"], "root.eng.ml");
    let (s, body) = rm.put(&id, "queue", "alice", json!({"queue": "root.eng.web"}));
    assert_eq!(s, 200, "{body}");
    assert_eq!(rm.app(&id).1["app"]["queue"], "root.eng.web");
    // eng's administrator, and the cluster administrator.
    let (s, body) = rm.put(&id, "priority", "lead", json!({"priority": 3}));
    assert_eq!(s, 200, "{body}");
    let (s, body) = rm.put(&id, "state", "yarnadmin", json!({"state": "KILLED"}));
    assert_eq!(s, 200, "{body}");
    assert_eq!(rm.app(&id).1["app"]["state"], "KILLED");

    // The inherited administer ACL: lead administers eng.ml through eng.
    let (_, id2, _) = rm.submit("carol", "eng.ml", json!({}));
    let (s, body) = rm.put(&id2, "state", "lead", json!({"state": "KILLED"}));
    assert_eq!(s, 200, "{body}");

    // The application's own MODIFY_APP ACL.
    let acls = json!({"am-container-spec": {
        "commands": {"command": "sleep 1"},
        "application-acls": {"entry": [{"key": "MODIFY_APP", "value": "bob"}]}
    }});
    let (s, id3, _) = rm.submit("alice", "eng.web", acls);
    assert_eq!(s, 202);
    let (s, body) = rm.put(&id3, "state", "bob", json!({"state": "KILLED"}));
    assert_eq!(s, 200, "{body}");
    let (s, body) = rm.put(&id3, "state", "carol", json!({"state": "KILLED"}));
    forbidden(s, &body);
}

#[test]
fn with_acls_off_every_user_may_change_every_application() {
    let rm = fair("acl-off", "false");
    let (s, id, _) = rm.submit("alice", "eng.web", json!({}));
    assert_eq!(s, 202);
    let (s, body) = rm.put(&id, "priority", "bob", json!({"priority": 1}));
    assert_eq!(s, 200, "{body}");
    let (s, body) = rm.put(&id, "state", "bob", json!({"state": "KILLED"}));
    assert_eq!(s, 200, "{body}");
}

#[test]
fn capacity_queues_acls_and_the_admin() {
    let capacity = r#"<configuration>
  <property><name>yarn.scheduler.capacity.root.queues</name><value>a,b</value></property>
  <property><name>yarn.scheduler.capacity.root.a.capacity</name><value>50</value></property>
  <property><name>yarn.scheduler.capacity.root.b.capacity</name><value>50</value></property>
  <property><name>yarn.scheduler.capacity.root.acl_submit_applications</name><value> </value></property>
  <property><name>yarn.scheduler.capacity.root.acl_administer_queue</name><value>boss</value></property>
  <property><name>yarn.scheduler.capacity.root.a.acl_submit_applications</name><value>alice</value></property>
</configuration>"#;
    let rm = start("acl-capacity", &[("yarn.acl.enable", "true"), ("yarn.admin.acl", " ")], Some(capacity));
    let (s, id, body) = rm.submit("alice", "a", json!({}));
    assert_eq!(s, 202, "{body}");
    let (s, _, body) = rm.submit("alice", "b", json!({}));
    forbidden(s, &body);
    let (s, _, body) = rm.submit("boss", "b", json!({}));
    assert_eq!(s, 202, "root's administer ACL is inherited by b: {body}");
    let (s, body) = rm.put(&id, "state", "mallory", json!({"state": "KILLED"}));
    forbidden(s, &body);
    let (s, body) = rm.put(&id, "state", "boss", json!({"state": "KILLED"}));
    assert_eq!(s, 200, "{body}");
}

/// YARN's VIEW_APP: a reader who is not the owner, an admin, in the application's VIEW_APP
/// ACL or an administrator of its queue still lists the application, without its times, AM
/// address and resources; its web page says it may not be viewed. An anonymous reader is
/// `dr.who`, as behind Hadoop's static-user filter.
#[test]
fn viewing_an_application_needs_view_app() {
    let rm = fair("acl-view", "true");
    let acls = json!({"am-container-spec": {
        "commands": {"command": "sleep 1"},
        "application-acls": {"entry": [{"key": "VIEW_APP", "value": "dave"}]}
    }});
    let (s, id, body) = rm.submit("alice", "eng.web", acls);
    assert_eq!(s, 202, "{body}");
    rm.register_node("n1:8041", 8192, 8);
    assert_eq!(rm.heartbeat_until_started("n1:8041").len(), 1, "the AM container starts");
    let as_user =
        |user: Option<&str>| support::call("GET", &rm.url(&format!("/ws/v1/cluster/apps/{id}"), user), None).1;
    // The AM's allocation shows at the loop's next publish.
    let mut owner = as_user(Some("alice"));
    for _ in 0..100 {
        if owner["app"]["allocatedMB"] == 1024 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        owner = as_user(Some("alice"));
    }
    assert_eq!(owner["app"]["allocatedMB"], 1024, "{owner}");
    assert!(owner["app"]["startedTime"].as_i64().unwrap() > 0);
    assert!(owner["app"]["amHostHttpAddress"].as_str().is_some_and(|a| !a.is_empty()), "{owner}");

    for viewer in [Some("dave"), Some("lead"), Some("yarnadmin")] {
        let v = as_user(viewer);
        assert_eq!(v["app"]["allocatedMB"], 1024, "{viewer:?} may view: {v}");
        assert_eq!(v["app"]["startedTime"], owner["app"]["startedTime"], "{viewer:?}");
    }

    let anonymous = as_user(None);
    assert_eq!(anonymous["app"]["allocatedMB"], 0, "dr.who may not view it: {anonymous}");
    let bob = as_user(Some("bob"));
    let app = &bob["app"];
    assert_eq!(
        (app["id"].as_str(), app["user"].as_str(), app["state"].as_str()),
        (Some(id.as_str()), Some("alice"), Some("ACCEPTED"))
    );
    for k in ["startedTime", "launchTime", "elapsedTime", "allocatedMB", "allocatedVCores", "runningContainers"] {
        assert_eq!(app[k], 0, "{k} is hidden from bob: {bob}");
    }
    for k in ["amHostHttpAddress", "amContainerLogs", "amRPCAddress"] {
        assert!(app.get(k).is_none(), "{k} is left out for bob: {bob}");
    }
    let (_, list) = support::call("GET", &rm.url("/ws/v1/cluster/apps", Some("bob")), None);
    assert_eq!(list["apps"]["app"][0]["allocatedMB"], 0, "{list}");
    assert_eq!(list["apps"]["app"][0]["id"], id.as_str());

    // An attempt's containers: refused to bob, listed for dave.
    let containers = |user: &str| {
        support::call("GET", &rm.url(&format!("/ws/v1/cluster/apps/{id}/appattempts/1/containers"), Some(user)), None)
    };
    let (s, body) = containers("bob");
    forbidden(s, &body);
    assert!(body["RemoteException"]["message"].as_str().unwrap().contains("User bob"), "{body}");
    let (s, body) = containers("dave");
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["containers"]["container"].as_array().map(Vec::len), Some(1), "the AM container: {body}");

    let (s, page) = rm.text(&format!("/cluster/app/{id}?user.name=bob"));
    assert_eq!(s, 200);
    assert!(page.contains(&format!("You (User bob) are not authorized to view application {id}")), "{page}");
    assert!(!page.contains("id=\"containers\""), "no containers table for bob");
    let (_, page) = rm.text(&format!("/cluster/app/{id}"));
    assert!(page.contains("You (User dr.who) are not authorized"), "{page}");
    let (_, page) = rm.text(&format!("/cluster/app/{id}?user.name=dave"));
    assert!(page.contains("id=\"containers\"") && !page.contains("not authorized"), "{page}");
}

#[test]
fn with_acls_off_every_reader_views_every_application() {
    let rm = fair("acl-view-off", "false");
    let (s, id, _) = rm.submit("alice", "eng.web", json!({}));
    assert_eq!(s, 202);
    let (_, bob) = support::call("GET", &rm.url(&format!("/ws/v1/cluster/apps/{id}"), Some("bob")), None);
    assert!(bob["app"]["startedTime"].as_i64().unwrap() > 0, "{bob}");
    assert!(bob["app"].get("amRPCAddress").is_some(), "{bob}");
}
