//! fairloom's NodeManager: registers with the ResourceManager, heartbeats its containers'
//! statuses, starts the containers the RM (AM containers) or an AM (with its NM token and the
//! RM's container token) asks for, kills on request, and serves YARN's `/ws/v1/node` REST.
//! It owns processes and never decides scheduling. What it launched is in a state file, so a
//! restarted node takes its containers back or kills them ([`recover`]).

pub mod auth;
pub mod container;
pub mod executor;
mod heartbeat;
mod http;
pub mod localize;
pub mod logs;
pub mod metrics;
mod recover;
pub mod state;
pub mod workdir;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;

use fairloom_protocol::node::{UnregisterNodeRequest, UnregisterNodeResponse};
use fairloom_protocol::{paths, ContainerState, Res};

use auth::{Guard, SharedGuard};
use container::{Env, Table};
use state::{NmState, Store};

#[derive(Debug, Clone)]
pub struct NmConf {
    /// The RM's resource-tracker `host:port`.
    pub rm: String,
    pub resource: Res,
    /// Local and log dirs go under it.
    pub dir: PathBuf,
    /// Where the NM's web server (REST and container management) listens; port 0 picks one
    /// (with recovery on, the one the last run had).
    pub listen: SocketAddr,
    pub rack: Option<String>,
    /// `yarn.nodemanager.sleep-delay-before-sigkill.ms`.
    pub kill_delay_ms: u64,
    /// Until the RM says otherwise (`yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`).
    pub heartbeat_ms: u64,
    /// `yarn.nodemanager.recovery.enabled`: take running containers back after a restart
    /// (otherwise they are killed and reported).
    pub recovery: bool,
    /// `yarn.nodemanager.recovery.supervised`: a stop leaves containers running for the next
    /// run to take back (YARN's "supervised" NM), instead of killing them.
    pub supervised: bool,
    /// `yarn.nodemanager.recovery.dir`; default `DIR/nm-recovery`.
    pub state_dir: Option<PathBuf>,
    /// Who containers run as (`yarn.nodemanager.container-executor.class`).
    pub executor: executor::Executor,
    /// The cluster's registration secret, when it has one.
    pub registration_secret: Option<Vec<u8>>,
    /// `yarn.acl.enable`: container logs are then for their application's viewers only,
    /// which this NodeManager cannot check (it is not given the applications' ACLs).
    pub acl_enabled: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum NmError {
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("cannot take back port {0} of the last run (yarn.nodemanager.recovery.enabled): {1}")]
    Port(SocketAddr, std::io::Error),
    #[error("{0}: {1}")]
    Dir(String, std::io::Error),
    #[error(transparent)]
    State(#[from] state::StateError),
}

/// What the HTTP handlers and the heartbeat thread share.
#[derive(Clone)]
pub struct Node {
    pub id: String,
    pub http_address: String,
    pub conf: NmConf,
    pub table: Table,
    pub env: Env,
    /// The RM's keys, the session, and what has been started: every door checks here.
    pub guard: SharedGuard,
    pub started_on: i64,
}

pub struct NmHandle {
    pub node_id: String,
    pub http: SocketAddr,
    shutdown: watch::Sender<bool>,
    /// Set when the RM told the node to shut down (refused or decommissioned).
    told: watch::Receiver<bool>,
    server: tokio::task::JoinHandle<()>,
    heartbeat: Option<std::thread::JoinHandle<()>>,
    node: Node,
}

impl NmHandle {
    /// Resolves when the RM has told this node to shut down (its containers are gone then).
    pub async fn shut_down_by_rm(&self) {
        let mut told = self.told.clone();
        let _ = told.wait_for(|t| *t).await;
    }

