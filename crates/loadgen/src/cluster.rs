//! The simulated cluster: NodeManagers that register and heartbeat, AMs that run as tasks on
//! the node the RM started them on, and the REST traffic (submissions, timed reads, metric
//! scrapes). A container is a deadline on its node: the NM reports it complete once passed.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use fairloom_protocol::am::{
    AllocateRequest, AllocateResponse, FinalStatus, FinishAmRequest, RegisterAmRequest, ResourceRequest,
};
use fairloom_protocol::node::{NodeHeartbeatRequest, NodeHeartbeatResponse, RegisterNodeRequest, RegisterNodeResponse};
use fairloom_protocol::token::{Credentials, AMRM_TOKEN_KIND};
use fairloom_protocol::{paths, ContainerState, ContainerStatus, Res};

use crate::conn::Conn;
use crate::latency::Latencies;
use crate::LoadError;

pub(crate) const NODE_MB: i64 = 65536;
pub(crate) const NODE_VCORES: i64 = 64;
pub(crate) const TASK: Res = Res { memory: 1024, vcores: 1 };
/// Error messages kept for the report (the count goes on).
const ERRORS_KEPT: usize = 10;

struct Running {
    status: ContainerStatus,
    /// `None`: until its AM says it is done.
    end: Option<Instant>,
}

#[derive(Default)]
struct SimNode {
    running: Vec<Running>,
    done: Vec<ContainerStatus>,
}

/// What the simulated parties share: the nodes' containers, the timings, the counters.
pub(crate) struct Load {
    nodes: Vec<Mutex<SimNode>>,
    pub(crate) heartbeat_us: Mutex<Latencies>,
    pub(crate) rest_us: Mutex<Latencies>,
    pub(crate) heartbeats: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) first_errors: Mutex<Vec<String>>,
    pub(crate) apps_finished: AtomicU64,
    pub(crate) registered: AtomicU64,
    pub(crate) measuring: AtomicBool,
    pub(crate) stop: AtomicBool,
    task: Duration,
    containers: u32,
    scheduler: SocketAddr,
}

/// A lock whose holder panicked still holds sound data here (counters and lists).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Load {
    /// `nodes` simulated nodes; each app's AM asks for `containers` containers running `task`;
    /// AMs talk to the RM's scheduler address.
    pub(crate) fn new(nodes: usize, task: Duration, containers: u32, scheduler: SocketAddr) -> Self {
        Self {
            nodes: (0..nodes).map(|_| Mutex::new(SimNode::default())).collect(),
            heartbeat_us: Mutex::new(Latencies::default()),
            rest_us: Mutex::new(Latencies::default()),
            heartbeats: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            first_errors: Mutex::new(Vec::new()),
            apps_finished: AtomicU64::new(0),
            registered: AtomicU64::new(0),
            measuring: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            task,
            containers,
            scheduler,
        }
    }

    fn error(&self, message: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut kept = lock(&self.first_errors);
        if kept.len() < ERRORS_KEPT {
            kept.push(message);
        }
    }
}

fn running(id: &str, resource: Res, priority: i32) -> ContainerStatus {
    ContainerStatus {
        container_id: id.to_string(),
        state: ContainerState::Running,
        exit_status: 0,
        diagnostics: String::new(),
        resource,
        priority,
        creation_time: 0,
        finish_time: 0,
    }
}

fn node_index(node_id: &str) -> Option<usize> {
    node_id.strip_prefix("sim-")?.split(':').next()?.parse().ok()
}

