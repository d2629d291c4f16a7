//! The event loop: one thread owns the [`Core`]; handlers send it commands over a channel
//! and read the immutable [`Snapshot`] it publishes. Wall-clock time is read here, once per
//! batch, and passed in.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::oneshot;

use fairloom_model::{ApplicationId, Millis};
use fairloom_protocol::am::{
    AllocateRequest, FinishAmRequest, FinishAmResponse, RegisterAmRequest, RegisterAmResponse,
};
use fairloom_protocol::node::{
    NodeHeartbeatRequest, NodeHeartbeatResponse, RegisterNodeRequest, RegisterNodeResponse, UnregisterNodeRequest,
    UnregisterNodeResponse,
};
use fairloom_protocol::token::{AmrmTokenId, Token};
use fairloom_protocol::Res;
use fairloom_scheduler::phases::PhaseClock;

use crate::core::{Allocated, AppState, Core, KillOutcome};
use crate::dao::{self, ContainerRow, NodeRow};
use crate::error::RmError;
use crate::explain::{self, Wait};
use crate::metrics::RmMetrics;
use crate::queues::{self, QueueRow};
use crate::submission::Submission;

type Reply<T> = oneshot::Sender<Result<T, RmError>>;

pub enum Command {
    NewApplication(Reply<(ApplicationId, Res)>),
    Submit(Box<Submission>, String, Reply<ApplicationId>),
    /// App id, caller.
    Kill(String, String, Reply<KillOutcome>),
    /// App id, target queue, caller.
    Move(String, String, String, Reply<String>),
    /// App id, priority, caller.
    Priority(String, i32, String, Reply<i32>),
    /// The request, the address its node's host name resolved to, and where it came from.
    RegisterNode(RegisterNodeRequest, Option<String>, Option<std::net::IpAddr>, Reply<RegisterNodeResponse>),
    UnregisterNode(UnregisterNodeRequest, Reply<UnregisterNodeResponse>),
    /// `refreshNodes` by the caller: the host lists read again; the nodes that had to leave.
    RefreshNodes(String, Reply<Vec<String>>),
    /// The answer comes with the request handed back: its strings (every container's id)
    /// are freed on the handler's thread, not the loop's.
    NodeHeartbeat(NodeHeartbeatRequest, Reply<(NodeHeartbeatResponse, NodeHeartbeatRequest)>),
    /// Each with the caller's AMRM token: which attempt calls is what it says.
    RegisterAm(RegisterAmRequest, Token, Reply<RegisterAmResponse>),
    Allocate(AllocateRequest, Token, Reply<Allocated>),
    FinishAm(FinishAmRequest, Token, Reply<FinishAmResponse>),
    /// An application's live containers, for a reader (not in the snapshot: O(containers)).
    Containers(ApplicationId, Reply<Vec<ContainerRow>>),
    /// The applications a caller may not view (VIEW_APP), in id order: every one, or only
    /// the one named.
    Hidden(String, Option<ApplicationId>, Reply<Vec<ApplicationId>>),
}

/// One application as readers see it.
#[derive(Debug, Clone)]
pub struct AppSnap {
    pub key: ApplicationId,
    pub id: String,
    pub state: AppState,
    pub final_status: &'static str,
    pub user: String,
    pub queue: String,
    pub app_type: String,
    pub tags: Vec<String>,
    pub name: String,
    pub started: Millis,
    pub finished: Millis,
    pub figures: dao::AppFigures,
    /// YARN's AppInfo, made from the above by the first reader that asks.
    info: OnceLock<dao::AppInfo>,
    /// Its attempts. Their containers are not copied at every publish: readers ask the loop
    /// for them ([`LoopClient::containers`]).
    attempt_rows: Vec<dao::AttemptRow>,
    /// Its AppAttemptInfos, made from the rows by the first reader that asks.
    attempts: OnceLock<Vec<dao::AppAttemptInfo>>,
    containers_changed: Option<u64>,
    /// Why it waits, when it does.
    pub wait: Option<Wait>,
}