    /// Stop: heartbeats end; then, unless supervised, every container is killed (SIGTERM,
    /// then SIGKILL) and the RM is told which, so their attempts end at once; the state is
    /// saved for the next run.
    pub async fn stop(mut self) {
        let supervised = self.node.conf.recovery && self.node.conf.supervised;
        tracing::info!(
            "NodeManager {} stopping: {}",
            self.node_id,
            if supervised { "its containers keep running for the next run" } else { "killing its containers" }
        );
        let _ = self.shutdown.send(true);
        if let Some(h) = self.heartbeat.take() {
            let _ = tokio::task::spawn_blocking(move || h.join()).await;
        }
        // No call in flight starts anything once the server has stopped.
        let _ = (&mut self.server).await;
        let told = *self.told.borrow();
        if !supervised {
            // Shut down by the RM, the containers are being killed already.
            if !told {
                kill_all(&self.node, "Container killed: its NodeManager stopped");
            }
            // The kills' own SIGKILLs come from threads that die with this process: what is
            // left after the delay is killed here, before the node reports and goes.
            wait_stopped(&self.node.table, self.node.env.kill_delay).await;
            let left: Vec<i32> = self
                .node
                .table
                .lock()
                .map(|t| t.values().filter(|c| c.state != ContainerState::Complete).filter_map(|c| c.pgid).collect())
                .unwrap_or_default();
            for pgid in left {
                container::signal_group(pgid, libc::SIGKILL);
            }
            wait_stopped(&self.node.table, Duration::from_secs(5)).await;
            if !told {
                let node = self.node.clone();
                let _ = tokio::task::spawn_blocking(move || unregister(&node)).await;
            }
        }
        self.node.env.save(&self.node.table);
    }
}

/// Kill every running container, reporting ABORTED (what YARN's AM sees of a node that
/// went away) with `why`.
pub(crate) fn kill_all(node: &Node, why: &str) {
    let ids: Vec<String> = node.table.lock().map(|t| t.keys().cloned().collect()).unwrap_or_default();
    for id in &ids {
        container::kill(&node.table, id, fairloom_protocol::exit::ABORTED, why, &node.env);
    }
}

/// YARN's unRegisterNodeManager, with the final statuses; what the RM acknowledges is
/// forgotten (the rest is reported again at the next registration).
fn unregister(node: &Node) {
    let session = node.guard.keys.lock().unwrap_or_else(|p| p.into_inner()).session.clone();
    if session.is_empty() {
        return;
    }
    let req = UnregisterNodeRequest { node_id: node.id.clone(), session, containers: heartbeat::statuses(&node.table) };
    let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(5)).build();
    let url = format!("http://{}{}", node.conf.rm, paths::UNREGISTER_NODE);
    match heartbeat::post::<_, UnregisterNodeResponse>(&agent, &url, &req) {
        Ok(r) => {
            if let Ok(mut t) = node.table.lock() {
                for id in &r.acknowledged {
                    t.remove(id);
                }
            }
            tracing::info!("Unregistered from the ResourceManager, reporting {} containers", req.containers.len());
        }
        Err(e) => {
            tracing::warn!("cannot unregister from the ResourceManager ({e}): the next run reports its containers")
        }
    }
}