/// Simulated NodeManager `i`: registers with the resource tracker, then heartbeats every
/// `interval` until the load stops, reporting its containers and starting the AMs it is
/// given.
pub(crate) async fn nm(load: Arc<Load>, i: usize, tracker: SocketAddr, interval: Duration) -> Result<(), LoadError> {
    let id = format!("sim-{i}:8041");
    let reg = RegisterNodeRequest {
        node_id: id.clone(),
        http_address: format!("sim-{i}:8042"),
        rack: Some(format!("/rack{}", i / 40)),
        resource: Res::new(NODE_MB, NODE_VCORES),
        containers: Vec::new(),
        version: "bench".to_string(),
        previous_session: String::new(),
        proof: String::new(),
        instance: format!("bench-{i}"),
    };
    // Thousands connect at once: a refused or reset connection tries again.
    let mut tries = 0;
    let session;
    let mut conn = loop {
        let attempt = async {
            let mut conn = Conn::open(tracker).await?;
            let r: RegisterNodeResponse = conn.json(paths::REGISTER_NODE, &reg, None).await?;
            Ok::<_, LoadError>((conn, r))
        };
        match attempt.await {
            Ok((c, r)) => {
                session = r.session;
                break c;
            }
            Err(e) if tries >= 20 => return Err(LoadError::Register { node: id, source: Box::new(e) }),
            Err(_) => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(100 * tries)).await;
            }
        }
    };
    load.registered.fetch_add(1, Ordering::Relaxed);
    // Spread the nodes over the interval, as real heartbeats are.
    let n = load.nodes.len().max(1) as u64;
    let mut next = tokio::time::Instant::now() + interval.mul_f64((i as u64 % n) as f64 / n as f64);
    let mut response_id = 0;
    while !load.stop.load(Ordering::Relaxed) {
        tokio::time::sleep_until(next).await;
        next += interval;
        let containers = {
            let mut node = lock(&load.nodes[i]);
            let now = Instant::now();
            let SimNode { running, done } = &mut *node;
            running.retain(|r| {
                let over = r.end.is_some_and(|e| e <= now);
                if over {
                    done.push(ContainerStatus { state: ContainerState::Complete, ..r.status.clone() });
                }
                !over
            });
            let mut all: Vec<ContainerStatus> = running.iter().map(|r| r.status.clone()).collect();
            all.append(done);
            all
        };
        let req = NodeHeartbeatRequest {
            node_id: id.clone(),
            session: session.clone(),
            response_id,
            containers,
            healthy: true,
            health_report: String::new(),
            // Simulated nodes check no tokens: they never need the next keys.
            last_known_container_token_key_id: -1,
            last_known_nm_token_key_id: -1,
        };
        let sent = Instant::now();
        let out: NodeHeartbeatResponse = match conn.json(paths::NODE_HEARTBEAT, &req, None).await {
            Ok(o) => o,
            Err(e) => {
                load.error(format!("heartbeat of {id}: {e}"));
                conn = Conn::open(tracker).await?;
                continue;
            }
        };
        if load.measuring.load(Ordering::Relaxed) {
            let us = sent.elapsed().as_micros().min(u32::MAX as u128) as u32;
            lock(&load.heartbeat_us).record(us);
            load.heartbeats.fetch_add(1, Ordering::Relaxed);
        }
        response_id = out.response_id;
        let mut node = lock(&load.nodes[i]);
        for k in &out.kill {
            if let Some(pos) = node.running.iter().position(|r| r.status.container_id == k.container_id) {
                let r = node.running.remove(pos);
                node.done.push(ContainerStatus {
                    state: ContainerState::Complete,
                    exit_status: k.exit_status,
                    ..r.status
                });
            }
        }
        for s in out.start {
            // The RM starts AM containers itself; the AM then runs here, as a task, with the
            // AMRM token of its credentials.
            let Ok(c) = s.id() else { continue };
            let id = c.container.to_string();
            node.running.push(Running { status: running(&id, c.resource, c.priority), end: None });
            let creds = s.credentials.as_deref().and_then(|b| Credentials::from_bytes(b).ok());
            if let Some(token) = creds.as_ref().and_then(|c| c.token(AMRM_TOKEN_KIND)) {
                tokio::spawn(am(load.clone(), i, id, c.container.attempt.to_string(), token.to_header()));
            }
        }
    }
    Ok(())
}

/// One application's AM, on node `node` in container `container`; when it ends, so does its
/// container.
async fn am(load: Arc<Load>, node: usize, container: String, attempt: String, token: String) {
    match run_am(&load, &token).await {
        // Once the bench stops, the RM goes away under the AMs still running: not an error.
        Err(_) if load.stop.load(Ordering::Relaxed) => {}
        Err(e) => load.error(format!("AM {attempt}: {e}")),
        Ok(()) => {}
    }
    if let Some(r) = lock(&load.nodes[node]).running.iter_mut().find(|r| r.status.container_id == container) {
        r.end = Some(Instant::now());
    }
    load.apps_finished.fetch_add(1, Ordering::Relaxed);
}

