//! `ProportionalCapacityPreemptionPolicy`, one round per `update` when the monitor is on
//! (docs/capacity.md, "Proportional preemption"): a snapshot of the queues per partition, the
//! selectors in YARN's order (reserved containers, FIFO, balance after satisfied,
//! intra-queue), then each selected container is announced the first time, killed once
//! its selector's wait has passed since, and forgotten after twice the wait. The round
//! computes; `run_round` applies. The same computation explains itself for `--dry-run`.

mod fifo;
mod ideal;
mod intra;
mod queue_priority;
mod reserved;
pub mod snapshot;

use std::collections::{BTreeMap, BTreeSet};

use fairloom_model::{Millis, Resource};

use super::CapacityScheduler;
use crate::ids::{AppId, ContainerId, PartitionId, QueueId};
use snapshot::{Candidate, Snapshot};

/// Exit status of a container killed by preemption (YARN's ContainerExitStatus.PREEMPTED).
pub const PREEMPTED: i32 = -102;

/// The selectors, in the order a round runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Selector {
    QueuePriority,
    ReservedContainers,
    Fifo,
    Balance,
    IntraQueue,
}

impl Selector {
    pub fn name(self) -> &'static str {
        match self {
            Self::QueuePriority => "queue-priority",
            Self::ReservedContainers => "reserved-containers",
            Self::Fifo => "fifo",
            Self::Balance => "balance-after-satisfied",
            Self::IntraQueue => "intra-queue",
        }
    }
}

/// A container one selector picked.
#[derive(Debug, Clone, Copy)]
pub struct Picked {
    pub candidate: Candidate,
    pub queue: QueueId,
    pub selector: usize,
}

/// Every container picked so far this round, by every selector.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub picked: Vec<Picked>,
    keys: BTreeSet<(AppId, u32)>,
}

impl Selection {
    pub fn contains(&self, c: &Candidate) -> bool {
        self.keys.contains(&c.key())
    }

    pub fn add(&mut self, c: Candidate, queue: QueueId, selector: usize) {
        if self.keys.insert(c.key()) {
            self.picked.push(Picked { candidate: c, queue, selector });
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MonitorCounters {
    pub rounds: u64,
    pub containers_marked: u64,
    pub containers_killed: u64,
    pub reservations_dropped: u64,
    pub memory_freed_mb: i64,
}

/// The policy's state between rounds.
#[derive(Debug, Clone, Default)]
pub struct Monitor {
    /// Containers announced, by (app, container number): when first announced, and which.
    candidates: BTreeMap<(AppId, u32), (Millis, ContainerId)>,
    pub counters: MonitorCounters,
    /// By (queue path, partition): ideal assignment and to-preempt of the last round.
    pub last: BTreeMap<(String, PartitionId), (Resource, Resource)>,
}

impl Monitor {
    /// Containers announced and waiting for their kill.
    pub fn candidate_count(&self) -> usize {
        self.candidates.len()
    }
}

/// One queue in one partition, as the round computed it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRound {
    pub queue: String,
    pub partition: String,
    pub leaf: bool,
    pub guaranteed: Resource,
    pub max: Resource,
    pub used: Resource,
    pub pending: Resource,
    pub reserved: Resource,
    pub ideal: Resource,
    pub to_preempt: Resource,
    pub to_obtain: Resource,
    pub untouchable: Resource,
    pub preemption_disabled: bool,
    /// Used is within guarantee × (1 + max_ignored_over_capacity).
    pub in_dead_zone: bool,
}

/// A container the round selected, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct PickedContainer {
    /// `APP/N`.
    pub name: String,
    pub app: String,
    pub queue: String,
    pub node: String,
    pub partition: String,
    pub resource: Resource,
    pub is_am: bool,
    pub reservation: bool,
    pub selector: &'static str,
    pub why: String,
    /// What the round does with it: "mark", "kill", "wait" (already announced), "drop"
    /// (a reservation), or "none" (observe only).
    pub action: &'static str,
}

/// One round, explained.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PreemptionReport {
    pub time_ms: Millis,
    pub enabled: bool,
    pub observe_only: bool,
    pub budget: Resource,
    pub selectors: Vec<&'static str>,
    pub queues: Vec<QueueRound>,
    pub picked: Vec<PickedContainer>,
    /// Reservations the FIFO selector drops (YARN's KILL_RESERVED_CONTAINER).
    pub dropped: Vec<PickedContainer>,
    /// Why less (or nothing) is taken: disabled queues, dead zones, observe only.
    pub notes: Vec<String>,
}

