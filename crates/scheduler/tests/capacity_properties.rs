//! Capacity Scheduler invariants over random event sequences: the auditor never finds a
//! mismatch (queue, user and app usage, pending, AM usage, reservations all equal their
//! recomputation; the kept orders equal a fresh sort), nodes never hold more memory than they
//! have (except where YARN over-commits one: a reservation served after its ask shrank), a
//! fresh allocation never takes a queue past its maximum, the same events always give the
//! same decisions, and walking by sorting (YARN's way) gives the same decisions.

use fairloom_config::Properties;
use fairloom_model::Resource;
use fairloom_scheduler::capacity::{CapacityScheduler, CapacitySetup};
use fairloom_scheduler::driver::{NodeSpec, Scheduler, SubmitSpec};
use fairloom_scheduler::{Ask, Decision, PartitionId, Reconfigure, SchedulerFile};
use proptest::prelude::*;
use std::collections::HashMap;

const P: &str = "yarn.scheduler.capacity.";

fn config(i: usize) -> Properties {
    let mut c: Vec<(&str, &str)> = vec![
        ("root.queues", "a,b"),
        ("root.accessible-node-labels.x.capacity", "100"),
        ("root.a.capacity", "50"),
        ("root.a.maximum-capacity", "75"),
        ("root.a.accessible-node-labels", "x"),
        ("root.a.accessible-node-labels.x.capacity", "100"),
        ("root.a.maximum-am-resource-percent", "0.5"),
        ("root.b.capacity", "50"),
        ("root.b.queues", "b1,b2"),
        ("root.b.b1.capacity", "40"),
        ("root.b.b1.user-limit-factor", "2"),
        ("root.b.b2.capacity", "60"),
        ("root.b.b2.minimum-user-limit-percent", "50"),
        ("per-node-heartbeat.maximum-offswitch-assignments", "3"),
        ("node-locality-delay", "1"),
    ];
    match i {
        0 => {}
        1 => c.extend([
            ("resource-calculator", "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"),
            ("root.ordering-policy", "priority-utilization"),
            ("root.b.priority", "1"),
            ("root.b.b2.ordering-policy", "fair"),
            ("ordering-policy.priority-utilization.underutilized-preemption.enabled", "true"),
            ("ordering-policy.priority-utilization.underutilized-preemption.reserved-container-delay-ms", "200"),
        ]),
        _ => c.extend([
            ("root.a.capacity", "30"),
            ("root.b.capacity", "70"),
            ("root.b.b1.disable_preemption", "true"),
            ("rack-locality-additional-delay", "1"),
        ]),
    }
    c.into_iter().map(|(k, v)| (format!("{P}{k}"), v.to_string())).collect()
}