impl AppSnap {
    /// YARN's AppInfo of this application.
    pub fn info(&self) -> &dao::AppInfo {
        self.info.get_or_init(|| dao::AppInfo::of(self))
    }

    /// YARN's AppAttemptInfo of each attempt.
    pub fn attempts(&self) -> &[dao::AppAttemptInfo] {
        self.attempts.get_or_init(|| self.attempt_rows.iter().map(|r| dao::AppAttemptInfo::of(r, &self.user)).collect())
    }

    /// Whether a reader who may not view the applications in `hidden` (sorted) may view it.
    pub fn visible(&self, hidden: &[ApplicationId]) -> bool {
        hidden.binary_search(&self.key).is_err()
    }

    /// Its AppInfo as that reader sees it.
    pub fn info_for(&self, hidden: &[ApplicationId]) -> Cow<'_, dao::AppInfo> {
        self.info_seen(self.visible(hidden))
    }

    /// Its AppInfo whole to a reader who may view it, else without what VIEW_APP guards.
    pub fn info_seen(&self, may_view: bool) -> Cow<'_, dao::AppInfo> {
        if may_view {
            Cow::Borrowed(self.info())
        } else {
            Cow::Owned(self.info().restricted())
        }
    }
}

/// What readers see, published by the loop after changes.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub cluster_info: dao::ClusterInfo,
    pub metrics: dao::ClusterMetricsInfo,
    pub scheduler: Arc<dao::SchedulerInfo>,
    /// By application id. Shared between snapshots: a client's write replaces one entry.
    pub apps: Vec<Arc<AppSnap>>,
    /// Every node, rendered as YARN's NodeInfo when read.
    pub nodes: Arc<Vec<NodeRow>>,
    pub max_allocation: Res,
    /// Every queue in tree order (the web UI's bars).
    pub queues: Arc<Vec<QueueRow>>,
    /// `fair` or `capacity`.
    pub scheduler_kind: &'static str,
    /// `yarn.acl.enable`: readers then ask the loop what a caller may view.
    pub acl_enabled: bool,
    /// Whether include or exclude host lists are in force (registrations then resolve the
    /// node's host name, which the lists may name by address).
    pub host_lists: bool,
}

/// `app` as readers see it. A finished application whose containers have not changed since
/// `prev`, its view in the previous snapshot, is shared as it was.
fn app_snap(core: &Core, app: &crate::core::RmApp, prev: Option<&Arc<AppSnap>>) -> Arc<AppSnap> {
    let changed = core.containers.changed(app.id);
    let same = prev.filter(|p| p.containers_changed == changed && p.state.is_final() && p.state == app.state);
    if let Some(p) = same {
        return p.clone();
    }
    Arc::new(AppSnap {
        key: app.id,
        id: app.id.to_string(),
        state: app.state,
        final_status: app.final_status.name(),
        user: app.user.clone(),
        queue: app.queue.clone(),
        app_type: app.sub.app_type().to_string(),
        tags: app.sub.tags(),
        name: app.sub.name().to_string(),
        started: app.start_time,
        finished: app.finish_time,
        figures: dao::AppFigures::of(core, app),
        info: OnceLock::new(),
        wait: explain::wait_of(core, app),
        attempt_rows: app.attempts.iter().map(|a| dao::AttemptRow::of(app, a)).collect(),
        attempts: OnceLock::new(),
        containers_changed: changed,
    })
}

