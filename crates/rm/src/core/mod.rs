//! The ResourceManager's state: applications and their attempts (YARN's RMApp and
//! RMAppAttempt state machines), nodes, live containers, and the scheduler core they drive.
//! One owner (the event loop) calls these methods with `now`; nothing here reads a clock,
//! blocks, or knows about HTTP.

mod am;
mod apps;
mod containers;
mod footprint;
mod node_changes;
mod node_table;
mod nodes;
mod recovery;
mod register;
mod tokens;
mod usage;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use fairloom_config::properties::SchedulerProperties;
use fairloom_model::{ApplicationAttemptId, ApplicationId, Millis, Resource};
use fairloom_protocol::am::{AllocateResponse, Container, FinalStatus};
use fairloom_protocol::node::{KillContainer, StartContainer};
use fairloom_protocol::{ContainerStatus, Res};
use fairloom_scheduler::{AnyScheduler, AppId, ContainerId, NodeId, SchedulerConfig, SchedulerFile};

use crate::conf::{RmConf, SchedulerKind};
use crate::error::RmError;
use crate::secrets::{activation_delay, KeyGen, RollingKey};
use crate::store::StateStore;
use crate::submission::Submission;

pub use am::Allocated;
pub use apps::KillOutcome;
pub use containers::LiveContainers;
pub use node_changes::NodeChanges;
pub use node_table::NodeTable;
pub use register::{MAX_NODE_MEMORY_MB, MAX_NODE_VCORES};
pub use tokens::Keys;

/// YARN's `yarn.app.attempt.diagnostics.limit.kc` default: the most characters of
/// diagnostics kept (the last ones, as YARN's BoundedAppender keeps them).
pub const DIAGNOSTICS_LIMIT: usize = 64 * 1024;

/// `text` within [`DIAGNOSTICS_LIMIT`] characters, its end kept.
pub fn bounded(text: String) -> String {
    let total = text.chars().count();
    if total <= DIAGNOSTICS_LIMIT {
        return text;
    }
    let tail: String = text.chars().skip(total - DIAGNOSTICS_LIMIT).collect();
    format!("Diagnostic messages truncated, showing last {DIAGNOSTICS_LIMIT} chars out of {total}:\n...\n{tail}")
}

/// How many new-application ids wait for their submission at most.
pub const MAX_RESERVED_IDS: usize = 10_000;

/// YARN's RMAppState.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AppState {
    New,
    NewSaving,
    Submitted,
    Accepted,
    Running,
    Finished,
    Failed,
    Killed,
}

impl AppState {
    pub const ALL: [AppState; 8] = [
        Self::New,
        Self::NewSaving,
        Self::Submitted,
        Self::Accepted,
        Self::Running,
        Self::Finished,
        Self::Failed,
        Self::Killed,
    ];

    /// How many of `apps` are in each state, counted in one pass (views and
    /// metrics ask for several states at every publish).
    pub fn tally(apps: &BTreeMap<ApplicationId, RmApp>) -> impl Fn(AppState) -> usize {
        let mut counts = [0usize; Self::ALL.len()];
        for a in apps.values() {
            counts[a.state as usize] += 1;
        }
        move |s| counts[s as usize]
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::New => "NEW",
            Self::NewSaving => "NEW_SAVING",
            Self::Submitted => "SUBMITTED",
            Self::Accepted => "ACCEPTED",
            Self::Running => "RUNNING",
            Self::Finished => "FINISHED",
            Self::Failed => "FAILED",
            Self::Killed => "KILLED",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name().eq_ignore_ascii_case(text.trim()))
    }

    pub fn is_final(self) -> bool {
        matches!(self, Self::Finished | Self::Failed | Self::Killed)
    }
}

/// YARN's RMAppAttemptState, reduced to what an observer sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptState {
    /// Waiting for its AM container.
    Scheduled,
    /// The AM container is allocated and being started.
    Launched,
    /// The AM registered.
    Running,
    Finished,
    Failed,
    Killed,
}

