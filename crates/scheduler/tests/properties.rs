//! Invariants over random event sequences: the auditor never finds a mismatch, usage equals
//! the sum of live containers at every level (the auditor checks it), nodes are never
//! over-committed, sibling fair shares stay within YARN's rounding, and the same events
//! always give the same decisions.

use fairloom_config::{parse_allocation_file, Properties, SchedulerProperties};
use fairloom_model::Resource;
use fairloom_scheduler::{
    Ask, Decision, FairScheduler, QueueId, Reconfigure, Scheduler, SchedulerFile, SubmitSpec, ROOT,
};
use proptest::prelude::*;

const CONFIGS: [&str; 3] = [
    "<allocations><queue name=\"a\"/><queue name=\"b\"><weight>2</weight><queue name=\"b1\"/><queue name=\"b2\"><maxRunningApps>2</maxRunningApps></queue></queue><queue name=\"f\"><schedulingPolicy>fifo</schedulingPolicy></queue><defaultFairSharePreemptionTimeout>0</defaultFairSharePreemptionTimeout><defaultFairSharePreemptionThreshold>1</defaultFairSharePreemptionThreshold></allocations>",
    "<allocations><defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy><queue name=\"a\"><minResources>4096 mb, 4 vcores</minResources></queue><queue name=\"b\"><maxResources>50%</maxResources><queue name=\"b1\"/><queue name=\"b2\"/></queue></allocations>",
    "<allocations><queue name=\"a\"><maxAMShare>0.2</maxAMShare><maxResources>8192 mb, 8 vcores</maxResources></queue><queue name=\"b\"><queue name=\"b1\"><weight>0</weight></queue><queue name=\"b2\"/></queue><userMaxAppsDefault>3</userMaxAppsDefault><queue name=\"m\"><minResources>4096 mb, 4 vcores</minResources><minSharePreemptionTimeout>1</minSharePreemptionTimeout></queue></allocations>",
];
const QUEUES: [&str; 7] = ["a", "root.b.b1", "root.b.b2", "f", "default", "root.b.new", "m"];
const SIZES: [(i64, i64); 3] = [(1024, 1), (2048, 2), (3072, 1)];
const NODES: [(i64, i64); 2] = [(8192, 8), (4096, 4)];

#[derive(Debug, Clone)]
enum Event {
    AddNode(usize),
    RemoveNode(usize),
    Submit {
        queue: usize,
        user: usize,
        managed: bool,
    },
    /// Apps submitted each with an earlier start time than the one before: each sorts
    /// first among them, so their tie ranks run out of room and are spread anew.
    Burst {
        queue: usize,
        count: usize,
    },
    Ask {
        app: usize,
        priority: i32,
        size: usize,
        count: i32,
        node_local: Option<usize>,
    },
    Heartbeat(usize),
    Report(usize),
    Complete {
        app: usize,
    },
    Finish(usize),
    Move {
        app: usize,
        queue: usize,
    },
    Update,
    Reload(usize),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        1 => (0..NODES.len()).prop_map(Event::AddNode),
        1 => (0usize..6).prop_map(Event::RemoveNode),
        3 => (0..QUEUES.len(), 0usize..3, any::<bool>()).prop_map(|(queue, user, managed)| Event::Submit { queue, user, managed }),
        1 => (0..QUEUES.len(), 1usize..14).prop_map(|(queue, count)| Event::Burst { queue, count }),
        4 => (0usize..8, 0i32..3, 0..SIZES.len(), 0i32..5, proptest::option::of(0usize..6))
            .prop_map(|(app, priority, size, count, node_local)| Event::Ask { app, priority, size, count, node_local }),
        6 => (0usize..6).prop_map(Event::Heartbeat),
        // A heartbeat that reports the node's oldest live container finished.
        2 => (0usize..6).prop_map(Event::Report),
        2 => (0usize..8).prop_map(|app| Event::Complete { app }),
        1 => (0usize..8).prop_map(Event::Finish),
        1 => Just(Event::Update),
        1 => (0usize..8, 0..QUEUES.len()).prop_map(|(app, queue)| Event::Move { app, queue }),
        3 => Just(Event::Update),
        1 => (0..CONFIGS.len()).prop_map(Event::Reload),
    ]
}

