//! Spark-like applications in the simulator: executors asked for with the `am` crate's
//! locality-preferred strategy (or naively, any host), allocated containers matched to
//! requests, tasks run on executors by locality level with delay scheduling. The figure
//! is the locality hit rate: how many tasks ran node-local, rack-local or off-switch.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use fairloom_am::matching::match_containers;
use fairloom_am::tasks::{Executor, Level, Task, TaskSet};
use fairloom_am::{plan, AmState, PendingRequest};
use fairloom_config::Properties;
use fairloom_model::{Resource, ANY};
use fairloom_scheduler::driver::{AnyScheduler, SubmitSpec};
use fairloom_scheduler::{AppId, Ask, Decision};

use super::engine::{Ev, SimError, Wheel};
use super::figures::{SparkReport, SparkRun};
use super::rng::Rng;
use super::workload::NodeDef;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// The `am` crate's LocalityPreferredContainerPlacementStrategy.
    Locality,
    /// Every request for any host.
    Naive,
}

#[derive(Debug, Clone)]
pub struct SparkTask {
    pub hosts: Vec<String>,
    pub duration_ms: i64,
}

#[derive(Debug, Clone)]
pub struct SparkApp {
    pub name: String,
    pub queue: String,
    pub arrival_ms: i64,
    pub executor: Resource,
    pub cores_per_executor: u32,
    pub max_executors: u32,
    pub tasks: Vec<SparkTask>,
}

#[derive(Debug, Clone)]
pub struct SparkWorkload {
    pub name: String,
    pub description: String,
    pub nodes: Vec<NodeDef>,
    pub apps: Vec<SparkApp>,
    pub allocations: String,
    /// capacity-scheduler.xml properties: when given, the Capacity Scheduler runs it.
    pub capacity: Option<Properties>,
    pub properties: Properties,
}

/// `spark-locality`: 200 nodes in 20 racks; 20 apps of 200 tasks. Each app reads a dataset
/// stored on 20 of the hosts; each task prefers the 3 of them holding its block.
pub fn locality_preset(seed: u64) -> SparkWorkload {
    let mut rng = Rng::new(seed);
    let nodes: Vec<NodeDef> = (0..200)
        .map(|i| NodeDef {
            name: format!("host{:03}", i),
            rack: format!("/rack{:02}", i / 10),
            resource: Resource::new(32_768, 16),
        })
        .collect();
    let apps = (0..20)
        .map(|a| {
            let mut data_hosts: Vec<usize> = Vec::new();
            while data_hosts.len() < 20 {
                let h = rng.below(200) as usize;
                if !data_hosts.contains(&h) {
                    data_hosts.push(h);
                }
            }
            (a, data_hosts)
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|(a, data_hosts)| SparkApp {
            name: format!("spark{a:02}"),
            queue: format!("root.team{}", a % 4),
            arrival_ms: a as i64 * 1_000,
            executor: Resource::new(4_096, 4),
            cores_per_executor: 4,
            max_executors: 25,
            tasks: (0..200)
                .map(|_| {
                    let mut replicas: Vec<usize> = Vec::new();
                    while replicas.len() < 3 {
                        let h = data_hosts[rng.below(20) as usize];
                        if !replicas.contains(&h) {
                            replicas.push(h);
                        }
                    }
                    SparkTask {
                        hosts: replicas.iter().map(|h| format!("host{h:03}")).collect(),
                        duration_ms: 10_000 + rng.below(30_000) as i64,
                    }
                })
                .collect(),
        })
        .collect();
    let mut properties = Properties::new();
    for (k, v) in [
        ("yarn.scheduler.fair.assignmultiple", "true"),
        ("yarn.scheduler.fair.locality.threshold.node", "0.5"),
        ("yarn.scheduler.fair.locality.threshold.rack", "0.5"),
    ] {
        properties.insert(k.into(), v.into());
    }
    SparkWorkload {
        name: "spark-locality".into(),
                description: "200 nodes (32 GiB, 16 vcores) in 20 racks; 20 Spark apps arriving 1 s apart in 4 queues, each reading a dataset on 20 hosts: 200 tasks of 10–40 s, each preferring the 3 hosts of its block; executors of 4 GiB / 4 cores, at most 25 each; the Fair Scheduler's delay scheduling on (thresholds 0.5)".into(),
        nodes,
        apps,
        allocations: "<allocations><queue name=\"team0\"/><queue name=\"team1\"/><queue name=\"team2\"/><queue name=\"team3\"/></allocations>".into(),
        capacity: None,
        properties,
    }
}

struct Exec {
    executor: Executor,
    free: u32,
}

struct AppState {
    id: Option<AppId>,
    tasks: TaskSet,
    running: u32,
    done: u32,
    execs: Vec<Exec>,
    pending: Vec<PendingRequest>,
    asked_locations: BTreeSet<String>,
    finished: bool,
}

/// The figures of one run.
#[derive(Debug, Clone, Default)]
pub struct LocalityFigures {
    pub by_level: BTreeMap<&'static str, u64>,
    pub tasks: u64,
    pub makespan_ms: i64,
    pub executors_started: u64,
    pub containers_released: u64,
    pub scheduler_ns: u64,
    pub audit_mismatches: usize,
    /// The scheduler's decisions digest at the end (see `fairloom_scheduler::digest`).
    pub decisions_digest: String,
}

fn level_name(l: Level) -> &'static str {
    match l {
        Level::ProcessLocal => "process_local",
        Level::NodeLocal => "node_local",
        Level::NoPref => "no_pref",
        Level::RackLocal => "rack_local",
        Level::Any => "off_switch",
    }
}