impl AttemptState {
    pub fn name(self) -> &'static str {
        match self {
            Self::Scheduled => "SCHEDULED",
            Self::Launched => "LAUNCHED",
            Self::Running => "RUNNING",
            Self::Finished => "FINISHED",
            Self::Failed => "FAILED",
            Self::Killed => "KILLED",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            // NEW: YARN's name for it, which an early store wrote.
            "SCHEDULED" | "NEW" => Self::Scheduled,
            "LAUNCHED" => Self::Launched,
            "RUNNING" => Self::Running,
            "FINISHED" => Self::Finished,
            "FAILED" => Self::Failed,
            "KILLED" => Self::Killed,
            _ => return None,
        })
    }

    pub fn is_final(self) -> bool {
        matches!(self, Self::Finished | Self::Failed | Self::Killed)
    }
}

#[derive(Debug, Clone)]
pub struct Attempt {
    pub number: u32,
    pub state: AttemptState,
    pub start_time: Millis,
    pub finish_time: Millis,
    pub am_container: Option<String>,
    pub am_node: Option<String>,
    pub am_node_http: Option<String>,
    pub diagnostics: String,
    /// A failure that counts against `am.max-attempts` (YARN does not count an AM lost to
    /// preemption, a lost node, a disk failure or the RM's own kill).
    pub counts: bool,
    /// Volatile (not stored): the AM protocol's session.
    pub registered: bool,
    pub last_heartbeat: Millis,
    pub response_id: i64,
    pub last_response: Option<std::sync::Arc<AllocateResponse>>,
    pub new_allocated: Vec<Container>,
    pub new_completed: Vec<ContainerStatus>,
    /// The latest node change the AM has been told (see [`NodeChanges`]).
    pub node_changes_seen: u64,
    pub tracking_url: String,
    /// Nodes this attempt holds an NM token for (YARN sends one per node, again once the
    /// NM token key rolls or the node registers anew).
    pub nm_tokens_sent: HashSet<String>,
}

