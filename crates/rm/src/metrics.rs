//! `/metrics` in the Prometheus text format: YARN's QueueMetrics per queue and ClusterMetrics,
//! fair and steady shares, the scheduler's phase timers and allocation rate, the auditor's
//! mismatch count (all set by the event loop when it publishes), and the latency of the node
//! heartbeat and AM allocate calls (observed by the HTTP handlers as they answer).

use std::collections::BTreeSet;
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Metric, Registry};

use fairloom_model::Resource;

use crate::core::{AppState, Core, NodeState, QueueCounts};
use crate::queues::QueueRow;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct QueueLabel {
    pub queue: LabelText,
}

/// A label value from outside (a queue name: YARN lets a queue be named after whatever a
/// submission asks for, quotes and braces included), written escaped as the text format
/// requires (`\\`, `\"`, `\n`); the encoder writes values as given.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct LabelText(pub String);

impl EncodeLabelValue for LabelText {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        use std::fmt::Write;
        for c in self.0.chars() {
            match c {
                '\\' => encoder.write_str("\\\\")?,
                '"' => encoder.write_str("\\\"")?,
                '\n' => encoder.write_str("\\n")?,
                c => encoder.write_char(c)?,
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StateLabel {
    pub state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CollectionLabel {
    pub collection: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TableLabel {
    pub table: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PhaseLabel {
    pub phase: String,
}

type QueueGauge = Family<QueueLabel, Gauge>;

/// The queue gauges, in registration order (name, help).
const QUEUE_GAUGES: [(&str, &str); 20] = [
    ("queue_allocated_mb", "Memory allocated to the queue's containers (QueueMetrics AllocatedMB)"),
    ("queue_allocated_vcores", "Vcores allocated to the queue's containers (AllocatedVCores)"),
    ("queue_allocated_containers", "Live containers of the queue (AllocatedContainers)"),
    ("queue_available_mb", "Memory the queue may still get: its maximum less its use, within free room (AvailableMB)"),
    ("queue_available_vcores", "Vcores the queue may still get (AvailableVCores)"),
    ("queue_pending_mb", "Memory its runnable applications ask for (PendingMB)"),
    ("queue_pending_vcores", "Vcores its runnable applications ask for (PendingVCores)"),
    ("queue_reserved_mb", "Memory reserved on nodes for the queue's applications (ReservedMB)"),
    ("queue_reserved_vcores", "Vcores reserved for the queue's applications (ReservedVCores)"),
    ("queue_apps_running", "Applications RUNNING in the queue (AppsRunning)"),
    ("queue_apps_pending", "Applications ACCEPTED and not yet running (AppsPending)"),
    ("queue_fair_share_mb", "Instantaneous fair share (Fair) or guaranteed capacity (Capacity), memory"),
    ("queue_fair_share_vcores", "Instantaneous fair share or guaranteed capacity, vcores"),
    ("queue_steady_fair_share_mb", "Steady fair share (Fair) or configured capacity (Capacity), memory"),
    ("queue_steady_fair_share_vcores", "Steady fair share or configured capacity, vcores"),
    ("queue_max_share_mb", "Max share or maximum capacity, memory"),
    ("queue_min_share_mb", "Min share or guaranteed capacity, memory"),
    ("queue_demand_mb", "Demand: use plus outstanding asks, memory"),
    ("queue_am_resource_usage_mb", "Memory of its ApplicationMasters (AMResourceUsageMB)"),
    ("queue_max_am_share_mb", "The AM limit of the leaf (MaxAMShareMB)"),
];

/// The queue counters (cumulative since the RM started, so Prometheus counters, exposed
/// with `_total`), in registration order.
const QUEUE_COUNTERS: [(&str, &str); 6] = [
    ("queue_apps_submitted", "Applications submitted to the queue since the RM started (AppsSubmitted)"),
    ("queue_apps_completed", "Applications FINISHED since the RM started (AppsCompleted)"),
    ("queue_apps_killed", "Applications KILLED since the RM started (AppsKilled)"),
    ("queue_apps_failed", "Applications FAILED since the RM started (AppsFailed)"),
    ("queue_containers_allocated", "Containers allocated since the RM started (AggregateContainersAllocated)"),
    ("queue_containers_released", "Containers released since the RM started (AggregateContainersReleased)"),
];

type QueueCounter = Family<QueueLabel, Counter>;

pub struct RmMetrics {
    registry: Registry,
    queue: Vec<QueueGauge>,
    queue_counters: Vec<QueueCounter>,
    nodes: Family<StateLabel, Gauge>,
    apps: Family<StateLabel, Gauge>,
    phase_seconds: Family<PhaseLabel, Counter<f64, AtomicU64>>,
    allocated: Counter,
    heartbeats: Counter,
    cps: Gauge<f64, AtomicU64>,
    mismatches: Gauge,
    /// Entries of each collection the RM keeps ([`Core::footprint`]), and of each of the
    /// scheduler's arenas and tables.
    entries: Family<CollectionLabel, Gauge>,
    scheduler_entries: Family<TableLabel, Gauge>,
    /// The process's resident memory, read when `/metrics` is rendered.
    resident: Gauge,
    /// The node heartbeat as its NodeManager sees it, minus the network: from the request
    /// read to the answer ready.
    pub node_heartbeat: Histogram,
    pub am_allocate: Histogram,
    pub rest_read: Histogram,
    /// Time the event loop spent working (handling commands, ticking, publishing), not
    /// waiting: YARN's "Scheduler Busy %" as a counter.
    pub loop_busy: Counter<f64, AtomicU64>,
    /// CPU time the event loop's thread has used (its work, and waking and parking): unlike
    /// `loop_busy`, not inflated while the thread waits for a core it shares.
    pub loop_cpu: Counter<f64, AtomicU64>,
    /// What the last publish saw, to turn the core's totals into counter increments.
    last: Mutex<Last>,
}

#[derive(Default)]
struct Last {
    queues: BTreeSet<String>,
    phases_ns: [u64; 4],
    allocated: u64,
    heartbeats: u64,
    at_ms: i64,
}

fn latency() -> Histogram {
    // 100 µs to ~3.3 s.
    Histogram::new(exponential_buckets(0.0001, 2.0, 16))
}

impl Default for RmMetrics {
    fn default() -> Self {
        Self::new()
    }
}

/// One family per (name, help), registered in that order.
fn register_each<M: Metric + Clone + Default>(registry: &mut Registry, list: &[(&str, &str)]) -> Vec<M> {
    list.iter()
        .map(|(name, help)| {
            let m = M::default();
            registry.register(*name, *help, m.clone());
            m
        })
        .collect()
}

impl RmMetrics {
    pub fn new() -> Self {
        // Prometheus's conventional process metric, without the prefix; the rest under it.
        let mut root = Registry::default();
        let resident = Gauge::default();
        root.register("process_resident_memory_bytes", "Resident memory size in bytes", resident.clone());
        let registry = root.sub_registry_with_prefix("fairloom");
        let queue = register_each::<QueueGauge>(registry, &QUEUE_GAUGES);
        let queue_counters = register_each::<QueueCounter>(registry, &QUEUE_COUNTERS);
        let m = Self {
            queue,
            queue_counters,
            nodes: Family::default(),
            apps: Family::default(),
            phase_seconds: Family::default(),
            allocated: Counter::default(),
            heartbeats: Counter::default(),
            cps: Gauge::default(),
            mismatches: Gauge::default(),
            entries: Family::default(),
            scheduler_entries: Family::default(),
            resident,
            node_heartbeat: latency(),
            am_allocate: latency(),
            rest_read: latency(),
            loop_busy: Counter::default(),
            loop_cpu: Counter::default(),
            last: Mutex::new(Last::default()),
            registry: Registry::default(),
        };
        registry.register(
            "cluster_nodes",
            "NodeManagers by state (ClusterMetrics NumActiveNMs, NumLostNMs, …)",
            m.nodes.clone(),
        );
        registry.register("cluster_apps", "Applications the RM holds, by state", m.apps.clone());
        registry.register(
            "scheduler_phase_seconds",
            "Time the scheduler's node walk spent, by phase",
            m.phase_seconds.clone(),
        );
        registry.register("scheduler_containers_allocated", "Containers the scheduler allocated", m.allocated.clone());
        registry.register("scheduler_node_updates", "Node heartbeats the scheduler handled", m.heartbeats.clone());
        registry.register("scheduler_cps", "Containers allocated per second since the previous publish", m.cps.clone());
        registry.register(
            "scheduler_audit_mismatches",
            "Incremental aggregates that differ from their recomputation (should be 0)",
            m.mismatches.clone(),
        );
        registry.register(
            "rm_node_heartbeat_seconds",
            "Node heartbeat handling time in the RM",
            m.node_heartbeat.clone(),
        );
        registry.register("rm_am_allocate_seconds", "AM allocate handling time in the RM", m.am_allocate.clone());
        registry.register("rm_loop_busy_seconds", "Time the RM's event loop spent working", m.loop_busy.clone());
        registry.register("rm_loop_cpu_seconds", "CPU time the RM's event loop thread used", m.loop_cpu.clone());
        registry.register("rm_rest_read_seconds", "REST read handling time in the RM", m.rest_read.clone());
        registry.register(
            "rm_entries",
            "Entries of each collection the RM keeps (each bounded by configuration or live work)",
            m.entries.clone(),
        );
        registry.register(
            "scheduler_entries",
            "Entries of each of the scheduler's arenas and tables (each bounded by live work)",
            m.scheduler_entries.clone(),
        );
        Self { registry: root, ..m }
    }

    pub fn render(&self) -> String {
        if let Some(bytes) = resident_bytes() {
            self.resident.set(bytes as i64);
        }
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        in_stable_order(&out)
    }

    /// Move a queue's cumulative counters up to the core's totals.
    fn set_totals(&self, label: &QueueLabel, counts: &QueueCounts) {
        let totals = [
            counts.submitted,
            counts.completed,
            counts.killed,
            counts.failed,
            counts.containers_allocated,
            counts.containers_released,
        ];
        for (c, total) in self.queue_counters.iter().zip(totals) {
            // The core keeps the totals; a counter only moves up, by what was added.
            let counter = c.get_or_create(label);
            let seen = counter.get();
            if total > seen {
                counter.inc_by(total - seen);
            }
        }
    }

    /// Set every gauge from the core (the loop calls this when it publishes). `audit`: also
    /// recompute the auditor's aggregates (O(cluster), so not at every publish).
    pub fn observe(&self, core: &Core, rows: &[QueueRow], audit: bool) {
        let Ok(mut last) = self.last.lock() else { return };
        let by_queue = per_queue(core);
        let totals = rolled_up(&core.queue_counts);
        let mut seen = BTreeSet::new();
        for r in rows {
            let label = QueueLabel { queue: LabelText(r.name.clone()) };
            let counts = totals.get(r.name.as_str()).copied().unwrap_or_default();
            let q = by_queue.get(r.name.as_str()).copied().unwrap_or_default();
            let (running, pending, live, reserved) = (q.running, q.pending, q.live, q.reserved);
            let available = r.max.saturating_sub(r.used);
            let free = by_queue.free;
            let available = Resource::new(available.memory().min(free.memory()), available.vcores().min(free.vcores()));
            let values: [i64; 20] = [
                r.used.memory(),
                r.used.vcores(),
                live,
                available.memory(),
                available.vcores(),
                r.pending.memory(),
                r.pending.vcores(),
                reserved.memory(),
                reserved.vcores(),
                running,
                pending,
                r.share.memory(),
                r.share.vcores(),
                r.steady.memory(),
                r.steady.vcores(),
                r.max.memory(),
                r.min.memory(),
                r.demand.memory(),
                r.am_used.memory(),
                r.am_limit.memory(),
            ];
            for (g, v) in self.queue.iter().zip(values) {
                g.get_or_create(&label).set(v);
            }
            self.set_totals(&label, &counts);
            seen.insert(r.name.clone());
        }
        // A queue that went (an emptied dynamic queue) keeps its cumulative counts, as YARN's
        // QueueMetrics stay registered: an application that finished just before its queue
        // went must still be counted. Its gauges go with it.
        for (name, counts) in totals.iter().filter(|(name, _)| !seen.contains(**name)) {
            self.set_totals(&QueueLabel { queue: LabelText(name.to_string()) }, counts);
        }
        for gone in last.queues.difference(&seen) {
            let label = QueueLabel { queue: LabelText(gone.clone()) };
            for g in &self.queue {
                g.remove(&label);
            }
            if !totals.contains_key(gone.as_str()) {
                for c in &self.queue_counters {
                    c.remove(&label);
                }
            }
        }
        last.queues = seen;

        let node_count = |s: NodeState| core.nodes.values().filter(|n| n.state == s).count() as i64;
        for (state, s) in [
            ("active", NodeState::Running),
            ("lost", NodeState::Lost),
            ("decommissioned", NodeState::Decommissioned),
            ("shutdown", NodeState::Shutdown),
        ] {
            self.nodes.get_or_create(&StateLabel { state: state.into() }).set(node_count(s));
        }
        // fairloom has no health checker or graceful decommissioning yet: YARN's other states are 0.
        for state in ["unhealthy", "decommissioning", "rebooted"] {
            self.nodes.get_or_create(&StateLabel { state: state.into() }).set(0);
        }
        let count = AppState::tally(&core.apps);
        for s in AppState::ALL {
            let n = count(s) as i64;
            self.apps.get_or_create(&StateLabel { state: s.name().to_ascii_lowercase() }).set(n);
        }

        let p = core.sched.phases();
        let now_ns = [p.reservations_ns, p.precheck_ns, p.ordering_ns, p.assignment_ns];
        for ((name, now), before) in
            ["reservations", "precheck", "ordering", "assignment"].iter().zip(now_ns).zip(last.phases_ns)
        {
            let delta = now.saturating_sub(before);
            self.phase_seconds.get_or_create(&PhaseLabel { phase: (*name).into() }).inc_by(delta as f64 / 1e9);
        }
        last.phases_ns = now_ns;
        let c = core.sched.counters();
        let new_allocations = c.containers_allocated.saturating_sub(last.allocated);
        self.allocated.inc_by(new_allocations);
        self.heartbeats.inc_by(c.heartbeats.saturating_sub(last.heartbeats));
        let elapsed_ms = core.now - last.at_ms;
        if last.at_ms > 0 && elapsed_ms > 0 {
            self.cps.set(new_allocations as f64 * 1000.0 / elapsed_ms as f64);
        }
        last.allocated = c.containers_allocated;
        last.heartbeats = c.heartbeats;
        last.at_ms = core.now;
        if audit {
            self.mismatches.set(core.sched.audit().len() as i64);
        }
        for (collection, n) in core.footprint() {
            self.entries.get_or_create(&CollectionLabel { collection }).set(n as i64);
        }
        for (table, n) in core.sched.footprint() {
            self.scheduler_entries.get_or_create(&TableLabel { table }).set(n as i64);
        }
    }
}

/// The resident set of this process (Linux's `/proc/self/statm`, in pages), if it can be read.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok().filter(|&p| p > 0)?)
}

#[derive(Debug, Clone, Copy, Default)]
struct QueueNow {
    running: i64,
    pending: i64,
    live: i64,
    reserved: Resource,
}

struct PerQueue<'a> {
    queues: std::collections::HashMap<&'a str, QueueNow>,
    /// Unallocated room on every node.
    free: Resource,
}

impl PerQueue<'_> {
    fn get(&self, name: &str) -> Option<&QueueNow> {
        self.queues.get(name)
    }
}

/// One pass over applications and nodes for every queue's live figures.
fn per_queue(core: &Core) -> PerQueue<'_> {
    let mut queues: std::collections::HashMap<&str, QueueNow> = std::collections::HashMap::new();
    for a in core.apps.values() {
        let q = queues.entry(a.queue.as_str()).or_default();
        q.running += (a.state == AppState::Running) as i64;
        q.pending += (a.state == AppState::Accepted) as i64;
        q.live += core.containers.count_of(a.id) as i64;
    }
    let mut free = Resource::none();
    for (_, node) in core.sched.cluster().nodes() {
        free = free.saturating_add(node.unallocated());
        if let Some(r) = &node.reservation {
            if let Some(q) = core.sched.app(r.app).queue.and_then(|name| queues.get_mut(name)) {
                q.reserved = q.reserved.saturating_add(r.resource);
            }
        }
    }
    // A parent's figures are its subtree's, as YARN's parent QueueMetrics add up their
    // children's.
    let leaves: Vec<(&str, QueueNow)> = queues.iter().map(|(k, v)| (*k, *v)).collect();
    for (leaf, q) in leaves {
        for parent in ancestors(leaf) {
            let p = queues.entry(parent).or_default();
            p.running += q.running;
            p.pending += q.pending;
            p.live += q.live;
            p.reserved = p.reserved.saturating_add(q.reserved);
        }
    }
    PerQueue { queues, free }
}

/// `root.a.b`'s ancestors: `root.a`, `root`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.char_indices().filter(|&(_, c)| c == '.').map(move |(i, _)| &path[..i])
}

/// Each queue's cumulative counts with its subtree's (every queue ever counted, gone ones
/// too: YARN's parent QueueMetrics keep what their children counted).
fn rolled_up(
    counts: &std::collections::BTreeMap<String, QueueCounts>,
) -> std::collections::BTreeMap<&str, QueueCounts> {
    let mut out: std::collections::BTreeMap<&str, QueueCounts> = std::collections::BTreeMap::new();
    for (leaf, c) in counts {
        for name in std::iter::once(leaf.as_str()).chain(ancestors(leaf)) {
            out.entry(name).or_default().add(c);
        }
    }
    out
}

/// The text with each gauge and counter family's series sorted (the registry keeps them in
/// hash order, which changes from one scrape to the next); histograms keep their bucket order.
fn in_stable_order(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut series: Vec<&str> = Vec::new();
    let mut sortable = false;
    let flush = |series: &mut Vec<&str>, out: &mut String, sortable: bool| {
        if sortable {
            series.sort_unstable();
        }
        for l in series.drain(..) {
            out.push_str(l);
            out.push('\n');
        }
    };
    for line in text.lines() {
        if line.starts_with('#') {
            flush(&mut series, &mut out, sortable);
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                sortable = rest.ends_with(" gauge") || rest.ends_with(" counter");
            }
            out.push_str(line);
            out.push('\n');
        } else {
            series.push(line);
        }
    }
    flush(&mut series, &mut out, sortable);
    out
}