impl Snapshot {
    /// The core as it is now: the applications and nodes, not every live container.
    /// What `prev` (the last snapshot published) holds unchanged is shared, not rebuilt.
    pub fn of(core: &Core, prev: Option<&Snapshot>) -> Self {
        let prev_apps = prev.map(|p| &p.apps[..]).unwrap_or_default();
        let apps = core
            .apps
            .values()
            .map(|app| {
                let before = prev_apps.binary_search_by_key(&app.id, |a| a.key).ok().map(|i| &prev_apps[i]);
                app_snap(core, app, before)
            })
            .collect();
        let nodes = core.nodes.values().map(|n| NodeRow::of(core, n)).collect();
        Self {
            cluster_info: dao::cluster_info(core),
            metrics: dao::cluster_metrics(core),
            scheduler: Arc::new(dao::scheduler(core)),
            apps,
            nodes: Arc::new(nodes),
            max_allocation: core.max_allocation(),
            queues: Arc::new(queues::rows(core)),
            scheduler_kind: core.sched.kind().name(),
            acl_enabled: core.conf.access.enabled,
            host_lists: !(core.conf.hosts.include.is_empty() && core.conf.hosts.exclude.is_empty()),
        }
    }

    /// This snapshot with application `id` as the core has it now (added, replaced or, when
    /// the core evicted it, removed) and the cluster metrics refreshed: what a client's write
    /// must show at once, without rebuilding every application and node.
    pub fn with_app(&self, core: &Core, id: ApplicationId) -> Self {
        let mut apps = self.apps.clone();
        let at = apps.binary_search_by_key(&id, |a| a.key);
        match (core.apps.get(&id), at) {
            (Some(app), Ok(i)) => apps[i] = app_snap(core, app, None),
            (Some(app), Err(i)) => apps.insert(i, app_snap(core, app, None)),
            (None, Ok(i)) => {
                apps.remove(i);
            }
            (None, Err(_)) => {}
        }
        // Evictions of other finished applications show at the next full publish.
        Self { apps, metrics: dao::cluster_metrics(core), cluster_info: dao::cluster_info(core), ..self.clone() }
    }
}

pub type Shared = Arc<RwLock<Arc<Snapshot>>>;

pub fn wall_ms() -> Millis {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as Millis).unwrap_or(0)
}

/// How often the loop wakes without commands (liveness monitors, the scheduler's update).
const TICK: Duration = Duration::from_millis(50);
/// The longest a reader's view lags behind heartbeats and allocations.
const PUBLISH_EVERY: Duration = Duration::from_millis(200);

/// How often `/metrics` recomputes the auditor's aggregates (O(cluster)).
const AUDIT_EVERY: Duration = Duration::from_secs(10);

/// The scheduler's phase timers read this clock (the core itself reads none).
struct LoopClock(Instant);

impl PhaseClock for LoopClock {
    fn now_ns(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }

    /// Timing every heartbeat's walk step by step took a sixth of the loop's time under
    /// `bench rm` (5,000 nodes); one in 16 still gives /metrics hundreds of samples a second.
    fn sample_every(&self) -> u32 {
        16
    }
}