/// What the round decided, before it is applied.
struct Decisions {
    report: PreemptionReport,
    picked: Vec<(Picked, Selector)>,
    drops: Vec<Candidate>,
    last: BTreeMap<(String, PartitionId), (Resource, Resource)>,
}

impl CapacityScheduler {
    /// The round's selections, computed on a snapshot (no state changes).
    fn compute_round(&self, now: Millis) -> Decisions {
        let cfg = &self.policy;
        let calc = self.calc;
        let mut snap = self.snapshot();
        let mut budget = self.cluster.total.multiply_truncate(cfg.total_preemption_per_round as f64);
        let report_budget = budget;
        let knobs = ideal::Knobs {
            max_ignored_over_capacity: cfg.max_ignored_over_capacity,
            natural_termination_factor: cfg.natural_termination_factor,
        };
        let mut selectors = Vec::new();
        if cfg.underutilized_preemption_enabled {
            selectors.push(Selector::QueuePriority);
        }
        if cfg.select_based_on_reserved_containers {
            selectors.push(Selector::ReservedContainers);
        }
        selectors.push(Selector::Fifo);
        if cfg.balance_enabled {
            selectors.push(Selector::Balance);
        }
        if cfg.intra_queue_enabled {
            selectors.push(Selector::IntraQueue);
        }
        let mut selection = Selection::default();
        let mut drops = Vec::new();
        let mut last_ideal: Option<Vec<Vec<(Resource, Resource)>>> = None;
        for (i, &sel) in selectors.iter().enumerate() {
            // The inter-queue selectors but the queue-priority one work from a fresh ideal
            // assignment; intra-queue reuses the last.
            let mode = match sel {
                Selector::ReservedContainers => {
                    Some(ideal::IdealMode { considers_reserved: true, balance: false, natural_termination: false })
                }
                Selector::Fifo | Selector::Balance => Some(ideal::IdealMode {
                    considers_reserved: sel == Selector::Fifo
                        && cfg.additional_res_balance_based_on_reserved_containers,
                    balance: sel == Selector::Balance,
                    natural_termination: true,
                }),
                Selector::QueuePriority | Selector::IntraQueue => None,
            };
            if let Some(mode) = mode {
                ideal::compute(&mut snap, &calc, &budget, mode, &knobs);
            }
            let conservative =
                if sel == Selector::IntraQueue { cfg.intra_queue_conservative_drf } else { cfg.conservative_drf };
            let mut taker = fifo::Taker {
                calc: &calc,
                cluster: self.cluster.total,
                budget: &mut budget,
                selection: &mut selection,
                conservative,
            };
            match sel {
                Selector::QueuePriority => queue_priority::select(self, &snap, &mut taker, i, now),
                Selector::ReservedContainers => reserved::select(self, &mut snap, &mut taker, i),
                Selector::Fifo | Selector::Balance => fifo::select(&mut snap, &mut taker, i, &mut drops),
                Selector::IntraQueue => intra::select(self, &mut snap, &mut taker, i),
            }
            if sel != Selector::IntraQueue {
                last_ideal =
                    Some(snap.queues.iter().map(|qs| qs.iter().map(|t| (t.ideal, t.to_preempt)).collect()).collect());
            }
        }
        let mut last = BTreeMap::new();
        if let Some(ideals) = &last_ideal {
            for (id, q) in self.queues() {
                for p in self.partitions() {
                    last.insert((q.name.clone(), p), ideals[p.index()][id.index()]);
                }
            }
        }
        let report = self.explain_round(&snap, &selection, &selectors, &drops, report_budget, now);
        let picked = selection.picked.iter().map(|p| (*p, selectors[p.selector])).collect();
        Decisions { report, picked, drops, last }
    }

