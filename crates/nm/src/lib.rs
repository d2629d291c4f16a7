//! fairloom's NodeManager: registers with the ResourceManager, heartbeats its containers'
//! statuses, starts the containers the RM (AM containers) or an AM (with the RM's token)
//! asks for, kills on request, and serves YARN's `/ws/v1/node` REST. It owns processes and
//! never decides scheduling.

pub mod auth;
pub mod container;
mod http;
pub mod localize;
pub mod metrics;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;

use fairloom_protocol::node::{
    NodeAction, NodeHeartbeatRequest, NodeHeartbeatResponse, RegisterNodeRequest, RegisterNodeResponse,
};
use fairloom_protocol::{paths, ContainerState, Res};

use auth::{Guard, SharedGuard};
use container::{Env, Launch, Table};

#[derive(Debug, Clone)]
pub struct NmConf {
    /// The RM's resource-tracker `host:port`.
    pub rm: String,
    pub resource: Res,
    /// Local and log dirs go under it.
    pub dir: PathBuf,
    /// Where the NM's web server (REST and container management) listens; port 0 picks one.
    pub listen: SocketAddr,
    pub rack: Option<String>,
    /// `yarn.nodemanager.sleep-delay-before-sigkill.ms`.
    pub kill_delay_ms: u64,
    /// Until the RM says otherwise (`yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`).
    pub heartbeat_ms: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum NmError {
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("{0}: {1}")]
    Dir(String, std::io::Error),
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
    server: tokio::task::JoinHandle<()>,
    heartbeat: Option<std::thread::JoinHandle<()>>,
    node: Node,
}

impl NmHandle {
    /// Stop heartbeating, kill every container (SIGTERM, then SIGKILL), stop serving.
    pub async fn stop(mut self) {
        tracing::info!("NodeManager {} stopping: killing its containers", self.node_id);
        let _ = self.shutdown.send(true);
        let ids: Vec<String> = self.node.table.lock().map(|t| t.keys().cloned().collect()).unwrap_or_default();
        for id in &ids {
            container::kill(
                &self.node.table,
                id,
                fairloom_protocol::exit::ABORTED,
                "NodeManager stopped",
                self.node.env.kill_delay,
            );
        }
        let deadline = std::time::Instant::now() + self.node.env.kill_delay + Duration::from_secs(2);
        while std::time::Instant::now() < deadline && running(&self.node.table) > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = (&mut self.server).await;
        if let Some(h) = self.heartbeat.take() {
            let _ = tokio::task::spawn_blocking(move || h.join()).await;
        }
    }
}

fn running(table: &Table) -> usize {
    table.lock().map(|t| t.values().filter(|c| c.state != ContainerState::Complete).count()).unwrap_or(0)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Start the NodeManager: listen, then register and heartbeat on a thread of its own
/// (retrying while the RM is unreachable).
pub async fn start(conf: NmConf) -> Result<NmHandle, NmError> {
    let listener = TcpListener::bind(conf.listen).await.map_err(|e| NmError::Bind(conf.listen, e))?;
    let http = listener.local_addr().map_err(|e| NmError::Bind(conf.listen, e))?;
    let local_dir = conf.dir.join("nm-local-dir");
    let log_root = conf.dir.join("userlogs");
    for d in [&local_dir, &log_root] {
        std::fs::create_dir_all(d).map_err(|e| NmError::Dir(d.display().to_string(), e))?;
    }
    let id = format!("{}:{}", http.ip(), http.port());
    let node = Node {
        guard: Arc::new(Guard::new(&id)),
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
        },
        started_on: now_ms(),
    };
    let (shutdown, watcher) = watch::channel(false);
    let router = http::router(node.clone());
    let mut w = watcher.clone();
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = w.wait_for(|s| *s).await;
            })
            .await;
    });
    tracing::info!(
        node = %node.id,
        rm = %conf.rm,
        resource = %format!("<memory:{}, vCores:{}>", conf.resource.memory, conf.resource.vcores),
        dir = %conf.dir.display(),
        "NodeManager started"
    );
    let hb_node = node.clone();
    let heartbeat = std::thread::Builder::new()
        .name(format!("nm-heartbeat-{}", http.port()))
        .spawn(move || heartbeat_loop(hb_node, watcher))
        .map_err(|e| NmError::Dir("heartbeat thread".to_string(), e))?;
    Ok(NmHandle { node_id: node.id.clone(), http, shutdown, server, heartbeat: Some(heartbeat), node })
}

fn post<T: serde::Serialize, R: serde::de::DeserializeOwned>(
    agent: &ureq::Agent,
    url: &str,
    body: &T,
) -> Result<R, String> {
    agent.post(url).send_json(body).map_err(|e| e.to_string())?.into_json().map_err(|e| e.to_string())
}

fn statuses(table: &Table) -> Vec<fairloom_protocol::ContainerStatus> {
    table.lock().map(|t| t.values().filter(|c| !c.acknowledged).map(|c| c.status()).collect()).unwrap_or_default()
}