impl Attempt {
    fn new(number: u32, now: Millis) -> Self {
        Self {
            number,
            state: AttemptState::Scheduled,
            start_time: now,
            finish_time: 0,
            am_container: None,
            am_node: None,
            am_node_http: None,
            diagnostics: String::new(),
            counts: true,
            registered: false,
            last_heartbeat: now,
            response_id: 0,
            last_response: None,
            new_allocated: Vec::new(),
            new_completed: Vec::new(),
            node_changes_seen: 0,
            tracking_url: String::new(),
            nm_tokens_sent: HashSet::new(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct RmApp {
    pub id: ApplicationId,
    pub user: String,
    pub sub: Submission,
    /// The leaf the scheduler placed it in.
    pub queue: String,
    pub state: AppState,
    pub final_status: FinalStatus,
    pub diagnostics: String,
    pub submit_time: Millis,
    pub start_time: Millis,
    pub launch_time: Millis,
    pub finish_time: Millis,
    pub priority: i32,
    pub attempts: Vec<Attempt>,
    /// The scheduler's application of the current attempt, while it runs.
    pub sched: Option<AppId>,
    pub progress: f32,
    /// Aggregated usage of finished containers (MB·s, vcore·s).
    pub memory_seconds: i64,
    pub vcore_seconds: i64,
    pub preempted: Res,
    pub preempted_am: u32,
    pub preempted_non_am: u32,
}

impl RmApp {
    pub fn attempt(&self) -> Option<&Attempt> {
        self.attempts.last()
    }

    pub fn attempt_mut(&mut self) -> Option<&mut Attempt> {
        self.attempts.last_mut()
    }

    pub fn attempt_id(&self, number: u32) -> ApplicationAttemptId {
        ApplicationAttemptId { application: self.id, attempt: number }
    }

    pub fn max_attempts(&self, global: u32) -> u32 {
        // YARN takes the submission's value when it is in 1..=global.
        match self.sub.max_app_attempts {
            Some(n) if n >= 1 && n <= global => n,
            _ => global,
        }
    }
}

/// Where a live container is in the scheduler: its slot, its number within the scheduler's
/// application, and that application (slots are reused once a container ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub id: ContainerId,
    pub seq: u32,
    pub app: AppId,
}

#[derive(Debug, Clone)]
pub struct RmContainer {
    pub id: String,
    /// `id` parsed: what the live containers are keyed by.
    pub cid: fairloom_model::ContainerId,
    pub app: ApplicationId,
    pub attempt: u32,
    /// `None` once the scheduler has let it go but its process may still run (a finished
    /// application's AM, exiting).
    pub slot: Option<Slot>,
    pub node: String,
    /// The scheduler's id of that node: what a node's reports are checked against (a
    /// number compared, not a name, for every container every heartbeat reports).
    pub node_sched: NodeId,
    pub resource: Res,
    pub priority: i32,
    pub is_am: bool,
    pub allocated_at: Millis,
    /// The node has reported it running.
    pub running: bool,
}

/// YARN's NodeState, as far as fairloom tracks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeState {
    Running,
    /// Silent past the NM expiry.
    Lost,
    /// Excluded by `refreshNodes` (the include and exclude lists).
    Decommissioned,
    /// Stopped and said so, or excluded while in neither list.
    Shutdown,
}

impl NodeState {
    pub const ALL: [NodeState; 4] = [Self::Running, Self::Lost, Self::Decommissioned, Self::Shutdown];

    pub fn name(self) -> &'static str {
        match self {
            Self::Running => "RUNNING",
            Self::Lost => "LOST",
            Self::Decommissioned => "DECOMMISSIONED",
            Self::Shutdown => "SHUTDOWN",
        }
    }
}

/// What a node registered with, fixed until it registers again. One allocation shared with
/// every view the loop publishes: a publish of 5,000 nodes touched four reference counts
/// each when these were four shared strings.
#[derive(Debug)]
pub struct NodeNames {
    pub id: String,
    pub http: String,
    pub rack: String,
    pub version: String,
}

#[derive(Debug, Clone)]
pub struct RmNode {
    pub names: Arc<NodeNames>,
    pub resource: Res,
    pub sched: NodeId,
    pub state: NodeState,
    pub last_heartbeat: Millis,
    pub response_id: u64,
    pub to_start: Vec<StartContainer>,
    pub to_kill: Vec<KillContainer>,
    pub health_report: String,
    /// What this registration answered as its session: heartbeats must carry it.
    pub session: String,
    /// Ends it reported whose usage is stored: acknowledged in its next heartbeat's answer.
    pub to_ack: Vec<String>,
    /// The address its host name resolved to at registration (the host lists match it too).
    pub ip: Option<String>,
    /// The address its registration came from.
    pub peer: Option<std::net::IpAddr>,
    /// The registering NodeManager process's `instance` (see `RegisterNodeRequest`).
    pub instance: String,
}

/// The ResourceManager's whole state.
pub struct Core {
    pub conf: RmConf,
    pub sched: AnyScheduler,
    pub store: Box<dyn StateStore>,
    /// The master keys of AMRM, container and NM tokens.
    pub keys: Keys,
    /// Where new keys and node sessions come from.
    keygen: KeyGen,
    /// The RM's start time: new application ids carry it.
    pub cluster_ts: Millis,
    pub epoch: u32,
    next_app: u32,
    /// Ids handed out by new-application and not yet submitted: at most
    /// [`MAX_RESERVED_IDS`], the oldest forgotten first (a caller that never submits must not
    /// grow the RM).
    reserved_ids: std::collections::BTreeSet<ApplicationId>,
    /// Live applications and at most `max-completed-applications` finished ones.
    pub apps: BTreeMap<ApplicationId, RmApp>,
    /// The scheduler's applications of live attempts (an ended attempt's is retired).
    by_sched: HashMap<AppId, ApplicationId>,
    /// Scheduler applications the RM is done with: forgotten after the next update has
    /// taken their demand out (bounded by the applications ending between two updates).
    retired: Vec<AppId>,
    /// Live containers (bounded by what the nodes hold).
    pub containers: LiveContainers,
    /// Containers of unfinished applications that ended in this RM's life, by application:
    /// a node registering with one is not given it back. Dropped when the application
    /// finishes (its containers are refused then anyway), so the set does not grow with the
    /// RM's uptime.
    ended: HashMap<ApplicationId, HashSet<fairloom_model::ContainerId>>,
    /// Registered nodes and at most `max-inactive-nodes` that left.
    pub nodes: NodeTable,
    /// After a restart: nodes the running attempts' AMs were on that have not registered
    /// yet, since when they are awaited (bounded by the nodes of the recovered attempts).
    awaited: HashMap<String, Millis>,
    /// Applications whose usage changed since it was last stored (bounded by the live and
    /// kept applications).
    usage_dirty: HashSet<ApplicationId>,
    /// Ends nodes reported whose usage is not stored yet, by node; and every container whose
    /// end is counted but not stored (both emptied at each store, every few hundred ms).
    unflushed: HashMap<String, Vec<fairloom_model::ContainerId>>,
    awaiting_flush: HashSet<fairloom_model::ContainerId>,
    last_flush: Millis,
    /// Whether the store keeps anything across a restart (else nothing waits for it).
    durable: bool,
    /// AMs that unregistered and may still be exiting: (app, AM container, when the RM stops
    /// it), YARN's AM-finishing wait (bounded by the finishing applications).
    finishing: Vec<(ApplicationId, String, Millis)>,
    /// Each node's latest change (AMs learn them as `updated_nodes`); bounded by `nodes`.
    node_changes: NodeChanges,
    last_update: Millis,
    last_liveness: Millis,
    /// Containers of the scheduler's decisions, reused.
    decisions: Vec<fairloom_scheduler::Decision>,
    pub started_on: Millis,
    max_allocation: Res,
    min_allocation: Res,
    /// The loop's latest `now` (for elapsed times in views).
    pub now: Millis,
    /// YARN's cumulative QueueMetrics counters, by leaf queue (since this RM started): one
    /// per leaf ever used, as YARN keeps them.
    pub queue_counts: BTreeMap<String, QueueCounts>,
}

/// Cumulative per-queue counts (YARN's QueueMetrics AppsSubmitted, AppsCompleted, …).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueCounts {
    pub submitted: u64,
    pub completed: u64,
    pub killed: u64,
    pub failed: u64,
    pub containers_allocated: u64,
    pub containers_released: u64,
}