/// Run the workload with one strategy.
pub fn run(w: &SparkWorkload, strategy: Strategy, duration_ms: i64) -> Result<LocalityFigures, SimError> {
    let (mut s, node_ids) = super::capacity::build_on(&w.allocations, w.capacity.as_ref(), &w.properties, &w.nodes)?;
    let rack_of: BTreeMap<String, String> = w.nodes.iter().map(|n| (n.name.clone(), n.rack.clone())).collect();
    let mut apps: Vec<AppState> = w
        .apps
        .iter()
        .map(|a| AppState {
            id: None,
            tasks: TaskSet::new(
                a.tasks
                    .iter()
                    .enumerate()
                    .map(|(i, t)| Task {
                        id: i as u64,
                        executors: vec![],
                        hosts: t.hosts.clone(),
                        racks: t
                            .hosts
                            .iter()
                            .filter_map(|h| rack_of.get(h).cloned())
                            .collect::<BTreeSet<_>>()
                            .into_iter()
                            .collect(),
                    })
                    .collect(),
                a.arrival_ms,
                3_000,
            ),
            running: 0,
            done: 0,
            execs: Vec::new(),
            pending: Vec::new(),
            asked_locations: BTreeSet::new(),
            finished: false,
        })
        .collect();
    let mut by_app: BTreeMap<AppId, usize> = BTreeMap::new();
    let mut figures = LocalityFigures::default();
    // Running tasks: (app, executor index, task duration) by completion event index.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut wheel = Wheel::new();
    for (i, a) in w.apps.iter().enumerate() {
        wheel.push(a.arrival_ms, Ev::Arrival(i as u32));
    }
    let n = node_ids.len() as i64;
    for i in 0..node_ids.len() {
        wheel.push(i as i64 * 1_000 / n.max(1), Ev::NodeHeartbeat(i as u32));
    }
    wheel.push(0, Ev::Update);
    let timed = |f: &mut dyn FnMut(), ns: &mut u64| {
        let start = Instant::now();
        f();
        *ns += start.elapsed().as_nanos() as u64;
    };
    for t in 0..=duration_ms {
        loop {
            let events = wheel.take(t);
            if events.is_empty() {
                wheel.give_back(t, events);
                break;
            }
            for &ev in &events {
                match ev {
                    Ev::Arrival(i) => {
                        let a = &w.apps[i as usize];
                        let mut id = None;
                        timed(
                            &mut || id = Some(s.submit(&SubmitSpec::new(&a.name, &a.queue, "spark", None), t)),
                            &mut figures.scheduler_ns,
                        );
                        let id = id.expect("set above");
                        apps[i as usize].id = Some(id);
                        by_app.insert(id, i as usize);
                        wheel.push(t, Ev::AmHeartbeat(i));
                    }
                    Ev::Update => {
                        timed(&mut || s.update(t), &mut figures.scheduler_ns);
                        wheel.push(t + 500, Ev::Update);
                    }
                    Ev::NodeHeartbeat(i) => {
                        let mut decisions = Vec::new();
                        timed(&mut || decisions = s.node_update(node_ids[i as usize], t), &mut figures.scheduler_ns);
                        for d in decisions {
                            let Decision::Allocated { app, container, node } = d else { continue };
                            let Some(&k) = by_app.get(&app) else { continue };
                            let host = s.cluster().node(node).name.clone();
                            let st = &mut apps[k];
                            let m = match_containers(std::slice::from_ref(&host), &st.pending, &rack_of);
                            if let Some(&(_, req, _)) = m.matched.first() {
                                st.pending.remove(req);
                                let rack = rack_of.get(&host).cloned().unwrap_or_default();
                                st.execs.push(Exec {
                                    executor: Executor {
                                        id: format!("{}-{}", w.apps[k].name, st.execs.len()),
                                        host,
                                        rack,
                                    },
                                    free: w.apps[k].cores_per_executor,
                                });
                                figures.executors_started += 1;
                            } else {
                                figures.containers_released += 1;
                                timed(&mut || drop(s.complete_container(container, -105)), &mut figures.scheduler_ns);
                            }
                        }
                        wheel.push(t + 1_000, ev);
                    }
                    Ev::AmHeartbeat(i) => {
                        let k = i as usize;
                        if apps[k].finished {
                            continue;
                        }
                        am_heartbeat(&mut s, &w.apps[k], &mut apps[k], strategy, &rack_of, &mut figures.scheduler_ns);
                        wheel.push(t + 1_000, ev);
                    }
                    Ev::Done(r) => {
                        let (k, e) = runs[r as usize];
                        let st = &mut apps[k];
                        st.execs[e].free += 1;
                        st.running -= 1;
                        st.done += 1;
                        if st.done as usize == w.apps[k].tasks.len() {
                            st.finished = true;
                            figures.makespan_ms = figures.makespan_ms.max(t);
                            if let Some(id) = st.id {
                                timed(&mut || drop(s.finish_app(id)), &mut figures.scheduler_ns);
                            }
                        }
                    }
                    Ev::Sample | Ev::Audit => {}
                }
            }
            // Free executor slots take tasks, best locality first, with delay scheduling.
            for (k, st) in apps.iter_mut().enumerate() {
                for (e, exec) in st.execs.iter_mut().enumerate() {
                    while exec.free > 0 {
                        let Some((task, level)) = st.tasks.offer(&exec.executor, t) else { break };
                        exec.free -= 1;
                        st.running += 1;
                        *figures.by_level.entry(level_name(level)).or_default() += 1;
                        figures.tasks += 1;
                        runs.push((k, e));
                        wheel
                            .push(t + w.apps[k].tasks[task.id as usize].duration_ms, Ev::Done((runs.len() - 1) as u32));
                    }
                }
            }
            wheel.give_back(t, events);
        }
    }
    figures.audit_mismatches = s.audit().len();
    figures.decisions_digest = s.counters().decisions.hex();
    Ok(figures)
}

