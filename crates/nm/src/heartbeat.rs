//! The node protocol from the node's side: register (with every container not yet
//! acknowledged), heartbeat, and act on the answers (keys, acknowledgements, kills, AM starts).

use std::time::Duration;

use tokio::sync::watch;

use fairloom_protocol::node::{
    NodeAction, NodeHeartbeatRequest, NodeHeartbeatResponse, RegisterNodeRequest, RegisterNodeResponse,
};
use fairloom_protocol::paths;

use crate::container::{self, Launch, Table};
use crate::Node;

pub(crate) fn post<T: serde::Serialize, R: serde::de::DeserializeOwned>(
    agent: &ureq::Agent,
    url: &str,
    body: &T,
) -> Result<R, String> {
    agent.post(url).send_json(body).map_err(|e| e.to_string())?.into_json().map_err(|e| e.to_string())
}

pub(crate) fn statuses(table: &Table) -> Vec<fairloom_protocol::ContainerStatus> {
    table.lock().map(|t| t.values().filter(|c| !c.acknowledged).map(|c| c.status()).collect()).unwrap_or_default()
}

/// Register, then heartbeat until stopped; register again whenever the RM asks (RESYNC) or
/// cannot be reached. A SHUTDOWN from the RM (the node is refused or decommissioned) kills
/// every container and ends the node: `told` then says so.
pub(crate) fn heartbeat_loop(node: Node, stop: watch::Receiver<bool>, told: watch::Sender<bool>) {
    let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(10)).build();
    let base = format!("http://{}", node.conf.rm);
    let mut interval = Duration::from_millis(node.conf.heartbeat_ms.max(10));
    let mut registered = false;
    let mut response_id = 0u64;
    // Said once when the RM stops answering, and once when it answers again: not per retry.
    let mut unreachable = false;
    // Sent with every registration of this process, so that if the answer to one is lost
    // the RM takes the retry for this process and not for someone else's claim to the node.
    // Without randomness it is empty, and a lost answer waits for the node's expiry.
    let instance =
        fairloom_protocol::token::random_bytes(16).map(|b| fairloom_protocol::token::to_hex(&b)).unwrap_or_default();
    while !*stop.borrow() {
        if !registered {
            let req = RegisterNodeRequest {
                node_id: node.id.clone(),
                http_address: node.http_address.clone(),
                rack: node.conf.rack.clone(),
                resource: node.conf.resource,
                containers: statuses(&node.table),
                version: env!("CARGO_PKG_VERSION").to_string(),
                previous_session: node.guard.keys.lock().unwrap_or_else(|p| p.into_inner()).session.clone(),
                proof: node
                    .conf
                    .registration_secret
                    .as_deref()
                    .map(|s| fairloom_protocol::token::registration_proof(s, &node.id))
                    .unwrap_or_default(),
                instance: instance.clone(),
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
                    node.env.save(&node.table);
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
                    shut_down(&node, &r.diagnostics, &told);
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
                        shut_down(&node, &r.diagnostics, &told);
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

/// The RM will not have this node: its containers go, and whoever runs it is told.
fn shut_down(node: &Node, why: &str, told: &watch::Sender<bool>) {
    let why = format!("Container killed: the ResourceManager shut its node down ({why})");
    crate::kill_all(node, &why);
    let _ = told.send(true);
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
    let changed =
        r.container_token_master_key.is_some() || r.nm_token_master_key.is_some() || !r.acknowledged.is_empty();
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
    if changed {
        node.env.save(&node.table);
    }
    for k in &r.kill {
        container::kill(&node.table, &k.container_id, k.exit_status, &k.diagnostics, &node.env);
    }
    // The RM's own starts (AM containers) need no NM token, but their container tokens
    // are checked all the same. Each is admitted here, in order, and started on a thread of
    // its own: a slow launch (a large archive) must not hold the heartbeats.
    for s in r.start {
        let now = crate::now_ms();
        let checked =
            node.guard.container_token(&s.token, now).and_then(|id| node.guard.first_start(&id, now).map(|_| id));
        let id = match checked {
            Ok(id) => id,
            Err(e) => {
                tracing::warn!("refused to start an AM container: {e}");
                continue;
            }
        };
        let admitted = {
            let spec = Launch { id: &id, context: &s.launch, credentials: s.credentials.as_deref() };
            container::admit(&node.table, &node.env, &spec)
        };
        match admitted {
            Ok(ctr) => {
                let (table, env) = (node.table.clone(), node.env.clone());
                std::thread::spawn(move || {
                    let spec = Launch { id: &id, context: &s.launch, credentials: s.credentials.as_deref() };
                    container::run(&table, &env, &spec, ctr);
                });
            }
            Err(e) => tracing::warn!("cannot start AM container {}: {e}", id.container),
        }
    }
}
