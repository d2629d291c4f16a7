use std::collections::BTreeMap;

use fairloom_am::dynamic::DynamicAllocation;
use fairloom_am::exit::{classify, status, Cause};
use fairloom_am::matching::{match_containers, MatchLevel};
use fairloom_am::tasks::{Executor, Level, Task, TaskSet};
use fairloom_am::{explain, plan, AmState, NewRequest, PendingRequest};
use proptest::prelude::*;

fn map(pairs: &[(&str, u32)]) -> BTreeMap<String, u32> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn worked_example() -> AmState {
    AmState {
        target_executors: 16,
        running: 4,
        starting: 0,
        cores_per_executor: 2,
        cores_per_task: 1,
        locality_aware_tasks: 30,
        host_to_local_task_count: map(&[("host1", 30), ("host2", 30), ("host3", 20), ("host4", 10)]),
        allocated: map(&[("host1", 1), ("host2", 1), ("host3", 1), ("host4", 1)]),
        pending: vec![],
        host_to_rack: [("host1", "/r1"), ("host2", "/r1"), ("host3", "/r2"), ("host4", "/r2")]
            .iter()
            .map(|(h, r)| (h.to_string(), r.to_string()))
            .collect(),
    }
}

fn req(hosts: &[&str], racks: &[&str]) -> NewRequest {
    NewRequest {
        hosts: Some(hosts.iter().map(|s| s.to_string()).collect()),
        racks: Some(racks.iter().map(|s| s.to_string()).collect()),
    }
}

#[test]
fn the_worked_example_reproduces_exactly() {
    let p = plan(&worked_example()).unwrap();
    let mut want = Vec::new();
    want.extend((0..3).map(|_| req(&["host1", "host2", "host3", "host4"], &["/r1", "/r2"])));
    want.extend((0..6).map(|_| req(&["host1", "host2", "host3"], &["/r1", "/r2"])));
    want.extend((0..3).map(|_| req(&["host1", "host2"], &["/r1"])));
    assert_eq!(p.add, want);
    assert!(p.cancel.is_empty());
    let e = explain(&worked_example()).unwrap();
    assert_eq!(e.executors_for_local_tasks, 15);
    assert_eq!(e.expected, map(&[("host1", 4), ("host2", 4), ("host3", 3), ("host4", 1)]));
}

#[test]
fn the_contract_example_cancels_stale_and_trades_any_host() {
    let mut s = worked_example();
    s.pending = vec![PendingRequest { hosts: Some(vec!["host5".into()]) }, PendingRequest { hosts: None }];
    let p = plan(&s).unwrap();
    // missing 10, +1 stale cancelled = 11 available; 12 local requests: one any-host request
    // is cancelled to make room.
    assert_eq!(p.cancel, vec![0, 1]);
    assert_eq!(p.add.len(), 12);
    assert!(p.add.iter().all(|r| r.hosts.is_some()));
    // Round trip of the JSON contract.
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.starts_with("{\"cancel\":[0,1],\"add\":[{\"hosts\":[\"host1\""), "{json}");
}

#[test]
fn too_much_pending_cancels_stale_then_any_then_local() {
    let mut s = worked_example();
    s.target_executors = 5;
    s.pending = vec![
        PendingRequest { hosts: Some(vec!["host1".into()]) },
        PendingRequest { hosts: None },
        PendingRequest { hosts: Some(vec!["host9".into()]) },
    ];
    // 5 − 3 pending − 4 running = −2: cancel 2: the stale one, then the any-host one.
    assert_eq!(plan(&s).unwrap().cancel, vec![1, 2]);
    s.target_executors = 4;
    assert_eq!(plan(&s).unwrap().cancel, vec![0, 1, 2]);
}

#[test]
fn no_locality_asks_any_host() {
    let s = AmState { target_executors: 3, running: 0, cores_per_executor: 4, ..worked_example_no_locality() };
    let p = plan(&s).unwrap();
    assert_eq!(p.add, vec![NewRequest { hosts: None, racks: None }; 3]);
    assert!(plan(&AmState { cores_per_executor: 0, ..s.clone() }).is_err());
    assert!(plan(&AmState { cores_per_task: 5, ..s }).is_err());
}

