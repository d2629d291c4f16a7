//! A scheduler that runs for months holds what its live work needs, not its history. Two
//! schedulers of each kind take the same long stream of events (applications that come and
//! go under many users and dynamic queues, asks naming real and unknown hosts, nodes that
//! leave and register again, preemption on): one forgets each application once it is done,
//! as the RM does, the other keeps everything, as the simulator does. Their decisions must
//! be the same, decision by decision, and the forgetting one's tables must stay within the
//! peak of its live work while the other's grow.

use fairloom_config::{parse_allocation_file, Properties, SchedulerProperties};
use fairloom_model::Resource;
use fairloom_scheduler::capacity::{CapacityScheduler, CapacitySetup};
use fairloom_scheduler::driver::{NodeSpec, SubmitSpec};
use fairloom_scheduler::{AnyScheduler, AppId, Ask, ContainerId, Decision, FairScheduler, NodeId};

/// A small deterministic generator (the stream must be the same for both twins).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn fair() -> AnyScheduler {
    let mut p = Properties::new();
    for (k, v) in [
        ("yarn.scheduler.fair.preemption", "true"),
        ("yarn.scheduler.fair.preemption.cluster-utilization-threshold", "0"),
        ("yarn.scheduler.fair.waitTimeBeforeKill", "300"),
    ] {
        p.insert(k.to_string(), v.to_string());
    }
    let props = SchedulerProperties::from_properties(&p, &[]).unwrap();
    let file = "<allocations><queue name=\"a\"><fairSharePreemptionTimeout>1</fairSharePreemptionTimeout></queue>\
                <defaultFairSharePreemptionTimeout>1</defaultFairSharePreemptionTimeout></allocations>";
    let alloc = parse_allocation_file(file, &props.resource_types).unwrap();
    Box::new(FairScheduler::new(props, alloc).unwrap())
}

