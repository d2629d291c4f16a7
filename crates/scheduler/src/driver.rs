//! The one interface every driver calls (scenario runner, load simulator, ResourceManager):
//! nodes in and out, applications submitted, asks, node heartbeats, the periodic update,
//! completions, moves, recovery-style placement, and read-only views. Both schedulers
//! implement [`Scheduler`]; [`AnyScheduler`] is the one a driver holds when the
//! configuration (`yarn.resourcemanager.scheduler.class`) picks the implementation.

use fairloom_config::ConfigError;
use fairloom_model::{Millis, Resource, ResourceTypes};

use crate::audit::Mismatch;
use crate::capacity::CapacityScheduler;
use crate::cluster::live::LiveIter;
use crate::cluster::{Cluster, ClusterError, Container};
use crate::factory::{Reconfigure, SchedulerKind};
use crate::fair::FairScheduler;
use crate::ids::{AppId, ContainerId, NodeId};
use crate::phases::{PhaseClock, PhaseTimes};
use crate::reason::WaitReason;

/// Why an event could not be applied. The state is unchanged when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchedulerError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error("unknown node '{0}'")]
    UnknownNode(String),
    #[error("application '{0}' is not running (it was rejected or has finished)")]
    AppNotAlive(String),
    #[error("container {0} is not live")]
    ContainerNotLive(String),
    #[error("move refused: {0}")]
    MoveRefused(String),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    #[error("not supported: {0}")]
    NotSupported(String),
}

/// How many request keys (a priority, with its capability in the Fair Scheduler) one
/// application may hold. YARN sets no bound, but every real framework uses a handful
/// (MapReduce three, Spark one per resource profile, Tez one per vertex depth); without a
/// bound one AM could make its asks, and every heartbeat that looks at them, as costly as
/// it likes.
pub const MAX_REQUEST_KEYS: usize = 1_000;

/// Refuse asks that would take an application holding `held` request keys (`holds`: whether
/// it has one at a priority) past [`MAX_REQUEST_KEYS`]; checked before anything changes, so
/// a refused call leaves the asks as they were.
pub(crate) fn check_new_request_keys(
    held: usize,
    asks: &[Ask],
    holds: impl Fn(i32) -> bool,
) -> Result<(), SchedulerError> {
    let mut new_keys: Vec<i32> = Vec::new();
    for ask in asks {
        if !holds(ask.priority) && !new_keys.contains(&ask.priority) {
            new_keys.push(ask.priority);
            if held + new_keys.len() > MAX_REQUEST_KEYS {
                return Err(SchedulerError::InvalidRequest(format!(
                    "the asks would give the application {} distinct request keys (it holds {held}); the limit is {MAX_REQUEST_KEYS}",
                    held + new_keys.len()
                )));
            }
        }
    }
    Ok(())
}

/// One request of an `allocate()` call: it sets the outstanding count at its key.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    pub priority: i32,
    /// `*`, a rack or a host.
    pub resource_name: String,
    pub capability: Resource,
    pub num_containers: i32,
    pub relax_locality: bool,
    /// The node-label expression (Capacity Scheduler); `None` takes the application's.
    pub node_label: Option<String>,
}

impl Ask {
    /// An ask at `*` with relaxed locality and no label.
    pub fn any(priority: i32, capability: Resource, num_containers: i32) -> Self {
        Self {
            priority,
            resource_name: fairloom_model::ANY.to_string(),
            capability,
            num_containers,
            relax_locality: true,
            node_label: None,
        }
    }
}

/// What a heartbeat decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allocated { app: AppId, container: ContainerId, node: NodeId },
    Reserved { app: AppId, node: NodeId },
    Unreserved { app: AppId, node: NodeId },
}