/// The optimisation switches: (ordering, skip-no-demand, usage).
const MODES: [(&str, &str, &str); 4] = [
    ("incremental", "true", "incremental"),
    ("sorted", "false", "recomputed"),
    ("sorted", "true", "incremental"),
    ("incremental", "false", "recomputed"),
];

fn scheduler(config: usize, assign_multiple: bool, mode: usize) -> FairScheduler {
    let mut p = Properties::new();
    let (ordering, skip, usage) = MODES[mode];
    p.insert("fairloom.scheduler.ordering".into(), ordering.into());
    p.insert("fairloom.scheduler.skip-no-demand".into(), skip.into());
    p.insert("fairloom.scheduler.usage".into(), usage.into());
    p.insert("yarn.scheduler.fair.assignmultiple".into(), assign_multiple.to_string());
    p.insert("yarn.scheduler.fair.locality.threshold.node".into(), "0.5".into());
    p.insert("yarn.scheduler.fair.locality.threshold.rack".into(), "0.5".into());
    // Preemption on, gated at zero utilization, with a kill delay some updates wait out.
    p.insert("yarn.scheduler.fair.preemption".into(), "true".into());
    p.insert("yarn.scheduler.fair.preemption.cluster-utilization-threshold".into(), "0".into());
    p.insert("yarn.scheduler.fair.waitTimeBeforeKill".into(), "300".into());
    p.insert("yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck".into(), "500".into());
    let props = SchedulerProperties::from_properties(&p, &[]).unwrap();
    let alloc = parse_allocation_file(CONFIGS[config], &props.resource_types).unwrap();
    FairScheduler::new(props, alloc).unwrap()
}

fn pick<T>(items: &[T], i: usize) -> Option<&T> {
    (!items.is_empty()).then(|| &items[i % items.len()])
}

