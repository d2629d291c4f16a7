//! Apps that tie on usage are served by start time, then id string, as YARN's
//! FairSharePolicy breaks ties, however the apps arrive: the tie ranks that carry this in
//! the order keys are spread anew when a new app finds no room between its neighbours.

use fairloom_config::{parse_allocation_file, SchedulerProperties};
use fairloom_model::Resource;
use fairloom_scheduler::{AppId, Ask, Decision, FairScheduler, Scheduler, SubmitSpec};

fn scheduler() -> FairScheduler {
    let props = SchedulerProperties::default();
    let alloc = parse_allocation_file("<allocations><queue name=\"a\"/></allocations>", &props.resource_types).unwrap();
    FairScheduler::new(props, alloc).unwrap()
}

fn one_container() -> Ask {
    Ask {
        priority: 1,
        resource_name: "*".into(),
        capability: Resource::new(1024, 1),
        num_containers: 1,
        relax_locality: true,
        node_label: None,
    }
}

/// Serve one container per heartbeat until nothing is asked; the apps in the order served.
fn served(s: &mut FairScheduler, apps: usize) -> Vec<AppId> {
    let node = s.add_node("n1", Some("/r"), Resource::new(1024 * apps as i64, apps as i64)).unwrap();
    s.update(1_000_000);
    let mut order = Vec::new();
    for t in 0..apps as i64 {
        for d in s.node_update(node, 1_000_000 + t) {
            if let Decision::Allocated { app, .. } = d {
                order.push(app);
            }
        }
    }
    assert!(s.audit().is_empty(), "{:?}", s.audit());
    order
}

#[test]
fn apps_each_started_before_the_last_are_served_earliest_first() {
    // Each new app sorts before all the others: the room below the lowest rank halves
    // with each one and runs out after a few, so the ranks are spread anew several times
    // while the earlier apps wait in the leaf's order.
    let mut s = scheduler();
    let mut apps = Vec::new();
    for i in 0..60 {
        let app = s.submit(&SubmitSpec::new(&format!("app{i}"), "a", "alice", None), 10_000 - i);
        s.set_asks(app, &[one_container()]).unwrap();
        s.update(10_000);
        apps.push(app);
        assert!(s.audit().is_empty(), "after app {i}: {:?}", s.audit());
    }
    let order = served(&mut s, apps.len());
    apps.reverse();
    assert_eq!(order, apps);
}

#[test]
fn apps_started_together_are_served_in_id_string_order() {
    // One start time: the id strings decide, and "application_0_10000" sorts before
    // "application_0_1001", so each app past the 9,999th lands inside an earlier gap.
    let mut s = scheduler();
    let mut asking = Vec::new();
    for i in 0..10_060 {
        let app = s.submit(&SubmitSpec::new(&format!("app{i}"), "a", "alice", None), 5);
        // The last few hundred ask (so the served order is short to check), and those
        // past the 9,999th while the others wait in the leaf's order.
        if i >= 9_700 {
            s.set_asks(app, &[one_container()]).unwrap();
            asking.push(app);
        }
        if i >= 9_990 {
            s.update(5);
            assert!(s.audit().is_empty(), "after app {i}: {:?}", s.audit());
        }
    }
    let order = served(&mut s, asking.len());
    let mut expected = asking.clone();
    expected.sort_by_key(|&a| s.app_record(a).id_string.clone());
    assert_eq!(order, expected);
    assert_ne!(order, asking, "the string order differs from the numeric one here");
}
