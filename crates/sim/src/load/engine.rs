//! The discrete-event simulator: node heartbeats with staggered phases, application masters
//! that ask and release through the scheduler's normal interface, container completions,
//! the periodic update, all in virtual time on a timing wheel. Wall-clock time is read only
//! here, around the scheduler's calls, to measure them.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::time::Instant;

use fairloom_model::{Resource, ANY};
use fairloom_scheduler::driver::{AnyScheduler, SubmitSpec};
use fairloom_scheduler::{AppId, Ask, ContainerId, Decision};

use super::keymap::{union, KeyMap};
use super::metrics::{Metrics, Phase};
use super::workload::Workload;

/// The driver's clock for the core's phase timers.
struct WallClock(Instant);

impl fairloom_scheduler::phases::PhaseClock for WallClock {
    fn now_ns(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }
}

#[derive(Debug, Clone)]
pub struct SimOptions {
    pub duration_ms: i64,
    pub node_heartbeat_ms: i64,
    pub am_heartbeat_ms: i64,
    /// Run the auditor this often (simulated ms); 0 = never.
    pub audit_every_ms: i64,
    /// Sample utilization, pending and queue shares this often (simulated ms).
    pub sample_every_ms: i64,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Time the core's walk phases (reading the clock inside heartbeats costs about a quarter more heartbeat time).
    pub phase_timers: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            duration_ms: 60_000,
            node_heartbeat_ms: 1_000,
            am_heartbeat_ms: 1_000,
            audit_every_ms: 60_000,
            sample_every_ms: 10_000,
            progress: false,
            phase_timers: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error("configuration: {0}")]
    Config(String),
    #[error("workload: {0}")]
    Workload(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Ev {
    Arrival(u32),
    NodeHeartbeat(u32),
    AmHeartbeat(u32),
    Done(u32),
    Update,
    Sample,
    Audit,
}

/// Events by millisecond: a wheel of `SLOTS` ms, farther events wait in a heap.
pub(crate) struct Wheel {
    slots: Vec<Vec<Ev>>,
    far: BinaryHeap<Reverse<(i64, u64, Ev)>>,
    seq: u64,
    now: i64,
}

const SLOTS: usize = 1 << 16;

impl Wheel {
    pub(crate) fn new() -> Self {
        Self { slots: (0..SLOTS).map(|_| Vec::new()).collect(), far: BinaryHeap::new(), seq: 0, now: 0 }
    }

    pub(crate) fn push(&mut self, at: i64, ev: Ev) {
        let at = at.max(self.now);
        if at - self.now < SLOTS as i64 {
            self.slots[at as usize & (SLOTS - 1)].push(ev);
        } else {
            self.seq += 1;
            self.far.push(Reverse((at, self.seq, ev)));
        }
    }

    /// The events due at `t` (in insertion order); `t` only moves forward.
    pub(crate) fn take(&mut self, t: i64) -> Vec<Ev> {
        self.now = t;
        while let Some(Reverse((at, _, ev))) = self.far.peek().copied() {
            if at - t >= SLOTS as i64 {
                break;
            }
            self.far.pop();
            self.slots[at as usize & (SLOTS - 1)].push(ev);
        }
        std::mem::take(&mut self.slots[t as usize & (SLOTS - 1)])
    }

    pub(crate) fn give_back(&mut self, t: i64, mut buf: Vec<Ev>) {
        buf.clear();
        let slot = &mut self.slots[t as usize & (SLOTS - 1)];
        if slot.is_empty() {
            *slot = buf;
        }
    }
}

const NO_APP: u32 = u32::MAX;

/// (priority, capability as an array): a request key the AM tracks.
type Key = (i32, [i64; fairloom_model::MAX_RESOURCE_TYPES]);

struct SimApp {
    id: Option<AppId>,
    stage: usize,
    /// Per group of the current stage: tasks not yet allocated.
    remaining: Vec<u64>,
    stage_total: u64,
    stage_done: u64,
    running: u64,
    /// What the scheduler still has pending, per key (ANY count).
    outstanding: KeyMap<Key, u64>,
    /// (time asked, count) queue per key, to measure ask → allocation latency.
    asked_at: KeyMap<Key, std::collections::VecDeque<(i64, u64)>>,
    am_running: bool,
    finished: bool,
    /// When the current stage started (its groups' request delays count from here).
    stage_started_ms: i64,
    /// What the AM's asks depend on (stage, remaining, outstanding) moved since its last
    /// heartbeat. When it has not, and the stage asks only at `*` without delays, the asks
    /// would be empty: the heartbeat skips computing them.
    asks_dirty: bool,
    /// The current stage's groups all ask at `*` only, at once.
    plain_stage: bool,
}

struct SimContainer {
    id: ContainerId,
    /// The container's number within its app: ids are reused once a container ends (say,
    /// preempted), so the id alone does not say it is still ours.
    seq: u32,
    app: u32,
    node: fairloom_scheduler::NodeId,
}

pub struct Simulation<'w> {
    w: &'w Workload,
    opts: SimOptions,
    s: AnyScheduler,
    wheel: Wheel,
    apps: Vec<SimApp>,
    /// By scheduler app id (dense): the workload's app index, `NO_APP` for none.
    by_app_id: Vec<u32>,
    containers: Vec<SimContainer>,
    /// Slots of `containers` whose container was reported done, reused.
    free_containers: Vec<u32>,
    /// `am_heartbeat`'s wanted counts, reused.
    want: KeyMap<Key, u64>,
    node_ids: Vec<fairloom_scheduler::NodeId>,
    /// By scheduler node id: containers whose run has ended, reported at the node's next
    /// heartbeat (as YARN's NodeManager and SLS's NM simulator report them).
    finished_on: Vec<Vec<u32>>,
    /// The heartbeat's list of finished containers, reused.
    completed: Vec<(ContainerId, i32)>,
    rack_of_host: HashMap<String, String>,
    pub metrics: Metrics,
    top_queues: Vec<String>,
    /// The heartbeat's decision buffer, reused.
    decisions: Vec<Decision>,
}