fn site(sorted: bool) -> Properties {
    [
        ("fairloom.scheduler.ordering", if sorted { "sorted" } else { "incremental" }),
        ("yarn.scheduler.minimum-allocation-mb", "1024"),
        ("yarn.resourcemanager.scheduler.monitor.enable", "true"),
        ("yarn.cluster.max-application-priority", "3"),
        ("yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill", "300"),
        ("yarn.resourcemanager.monitor.capacity.preemption.total_preemption_per_round", "0.5"),
        ("yarn.resourcemanager.monitor.capacity.preemption.intra-queue-preemption.enabled", "true"),
        ("yarn.resourcemanager.monitor.capacity.preemption.select_based_on_reserved_containers", "true"),
        ("yarn.resourcemanager.monitor.capacity.preemption.preemption-to-balance-queue-after-satisfied.enabled", "true"),
        ("yarn.resourcemanager.monitor.capacity.preemption.preemption-to-balance-queue-after-satisfied.max-wait-before-kill", "200"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

const QUEUES: [&str; 5] = ["a", "b1", "root.b.b2", "b", "nowhere"];
const SIZES: [(i64, i64); 3] = [(1024, 1), (2048, 2), (3072, 1)];
const NODES: [(i64, i64); 2] = [(8192, 8), (4096, 4)];

#[derive(Debug, Clone)]
enum Event {
    AddNode { size: usize, labelled: bool },
    RemoveNode(usize),
    Submit { queue: usize, user: usize, managed: bool, priority: i32, labelled: bool },
    Ask { app: usize, priority: i32, size: usize, count: i32, node_local: Option<usize>, labelled: bool },
    Heartbeat(usize),
    Report(usize),
    Complete { app: usize },
    Finish(usize),
    Move { app: usize, queue: usize },
    Update,
    Reload(usize),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        1 => (0..NODES.len(), any::<bool>()).prop_map(|(size, labelled)| Event::AddNode { size, labelled }),
        1 => (0usize..6).prop_map(Event::RemoveNode),
        3 => (0..QUEUES.len(), 0usize..3, any::<bool>(), 0i32..4, prop::bool::weighted(0.2))
            .prop_map(|(queue, user, managed, priority, labelled)| Event::Submit { queue, user, managed, priority, labelled }),
        4 => (0usize..8, 0i32..3, 0..SIZES.len(), 0i32..6, proptest::option::of(0usize..6), prop::bool::weighted(0.2))
            .prop_map(|(app, priority, size, count, node_local, labelled)| Event::Ask { app, priority, size, count, node_local, labelled }),
        6 => (0usize..6).prop_map(Event::Heartbeat),
        2 => (0usize..6).prop_map(Event::Report),
        2 => (0usize..8).prop_map(|app| Event::Complete { app }),
        1 => (0usize..8).prop_map(Event::Finish),
        1 => (0usize..8, 0..QUEUES.len()).prop_map(|(app, queue)| Event::Move { app, queue }),
        3 => Just(Event::Update),
        1 => (0usize..3).prop_map(Event::Reload),
    ]
}

fn scheduler(c: usize, sorted: bool) -> CapacityScheduler {
    let setup = CapacitySetup { site: site(sorted), capacity: config(c), lines: None, extra_types: Vec::new() };
    CapacityScheduler::new(setup, &[("x".to_string(), false)]).expect("a valid configuration")
}

fn pick<T>(items: &[T], i: usize) -> Option<&T> {
    (!items.is_empty()).then(|| &items[i % items.len()])
}

fn run(c: usize, sorted: bool, events: &[Event]) -> Result<Vec<Decision>, TestCaseError> {
    let mut s = scheduler(c, sorted);
    let mut decisions = Vec::new();
    let mut nodes: Vec<String> = Vec::new();
    let mut apps = Vec::new();
    let mut now = 0;
    // Each node's allocated memory after the last event, and the resized-serving count then.
    let mut allocated: HashMap<String, i64> = HashMap::new();
    let mut served_resized = 0;
    let prefix = [
        Event::AddNode { size: 0, labelled: false },
        Event::AddNode { size: 1, labelled: true },
        Event::AddNode { size: 0, labelled: false },
        Event::Submit { queue: 0, user: 0, managed: true, priority: 0, labelled: false },
        Event::Submit { queue: 1, user: 1, managed: false, priority: 1, labelled: false },
        Event::Submit { queue: 2, user: 2, managed: true, priority: 2, labelled: false },
    ];
    for (i, e) in prefix.iter().chain(events).enumerate() {
        now += 100;
        match *e {
            Event::AddNode { size, labelled } => {
                let name = format!("n{}", nodes.len());
                let rack = if nodes.len().is_multiple_of(2) { "/r0" } else { "/r1" };
                let spec = NodeSpec {
                    name: &name,
                    rack: Some(rack),
                    resource: Resource::new(NODES[size].0, NODES[size].1),
                    label: labelled.then_some("x"),
                };
                s.add_nodes(&[spec]).unwrap();
                nodes.push(name);
            }
            Event::RemoveNode(n) => {
                if let Some(id) = pick(&nodes, n).and_then(|name| s.cluster().node_id(name)) {
                    s.remove_node(id);
                }
            }
            Event::Submit { queue, user, managed, priority, labelled } => {
                let name = format!("app{}", apps.len());
                let user = format!("user{user}");
                let mut spec = SubmitSpec::new(&name, QUEUES[queue], &user, managed.then(|| Resource::new(1024, 1)));
                spec.priority = priority;
                spec.node_label = labelled.then_some("x");
                apps.push(s.submit(&spec, now));
            }
            Event::Ask { app, priority, size, count, node_local, labelled } => {
                if let Some(&a) = pick(&apps, app) {
                    let capability = Resource::new(SIZES[size].0, SIZES[size].1);
                    let mut ask = Ask::any(priority + 1, capability, count);
                    ask.node_label = labelled.then(|| "x".to_string());
                    let mut asks = vec![ask];
                    if let Some(name) = node_local.and_then(|n| pick(&nodes, n)) {
                        let mut local = Ask::any(priority + 1, capability, count);
                        local.resource_name = name.clone();
                        asks.push(local);
                    }
                    let _ = s.set_asks(a, &asks);
                }
            }
            Event::Heartbeat(n) => {
                if let Some(id) = pick(&nodes, n).and_then(|name| s.cluster().node_id(name)) {
                    let before: Vec<(String, Vec<Resource>)> = s
                        .queues()
                        .map(|(_, q)| (q.name.clone(), q.parts.iter().map(|p| p.used.get()).collect()))
                        .collect();
                    let mut d = Vec::new();
                    s.node_heartbeat_into(id, &[], now, &mut d);
                    // A new allocation never takes a queue past its maximum (a reservation
                    // being fulfilled may: YARN skips the check for it).
                    if !d.iter().any(|x| matches!(x, Decision::Unreserved { .. })) {
                        for ((name, used_before), (_, q)) in before.iter().zip(s.queues()) {
                            for (p, part) in q.parts.iter().enumerate() {
                                let grew = part.used.memory() > used_before[p].memory();
                                let exclusive = s.cluster().partitions[p].exclusive;
                                prop_assert!(
                                    !grew || !exclusive || part.used.memory() <= part.maximum.memory(),
                                    "queue {name} grew past its maximum in partition {p}: {:?} > {:?}",
                                    part.used,
                                    part.maximum
                                );
                            }
                        }
                    }
                    decisions.extend(d);
                }
            }
            Event::Report(n) => {
                if let Some(id) = pick(&nodes, n).and_then(|name| s.cluster().node_id(name)) {
                    let done: Vec<_> = s.cluster().node_containers(id).take(1).map(|c| (c, 0)).collect();
                    let mut d = Vec::new();
                    prop_assert_eq!(s.node_heartbeat_into(id, &done, now, &mut d), done.len());
                    decisions.extend(d);
                }
            }
            Event::Complete { app } => {
                if let Some(&a) = pick(&apps, app) {
                    if let Some(c) = Scheduler::app_containers(&s, a).last() {
                        s.complete_container(c, 0).unwrap();
                    }
                }
            }
            Event::Finish(app) => {
                if let Some(&a) = pick(&apps, app) {
                    let _ = s.finish_app(a);
                }
            }
            Event::Move { app, queue } => {
                if let Some(&a) = pick(&apps, app) {
                    let _ = s.move_app(a, QUEUES[queue]);
                }
            }
            Event::Update => s.update(now),
            Event::Reload(c) => {
                let file = SchedulerFile::CapacityProperties(config(c));
                let _ = s.reload(&Reconfigure { site: None, file: Some(("capacity".into(), file)) });
            }
        }
        let mismatches = s.audit();
        prop_assert!(mismatches.is_empty(), "after event {i} {e:?}: {mismatches:?}");
        // A node never holds more memory than it has, except where YARN puts it there: a
        // reservation served after its ask shrank fits with the ask's size but commits the
        // reserved container (see `allocate_reserved`). So a node may grow past its total, or
        // grow while past it, only at its own heartbeat (with or without a completed
        // container) and only through such a serving.
        let resized = s.counters().reservations_served_resized;
        let beat = match *e {
            Event::Heartbeat(n) | Event::Report(n) => pick(&nodes, n).map(String::as_str),
            _ => None,
        };
        for (_, n) in s.cluster().nodes() {
            let before = allocated.insert(n.name.clone(), n.allocated.memory()).unwrap_or(0);
            let over = n.allocated.memory() > n.total.memory() && n.allocated.memory() > before;
            prop_assert!(
                !over || (beat == Some(n.name.as_str()) && resized > served_resized),
                "node {} over-committed: {:?} allocated of {:?}",
                n.name,
                n.allocated,
                n.total
            );
        }
        served_resized = resized;
        let default = PartitionId::DEFAULT.index();
        prop_assert!(s.queue(fairloom_scheduler::capacity::ROOT).parts[default].used.memory() >= 0);
    }
    Ok(decisions)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_and_runs_repeat(c in 0usize..3, events in proptest::collection::vec(event(), 1..80)) {
        let first = run(c, false, &events)?;
        let second = run(c, false, &events)?;
        prop_assert_eq!(&first, &second);
        // The kept orders give the decisions sorting at every visit gives.
        let sorted = run(c, true, &events)?;
        prop_assert_eq!(&first, &sorted);
    }
}

/// An ask at `*`, priority 0, unlabelled: what the found sequences below ask.
fn ask(app: usize, size: usize, count: i32) -> Event {
    Event::Ask { app, priority: 0, size, count, node_local: None, labelled: false }
}

/// Found by the property above, when a labelled reservation released holds: the kept
/// orders must give the sorted walk's decisions on it. (The partition case it stood for is
/// pinned by the scenario cs-continue-looking-partition.)
#[test]
fn found_sequence_kept_orders_match_sorting() {
    use Event::*;
    let submit = || Submit { queue: 0, user: 0, managed: false, priority: 0, labelled: false };
    let events = [
        ask(4, 2, 4),
        Finish(3),
        Heartbeat(3),
        Report(0),
        ask(2, 1, 4),
        AddNode { size: 1, labelled: true },
        submit(),
        Report(1),
        Heartbeat(2),
        submit(),
        Heartbeat(5),
        Heartbeat(1),
        RemoveNode(1),
        AddNode { size: 0, labelled: true },
        submit(),
        Report(5),
        Heartbeat(3),
        Heartbeat(0),
        Heartbeat(3),
        Heartbeat(2),
    ];
    let kept = run(0, false, &events).unwrap();
    let sorted = run(0, true, &events).unwrap();
    assert!(!kept.is_empty());
    assert_eq!(kept, sorted);
}

/// Found by the property above: a leaf held by its user limit must still publish the limit
/// each walk hands it, as the sorted walk's visit does (a waiting AM is activated by it).
#[test]
fn found_sequence_held_leaf_publishes_its_limit() {
    use Event::*;
    let submit = |queue, user, managed, priority| Submit { queue, user, managed, priority, labelled: false };
    let events = [
        submit(3, 0, false, 0),
        submit(2, 2, false, 2),
        submit(2, 2, true, 0),
        Finish(2),
        ask(5, 1, 3),
        AddNode { size: 0, labelled: true },
        submit(2, 0, false, 0),
        Finish(4),
        ask(0, 0, 2),
        Heartbeat(0),
        RemoveNode(2),
        AddNode { size: 1, labelled: false },
        submit(2, 0, true, 0),
        Heartbeat(0),
        Finish(6),
        Heartbeat(4),
    ];
    let kept = run(1, false, &events).unwrap();
    let sorted = run(1, true, &events).unwrap();
    assert!(!kept.is_empty());
    assert_eq!(kept, sorted);
}