fn capacity() -> AnyScheduler {
    let capacity: Properties = [
        ("root.queues", "a,b"),
        ("root.a.capacity", "40"),
        ("root.b.capacity", "60"),
        ("root.b.minimum-user-limit-percent", "25"),
        ("root.b.user-limit-factor", "2"),
        ("maximum-am-resource-percent", "0.5"),
    ]
    .into_iter()
    .map(|(k, v)| (format!("yarn.scheduler.capacity.{k}"), v.to_string()))
    .collect();
    let site: Properties = [
        ("yarn.resourcemanager.scheduler.monitor.enable", "true"),
        ("yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill", "300"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let setup = CapacitySetup { site, capacity, lines: None, extra_types: Vec::new() };
    Box::new(CapacityScheduler::new(setup, &[]).unwrap())
}

/// A decision in terms both twins share: submission and registration numbers, and the
/// container's number within its application.
fn shared(s: &AnyScheduler, d: &Decision) -> (u8, u32, u32, u32) {
    let node = |n: NodeId| s.cluster().node(n).seq;
    match *d {
        Decision::Allocated { app, container, node: n } => (0, app.seq, node(n), s.container(container).seq),
        Decision::Reserved { app, node: n } => (1, app.seq, node(n), 0),
        Decision::Unreserved { app, node: n } => (2, app.seq, node(n), 0),
    }
}

struct Twin {
    s: AnyScheduler,
    forgets: bool,
    apps: Vec<Option<AppId>>,
    nodes: Vec<Option<NodeId>>,
    retired: Vec<AppId>,
    peak_held: usize,
}

impl Twin {
    fn new(s: AnyScheduler, forgets: bool) -> Self {
        Self { s, forgets, apps: Vec::new(), nodes: Vec::new(), retired: Vec::new(), peak_held: 0 }
    }

    fn done_with(&mut self, app: AppId) {
        if self.forgets {
            self.retired.push(app);
        }
    }
}

/// One round of events for both twins; how many decisions the heartbeats made.
fn round(r: u64, rng: &mut Lcg, twins: &mut [Twin; 2], queues: &[&str]) -> usize {
    let now = r as i64 * 100;
    let mut decisions = 0;
    // Nodes: eight at first; every 20 rounds one leaves and a node registers (a new name,
    // or the same one coming back).
    if r == 0 {
        for t in twins.iter_mut() {
            let names: Vec<String> = (0..8).map(|i| format!("n{i}")).collect();
            let specs: Vec<NodeSpec> = names
                .iter()
                .enumerate()
                .map(|(i, n)| NodeSpec {
                    name: n,
                    rack: Some(if i % 2 == 0 { "/r0" } else { "/r1" }),
                    resource: Resource::new(8192, 8),
                    label: None,
                })
                .collect();
            t.nodes = t.s.add_nodes(&specs).unwrap().into_iter().map(Some).collect();
        }
    } else if r.is_multiple_of(20) {
        let leaving = rng.below(8) as usize;
        let name = if rng.below(2) == 0 { format!("n{leaving}") } else { format!("n{leaving}-{r}") };
        let rack = format!("/r{}", rng.below(3));
        for t in twins.iter_mut() {
            if let Some(n) = t.nodes[leaving].take() {
                t.s.remove_node(n);
            }
            let spec = NodeSpec { name: &name, rack: Some(&rack), resource: Resource::new(8192, 8), label: None };
            t.nodes[leaving] = Some(t.s.add_nodes(&[spec]).unwrap()[0]);
        }
    }
    // Submissions: many users, queues that come and go.
    if rng.below(3) > 0 {
        let queue = queues[rng.below(queues.len() as u64) as usize];
        let user = format!("u{}", rng.below(40));
        for t in twins.iter_mut() {
            let spec = SubmitSpec::new("app", queue, &user, Some(Resource::new(1024, 1)));
            let id = t.s.submit(&spec, now);
            if t.s.app(id).rejection.is_some() {
                t.done_with(id);
                t.apps.push(None);
            } else {
                t.apps.push(Some(id));
            }
        }
    }
    // Asks: anywhere, on a node, or on a host no node has (a new name each time).
    for _ in 0..2 {
        let k = rng.below(twins[0].apps.len() as u64) as usize;
        let count = 1 + rng.below(4) as i32;
        let host = match rng.below(3) {
            0 => None,
            1 => Some(format!("n{}", rng.below(8))),
            _ => Some(format!("ghost-{r}")),
        };
        for t in twins.iter_mut() {
            let Some(app) = t.apps.get(k).copied().flatten() else { continue };
            let mut asks =
                vec![Ask { priority: 1, resource_name: "*".into(), ..Ask::any(1, Resource::new(1024, 1), count) }];
            if let Some(h) = &host {
                asks.push(Ask { resource_name: h.clone(), ..asks[0].clone() });
            }
            // Refused when the app has finished: the same for both.
            let _ = t.s.set_asks(app, &asks);
        }
    }
    // Heartbeats, each reporting some of its containers finished: both twins decide the same.
    for i in 0..8 {
        let done = usize::from(rng.below(4) == 0);
        let mut each = Vec::new();
        for t in twins.iter_mut() {
            let Some(node) = t.nodes[i] else { continue };
            let mut live: Vec<ContainerId> = t.s.cluster().node_containers(node).collect();
            // In the order both agree on: application, then container number.
            live.sort_by_key(|&c| (t.s.container(c).app.seq, t.s.container(c).seq));
            let completed: Vec<(ContainerId, i32)> = live.into_iter().take(done).map(|c| (c, 0)).collect();
            let mut out = Vec::new();
            t.s.node_heartbeat_into(node, &completed, now, &mut out);
            each.push(out.iter().map(|d| shared(&t.s, d)).collect::<Vec<_>>());
        }
        assert_eq!(each[0], each[1], "round {r}, node {i}");
        decisions += each[0].len();
    }
    // Applications finish: the oldest once more than 30 live, and now and then any one.
    let live: Vec<usize> = (0..twins[0].apps.len()).filter(|&k| twins[0].apps[k].is_some()).collect();
    let mut ending = Vec::new();
    if live.len() > 30 {
        ending.push(live[0]);
    }
    if rng.below(3) == 0 && !live.is_empty() {
        ending.push(live[rng.below(live.len() as u64) as usize]);
    }
    for k in ending {
        for t in twins.iter_mut() {
            if let Some(app) = t.apps[k].take() {
                if t.s.finish_app(app).is_ok() {
                    t.done_with(app);
                } else {
                    t.apps[k] = Some(app);
                }
            }
        }
    }
    for t in twins.iter_mut() {
        t.s.update(now);
        // The most it held at once: live ones and those done with this round.
        t.peak_held = t.peak_held.max(t.s.app_count());
        for app in std::mem::take(&mut t.retired) {
            t.s.forget_app(app).unwrap_or_else(|e| panic!("round {r}: forgetting {app:?}: {e}"));
        }
    }
    decisions
}

fn table(s: &AnyScheduler, name: &str) -> usize {
    s.footprint().into_iter().find(|(n, _)| *n == name).map_or_else(|| panic!("no table {name}"), |(_, v)| v)
}

fn run(make: fn() -> AnyScheduler, queues: &[&str]) -> [Twin; 2] {
    let mut twins = [Twin::new(make(), true), Twin::new(make(), false)];
    let mut rng = Lcg(7);
    for r in 0..1500 {
        round(r, &mut rng, &mut twins, queues);
        // Preemption's kills happen in the update: the digests hold them too.
        assert_eq!(twins[0].s.counters().decisions, twins[1].s.counters().decisions, "round {r}");
        if r.is_multiple_of(50) {
            assert!(twins[0].s.audit().is_empty(), "round {r}: {:?}", twins[0].s.audit());
        }
    }
    assert!(twins[0].s.audit().is_empty(), "{:?}", twins[0].s.audit());
    assert!(twins[1].s.audit().is_empty(), "{:?}", twins[1].s.audit());
    let done = twins[0].s.counters().containers_allocated;
    assert!(done > 1000, "the stream did work: {done} containers");
    twins
}

fn check_bounds(twins: &[Twin; 2]) {
    let (forgetting, keeping) = (&twins[0].s, &twins[1].s);
    let submitted = twins[0].apps.len();
    assert!(submitted > 900, "{submitted} applications");
    assert!(twins[0].peak_held < 50, "live work stays small: {}", twins[0].peak_held);
    // Applications: the forgetting twin holds its live ones and never more slots than it
    // held at once; the keeping twin holds every one.
    assert_eq!(forgetting.app_count(), twins[0].apps.iter().flatten().count());
    assert!(table(forgetting, "app_slots") <= twins[0].peak_held, "{:?}", forgetting.footprint());
    assert!(table(keeping, "app_slots") >= submitted);
    // Nodes: 8 live; slots stay at 8 though 75 registrations happened.
    assert_eq!(table(forgetting, "node_slots"), 8);
    assert!(table(keeping, "node_slots") == 8, "node slots are reused by both");
    // Names: the live nodes' hosts and racks and what live asks name, not every ghost host.
    let live_asks = forgetting.footprint();
    assert!(table(forgetting, "locations") <= 8 + 3 + 2 * twins[0].apps.iter().flatten().count(), "{live_asks:?}");
}

#[test]
fn fair_scheduler_holds_live_work_only_and_decides_the_same() {
    let twins = run(fair, &["root.a", "root.dyn1", "root.dyn2", "root.dyn3", "root.team.dyn4"]);
    check_bounds(&twins);
    let (forgetting, keeping) = (&twins[0].s, &twins[1].s);
    let killed = forgetting.preemption_counters().into_iter().find(|(k, _)| *k == "containers_killed");
    assert!(killed.is_some_and(|(_, n)| n > 0), "preemption killed containers, the same in both: {killed:?}");
    // Users with nothing running are not kept.
    let live_users = twins[0].apps.iter().flatten().map(|&a| forgetting.app(a).user.to_string());
    let live_users: std::collections::BTreeSet<String> = live_users.collect();
    assert!(table(forgetting, "users") <= live_users.len(), "{:?}", forgetting.footprint());
    // Dynamic queues come and go; their slots are reused once no app names them.
    assert!(table(forgetting, "queue_slots") <= 8, "{:?}", forgetting.footprint());
    assert!(table(keeping, "queue_slots") > table(forgetting, "queue_slots"), "{:?}", keeping.footprint());
}

#[test]
fn capacity_scheduler_holds_live_work_only_and_decides_the_same() {
    let twins = run(capacity, &["a", "b", "nowhere"]);
    check_bounds(&twins);
    let forgetting = &twins[0].s;
    // Each leaf keeps a slot per user with an application there, at most.
    assert!(table(forgetting, "user_slots") <= 2 * 40, "{:?}", forgetting.footprint());
}