impl<'w> Simulation<'w> {
    pub fn new(w: &'w Workload, opts: SimOptions) -> Result<Self, SimError> {
        let (mut s, node_ids) =
            super::capacity::build_on(&w.allocations, w.capacity.as_ref(), &w.properties, &w.nodes)?;
        let finished_on = vec![Vec::new(); node_ids.iter().map(|n| n.index() + 1).max().unwrap_or(0)];
        let rack_of_host = w.nodes.iter().map(|n| (n.name.clone(), n.rack.clone())).collect();
        let mut wheel = Wheel::new();
        for (i, a) in w.apps.iter().enumerate() {
            wheel.push(a.arrival_ms, Ev::Arrival(i as u32));
        }
        // Staggered phases: node i heartbeats at i·interval/n within each interval.
        let n = w.nodes.len().max(1) as i64;
        for i in 0..w.nodes.len() {
            wheel.push(i as i64 * opts.node_heartbeat_ms / n, Ev::NodeHeartbeat(i as u32));
        }
        wheel.push(0, Ev::Update);
        wheel.push(0, Ev::Sample);
        if opts.audit_every_ms > 0 {
            wheel.push(opts.audit_every_ms, Ev::Audit);
        }
        let apps = w
            .apps
            .iter()
            .map(|_| SimApp {
                id: None,
                stage: 0,
                remaining: Vec::new(),
                stage_total: 0,
                stage_done: 0,
                running: 0,
                outstanding: KeyMap::default(),
                asked_at: KeyMap::default(),
                am_running: false,
                finished: false,
                stage_started_ms: 0,
                asks_dirty: true,
                plain_stage: false,
            })
            .collect();
        if opts.phase_timers {
            s.set_phase_clock(Box::new(WallClock(Instant::now())));
        }
        let top_queues = s.queue_summaries().into_iter().filter(|q| q.depth == 1).map(|q| q.name).collect();
        let metrics = Metrics::new(opts.duration_ms);
        Ok(Self {
            w,
            opts,
            s,
            wheel,
            apps,
            by_app_id: Vec::new(),
            containers: Vec::new(),
            free_containers: Vec::new(),
            want: KeyMap::default(),
            node_ids,
            finished_on,
            completed: Vec::new(),
            rack_of_host,
            metrics,
            top_queues,
            decisions: Vec::new(),
        })
    }

