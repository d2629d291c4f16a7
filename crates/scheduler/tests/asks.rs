//! An application's asks are bounded in how many request keys they hold, in both schedulers:
//! the call that would pass the bound is refused whole, with nothing changed, and an
//! application with many priorities is looked up by binary search rather than a scan.

use fairloom_config::{parse_allocation_file, Properties, SchedulerProperties};
use fairloom_model::Resource;
use fairloom_scheduler::capacity::{CapacityScheduler, CapacitySetup};
use fairloom_scheduler::driver::{Scheduler, SubmitSpec};
use fairloom_scheduler::{Ask, FairScheduler, SchedulerError, MAX_REQUEST_KEYS};

fn fair() -> FairScheduler {
    let props = SchedulerProperties::default();
    let alloc = parse_allocation_file("<allocations><queue name=\"a\"/></allocations>", &props.resource_types).unwrap();
    FairScheduler::new(props, alloc).unwrap()
}

fn capacity() -> CapacityScheduler {
    let capacity: Properties =
        [("yarn.scheduler.capacity.root.queues", "a"), ("yarn.scheduler.capacity.root.a.capacity", "100")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    let setup = CapacitySetup { site: Properties::default(), capacity, lines: None, extra_types: Vec::new() };
    CapacityScheduler::new(setup, &[]).unwrap()
}

fn ask(priority: i32, count: i32) -> Ask {
    Ask::any(priority, Resource::new(1024, 1), count)
}

/// Fills an app to the bound, then checks that one more key is refused whole.
fn bounded(s: &mut dyn Scheduler) {
    let app = s.submit(&SubmitSpec::new("app", "a", "alice", None), 0);
    // Many priorities, given in descending order so every one lands at the front.
    let asks: Vec<Ask> = (0..MAX_REQUEST_KEYS as i32).rev().map(|p| ask(p, 1)).collect();
    s.set_asks(app, &asks).unwrap();
    let pending = s.app(app).pending;
    assert_eq!(pending, Resource::new(1024 * MAX_REQUEST_KEYS as i64, MAX_REQUEST_KEYS as i64));

    // Existing keys may change; a new one in the same call makes the whole call refused.
    let err = s.set_asks(app, &[ask(0, 5), ask(-1, 1)]).unwrap_err();
    match &err {
        SchedulerError::InvalidRequest(m) => {
            assert!(m.contains(&format!("limit is {MAX_REQUEST_KEYS}")), "{m}");
            assert!(m.contains(&format!("holds {MAX_REQUEST_KEYS}")), "{m}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(s.app(app).pending, pending, "a refused call changes nothing");

    // Keys already held still take new counts, found wherever they sit.
    s.set_asks(app, &[ask(0, 3), ask(MAX_REQUEST_KEYS as i32 - 1, 0), ask(500, 2)]).unwrap();
    assert_eq!(s.app(app).pending, pending.saturating_add(Resource::new(2048, 2)));
}

#[test]
fn fair_scheduler_bounds_request_keys() {
    bounded(&mut fair());
}

#[test]
fn capacity_scheduler_bounds_request_keys() {
    bounded(&mut capacity());
}

#[test]
fn fair_keeps_one_key_per_priority_whatever_the_sizes() {
    let mut s = fair();
    let app = s.submit(&SubmitSpec::new("app", "a", "alice", None), 0);
    let sizes = [Resource::new(1024, 1), Resource::new(2048, 1), Resource::new(1024, 2)];
    for (i, size) in sizes.iter().enumerate() {
        s.set_asks(app, &[Ask::any(7, *size, 1), Ask::any(i as i32, *size, 1)]).unwrap();
    }
    let keys: Vec<(i32, Resource)> = s.app_record(app).requests.iter().map(|r| (r.priority, r.capability)).collect();
    // One key per priority, in priority order; a later `*` ask at 7 replaced the earlier
    // ones, size included, as YARN keys asks by priority and name.
    assert_eq!(keys, vec![(0, sizes[0]), (1, sizes[1]), (2, sizes[2]), (7, sizes[2])]);
    assert_eq!(s.app_record(app).request_index(7), Some(3));
    assert_eq!(s.app_record(app).request_index(2), Some(2));
    assert_eq!(s.app_record(app).request_index(8), None);
    assert_eq!(s.app_record(app).pending, Resource::new(1024 + 2048 + 1024 + 1024, 1 + 1 + 2 + 2));
}