/// Register, then heartbeat until stopped; register again whenever the RM asks (RESYNC) or
/// cannot be reached.
fn heartbeat_loop(node: Node, stop: watch::Receiver<bool>) {
    let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(10)).build();
    let base = format!("http://{}", node.conf.rm);
    let mut interval = Duration::from_millis(node.conf.heartbeat_ms.max(10));
    let mut registered = false;
    let mut response_id = 0u64;
    // Said once when the RM stops answering, and once when it answers again: not per retry.
    let mut unreachable = false;
    while !*stop.borrow() {
        if !registered {
            let req = RegisterNodeRequest {
                node_id: node.id.clone(),
                http_address: node.http_address.clone(),
                rack: node.conf.rack.clone(),
                resource: node.conf.resource,
                containers: statuses(&node.table),
                version: env!("CARGO_PKG_VERSION").to_string(),
            };
            let answer = post::<_, RegisterNodeResponse>(&agent, &format!("{base}{}", paths::REGISTER_NODE), &req);
            match &answer {
                Err(e) if !unreachable => {
                    tracing::warn!("cannot register with the ResourceManager at {}: {e}; retrying", node.conf.rm);
                    unreachable = true;
                }
                Ok(_) if unreachable => {
                    tracing::info!("the ResourceManager at {} answers again", node.conf.rm);
                    unreachable = false;
                }
                _ => {}
            }
            match answer {
                Ok(r) if r.action == NodeAction::Normal => {
                    node.guard.learn(r.container_token_master_key, r.nm_token_master_key);
                    node.guard.keys.lock().unwrap_or_else(|p| p.into_inner()).session = r.session;
                    interval = Duration::from_millis(r.heartbeat_interval_ms.max(10));
                    registered = true;
                    response_id = 0;
                    tracing::info!(
                        "Registered with the ResourceManager as {}; heartbeat every {} ms",
                        node.id,
                        r.heartbeat_interval_ms
                    );
                }
                Ok(r) if r.action == NodeAction::Shutdown => {
                    tracing::error!("the ResourceManager refused this node, shutting down: {}", r.diagnostics);
                    break;
                }
                Ok(r) => tracing::warn!("registration answered {:?}: {}", r.action, r.diagnostics),
                Err(_) => {}
            }
        } else {
            let (session, container_key, nm_key) = {
                let k = node.guard.keys.lock().unwrap_or_else(|p| p.into_inner());
                (k.session.clone(), k.container.current_id(), k.nm.current_id())
            };
            let req = NodeHeartbeatRequest {
                node_id: node.id.clone(),
                session,
                response_id,
                containers: statuses(&node.table),
                healthy: true,
                health_report: String::new(),
                last_known_container_token_key_id: container_key,
                last_known_nm_token_key_id: nm_key,
            };
            match post::<_, NodeHeartbeatResponse>(&agent, &format!("{base}{}", paths::NODE_HEARTBEAT), &req) {
                Ok(r) => match r.action {
                    NodeAction::Normal => {
                        response_id = r.response_id;
                        apply(&node, r);
                    }
                    NodeAction::Resync => {
                        tracing::info!("the ResourceManager asked for a resync ({}): registering again", r.diagnostics);
                        registered = false;
                    }
                    NodeAction::Shutdown => {
                        tracing::error!("the ResourceManager told this node to shut down: {}", r.diagnostics);
                        break;
                    }
                },
                // The RM is down or restarting: register again once it answers.
                Err(e) => {
                    tracing::warn!(
                        "heartbeat to the ResourceManager at {} failed: {e}; registering again",
                        node.conf.rm
                    );
                    unreachable = true;
                    registered = false;
                }
            }
        }
        sleep_unless_stopped(&stop, interval);
    }
}

fn sleep_unless_stopped(stop: &watch::Receiver<bool>, total: Duration) {
    let step = Duration::from_millis(10);
    let mut slept = Duration::ZERO;
    while slept < total && !*stop.borrow() {
        std::thread::sleep(step);
        slept += step;
    }
}

/// Act on a heartbeat response: take new keys, forget acknowledged completions, kill, start.
fn apply(node: &Node, r: NodeHeartbeatResponse) {
    node.guard.learn(r.container_token_master_key, r.nm_token_master_key);
    if let Ok(mut t) = node.table.lock() {
        for id in &r.acknowledged {
            if let Some(c) = t.get_mut(id) {
                c.acknowledged = true;
            }
        }
        // Keep a bounded history of finished containers for the REST view.
        let done: Vec<String> = t.values().filter(|c| c.acknowledged).map(|c| c.id.clone()).collect();
        for id in done.iter().take(done.len().saturating_sub(200)) {
            t.remove(id);
        }
    }
    for k in &r.kill {
        container::kill(&node.table, &k.container_id, k.exit_status, &k.diagnostics, node.env.kill_delay);
    }
    // The RM's own starts (AM containers) need no NM token, but their container tokens
    // are checked all the same.
    for s in &r.start {
        let now = now_ms();
        let checked =
            node.guard.container_token(&s.token, now).and_then(|id| node.guard.first_start(&id, now).map(|_| id));
        match checked {
            Ok(id) => {
                let spec = Launch { id: &id, context: &s.launch, credentials: s.credentials.as_deref() };
                if let Err(e) = container::launch(&node.table, &node.env, &spec) {
                    tracing::warn!("cannot start AM container {}: {e}", id.container);
                }
            }
            Err(e) => tracing::warn!("refused to start an AM container: {e}"),
        }
    }
}