/// Wait, at most `limit`, for every container to have ended.
async fn wait_stopped(table: &Table, limit: Duration) {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline && running(table) > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn running(table: &Table) -> usize {
    table.lock().map(|t| t.values().filter(|c| c.state != ContainerState::Complete).count()).unwrap_or(0)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Start the NodeManager: read what the last run left, listen (on the last run's port when
/// recovering), take back or kill the last run's containers, then register and heartbeat on
/// a thread of its own (retrying while the RM is unreachable).
pub async fn start(mut conf: NmConf) -> Result<NmHandle, NmError> {
    // A container's launch script and directories are named from its own working directory,
    // so a directory given relative to ours (`up --dir state`) is made absolute first.
    conf.dir = std::path::absolute(&conf.dir).map_err(|e| NmError::Dir(conf.dir.display().to_string(), e))?;
    if let Some(d) = &conf.state_dir {
        conf.state_dir = Some(std::path::absolute(d).map_err(|e| NmError::Dir(d.display().to_string(), e))?);
    }
    let store = Arc::new(Store::open(&conf.state_dir.clone().unwrap_or_else(|| conf.dir.join("nm-recovery")))?);
    let prev = store.load()?;
    let mut listen = conf.listen;
    let same_port = conf.recovery && listen.port() == 0 && prev.as_ref().and_then(|p| p.port).is_some();
    if same_port {
        listen.set_port(prev.as_ref().and_then(|p| p.port).unwrap_or(0));
    }
    let listener = TcpListener::bind(listen).await.map_err(|e| {
        if same_port {
            NmError::Port(listen, e)
        } else {
            NmError::Bind(listen, e)
        }
    })?;
    let http = listener.local_addr().map_err(|e| NmError::Bind(listen, e))?;
    let local_dir = conf.dir.join("nm-local-dir");
    let log_root = conf.dir.join("userlogs");
    for d in [&local_dir, &log_root] {
        std::fs::create_dir_all(d).map_err(|e| NmError::Dir(d.display().to_string(), e))?;
    }
    let id = format!("{}:{}", http.ip(), http.port());
    let guard: SharedGuard = Arc::new(Guard::new(&id));
    let node = Node {
        guard: guard.clone(),
        id,
        http_address: http.to_string(),
        conf: conf.clone(),
        table: Arc::new(Mutex::new(Default::default())),
        env: Env {
            local_dir,
            log_root,
            host: http.ip().to_string(),
            port: http.port(),
            kill_delay: Duration::from_millis(conf.kill_delay_ms),
            metrics: Arc::new(metrics::NmMetrics::default()),
            persist: Some(persister(store, guard, http.port())),
            executor: Arc::new(conf.executor.clone()),
        },
        started_on: now_ms(),
    };
    tracing::info!(
        node = %node.id,
        rm = %conf.rm,
        resource = %format!("<memory:{}, vCores:{}>", conf.resource.memory, conf.resource.vcores),
        dir = %conf.dir.display(),
        recovery = conf.recovery,
        "NodeManager started"
    );
    match prev {
        Some(prev) => recover::take_back(&node, prev, conf.recovery),
        None => node.env.save(&node.table),
    }
    let (shutdown, watcher) = watch::channel(false);
    let (told_tx, told) = watch::channel(false);
    let router = http::router(node.clone());
    let mut w = watcher.clone();
    // The RM's and AMs' calls and log pages: an eighth of the descriptors, as the RM's web
    // port has (several NMs share one process under `fairloom up`).
    let files = fairloom_serve::raise_open_files_limit();
    let limits = fairloom_serve::Limits::new(fairloom_serve::connection_share(files, 1, 8));
    let server = tokio::spawn(fairloom_serve::serve("nodemanager", listener, router, limits, async move {
        let _ = w.wait_for(|s| *s).await;
    }));
    let hb_node = node.clone();
    let heartbeat = std::thread::Builder::new()
        .name(format!("nm-heartbeat-{}", http.port()))
        .spawn(move || heartbeat::heartbeat_loop(hb_node, watcher, told_tx))
        .map_err(|e| NmError::Dir("heartbeat thread".to_string(), e))?;
    Ok(NmHandle { node_id: node.id.clone(), http, shutdown, told, server, heartbeat: Some(heartbeat), node })
}

/// How the node's state is saved after each change: its port, its keys, its containers.
fn persister(store: Arc<Store>, guard: SharedGuard, port: u16) -> container::Persist {
    Arc::new(move |table: &Table| {
        let containers = table.lock().map(|t| t.values().cloned().collect()).unwrap_or_default();
        let (container_keys, nm_keys, session) = {
            let k = guard.keys.lock().unwrap_or_else(|p| p.into_inner());
            (k.container.keys(), k.nm.keys(), k.session.clone())
        };
        if let Err(e) = store.save(&NmState { port: Some(port), container_keys, nm_keys, containers, session }) {
            tracing::error!("{e}");
        }
    })
}