/// Register, ask for every container at once, put each one it gets on its node with a
/// deadline, finish when as many completed.
async fn run_am(load: &Load, token: &str) -> Result<(), LoadError> {
    let mut conn = Conn::open(load.scheduler).await?;
    let header = Some((paths::AMRM_TOKEN_HEADER, token));
    let reg = RegisterAmRequest { host: "bench".into(), rpc_port: 0, tracking_url: String::new() };
    let _: Value = conn.json(paths::REGISTER_AM, &reg, header).await?;
    let ask = ResourceRequest {
        priority: 1,
        resource_name: "*".into(),
        capability: TASK,
        num_containers: load.containers as i32,
        relax_locality: true,
    };
    let (mut response_id, mut asks, mut done) = (0, vec![ask], 0u32);
    while done < load.containers && !load.stop.load(Ordering::Relaxed) {
        let req = AllocateRequest {
            response_id,
            asks: std::mem::take(&mut asks),
            releases: Vec::new(),
            progress: done as f32 / load.containers as f32,
        };
        let out: AllocateResponse = conn.json(paths::ALLOCATE, &req, header).await?;
        response_id = out.response_id;
        let end = Instant::now() + load.task;
        for c in out.allocated {
            let Some(i) = node_index(&c.node_id).filter(|&i| i < load.nodes.len()) else { continue };
            lock(&load.nodes[i])
                .running
                .push(Running { status: running(&c.id, c.resource, c.priority), end: Some(end) });
        }
        done += out.completed.len() as u32;
        tokio::time::sleep(Duration::from_millis(1000)).await;
    }
    let fin = FinishAmRequest {
        final_status: FinalStatus::Succeeded,
        diagnostics: String::new(),
        tracking_url: String::new(),
    };
    let _: Value = conn.json(paths::FINISH_AM, &fin, header).await?;
    Ok(())
}

/// Submit `n` applications over REST (as user `bench`), each with a simulated AM.
pub(crate) async fn submit(web: SocketAddr, n: usize) -> Result<(), LoadError> {
    let mut conn = Conn::open(web).await?;
    for _ in 0..n {
        let (s, new) = conn.call("POST", "/ws/v1/cluster/apps/new-application?user.name=bench", b"", None).await?;
        if s != 200 {
            return Err(LoadError::Http(format!("new-application: HTTP {s}")));
        }
        let new: Value = serde_json::from_slice(&new)?;
        let body = json!({
            "application-id": new["application-id"],
            "application-name": "bench",
            "am-container-spec": { "commands": { "command": "simulated" } },
            "resource": { "memory": 1024, "vCores": 1 },
        });
        let (s, _) =
            conn.call("POST", "/ws/v1/cluster/apps?user.name=bench", &serde_json::to_vec(&body)?, None).await?;
        if s != 202 {
            return Err(LoadError::Http(format!("submit: HTTP {s}")));
        }
    }
    Ok(())
}

/// Read the running apps, the scheduler and the cluster metrics in turn, four times a
/// second, timing each read while the load is measured.
pub(crate) async fn reader(load: Arc<Load>, web: SocketAddr) -> Result<(), LoadError> {
    let mut conn = Conn::open(web).await?;
    let paths = ["/ws/v1/cluster/apps?states=RUNNING", "/ws/v1/cluster/scheduler", "/ws/v1/cluster/metrics"];
    let mut k = 0;
    while !load.stop.load(Ordering::Relaxed) {
        let t = Instant::now();
        let (s, _) = conn.call("GET", paths[k % paths.len()], b"", None).await?;
        if s == 200 && load.measuring.load(Ordering::Relaxed) {
            let us = t.elapsed().as_micros().min(u32::MAX as u128) as u32;
            lock(&load.rest_us).record(us);
        }
        k += 1;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Ok(())
}

/// The RM's `/metrics`, series name (with labels) to value.
pub(crate) async fn scrape(web: SocketAddr) -> Result<HashMap<String, f64>, LoadError> {
    let mut conn = Conn::open(web).await?;
    let (_, body) = conn.call("GET", "/metrics", b"", None).await?;
    let text = String::from_utf8_lossy(&body);
    Ok(text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' ').and_then(|(k, v)| Some((k.to_string(), v.parse().ok()?))))
        .collect())
}