fn worked_example_no_locality() -> AmState {
    AmState {
        locality_aware_tasks: 0,
        host_to_local_task_count: BTreeMap::new(),
        allocated: BTreeMap::new(),
        ..worked_example()
    }
}

fn arb_state() -> impl Strategy<Value = AmState> {
    (
        0u32..40,
        0u32..10,
        0u32..5,
        1u32..5,
        0u32..60,
        proptest::collection::btree_map("h[0-5]", 0u32..40, 0..5),
        proptest::collection::btree_map("h[0-5]", 0u32..3, 0..4),
        proptest::collection::vec(proptest::option::of(proptest::collection::vec("h[0-7]", 1..3)), 0..8),
    )
        .prop_map(|(target, running, starting, cores, tasks, wanted, allocated, pending)| AmState {
            target_executors: target,
            running,
            starting,
            cores_per_executor: cores,
            cores_per_task: 1,
            locality_aware_tasks: tasks,
            host_to_local_task_count: wanted,
            allocated,
            pending: pending.into_iter().map(|hosts| PendingRequest { hosts }).collect(),
            host_to_rack: BTreeMap::new(),
        })
}

proptest! {
    #[test]
    fn plans_keep_their_promises(s in arb_state()) {
        let e = explain(&s).unwrap();
        let p = &e.plan;
        let pending = s.pending.len() as i64;
        let missing = s.target_executors as i64 - pending - s.starting as i64 - s.running as i64;
        // Requests never exceed what is available: the missing plus what is cancelled.
        if missing > 0 {
            prop_assert!(p.add.len() as i64 <= missing + p.cancel.len() as i64);
            prop_assert_eq!(p.add.len() as i64 - p.cancel.len() as i64, missing);
            // Stale requests are always cancelled.
            for i in &e.stale {
                prop_assert!(p.cancel.contains(i));
            }
        } else {
            prop_assert!(p.add.is_empty());
            prop_assert_eq!(p.cancel.len() as i64, if pending > 0 && missing < 0 { pending.min(-missing) } else { 0 });
        }
        // No host is listed by more new requests than its share scaled to the request count.
        let aware = p.add.iter().filter(|r| r.hosts.is_some()).count() as f64;
        let largest = e.expected.values().copied().max().unwrap_or(0).max(1) as f64;
        for (host, &want) in &e.expected {
            let listed = p.add.iter().filter(|r| r.hosts.as_ref().is_some_and(|h| h.contains(host))).count() as f64;
            prop_assert!(listed <= (want as f64 * aware / largest).ceil(), "{host}: {listed} > {want}");
            if want == 0 { prop_assert_eq!(listed, 0.0); }
        }
        // Indexes are valid and distinct.
        let mut c = p.cancel.clone();
        c.dedup();
        prop_assert_eq!(c.len(), p.cancel.len());
        prop_assert!(p.cancel.iter().all(|&i| i < s.pending.len()));
    }
}

#[test]
fn containers_match_host_then_rack_then_any() {
    let racks: BTreeMap<String, String> =
        [("a1", "/ra"), ("a2", "/ra"), ("b1", "/rb")].iter().map(|(h, r)| (h.to_string(), r.to_string())).collect();
    let pending = vec![
        PendingRequest { hosts: Some(vec!["a1".into()]) },
        PendingRequest { hosts: Some(vec!["b1".into()]) },
        PendingRequest { hosts: None },
    ];
    let m = match_containers(&["a2".into(), "b1".into(), "c9".into(), "a1".into()], &pending, &racks);
    assert!(m.matched.contains(&(1, 1, MatchLevel::Host)));
    assert!(m.matched.contains(&(3, 0, MatchLevel::Host)));
    assert!(m.matched.contains(&(0, 2, MatchLevel::Any)));
    assert_eq!(m.surplus, vec![2]);
    // rack match when the host has no request
    let m = match_containers(&["a2".into()], &pending[..1], &racks);
    assert_eq!(m.matched, vec![(0, 0, MatchLevel::Rack)]);
}