    pub fn scheduler(&self) -> &AnyScheduler {
        &self.s
    }

    /// Run to the end of the simulated duration.
    pub fn run(&mut self) {
        let update_ms = self.s.update_interval_ms().max(1);
        let mut progress = super::metrics::Progress::new(self.opts.progress, self.opts.duration_ms);
        for t in 0..=self.opts.duration_ms {
            // Handling an event may schedule more for the same millisecond: drain the slot.
            loop {
                let events = self.wheel.take(t);
                if events.is_empty() {
                    self.wheel.give_back(t, events);
                    break;
                }
                self.process(t, &events, update_ms, &mut progress);
                self.wheel.give_back(t, events);
            }
        }
        progress.finish();
        self.metrics.audit_runs += 1;
        self.metrics.audit_mismatches += self.s.audit().len() as u64;
    }

    fn process(&mut self, t: i64, events: &[Ev], update_ms: i64, progress: &mut super::metrics::Progress) {
        {
            for &ev in events {
                match ev {
                    Ev::Arrival(i) => self.arrive(i, t),
                    Ev::NodeHeartbeat(i) => {
                        self.heartbeat(i, t);
                        self.wheel.push(t + self.opts.node_heartbeat_ms, ev);
                    }
                    Ev::AmHeartbeat(i) => self.am_heartbeat(i, t),
                    Ev::Done(c) => self.done(c),
                    Ev::Update => {
                        let start = Instant::now();
                        self.s.update(t);
                        self.metrics.record(Phase::Update, start, t);
                        self.wheel.push(t + update_ms, ev);
                    }
                    Ev::Sample => {
                        self.metrics.sample(&self.s, t, &self.top_queues);
                        self.wheel.push(t + self.opts.sample_every_ms, ev);
                        progress.show(t, self.metrics.allocations);
                    }
                    Ev::Audit => {
                        self.metrics.audit_runs += 1;
                        self.metrics.audit_mismatches += self.s.audit().len() as u64;
                        self.wheel.push(t + self.opts.audit_every_ms, ev);
                    }
                }
            }
        }
    }

    fn arrive(&mut self, i: u32, t: i64) {
        let def = &self.w.apps[i as usize];
        let start = Instant::now();
        let spec = SubmitSpec::new(&def.name, &def.queue, &def.user, def.am);
        let id = self.s.submit(&spec, t);
        self.metrics.record(Phase::AppLifecycle, start, t);
        if self.by_app_id.len() <= id.index() {
            self.by_app_id.resize(id.index() + 1, NO_APP);
        }
        self.by_app_id[id.index()] = i;
        let app = &mut self.apps[i as usize];
        app.id = Some(id);
        if self.s.app(id).rejection.is_some() {
            app.finished = true;
            self.metrics.apps_rejected += 1;
            return;
        }
        self.metrics.apps_submitted += 1;
        if def.am.is_none() {
            app.am_running = true;
            self.start_stage(i, 0, t);
            self.wheel.push(t, Ev::AmHeartbeat(i));
        }
    }

    fn start_stage(&mut self, i: u32, stage: usize, t: i64) {
        let def = &self.w.apps[i as usize];
        let app = &mut self.apps[i as usize];
        app.stage = stage;
        app.stage_done = 0;
        app.stage_started_ms = t;
        app.asks_dirty = true;
        match def.stages.get(stage) {
            Some(s) => {
                app.remaining = s.groups.iter().map(|g| g.count).collect();
                app.stage_total = app.remaining.iter().sum();
                app.plain_stage = s.groups.iter().all(|g| g.host.is_none() && g.request_delay_ms <= 0);
            }
            None => {
                app.remaining.clear();
                app.stage_total = 0;
            }
        }
    }