    /// Run one round and apply it: announce, kill after the wait, drop reservations.
    pub(crate) fn preemption_round(&mut self, now: Millis) {
        // The policy's snapshot asks every leaf with activated applications for its users'
        // limits (`getTotalPendingResourcesConsideringUserLimit`).
        let leaves: Vec<QueueId> =
            self.queues().filter(|(_, q)| q.leaf && !q.active.is_empty()).map(|(id, _)| id).collect();
        for leaf in leaves {
            for p in self.partitions().collect::<Vec<_>>() {
                if self.q(leaf).parts[p.index()].accessible {
                    self.user_limit_asked(leaf, p, true, true);
                }
            }
        }
        let decisions = self.compute_round(now);
        // The FIFO selector asked every preemptable leaf for its preemption iterator, which
        // re-sorted the applications due (the round saw them re-sorted: `temp_leaf`).
        let leaves: Vec<QueueId> =
            self.queues().filter(|(_, q)| q.leaf && !q.settings.preemption_disabled).map(|(id, _)| id).collect();
        for leaf in leaves {
            self.resort(leaf);
        }
        self.monitor.counters.rounds += 1;
        self.monitor.last = decisions.last;
        if self.policy.observe_only {
            return;
        }
        for c in &decisions.drops {
            let node = &self.cluster.nodes[c.node];
            if node.reservation.is_some_and(|r| r.app == c.app && r.seq == c.seq) {
                self.unreserve(c.app, c.node);
                self.monitor.counters.reservations_dropped += 1;
            }
        }
        for (p, selector) in decisions.picked {
            let Some(container) = p.candidate.container else { continue };
            if !self.is_same_container(container, p.candidate.key()) {
                continue;
            }
            let wait = self.selector_wait(selector);
            let key = p.candidate.key();
            match self.monitor.candidates.get(&key) {
                Some(&(t0, _)) if t0.saturating_add(wait) <= now => {
                    self.monitor.candidates.remove(&key);
                    self.kill(container);
                }
                Some(_) => {}
                None => {
                    self.monitor.candidates.insert(key, (now, container));
                    self.mark(container);
                }
            }
        }
        // `cleanupStaledPreemptionCandidates`: a candidate no round has killed is forgotten
        // after twice the wait, and is no longer marked (what YARN's policy reports).
        let keep = 2 * self.policy.max_wait_before_kill_ms;
        let stale: Vec<((AppId, u32), ContainerId)> = self
            .monitor
            .candidates
            .iter()
            .filter(|(_, &(t0, _))| t0.saturating_add(keep) < now)
            .map(|(&key, &(_, c))| (key, c))
            .collect();
        for (key, container) in stale {
            self.monitor.candidates.remove(&key);
            if self.is_same_container(container, key) {
                self.unmark(container);
            }
        }
    }

    /// The round as `update` would run it now, explained (nothing changes).
    pub fn preemption_dry_run(&self, now: Millis) -> PreemptionReport {
        self.compute_round(now).report
    }

    fn selector_wait(&self, s: Selector) -> Millis {
        match s {
            Selector::Balance => self.policy.balance_max_wait_before_kill_ms,
            _ => self.policy.max_wait_before_kill_ms,
        }
    }

    /// Whether container slot `id` still holds the live container `key` names (slots are
    /// reused).
    fn is_same_container(&self, id: ContainerId, key: (AppId, u32)) -> bool {
        self.cluster.containers.get(id.index()).is_some_and(|x| x.alive && (x.app, x.seq) == key)
    }

