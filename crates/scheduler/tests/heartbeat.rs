//! A NodeManager heartbeat that reports finished containers: they are released before the
//! node is offered to the queues, as YARN's `nodeUpdate` does.

use fairloom_config::{parse_allocation_file, SchedulerProperties};
use fairloom_model::Resource;
use fairloom_scheduler::{Ask, ContainerId, Decision, FairScheduler, Scheduler, SubmitSpec};

fn scheduler() -> FairScheduler {
    let props = SchedulerProperties::default();
    let alloc = parse_allocation_file("<allocations><queue name=\"a\"/></allocations>", &props.resource_types).unwrap();
    FairScheduler::new(props, alloc).unwrap()
}

fn ask(count: i32) -> Ask {
    Ask {
        priority: 1,
        resource_name: "*".into(),
        capability: Resource::new(4096, 1),
        num_containers: count,
        relax_locality: true,
        node_label: None,
    }
}

fn allocated(d: &[Decision]) -> Vec<ContainerId> {
    d.iter()
        .filter_map(|d| match d {
            Decision::Allocated { container, .. } => Some(*container),
            _ => None,
        })
        .collect()
}

#[test]
fn reported_containers_are_released_before_the_node_is_offered() {
    let mut s = scheduler();
    let n1 = s.add_node("n1", Some("/r"), Resource::new(4096, 4)).unwrap();
    let n2 = s.add_node("n2", Some("/r"), Resource::new(4096, 4)).unwrap();
    let app = s.submit(&SubmitSpec::new("app", "a", "alice", None), 0);
    s.set_asks(app, &[ask(3)]).unwrap();
    s.update(0);
    let on_n1 = allocated(&s.node_update(n1, 100));
    let on_n2 = allocated(&s.node_update(n2, 100));
    assert_eq!((on_n1.len(), on_n2.len()), (1, 1), "each node holds one 4 GiB container");

    // n1 reports its container finished: the room goes to the third task in the same call.
    let mut d = Vec::new();
    assert_eq!(s.node_heartbeat_into(n1, &[(on_n1[0], 0)], 200, &mut d), 1);
    let again = allocated(&d);
    assert_eq!(again.len(), 1, "{d:?}");
    assert_eq!(s.container(again[0]).node, n1);
    assert_eq!(s.app(app).usage, Resource::new(8192, 2), "one released, one allocated");

    // A container another node runs, one already released, or an unknown id: none is
    // released, and nothing else changes.
    s.complete_container(again[0], 0).unwrap();
    d.clear();
    assert_eq!(s.node_heartbeat_into(n1, &[(on_n2[0], 0), (again[0], 0), (ContainerId(999), 0)], 300, &mut d), 0);
    assert!(s.container(on_n2[0]).alive);
    assert_eq!(s.app(app).usage, Resource::new(4096, 1));
    assert!(allocated(&d).is_empty(), "no pending asks are left: {d:?}");
    assert!(s.audit().is_empty());
}