    /// The AM's allocate() call: keep up to `max_outstanding` containers of the current
    /// stage asked for, at `*` and (for tasks with a host) at the host and its rack.
    fn am_heartbeat(&mut self, i: u32, t: i64) {
        let def = &self.w.apps[i as usize];
        let app = &mut self.apps[i as usize];
        if app.finished || !app.am_running {
            return;
        }
        let Some(id) = app.id else { return };
        if !app.asks_dirty && app.plain_stage {
            self.wheel.push(t + self.opts.am_heartbeat_ms, Ev::AmHeartbeat(i));
            return;
        }
        app.asks_dirty = false;
        let Some(stage) = def.stages.get(app.stage) else { return };
        let mut budget = self.w.max_outstanding.unwrap_or(u64::MAX);
        let mut want = std::mem::take(&mut self.want);
        want.clear();
        let mut hosts: BTreeMap<(Key, String), u64> = BTreeMap::new();
        for (g, remaining) in stage.groups.iter().zip(&app.remaining) {
            if g.request_delay_ms > t - app.stage_started_ms {
                continue;
            }
            let n = (*remaining).min(budget);
            budget -= n;
            if n == 0 {
                continue;
            }
            let key = (g.priority, g.resource.to_array());
            *want.entry_or_default(key) += n;
            if let Some(h) = &g.host {
                *hosts.entry((key, h.clone())).or_default() += n;
                if let Some(r) = self.rack_of_host.get(h) {
                    *hosts.entry((key, r.clone())).or_default() += n;
                }
            }
        }
        let mut asks = Vec::new();
        let keys: Vec<Key> = union(&want, &app.outstanding).collect();
        for key in keys {
            let desired = want.get(&key).copied().unwrap_or(0);
            let current = app.outstanding.get(&key).copied().unwrap_or(0);
            if desired == current {
                continue;
            }
            asks.push(Ask {
                priority: key.0,
                resource_name: ANY.to_string(),
                capability: Resource::from_values(&key.1),
                num_containers: desired.min(i32::MAX as u64) as i32,
                relax_locality: true,
                node_label: None,
            });
            let queue = app.asked_at.entry_or_default(key);
            if desired > current {
                queue.push_back((t, desired - current));
            } else {
                let mut drop = current - desired;
                while drop > 0 {
                    let Some(back) = queue.back_mut() else { break };
                    let take = back.1.min(drop);
                    back.1 -= take;
                    drop -= take;
                    if back.1 == 0 {
                        queue.pop_back();
                    }
                }
            }
            app.outstanding.insert(key, desired);
        }
        for ((key, name), n) in hosts {
            asks.push(Ask {
                priority: key.0,
                resource_name: name,
                capability: Resource::from_values(&key.1),
                num_containers: n.min(i32::MAX as u64) as i32,
                relax_locality: true,
                node_label: None,
            });
        }
        self.want = want;
        if !asks.is_empty() {
            let start = Instant::now();
            let result = self.s.set_asks(id, &asks);
            self.metrics.record(Phase::Asks, start, t);
            debug_assert!(result.is_ok());
        }
        self.wheel.push(t + self.opts.am_heartbeat_ms, Ev::AmHeartbeat(i));
    }

    fn heartbeat(&mut self, node: u32, t: i64) {
        let mut decisions = std::mem::take(&mut self.decisions);
        decisions.clear();
        let node = self.node_ids[node as usize];
        let mut finished = std::mem::take(&mut self.finished_on[node.index()]);
        self.completed.clear();
        let s = &self.s;
        let ours = |c: &SimContainer| {
            let now = s.container(c.id);
            now.alive && now.seq == c.seq && Some(now.app) == self.apps[c.app as usize].id
        };
        self.completed
            .extend(finished.iter().map(|&c| &self.containers[c as usize]).filter(|c| ours(c)).map(|c| (c.id, 0)));
        let start = Instant::now();
        self.s.node_heartbeat_into(node, &self.completed, t, &mut decisions);
        self.metrics.record(Phase::Heartbeat, start, t);
        // This heartbeat's allocations answer the asks as they stood before the completions
        // it reported, which may start an app's next stage.
        for &d in &decisions {
            match d {
                Decision::Allocated { app, container, .. } => self.allocated(app, container, t),
                Decision::Reserved { .. } => self.metrics.reservations += 1,
                Decision::Unreserved { .. } => {}
            }
        }
        for &c in &finished {
            self.reported_done(c, t);
        }
        // Give the buffer back unless a completion arrived meanwhile (as `Wheel::give_back`).
        finished.clear();
        let slot = &mut self.finished_on[node.index()];
        if slot.is_empty() {
            *slot = finished;
        }
        self.decisions = decisions;
    }