/// Apply the events; check the invariants after each; return every decision made.
fn run(config: usize, assign_multiple: bool, mode: usize, events: &[Event]) -> Result<Vec<Decision>, TestCaseError> {
    let mut s = scheduler(config, assign_multiple, mode);
    let mut decisions = Vec::new();
    let mut nodes: Vec<String> = Vec::new();
    let mut apps = Vec::new();
    let mut now = 0;
    // Every run starts with a small cluster and a few apps, so the random part has
    // something to schedule; targets are picked modulo what exists.
    let prefix = [
        Event::AddNode(0),
        Event::AddNode(1),
        Event::AddNode(0),
        Event::Submit { queue: 0, user: 0, managed: true },
        Event::Submit { queue: 1, user: 1, managed: false },
        Event::Submit { queue: 2, user: 2, managed: true },
        Event::Submit { queue: 3, user: 0, managed: false },
    ];
    for (i, e) in prefix.iter().chain(events).enumerate() {
        now += 100;
        match *e {
            Event::AddNode(size) => {
                let name = format!("n{}", nodes.len());
                let rack = if nodes.len().is_multiple_of(2) { "/r0" } else { "/r1" };
                s.add_node(&name, Some(rack), Resource::new(NODES[size].0, NODES[size].1)).unwrap();
                nodes.push(name);
            }
            Event::RemoveNode(n) => {
                if let Some(id) = pick(&nodes, n).and_then(|name| s.node_id(name)) {
                    s.remove_node(id);
                }
            }
            Event::Submit { queue, user, managed } => {
                let am = managed.then(|| Resource::new(1024, 1));
                apps.push(s.submit(
                    &SubmitSpec::new(&format!("app{}", apps.len()), QUEUES[queue], &format!("user{user}"), am),
                    now,
                ));
            }
            Event::Burst { queue, count } => {
                for j in 0..count as i64 {
                    let name = format!("app{}", apps.len());
                    apps.push(s.submit(
                        &SubmitSpec::new(&name, QUEUES[queue], "user0", Some(Resource::new(1024, 1))),
                        now - 1 - j,
                    ));
                }
            }
            Event::Ask { app, priority, size, count, node_local } => {
                if let Some(&a) = pick(&apps, app) {
                    let capability = Resource::new(SIZES[size].0, SIZES[size].1);
                    let mut asks = vec![Ask {
                        priority,
                        resource_name: "*".into(),
                        capability,
                        num_containers: count,
                        relax_locality: true,
                        node_label: None,
                    }];
                    if let Some(name) = node_local.and_then(|n| pick(&nodes, n)) {
                        asks.push(Ask {
                            priority,
                            resource_name: name.clone(),
                            capability,
                            num_containers: count,
                            relax_locality: true,
                            node_label: None,
                        });
                    }
                    let _ = s.set_asks(a, &asks);
                }
            }
            Event::Heartbeat(n) => {
                if let Some(id) = pick(&nodes, n).and_then(|name| s.node_id(name)) {
                    decisions.extend(s.node_update(id, now));
                }
            }
            Event::Report(n) => {
                if let Some(id) = pick(&nodes, n).and_then(|name| s.node_id(name)) {
                    let done: Vec<_> = s.node_containers(id).take(1).map(|c| (c, 0)).collect();
                    let mut d = Vec::new();
                    prop_assert_eq!(s.node_heartbeat_into(id, &done, now, &mut d), done.len());
                    decisions.extend(d);
                }
            }
            Event::Complete { app } => {
                if let Some(&a) = pick(&apps, app) {
                    if let Some(c) = s.app_containers(a).last() {
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
            Event::Update => {
                // Incremental demand and skipped splits must give what a full recomputation gives
                // (the same update on a copy that has forgotten what the last one kept).
                let mut fresh = s.clone();
                fresh.clear_caches();
                s.update(now);
                fresh.update(now);
                check_sibling_shares(&s, ROOT)?;
                for (id, q) in s.queues() {
                    prop_assert_eq!(q.demand, fresh.queue(id).demand, "queue {} demand", q.name);
                    prop_assert_eq!(q.fair_share, fresh.queue(id).fair_share, "queue {}", q.name);
                    prop_assert_eq!(q.order_key, fresh.queue(id).order_key, "queue {} order", q.name);
                }
                for (id, a) in s.apps() {
                    prop_assert_eq!(a.demand, fresh.app_record(id).demand, "app {} demand", a.name);
                    prop_assert_eq!(a.fair_share, fresh.app_record(id).fair_share, "app {}", a.name);
                    prop_assert_eq!(a.order_key, fresh.app_record(id).order_key, "app {} order", a.name);
                }
            }
            Event::Reload(c) => {
                let file = SchedulerFile::FairXml(CONFIGS[c].to_string());
                Scheduler::reload(&mut s, &Reconfigure { site: None, file: Some(("allocations".into(), file)) })
                    .unwrap();
            }
        }
        let mismatches = s.audit();
        prop_assert!(mismatches.is_empty(), "after event {i} {e:?}: {mismatches:?}");
        for (_, n) in s.nodes() {
            prop_assert!(
                n.allocated.fits_in(&n.total),
                "node {} over-committed: {:?} of {:?}",
                n.name,
                n.allocated,
                n.total
            );
        }
    }
    Ok(decisions)
}

/// Under fair parents, children's memory shares sum to at most the parent's share plus one
/// unit per child (truncation rounds up), unless min shares alone exceed it.
fn check_sibling_shares(s: &FairScheduler, id: QueueId) -> Result<(), TestCaseError> {
    let q = s.queue(id);
    if q.leaf {
        return Ok(());
    }
    let children: Vec<QueueId> = q.children.clone();
    let sum: i64 = children.iter().map(|&c| s.queue(c).fair_share.memory()).sum();
    let mins: i64 = children.iter().map(|&c| s.queue(c).settings.min_share.memory()).sum();
    let bound = q.fair_share.memory().max(mins) + children.len() as i64;
    prop_assert!(sum <= bound, "children of {} share {sum} > {bound}", q.name);
    for c in children {
        check_sibling_shares(s, c)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_and_runs_repeat(
        config in 0..CONFIGS.len(),
        assign_multiple in any::<bool>(),
        events in proptest::collection::vec(event(), 1..80),
    ) {
        let first = run(config, assign_multiple, 0, &events)?;
        let second = run(config, assign_multiple, 0, &events)?;
        prop_assert_eq!(&first, &second);
        // Every optimisation switch keeps YARN's decisions exactly.
        for (mode, switches) in MODES.iter().enumerate().skip(1) {
            let other = run(config, assign_multiple, mode, &events)?;
            prop_assert_eq!(&first, &other, "mode {:?}", switches);
        }
    }
}