/// Counters the simulator and the service report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    pub containers_allocated: u64,
    pub reservations_made: u64,
    pub reservations_released: u64,
    /// Reservations served at a size other than the one reserved (the ask at the node's
    /// locality changed since): YARN's node then takes the reserved size while the queue is
    /// charged the ask's (docs/fidelity.md, known differences).
    pub reservations_served_resized: u64,
    pub apps_submitted: u64,
    pub apps_rejected: u64,
    pub updates: u64,
    pub heartbeats: u64,
    /// Every allocation, reservation and preemption kill so far, folded in order.
    pub decisions: crate::digest::DecisionDigest,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppState {
    /// Waiting: not yet runnable (activated), or its AM container not yet allocated.
    Accepted,
    Running,
    Rejected,
    Finished,
}

impl AppState {
    pub fn name(self) -> &'static str {
        match self {
            Self::Accepted => "accepted",
            Self::Running => "running",
            Self::Rejected => "rejected",
            Self::Finished => "finished",
        }
    }
}

/// An application submission.
#[derive(Debug, Clone, PartialEq)]
pub struct SubmitSpec<'a> {
    /// The caller's name for the application.
    pub name: &'a str,
    /// The queue as the client names it (`default`, `a`, `root.a`).
    pub queue: &'a str,
    pub user: &'a str,
    /// The AM container's size; `None` for an unmanaged AM.
    pub am: Option<Resource>,
    /// The application priority (Capacity Scheduler; the Fair Scheduler has none).
    pub priority: i32,
    /// The application's default node-label expression (Capacity Scheduler).
    pub node_label: Option<&'a str>,
}

impl<'a> SubmitSpec<'a> {
    pub fn new(name: &'a str, queue: &'a str, user: &'a str, am: Option<Resource>) -> Self {
        Self { name, queue, user, am, priority: 0, node_label: None }
    }
}

/// A node to register.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpec<'a> {
    pub name: &'a str,
    pub rack: Option<&'a str>,
    pub resource: Resource,
    /// Its partition (node label); `None` is the default partition.
    pub label: Option<&'a str>,
}

/// Running containers to put on a node directly, as an RM recovering after a restart learns
/// them from its NodeManagers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement<'a> {
    pub app: AppId,
    pub node: NodeId,
    pub capability: Resource,
    pub priority: i32,
    pub count: u32,
    /// The application's AM container (then `count` is 1).
    pub am: bool,
    /// The node-label expression they were asked with (Capacity Scheduler).
    pub label: Option<&'a str>,
}

/// What every driver may read of an application.
#[derive(Debug, Clone, PartialEq)]
pub struct AppView<'a> {
    pub name: &'a str,
    pub user: &'a str,
    /// The leaf's full path; `None` when rejected.
    pub queue: Option<&'a str>,
    pub state: AppState,
    pub rejection: Option<&'a str>,
    /// Runnable (Fair) or activated (Capacity).
    pub runnable: bool,
    pub am_running: bool,
    pub live_containers: usize,
    /// Nodes it holds a reservation on.
    pub reservations: usize,
    pub usage: Resource,
    /// Outstanding asks at `*`.
    pub pending: Resource,
    pub preempted: u32,
    pub preemption_marked: u32,
    /// Why it waits (the Capacity Scheduler may build it from a queue's note).
    pub wait: Option<std::borrow::Cow<'a, WaitReason>>,
}

/// What every driver may read of a queue.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSummary {
    pub name: String,
    pub leaf: bool,
    /// Depth below root (root is 0).
    pub depth: usize,
    pub usage: Resource,
    /// The queue's share: the instantaneous fair share (Fair) or the guaranteed capacity in
    /// the default partition (Capacity).
    pub share: Resource,
    /// The most it may use: max share (Fair) or maximum capacity (Capacity).
    pub max: Resource,
    /// Outstanding asks of its runnable (activated) applications, leaves only.
    pub pending: Resource,
}