/// CPU time the calling thread has used, if the system tells.
fn thread_cpu() -> Option<Duration> {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given and reads nothing else.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    ok.then(|| Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
}

/// Run the loop until `stop` is set or every sender is gone.
pub fn run(mut core: Core, rx: Receiver<Command>, shared: Shared, stop: Arc<AtomicBool>, metrics: Arc<RmMetrics>) {
    core.sched.set_phase_clock(Box::new(LoopClock(Instant::now())));
    let mut last_publish = Instant::now();
    let mut last_audit: Option<Instant> = None;
    let mut publish_cost = Duration::ZERO;
    let mut dirty = true;
    // Read at each publish (a system call, not a vDSO read: not once per batch).
    let mut cpu_seen = thread_cpu().unwrap_or_default();
    while !stop.load(Ordering::Relaxed) {
        let first = match rx.recv_timeout(TICK) {
            Ok(cmd) => Some(cmd),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let busy_from = Instant::now();
        let now = wall_ms();
        core.now = now;
        if let Some(cmd) = first {
            dirty = true;
            handle(&mut core, cmd, now, &shared);
            // Take what else is queued in the same batch, a bounded number.
            for cmd in rx.try_iter().take(4096) {
                handle(&mut core, cmd, now, &shared);
            }
        }
        core.tick(now);
        // Elapsed times and liveness move on even without commands. A full publish costs
        // O(cluster): on a large cluster it waits ten times its own cost, so readers never
        // take more than a tenth of the loop. The clock is read twice per batch (three times
        // with a publish): most batches are one heartbeat, and each read is a vDSO call.
        let mut busy_to = Instant::now();
        let every = PUBLISH_EVERY.max(publish_cost * 10);
        let since = busy_to.duration_since(last_publish);
        if (dirty && since >= every) || since >= every * 5 {
            let cpu_before = thread_cpu();
            let snap = publish(&core, &shared);
            let audit = last_audit.is_none_or(|t| busy_to.duration_since(t) >= AUDIT_EVERY);
            if audit {
                last_audit = Some(busy_to);
            }
            metrics.observe(&core, &snap.queues, audit);
            let cpu_after = thread_cpu();
            if let Some(cpu) = cpu_after {
                metrics.loop_cpu.inc_by(cpu.saturating_sub(cpu_seen).as_secs_f64());
                cpu_seen = cpu;
            }
            let published = Instant::now();
            // The publish's own CPU time where the system tells it: its wall time also counts
            // waiting for a core, so on a loaded machine one slow publish stretched the next
            // interval tenfold (a parallel test run waited over 10 s for a finished app's count).
            publish_cost = match (cpu_before, cpu_after) {
                (Some(a), Some(b)) => b.saturating_sub(a),
                _ => published.duration_since(busy_to),
            };
            last_publish = published;
            busy_to = published;
            dirty = false;
        }
        metrics.loop_busy.inc_by(busy_to.duration_since(busy_from).as_secs_f64());
    }
}

fn publish(core: &Core, shared: &Shared) -> Arc<Snapshot> {
    let prev = shared.read().ok().map(|g| g.clone());
    let snap = Arc::new(Snapshot::of(core, prev.as_deref()));
    if let Ok(mut guard) = shared.write() {
        *guard = snap.clone();
    }
    snap
}

/// Publish one application's change (a client's write) on top of the current snapshot.
fn publish_app(core: &Core, shared: &Shared, id: ApplicationId) {
    if let Ok(mut guard) = shared.write() {
        let next = Arc::new(guard.with_app(core, id));
        *guard = next;
    }
}

fn publish_app_named(core: &Core, shared: &Shared, id: &str) {
    if let Ok(id) = id.parse() {
        publish_app(core, shared, id);
    }
}

fn handle(core: &mut Core, cmd: Command, now: Millis, shared: &Shared) {
    // Client-visible writes publish before they answer, so a read after the answer sees them.
    match cmd {
        Command::NewApplication(r) => {
            let _ = r.send(core.new_application());
        }
        Command::Submit(sub, user, r) => {
            let out = core.submit(*sub, &user, now);
            if let Ok(id) = &out {
                publish_app(core, shared, *id);
            }
            let _ = r.send(out);
        }
        Command::Kill(id, caller, r) => {
            let out = core.kill(&id, &caller, now);
            publish_app_named(core, shared, &id);
            let _ = r.send(out);
        }
        Command::Move(id, queue, caller, r) => {
            let out = core.move_app(&id, &queue, &caller);
            publish_app_named(core, shared, &id);
            let _ = r.send(out);
        }
        Command::Priority(id, p, caller, r) => {
            let out = core.set_priority(&id, p, &caller);
            publish_app_named(core, shared, &id);
            let _ = r.send(out);
        }
        Command::RegisterNode(req, ip, peer, r) => {
            let out = core.register_node(req, ip, peer, now);
            let _ = r.send(out);
        }
        Command::UnregisterNode(req, r) => {
            let _ = r.send(core.unregister_node(req, now));
        }
        Command::RefreshNodes(caller, r) => {
            let _ = r.send(refresh_nodes(core, &caller, now));
        }
        Command::NodeHeartbeat(req, r) => {
            let _ = r.send(core.node_heartbeat(&req, now).map(|out| (out, req)));
        }
        Command::RegisterAm(req, token, r) => {
            let _ = r.send(core.register_am(req, &token, now));
        }
        Command::Allocate(req, token, r) => {
            let _ = r.send(core.allocate(req, &token, now));
        }
        Command::FinishAm(req, token, r) => {
            let app = token.identifier::<AmrmTokenId>().ok().map(|a| a.attempt.application);
            let out = core.finish_am(req, &token, now);
            if let Some(app) = app {
                publish_app(core, shared, app);
            }
            let _ = r.send(out);
        }
        Command::Hidden(caller, only, r) => {
            let hidden = match only {
                Some(id) => core.conf.access.hidden(&*core.sched, core.apps.get(&id).into_iter(), &caller),
                None => core.conf.access.hidden(&*core.sched, core.apps.values(), &caller),
            };
            let _ = r.send(Ok(hidden));
        }
        Command::Containers(id, r) => {
            let rows = core.apps.get(&id).map(|app| dao::container_rows(core, app)).unwrap_or_default();
            let _ = r.send(Ok(rows));
        }
    }
}

/// YARN's AdminService.refreshNodes: admins only (`yarn.admin.acl`, whether or not
/// `yarn.acl.enable` is on). The two host files are read here, on the loop: they are small
/// and this is a rare operator's call, as YARN reads them under its admin lock.
fn refresh_nodes(core: &mut Core, caller: &str, now: Millis) -> Result<Vec<String>, RmError> {
    if !core.conf.access.is_admin(caller) {
        return Err(RmError::forbidden(format!("User {caller} doesn't have permission to call 'refreshNodes'")));
    }
    let hosts = core.conf.hosts.reread().map_err(|e| RmError::bad_request(e.to_string()))?;
    tracing::info!(
        "refreshNodes by {caller}: {} included, {} excluded hosts",
        hosts.include.len(),
        hosts.exclude.len()
    );
    Ok(core.refresh_nodes(hosts, now))
}

/// How handlers reach the loop.
#[derive(Clone)]
pub struct LoopClient {
    pub tx: Sender<Command>,
    pub shared: Shared,
}

impl LoopClient {
    pub async fn call<T>(&self, make: impl FnOnce(Reply<T>) -> Command) -> Result<T, RmError> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(make(tx)).map_err(|_| RmError::internal("the ResourceManager is stopping"))?;
        rx.await.map_err(|_| RmError::internal("the ResourceManager is stopping"))?
    }

    /// `app`'s live containers, every attempt, in id order (none once it is forgotten).
    pub async fn containers(&self, app: ApplicationId) -> Result<Vec<ContainerRow>, RmError> {
        self.call(|r| Command::Containers(app, r)).await
    }

    /// The applications `caller` (an anonymous reader is `dr.who`, as behind Hadoop's
    /// static-user filter) may not view; none with ACLs off.
    pub async fn hidden_from(&self, snap: &Snapshot, caller: Option<&str>) -> Result<Vec<ApplicationId>, RmError> {
        self.hidden(snap, caller, None).await
    }

    /// Whether `caller` may view `app` (one application checked, not every one).
    pub async fn may_view(&self, snap: &Snapshot, caller: Option<&str>, app: ApplicationId) -> Result<bool, RmError> {
        Ok(self.hidden(snap, caller, Some(app)).await?.is_empty())
    }

    async fn hidden(
        &self,
        snap: &Snapshot,
        caller: Option<&str>,
        only: Option<ApplicationId>,
    ) -> Result<Vec<ApplicationId>, RmError> {
        if !snap.acl_enabled {
            return Ok(Vec::new());
        }
        let user = caller.unwrap_or(crate::access::ANONYMOUS).to_string();
        self.call(|r| Command::Hidden(user, only, r)).await
    }

    pub fn snapshot(&self) -> Arc<Snapshot> {
        // A poisoned lock still holds the last snapshot published whole (it is swapped in
        // one assignment).
        self.shared.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