    fn allocated(&mut self, app_id: AppId, container: ContainerId, t: i64) {
        self.metrics.allocated(t);
        let Some(&i) = self.by_app_id.get(app_id.index()).filter(|&&i| i != NO_APP) else { return };
        let c = self.s.container(container);
        let (priority, resource, node, is_am, seq) = (c.priority, c.resource, c.node, c.is_am, c.seq);
        let def = &self.w.apps[i as usize];
        let app = &mut self.apps[i as usize];
        app.asks_dirty = true;
        if is_am {
            app.am_running = true;
            self.start_stage(i, 0, t);
            self.wheel.push(t, Ev::AmHeartbeat(i));
            return;
        }
        let key = (priority, resource.to_array());
        if let Some(o) = app.outstanding.get_mut(&key) {
            *o = o.saturating_sub(1);
        }
        if let Some(q) = app.asked_at.get_mut(&key) {
            if let Some(front) = q.front_mut() {
                self.metrics.latency_ms.push((t - front.0).max(0) as u32);
                front.1 -= 1;
                if front.1 == 0 {
                    q.pop_front();
                }
            }
        }
        // The task this container runs: one of the stage's groups with this key, a group
        // wanting this host first.
        let stage = &def.stages[app.stage.min(def.stages.len() - 1)];
        let host = &self.s.cluster().node(node).name;
        let pick = stage
            .groups
            .iter()
            .enumerate()
            .filter(|(g, grp)| app.remaining[*g] > 0 && grp.priority == priority && grp.resource == resource)
            .min_by_key(|(_, grp)| grp.host.as_deref() != Some(host.as_str()))
            .map(|(g, _)| g);
        let Some(g) = pick else {
            // Not needed any more (the ask shrank after it was allocated): give it back.
            let start = Instant::now();
            let _ = self.s.complete_container(container, -100);
            self.metrics.record(Phase::Completions, start, t);
            return;
        };
        app.remaining[g] -= 1;
        app.running += 1;
        if let Some(ms) = stage.groups[g].duration_ms {
            let record = SimContainer { id: container, seq, app: i, node };
            let idx = match self.free_containers.pop() {
                Some(idx) => {
                    self.containers[idx as usize] = record;
                    idx
                }
                None => {
                    self.containers.push(record);
                    self.containers.len() as u32 - 1
                }
            };
            self.wheel.push(t + ms, Ev::Done(idx));
        }
    }

    /// A container's run ended: its node reports it at its next heartbeat.
    fn done(&mut self, c: u32) {
        let node = self.containers[c as usize].node;
        self.finished_on[node.index()].push(c);
    }

    /// The AM learns that its container finished (its node has reported it).
    fn reported_done(&mut self, c: u32, t: i64) {
        let i = self.containers[c as usize].app;
        // Its run ended (`Done`) and its node reported it: nothing refers to the slot now.
        self.free_containers.push(c);
        self.metrics.completions += 1;
        let app = &mut self.apps[i as usize];
        app.running -= 1;
        app.stage_done += 1;
        if app.stage_done >= app.stage_total && app.remaining.iter().all(|&r| r == 0) {
            let next = app.stage + 1;
            if next < self.w.apps[i as usize].stages.len() {
                self.start_stage(i, next, t);
            } else if let Some(id) = self.apps[i as usize].id {
                self.apps[i as usize].finished = true;
                let start = Instant::now();
                let _ = self.s.finish_app(id);
                self.metrics.record(Phase::AppLifecycle, start, t);
                self.metrics.apps_finished += 1;
            }
        }
    }
}
