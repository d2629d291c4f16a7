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