    fn mark(&mut self, container: ContainerId) {
        let c = &mut self.cluster.containers[container];
        if c.marked_for {
            return;
        }
        c.marked_for = true;
        let (app, node) = (c.app, c.node);
        self.cluster.nodes[node].marked += 1;
        self.apps[app].marked += 1;
        self.monitor.counters.containers_marked += 1;
    }

    /// A container that ends is no longer marked.
    pub(crate) fn unmark(&mut self, container: ContainerId) {
        let c = &mut self.cluster.containers[container];
        if !c.marked_for {
            return;
        }
        c.marked_for = false;
        let (app, node) = (c.app, c.node);
        self.cluster.nodes[node].marked -= 1;
        let a = &mut self.apps[app];
        a.marked = a.marked.saturating_sub(1);
    }

    fn kill(&mut self, container: ContainerId) {
        let c = self.cluster.container(container);
        let (app, resource) = (c.app, c.resource);
        self.counters.decisions.killed(app, self.cluster.node(c.node).seq, resource);
        self.finish_container(container, PREEMPTED);
        self.apps[app].preempted += 1;
        self.monitor.counters.containers_killed += 1;
        self.monitor.counters.memory_freed_mb += resource.memory();
    }

    /// The queue's ideal assignment and to-preempt in partition `p`, as the last round
    /// left them (0 before any round).
    pub fn last_round(&self, queue: QueueId, p: PartitionId) -> (Resource, Resource) {
        self.monitor.last.get(&(self.q(queue).name.clone(), p)).copied().unwrap_or_default()
    }

    fn explain_round(
        &self,
        snap: &Snapshot,
        selection: &Selection,
        selectors: &[Selector],
        drops: &[Candidate],
        budget: Resource,
        now: Millis,
    ) -> PreemptionReport {
        let cfg = &self.policy;
        let mut queues = Vec::new();
        let mut notes = Vec::new();
        for p in snap.partitions() {
            for (id, q) in self.queues() {
                let t = snap.q(p, id);
                if p != PartitionId::DEFAULT && !q.parts[p.index()].accessible && t.used.is_none() {
                    continue;
                }
                let dead_zone = t.guaranteed.multiply_truncate(1.0 + cfg.max_ignored_over_capacity);
                let in_dead_zone = !self.calc.gt(&snap.cluster, &t.used, &dead_zone);
                if q.leaf && t.to_preempt.any_positive() {
                    let label = self.partition_name(p);
                    let at = if label.is_empty() { String::new() } else { format!(" in partition {label}") };
                    if snap.q(PartitionId::DEFAULT, id).disabled {
                        notes.push(format!(
                            "{}{at}: over its ideal assignment, but preemption is disabled for it",
                            q.name
                        ));
                    } else if in_dead_zone {
                        notes.push(format!(
                            "{}{at}: over its ideal assignment, but within the dead zone (used {} ≤ guarantee × (1 + max_ignored_over_capacity) = {})",
                            q.name,
                            crate::reason::ShowResource(&t.used),
                            crate::reason::ShowResource(&dead_zone)
                        ));
                    }
                }
                queues.push(QueueRound {
                    queue: q.name.clone(),
                    partition: self.partition_name(p).to_string(),
                    leaf: q.leaf,
                    guaranteed: t.guaranteed,
                    max: t.max,
                    used: t.used,
                    pending: t.pending,
                    reserved: t.reserved,
                    ideal: t.ideal,
                    to_preempt: t.to_preempt,
                    to_obtain: t.actually,
                    untouchable: t.untouchable,
                    preemption_disabled: t.disabled,
                    in_dead_zone,
                });
            }
        }
        if !cfg.enabled {
            notes.push("the monitor is off (yarn.resourcemanager.scheduler.monitor.enable): no round runs".to_string());
        }
        if cfg.observe_only {
            notes.push("observe_only: the round selects but announces, kills and drops nothing".to_string());
        }
        if selection.picked.is_empty() {
            notes.push("nothing is selected: no leaf needs to give anything back beyond its dead zone".to_string());
        }
        let describe = |c: &Candidate, queue: QueueId, selector: &'static str, why: String, action: &'static str| {
            PickedContainer {
                name: format!("{}/{}", self.apps[c.app].name, c.seq),
                app: self.apps[c.app].name.clone(),
                queue: self.q(queue).name.clone(),
                node: self.cluster.node(c.node).name.clone(),
                partition: self.partition_name(c.partition).to_string(),
                resource: c.resource,
                is_am: c.is_am,
                reservation: c.container.is_none(),
                selector,
                why,
                action,
            }
        };
        let picked = selection
            .picked
            .iter()
            .map(|p| {
                let selector = selectors[p.selector];
                let why = self.why_picked(snap, p, selector);
                let action = if cfg.observe_only {
                    "none"
                } else if p.candidate.container.is_none() {
                    "drop"
                } else {
                    match self.monitor.candidates.get(&p.candidate.key()) {
                        Some(&(t0, _)) if t0.saturating_add(self.selector_wait(selector)) <= now => "kill",
                        Some(_) => "wait",
                        None => "mark",
                    }
                };
                describe(&p.candidate, p.queue, selector.name(), why, action)
            })
            .collect();
        let dropped = drops
            .iter()
            .map(|c| {
                let queue = self.apps[c.app].queue.unwrap_or(super::ROOT);
                let action = if cfg.observe_only { "none" } else { "drop" };
                describe(
                    c,
                    queue,
                    "fifo",
                    "reservations of an app the FIFO selector takes from are dropped".into(),
                    action,
                )
            })
            .collect();
        PreemptionReport {
            time_ms: now,
            enabled: cfg.enabled,
            observe_only: cfg.observe_only,
            budget,
            selectors: selectors.iter().map(|s| s.name()).collect(),
            queues,
            picked,
            dropped,
            notes,
        }
    }