/// What the web UI's bars and status blocks and the Prometheus queue gauges show of a queue.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueDetail {
    /// The full path (`root.a.b`).
    pub name: String,
    pub depth: usize,
    pub leaf: bool,
    /// In the default partition.
    pub used: Resource,
    /// Steady fair share (Fair) or configured capacity (Capacity).
    pub steady: Resource,
    /// Instantaneous fair share (Fair) or guaranteed capacity (Capacity).
    pub share: Resource,
    pub min: Resource,
    /// Max share or maximum capacity, capped at the cluster.
    pub max: Resource,
    pub demand: Resource,
    /// Outstanding asks of its runnable (activated) applications, leaves only.
    pub pending: Resource,
    pub am_used: Resource,
    pub am_limit: Resource,
    pub active_apps: usize,
    pub pending_apps: usize,
    /// `maxRunningApps` / `maximum-applications` when finite.
    pub max_apps: Option<i64>,
    /// The queue's policy (Fair) or ordering policy (Capacity).
    pub policy: String,
}

/// The queue ACLs YARN checks (`QueueACL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueAcl {
    SubmitApplications,
    AdministerQueue,
}

/// The driver interface. Every method that changes state takes `now` when time matters and
/// never reads a clock.
pub trait Scheduler {
    /// The scheduler's own state, for a view whose layout differs between the two.
    fn layout(&self) -> Layout<'_>;
    /// Which scheduler it is (what its layout says).
    fn kind(&self) -> SchedulerKind {
        match self.layout() {
            Layout::Fair(_) => SchedulerKind::Fair,
            Layout::Capacity(_) => SchedulerKind::Capacity,
        }
    }
    /// Whether applications have priorities that order them (YARN's Capacity Scheduler; the
    /// Fair Scheduler answers every priority update with 0).
    fn has_app_priorities(&self) -> bool;
    fn resource_types(&self) -> &ResourceTypes;
    /// Nodes, partitions and containers.
    fn cluster(&self) -> &Cluster;
    /// Register nodes (shares and capacities are recomputed once, not per node).
    fn add_nodes(&mut self, nodes: &[NodeSpec<'_>]) -> Result<Vec<NodeId>, SchedulerError>;
    /// The node is lost: its containers end (ABORTED) and its reservation goes.
    fn remove_node(&mut self, node: NodeId);
    /// Submit an application. It is always recorded: accepted into a queue or rejected with
    /// a reason.
    fn submit(&mut self, spec: &SubmitSpec<'_>, now: Millis) -> AppId;
    /// YARN `allocate()` asks.
    fn set_asks(&mut self, app: AppId, asks: &[Ask]) -> Result<(), SchedulerError>;
    /// A NodeManager heartbeat: the containers it reports finished are released, then the
    /// node is offered to the queues. Returns how many reported containers were released.
    fn node_heartbeat_into(
        &mut self,
        node: NodeId,
        completed: &[(ContainerId, i32)],
        now: Millis,
        out: &mut Vec<Decision>,
    ) -> usize;
    /// The periodic update (shares, demand, and one preemption round where it is on).
    fn update(&mut self, now: Millis);
    /// A hot reload (YARN's queue refresh): the files given replace the ones in force and
    /// apply at once, or the whole change is refused and nothing changes but what YARN also
    /// changes on a failed refresh.
    fn reload(&mut self, change: &Reconfigure) -> Result<(), SchedulerError>;
    /// A container finished on its node or was given back by its AM.
    fn complete_container(&mut self, container: ContainerId, exit_status: i32) -> Result<(), SchedulerError>;
    /// The application finishes: its containers are released and it leaves its queue.
    fn finish_app(&mut self, app: AppId) -> Result<(), SchedulerError>;
    /// Move an application to another leaf queue.
    fn move_app(&mut self, app: AppId, target: &str) -> Result<(), SchedulerError>;
    /// Forget a finished or rejected application (after an update has taken its demand
    /// out): its slot is reused and its id names nothing from then on. A long-running owner
    /// (the RM) calls this for every application it is done with; the simulator and the
    /// scenario runner keep them all to report on.
    fn forget_app(&mut self, app: AppId) -> Result<(), SchedulerError>;
    /// Put running containers on a node directly (recovery; see [`Placement`]).
    fn place_containers(&mut self, placement: &Placement<'_>) -> Result<Vec<ContainerId>, SchedulerError>;
    /// Give `node` a reservation for `app`, as recovery would, made at `now`.
    fn place_reservation(
        &mut self,
        app: AppId,
        node: NodeId,
        capability: Resource,
        priority: i32,
        now: Millis,
    ) -> Result<(), SchedulerError>;
    fn app(&self, app: AppId) -> AppView<'_>;
    /// How many applications the scheduler holds (every one submitted, less those forgotten).
    fn app_count(&self) -> usize;
    /// The applications it holds, in submission order.
    fn app_ids(&self) -> Vec<AppId>;
    /// How many entries each of its arenas and tables holds, by name: what a long-running
    /// owner watches for growth. Each is bounded by live work (or configuration).
    fn footprint(&self) -> Vec<(&'static str, usize)>;
    fn app_containers(&self, app: AppId) -> LiveIter<'_>;
    /// Every queue, parents before their children.
    fn queue_summaries(&self) -> Vec<QueueSummary>;
    /// Every live queue in tree order (each parent followed by its subtree), in more detail.
    fn queue_details(&self) -> Vec<QueueDetail>;
    /// Every mismatch between an incremental aggregate and its recomputed value.
    fn audit(&self) -> Vec<Mismatch>;
    fn counters(&self) -> &Counters;
    /// Preemption counters by name, for reports.
    fn preemption_counters(&self) -> Vec<(&'static str, i64)>;
    fn phases(&self) -> &PhaseTimes;
    /// Time the walk's phases with the driver's clock.
    fn set_phase_clock(&mut self, clock: Box<dyn PhaseClock>);
    /// How often the driver should call `update` (ms).
    fn update_interval_ms(&self) -> i64;
    /// The leaf queue a submission by `user` asking for `requested` would be placed in,
    /// changing nothing (the ResourceManager checks ACLs against it before submitting).
    fn placement(&self, requested: &str, user: &str) -> Result<String, String>;
    /// Whether `user` holds `acl` on `queue` through the queue's own ACL or an ancestor's
    /// (administer implies submit, as in YARN). A queue that does not exist yet (placement
    /// may create it) is judged by its nearest existing ancestor; `None` when there is none.
    fn queue_access(&self, queue: &str, user: &str, acl: QueueAcl) -> Option<bool>;

    fn node_id(&self, name: &str) -> Option<NodeId> {
        self.cluster().node_id(name)
    }

    fn container(&self, id: ContainerId) -> &Container {
        self.cluster().container(id)
    }

    /// A container by its app and its number `N` in `APP/N`.
    fn container_by_seq(&self, app: AppId, seq: u32) -> Option<ContainerId> {
        self.app_containers(app).find(|&c| self.cluster().container(c).seq == seq)
    }

    /// The most recently allocated live non-AM containers of `app` (on `node` if given).
    fn latest_containers(&self, app: AppId, count: usize, node: Option<NodeId>) -> Vec<ContainerId> {
        let cluster = self.cluster();
        let mut live: Vec<ContainerId> = self
            .app_containers(app)
            .filter(|&c| {
                let c = cluster.container(c);
                !c.is_am && node.is_none_or(|n| c.node == n)
            })
            .collect();
        // The app's live list is in allocation order. Not by number: a Capacity container
        // that serves a reservation takes the reservation's number, older than its allocation.
        live.reverse();
        live.truncate(count);
        live
    }

    /// A heartbeat that reports no completions.
    fn node_update(&mut self, node: NodeId, now: Millis) -> Vec<Decision> {
        let mut out = Vec::new();
        self.node_heartbeat_into(node, &[], now, &mut out);
        out
    }
}

/// The scheduler a configuration picks ([`crate::factory::build`]), behind the one interface.
pub type AnyScheduler = Box<dyn Scheduler + Send>;

/// The scheduler's own state, for the few views whose layout YARN gives each scheduler its
/// own (the REST scheduler DAO's two layouts, the scenario observations, the preemption
/// explanation). Everything else goes through [`Scheduler`].
#[derive(Clone, Copy)]
pub enum Layout<'a> {
    Fair(&'a FairScheduler),
    Capacity(&'a CapacityScheduler),
}