/// The AM's allocate(): plan requests with the strategy, then send YARN asks summed per
/// host, rack and `*` (as AMRMClient aggregates container requests).
fn am_heartbeat(
    s: &mut AnyScheduler,
    app: &SparkApp,
    st: &mut AppState,
    strategy: Strategy,
    rack_of: &BTreeMap<String, String>,
    scheduler_ns: &mut u64,
) {
    let Some(id) = st.id else { return };
    let pending_tasks = st.tasks.pending() as u32;
    let target = (pending_tasks + st.running).div_ceil(app.cores_per_executor).min(app.max_executors);
    // The driver's view: pending tasks' preferred hosts (only for the locality strategy).
    let mut wanted: BTreeMap<String, u32> = BTreeMap::new();
    let local_tasks = if strategy == Strategy::Locality { pending_hosts(st, &mut wanted) } else { 0 };
    let mut allocated: BTreeMap<String, u32> = BTreeMap::new();
    for e in &st.execs {
        *allocated.entry(e.executor.host.clone()).or_default() += 1;
    }
    let state = AmState {
        target_executors: target,
        running: st.execs.len() as u32,
        starting: 0,
        cores_per_executor: app.cores_per_executor,
        cores_per_task: 1,
        locality_aware_tasks: local_tasks,
        host_to_local_task_count: wanted,
        allocated,
        pending: st.pending.clone(),
        host_to_rack: rack_of.clone(),
    };
    let Ok(p) = plan(&state) else { return };
    for &i in p.cancel.iter().rev() {
        st.pending.remove(i);
    }
    for r in p.add {
        st.pending.push(PendingRequest { hosts: r.hosts });
    }
    // Aggregate: every request counts at `*`, at each of its hosts and at their racks.
    let mut counts: BTreeMap<String, i32> = BTreeMap::new();
    for r in &st.pending {
        *counts.entry(ANY.to_string()).or_default() += 1;
        let mut racks = BTreeSet::new();
        for h in r.hosts.iter().flatten() {
            *counts.entry(h.clone()).or_default() += 1;
            if let Some(rk) = rack_of.get(h) {
                racks.insert(rk.clone());
            }
        }
        for rk in racks {
            *counts.entry(rk).or_default() += 1;
        }
    }
    let mut asks = Vec::new();
    let locations: BTreeSet<String> = counts.keys().cloned().chain(st.asked_locations.iter().cloned()).collect();
    for loc in &locations {
        let n = counts.get(loc).copied().unwrap_or(0);
        asks.push(Ask {
            priority: 1,
            resource_name: loc.clone(),
            capability: app.executor,
            num_containers: n,
            relax_locality: true,
            node_label: None,
        });
    }
    st.asked_locations = counts.keys().cloned().collect();
    if !asks.is_empty() {
        let start = Instant::now();
        let _ = s.set_asks(id, &asks);
        *scheduler_ns += start.elapsed().as_nanos() as u64;
    }
}