    fn why_picked(&self, snap: &Snapshot, p: &Picked, selector: Selector) -> String {
        let t = snap.q(p.candidate.partition, p.queue);
        let show = |r: &Resource| crate::reason::ShowResource(r).to_string();
        match selector {
            Selector::QueuePriority => {
                let node = self.cluster.node(p.candidate.node);
                let holder = node.reservation.map(|r| {
                    let app = &self.apps[r.app];
                    let queue = app.queue.map_or("?", |q| self.q(q).name.as_str());
                    format!("{}'s reservation of {} (queue {queue}, under its guarantee)", app.name, show(&r.resource))
                });
                format!(
                    "frees room on {} for {}, from a queue of lower priority",
                    node.name,
                    holder.unwrap_or_else(|| "a reservation".into())
                )
            }
            Selector::ReservedContainers => format!(
                "frees room for the reservation on {} (queue to-obtain {})",
                self.cluster.node(p.candidate.node).name,
                show(&t.actually)
            ),
            Selector::Fifo | Selector::Balance => {
                let what = if p.candidate.container.is_none() {
                    "a reservation of the app"
                } else if p.candidate.is_am {
                    "an AM container (the queue keeps more AM resource than its AM limit)"
                } else {
                    "the lowest-priority, newest container of the last app in the queue's order"
                };
                format!(
                    "{what}: {} uses {} against ideal {} (guarantee {})",
                    self.q(p.queue).name,
                    show(&t.used),
                    show(&t.ideal),
                    show(&t.guaranteed)
                )
            }
            Selector::IntraQueue => format!(
                "intra-queue: a lower-priority app (or a user over its limit) gives back to a higher-priority one in {}",
                self.q(p.queue).name
            ),
        }
    }
}