impl QueueCounts {
    /// Add `other`'s counts (a parent's are its children's sum).
    pub fn add(&mut self, other: &QueueCounts) {
        self.submitted += other.submitted;
        self.completed += other.completed;
        self.killed += other.killed;
        self.failed += other.failed;
        self.containers_allocated += other.containers_allocated;
        self.containers_released += other.containers_released;
    }
}

/// The scheduler `conf` picks, over its file (or YARN's default queue when there is none).
pub fn build_scheduler(conf: &RmConf) -> Result<AnyScheduler, RmError> {
    let mut sc = SchedulerConfig::new(conf.scheduler, conf.site.clone());
    sc.groups = conf.access.groups.clone();
    if let Some((name, text)) = &conf.scheduler_file {
        let file = match conf.scheduler {
            SchedulerKind::Fair => SchedulerFile::FairXml(text.clone()),
            SchedulerKind::Capacity => SchedulerFile::CapacityXml(text.clone()),
        };
        sc = sc.with_file(name.clone(), file);
    }
    fairloom_scheduler::build(&sc).map_err(|e| RmError::internal(e.to_string()))
}

pub fn res_of(r: Resource) -> Res {
    Res::new(r.memory(), r.vcores())
}

pub fn resource_of(r: Res) -> Resource {
    Resource::new(r.memory, r.vcores)
}