/// Host → count of pending tasks preferring it; returns how many pending tasks have a preference.
fn pending_hosts(st: &AppState, out: &mut BTreeMap<String, u32>) -> u32 {
    let mut n = 0;
    for task in st.tasks.pending_tasks() {
        if !task.hosts.is_empty() {
            n += 1;
        }
        for h in &task.hosts {
            *out.entry(h.clone()).or_default() += 1;
        }
    }
    n
}

/// Both strategies on the same workload.
pub fn compare(w: &SparkWorkload, duration_ms: i64) -> Result<SparkReport, SimError> {
    let mut runs = Vec::new();
    for (name, strategy) in [("locality", Strategy::Locality), ("naive", Strategy::Naive)] {
        let f = run(w, strategy, duration_ms)?;
        let share = |k: &str| f.by_level.get(k).copied().unwrap_or(0) as f64 / f.tasks.max(1) as f64;
        runs.push(SparkRun {
            strategy: name.to_string(),
            tasks: f.tasks,
            node_local: share("node_local"),
            rack_local: share("rack_local"),
            off_switch: share("off_switch"),
            no_pref: share("no_pref"),
            makespan_s: f.makespan_ms as f64 / 1000.0,
            executors_started: f.executors_started,
            containers_released: f.containers_released,
            scheduler_seconds: f.scheduler_ns as f64 / 1e9,
            audit_mismatches: f.audit_mismatches as u64,
            decisions_digest: f.decisions_digest.clone(),
        });
    }
    Ok(SparkReport {
        workload: w.name.clone(),
        description: w.description.clone(),
        simulated_seconds: duration_ms as f64 / 1000.0,
        runs,
        wall_seconds: None,
    })
}
