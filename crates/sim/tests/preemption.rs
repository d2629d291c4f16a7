//! An app starved for both fair share and min share is one entry in YARN's starved-app queue:
//! it is processed once per update, however the entries sort.

use fairloom_scheduler::{Layout, Scheduler};
use fairloom_sim::scenario::state_at;

/// Two apps in `z` with equal starvation, each both fair-share starved (2048 = 4096 × 0.5)
/// and min-share starved (2048 each of the queue's 8192 − 4096 deficit), so the starved list
/// holds a1, a2, a1, a2 before de-duplication.
const SCENARIO: &str = r#"{
  "name": "starved-once",
  "properties": {"yarn.scheduler.minimum-allocation-mb": "0", "yarn.scheduler.increment-allocation-mb": "1024", "yarn.scheduler.fair.preemption": "true", "yarn.scheduler.fair.preemption.cluster-utilization-threshold": "0", "yarn.scheduler.fair.waitTimeBeforeKill": "0"},
  "allocations": "<allocations><queue name=\"g\"/><queue name=\"z\"><minResources>8192 mb, 8 vcores</minResources><minSharePreemptionTimeout>0</minSharePreemptionTimeout><fairSharePreemptionTimeout>0</fairSharePreemptionTimeout></queue></allocations>",
  "nodes": [{"name": "n1", "resource": {"memory-mb": 8192, "vcores": 8}}, {"name": "n2", "resource": {"memory-mb": 8192, "vcores": 8}}],
  "steps": [
    {"submit": {"app": "greedy", "queue": "g", "user": "u"}},
    {"place": {"app": "greedy", "node": "n1", "count": 8, "capability": {"memory-mb": 1024, "vcores": 1}, "priority": 1}},
    {"place": {"app": "greedy", "node": "n2", "count": 8, "capability": {"memory-mb": 1024, "vcores": 1}, "priority": 1}},
    {"submit": {"app": "a1", "queue": "z", "user": "u"}},
    {"ask": {"app": "a1", "requests": [{"priority": 1, "resource_name": "*", "capability": {"memory-mb": 1024, "vcores": 1}, "num_containers": 4}]}},
    {"submit": {"app": "a2", "queue": "z", "user": "u"}},
    {"ask": {"app": "a2", "requests": [{"priority": 1, "resource_name": "*", "capability": {"memory-mb": 1024, "vcores": 1}, "num_containers": 4}]}},
    {"observe": "asked"}
  ]
}"#;

#[test]
fn each_starved_app_is_processed_once_per_update() {
    let (s, now) = state_at(SCENARIO, Some("asked")).expect("the scenario runs");
    let Layout::Fair(s) = s.layout() else { panic!("a fair scenario") };
    let mut s = s.clone();
    let plan = s.preemption_dry_run(now);
    let names: Vec<&str> = plan.starved.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.contains(&"a1") && names.contains(&"a2"));
    for a in &plan.starved {
        assert_eq!((a.fairshare_starvation.memory(), a.minshare_starvation.memory()), (2048, 2048), "{}", a.name);
    }
    s.update(now);
    assert_eq!(s.preemption.starved_app_checks, 2);
    assert_eq!(s.preemption.containers_killed, 8);
}