#[test]
fn exit_statuses() {
    assert!(!classify(status::SUCCESS, false).caused_by_app());
    assert_eq!(classify(status::PREEMPTED, false), Cause::Preempted);
    assert!(!classify(status::PREEMPTED, false).caused_by_app());
    assert!(!classify(status::ABORTED, false).caused_by_app());
    assert!(!classify(status::DISKS_FAILED, false).caused_by_app());
    assert!(classify(status::KILLED_EXCEEDED_VMEM, false).caused_by_app());
    assert!(classify(status::KILLED_EXCEEDED_PMEM, false).caused_by_app());
    assert!(classify(1, false).caused_by_app());
    assert_eq!(classify(1, true), Cause::Released);
    assert!(!classify(1, true).caused_by_app());
}

fn exec(id: &str, host: &str, rack: &str) -> Executor {
    Executor { id: id.into(), host: host.into(), rack: rack.into() }
}

fn task(id: u64, hosts: &[&str], racks: &[&str]) -> Task {
    Task {
        id,
        executors: vec![],
        hosts: hosts.iter().map(|s| s.to_string()).collect(),
        racks: racks.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn delay_scheduling_relaxes_after_the_wait() {
    // Both tasks want h1 (rack /r1); only an executor on h2 (same rack) and one on h9 offer.
    let mut ts = TaskSet::new(vec![task(1, &["h1"], &["/r1"]), task(2, &["h1"], &["/r1"])], 0, 3_000);
    let near = exec("e2", "h2", "/r1");
    let far = exec("e9", "h9", "/r9");
    assert_eq!(ts.offer(&near, 1_000), None, "node-local wait not over");
    assert_eq!(ts.offer(&far, 2_999), None);
    // After 3 s: NoPref has no task, so rack-local is allowed.
    let (t, level) = ts.offer(&near, 3_000).unwrap();
    assert_eq!((t.id, level), (1, Level::RackLocal));
    // The launch resets the clock at rack level: off-rack waits another 3 s.
    assert_eq!(ts.offer(&far, 5_999), None);
    let (t, level) = ts.offer(&far, 6_000).unwrap();
    assert_eq!((t.id, level), (2, Level::Any));
    assert_eq!(ts.pending(), 0);
}

#[test]
fn a_local_launch_pulls_the_level_back() {
    let mut ts = TaskSet::new(
        vec![task(1, &["h1"], &["/r1"]), task(2, &["h1"], &["/r1"]), task(3, &["h1"], &["/r1"])],
        0,
        3_000,
    );
    assert_eq!(ts.offer(&exec("e2", "h2", "/r1"), 3_000).unwrap().1, Level::RackLocal);
    assert_eq!(ts.offer(&exec("e1", "h1", "/r1"), 3_100).unwrap().1, Level::NodeLocal);
    // Back at node-local: a rack-local offer waits again.
    assert_eq!(ts.offer(&exec("e2", "h2", "/r1"), 3_200), None);
    assert_eq!(ts.allowed_level(6_100), Level::RackLocal);
}

#[test]
fn tasks_without_preference_run_anywhere_at_once() {
    let mut ts = TaskSet::new(vec![task(1, &[], &[])], 0, 3_000);
    assert_eq!(ts.offer(&exec("e", "h", "/r"), 0).unwrap().1, Level::NoPref);
}

#[test]
fn dynamic_allocation_ramps_up_and_comes_down() {
    let mut d = DynamicAllocation::new(0, 100, 2);
    assert_eq!(d.update(100, 0, 0), 0, "backlog not yet sustained");
    assert_eq!(d.update(100, 0, 1_000), 1);
    assert_eq!(d.update(100, 0, 2_000), 3);
    assert_eq!(d.update(100, 0, 3_000), 7);
    assert_eq!(d.update(100, 0, 4_000), 15);
    // demand drops: 10 tasks need 5 executors
    assert_eq!(d.update(6, 4, 5_000), 5);
    assert_eq!(d.update(0, 0, 6_000), 0);
    assert!(d.should_release(0, 60_000, 3));
    assert!(!d.should_release(1, 60_000, 3));
}