impl Core {
    /// A fresh RM, or one recovering `store`'s applications when recovery is on. New keys
    /// and sessions come from `keygen`.
    pub fn new(conf: RmConf, mut store: Box<dyn StateStore>, mut keygen: KeyGen, now: Millis) -> Result<Self, RmError> {
        let sched = build_scheduler(&conf)?;
        let props = SchedulerProperties::from_properties(&conf.site, &[]).ok();
        let max_allocation = props.as_ref().map(|p| res_of(p.maximum_allocation)).unwrap_or(Res::new(8192, 4));
        let min_allocation = props.as_ref().map(|p| res_of(p.minimum_allocation)).unwrap_or(Res::new(1024, 1));
        let recovered = store.load()?;
        let epoch =
            recovered.epoch.checked_add(1).ok_or_else(|| RmError::internal("state store: the epoch is exhausted"))?;
        store.set_epoch(epoch)?;
        let amrm = match (&recovered.amrm_keys, conf.recovery) {
            (Some((current, next)), true) => Some(RollingKey::restore(
                current.clone(),
                next.clone(),
                conf.amrm_key_rolling_ms,
                activation_delay(conf.am_expiry_ms),
                now,
            )),
            _ => None,
        };
        let stored = amrm.is_some();
        let keys = Keys::new(&conf, amrm, &mut keygen, now);
        if !stored {
            store.set_amrm_keys(keys.amrm.current(), None)?;
        }
        let mut core = Self {
            conf,
            sched,
            store,
            keys,
            keygen,
            cluster_ts: now,
            epoch,
            next_app: 1,
            reserved_ids: std::collections::BTreeSet::new(),
            apps: BTreeMap::new(),
            by_sched: HashMap::new(),
            retired: Vec::new(),
            containers: LiveContainers::default(),
            ended: HashMap::new(),
            nodes: NodeTable::default(),
            awaited: HashMap::new(),
            usage_dirty: HashSet::new(),
            unflushed: HashMap::new(),
            awaiting_flush: HashSet::new(),
            last_flush: now,
            durable: false,
            finishing: Vec::new(),
            node_changes: NodeChanges::default(),
            last_update: now,
            last_liveness: now,
            decisions: Vec::new(),
            started_on: now,
            max_allocation,
            min_allocation,
            now,
            queue_counts: BTreeMap::new(),
        };
        core.durable = core.store.durable();
        if core.conf.recovery {
            core.recover(recovered, now)?;
        }
        Ok(core)
    }

    /// The largest container (`yarn.scheduler.maximum-allocation-*`), read once at start.
    pub fn max_allocation(&self) -> Res {
        self.max_allocation
    }

    /// The periodic work: the scheduler's update (shares, preemption), containers the
    /// scheduler ended, and the liveness monitors.
    pub fn tick(&mut self, now: Millis) {
        self.roll_keys(now);
        if now - self.last_update >= self.sched.update_interval_ms().max(1) {
            self.last_update = now;
            self.sched.update(now);
            self.forget_retired();
            self.sweep_ended(now);
        }
        // YARN's liveness monitors wake every expiry/3; here at least once a second. Each
        // check walks every node and application, so not on every batch of commands.
        self.maybe_flush(now);
        let every = (self.conf.nm_expiry_ms.min(self.conf.am_expiry_ms) / 3).clamp(1, 1000);
        if now - self.last_liveness >= every {
            self.last_liveness = now;
            self.expire_nodes(now);
            self.expire_awaited(now);
            self.expire_attempts(now);
            self.stop_finished_ams(now);
            self.forget_inactive_nodes();
            let apps = &self.apps;
            self.ended.retain(|id, _| apps.get(id).is_some_and(|a| !a.state.is_final()));
        }
    }

    fn note_ended(&mut self, id: fairloom_model::ContainerId) {
        self.ended.entry(id.attempt.application).or_default().insert(id);
    }

    /// The scheduler's application `sched` (finished or rejected) is of no more use here.
    fn retire(&mut self, sched: AppId) {
        self.by_sched.remove(&sched);
        self.retired.push(sched);
    }

    fn forget_retired(&mut self) {
        for sched in std::mem::take(&mut self.retired) {
            if let Err(e) = self.sched.forget_app(sched) {
                // Kept by the scheduler, which is a leak, not a fault: say so once each.
                tracing::warn!("the scheduler keeps a finished application: {e}");
            }
        }
    }

    fn app_of_sched(&self, sched: AppId) -> Option<ApplicationId> {
        self.by_sched.get(&sched).copied()
    }

    /// Count an event of `app` in its queue's QueueMetrics.
    fn count(&mut self, app: ApplicationId, f: impl FnOnce(&mut QueueCounts)) {
        if let Some(a) = self.apps.get(&app) {
            // Looked up before it is inserted: the name is cloned once per queue, not per event.
            match self.queue_counts.get_mut(a.queue.as_str()) {
                Some(counts) => f(counts),
                None => f(self.queue_counts.entry(a.queue.clone()).or_default()),
            }
        }
    }

    pub fn app(&self, id: &str) -> Result<&RmApp, RmError> {
        let parsed: ApplicationId =
            id.parse().map_err(|_| RmError::bad_request(format!("Invalid ApplicationId: {id}")))?;
        self.apps.get(&parsed).ok_or_else(|| RmError::not_found(format!("app with id: {id} not found")))
    }

    pub fn app_mut(&mut self, id: &str) -> Result<&mut RmApp, RmError> {
        let parsed: ApplicationId =
            id.parse().map_err(|_| RmError::bad_request(format!("Invalid ApplicationId: {id}")))?;
        self.apps.get_mut(&parsed).ok_or_else(|| RmError::not_found(format!("app with id: {id} not found")))
    }

    /// Write an application's record; the RM acts on a change only after it is stored.
    fn persist(&mut self, id: ApplicationId) -> Result<(), RmError> {
        let Some(app) = self.apps.get(&id) else { return Ok(()) };
        let record = recovery::record_of(app);
        self.store.put_app(&record)?;
        Ok(())
    }

    /// [`Core::persist`] where the change has already taken effect: a store that fails is an
    /// operator's problem to see, not a reason to undo it.
    fn persist_or_log(&mut self, id: ApplicationId) {
        if let Err(e) = self.persist(id) {
            tracing::error!("{id}: cannot write it to the state store: {e}");
        }
    }

    /// YARN's `RMAppManager$ApplicationSummary` line, when an application ends.
    fn log_summary(&self, id: ApplicationId) {
        let Some(app) = self.apps.get(&id) else { return };
        // Commas separate the fields; YARN escapes them (and the escape) in values.
        let esc = |s: &str| s.replace('\\', "\\\\").replace(',', "\\,");
        let host = app.attempt().and_then(|a| a.am_node.as_deref()).unwrap_or("N/A");
        tracing::info!(
            target: "fairloom_rm::summary",
            "appId={id},name={},user={},queue={},state={},appMasterHost={},submitTime={},startTime={},launchTime={},finishTime={},finalStatus={},memorySeconds={},vcoreSeconds={},applicationType={}",
            esc(app.sub.name()),
            esc(&app.user),
            esc(&app.queue),
            app.state.name(),
            esc(host),
            app.submit_time,
            app.start_time,
            app.launch_time,
            app.finish_time,
            app.final_status.name(),
            app.memory_seconds,
            app.vcore_seconds,
            esc(app.sub.app_type()),
        );
    }

    pub fn node_changes(&self) -> &NodeChanges {
        &self.node_changes
    }
}
