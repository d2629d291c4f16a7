//! Nodes coming and going: registration (who may, with what; a node registering again keeps
//! the containers it still runs, as YARN's work-preserving reconnect does), `refreshNodes`,
//! a node's unregistering as it stops, the containers a registering node reports, and the
//! nodes a restarted RM waits for.

use std::collections::HashSet;
use std::sync::Arc;

use fairloom_model::{ContainerId as YarnContainerId, Millis, DEFAULT_RACK};
use fairloom_protocol::am::NodeReport;
use fairloom_protocol::node::{
    NodeAction, RegisterNodeRequest, RegisterNodeResponse, UnregisterNodeRequest, UnregisterNodeResponse,
};
use fairloom_protocol::{exit, ContainerState, ContainerStatus};
use fairloom_scheduler::{NodeSpec, Placement};

use super::{resource_of, Core, NodeNames, NodeState, RmContainer, RmNode, Slot};
use crate::error::RmError;

/// The most a node may offer. Nothing real comes near it, and with it the cluster's totals
/// (and the per-second usage products) stay far from overflowing at any cluster size.
pub const MAX_NODE_MEMORY_MB: i64 = 1 << 32;
pub const MAX_NODE_VCORES: i64 = 1 << 20;
/// The longest name (id, address, rack, version) a node may give itself.
const MAX_NAME: usize = 255;

/// A registration the RM turns away: the node is told to shut down, as YARN does.
fn refused(diagnostics: String) -> RegisterNodeResponse {
    if fairloom_serve::refusal_may_be_logged() {
        tracing::warn!("{diagnostics}");
    }
    RegisterNodeResponse { diagnostics, ..refused_quietly() }
}

fn refused_quietly() -> RegisterNodeResponse {
    RegisterNodeResponse {
        action: NodeAction::Shutdown,
        container_token_master_key: None,
        nm_token_master_key: None,
        session: String::new(),
        heartbeat_interval_ms: 0,
        rm_identifier: 0,
        diagnostics: String::new(),
    }
}

impl Core {
    /// YARN's registerNodeManager. `ip` is what the node's host name resolved to (the host
    /// lists may name either).
    /// `peer` is the address the registration came from.
    pub fn register_node(
        &mut self,
        req: RegisterNodeRequest,
        ip: Option<String>,
        peer: Option<std::net::IpAddr>,
        now: Millis,
    ) -> Result<RegisterNodeResponse, RmError> {
        let host = match req.node_id.rsplit_once(':') {
            Some((h, port)) if !h.is_empty() && port.parse::<u16>().is_ok() => h.to_string(),
            _ => return Err(RmError::bad_request(format!("node id '{}' is not host:port", req.node_id))),
        };
        // What a node names itself is kept and shown: names, not documents.
        for (what, v) in [
            ("node id", &req.node_id),
            ("http address", &req.http_address),
            ("version", &req.version),
            ("instance", &req.instance),
        ]
        .into_iter()
        .chain(req.rack.iter().map(|r| ("rack", r)))
        {
            if v.len() > MAX_NAME || v.chars().any(char::is_control) {
                return Err(RmError::bad_request(format!(
                    "node {what} is longer than {MAX_NAME} bytes or holds control characters"
                )));
            }
        }
        // With a registration secret, only a NodeManager that knows it registers a node.
        if let Some(secret) = &self.conf.registration_secret {
            if !fairloom_protocol::token::check_registration_proof(secret, &req.node_id, &req.proof) {
                return Ok(refused(format!(
                    "Disallowed NodeManager from  {host}: no proof of the registration secret ({}), Sending SHUTDOWN signal to the NodeManager.",
                    crate::conf::keys::REGISTRATION_SECRET_FILE
                )));
            }
        }
        if !self.conf.hosts.allows(&host, ip.as_deref()) {
            return Ok(refused(format!(
                "Disallowed NodeManager from  {host}, Sending SHUTDOWN signal to the NodeManager."
            )));
        }
        // With host lists, a node registers from its host's address: the lists say who may
        // register, not only which names may be claimed.
        let lists = !(self.conf.hosts.include.is_empty() && self.conf.hosts.exclude.is_empty());
        if let (true, Some(p)) = (lists, peer) {
            if ip.as_deref() != Some(p.to_string().as_str()) {
                return Ok(refused(format!(
                    "Disallowed NodeManager from  {host}: it registers from {p}, not from its host's address ({}), Sending SHUTDOWN signal to the NodeManager.",
                    ip.as_deref().unwrap_or("unresolved")
                )));
            }
        }
        // A node registered and heartbeating is taken over only by its own NodeManager, which
        // keeps its session; anyone else (a container on the node's host included) waits for
        // it to expire. A node that has not heartbeated once since it registered may not have
        // had the answer (its NodeManager gave up waiting): the same NodeManager process
        // (the random instance it sends with each registration) from the same address takes
        // it over, else it would be locked out until the expiry.
        if let Some(old) = self.nodes.get(&req.node_id).filter(|n| n.state == NodeState::Running) {
            let answer_lost = old.response_id == 0
                && !old.instance.is_empty()
                && old.instance == req.instance
                && old.peer.is_some()
                && old.peer == peer;
            if req.previous_session != old.session && !answer_lost {
                if fairloom_serve::refusal_may_be_logged() {
                    tracing::warn!(
                        "node {} is registered from {:?}: a registration from {peer:?} without its session is refused",
                        req.node_id,
                        old.peer
                    );
                }
                return Ok(RegisterNodeResponse {
                    action: NodeAction::Resync,
                    diagnostics: format!(
                        "node {} is registered: registering it again needs its session, or its expiry (yarn.nm.liveness-monitor.expiry-interval-ms)",
                        req.node_id
                    ),
                    ..refused_quietly()
                });
            }
        }
        let (r, min) = (req.resource, self.min_allocation);
        if r.memory < min.memory || r.vcores < min.vcores || r.memory <= 0 || r.vcores <= 0 {
            return Ok(refused(format!(
                "NodeManager from  {host} doesn't satisfy minimum allocations, Sending SHUTDOWN signal to the NodeManager. Node capabilities are <memory:{}, vCores:{}>; minimums are {}mb and {} vcores",
                r.memory, r.vcores, min.memory, min.vcores
            )));
        }
        if r.memory > MAX_NODE_MEMORY_MB || r.vcores > MAX_NODE_VCORES {
            return Ok(refused(format!(
                "NodeManager from  {host} offers <memory:{}, vCores:{}>, more than any node can (at most {MAX_NODE_MEMORY_MB} mb and {MAX_NODE_VCORES} vcores), Sending SHUTDOWN signal to the NodeManager.",
                r.memory, r.vcores
            )));
        }
        let rack = req.rack.clone().unwrap_or_else(|| DEFAULT_RACK.to_string());
        // A running node registering again with the same resource and rack (its NM restarted)
        // keeps its place and the containers it still runs; otherwise it starts afresh.
        let kept = match self.nodes.remove(&req.node_id) {
            Some(old) => {
                tracing::info!("Reconnect from the node at: {} (it was {})", req.node_id, old.state.name());
                let same = old.state == NodeState::Running && old.resource == req.resource && old.names.rack == rack;
                if same {
                    Some(old.sched)
                } else {
                    if old.state == NodeState::Running {
                        self.sched.remove_node(old.sched);
                        self.sweep_ended(now);
                    }
                    None
                }
            }
            None => None,
        };
        let sched_id = match kept {
            Some(id) => id,
            None => {
                let spec = NodeSpec {
                    name: &req.node_id,
                    rack: Some(&rack),
                    resource: resource_of(req.resource),
                    label: None,
                };
                self.sched.add_nodes(&[spec]).map_err(|e| RmError::bad_request(e.to_string()))?[0]
            }
        };
        self.awaited.remove(&req.node_id);
        let session = fairloom_protocol::token::to_hex(&(self.keygen)()[..16]);
        self.nodes.insert(RmNode {
            names: Arc::new(NodeNames {
                id: req.node_id.clone(),
                http: req.http_address.clone(),
                rack: rack.clone(),
                version: req.version.clone(),
            }),
            resource: req.resource,
            sched: sched_id,
            state: NodeState::Running,
            last_heartbeat: now,
            response_id: 0,
            to_start: Vec::new(),
            to_kill: Vec::new(),
            health_report: String::new(),
            session: session.clone(),
            to_ack: Vec::new(),
            ip,
            peer,
            instance: req.instance.clone(),
        });
        self.node_changed(&req.node_id);
        // Its keys are new to it: every attempt is sent a new NM token for it (YARN's
        // removeNodeKey).
        for a in self.apps.values_mut().filter_map(|a| a.attempt_mut()) {
            a.nm_tokens_sent.remove(&req.node_id);
        }
        tracing::info!(
            "NodeManager from node {} (http {}) registered with capability <memory:{}, vCores:{}>, rack {}, reporting {} containers",
            req.node_id,
            req.http_address,
            req.resource.memory,
            req.resource.vcores,
            rack,
            req.containers.len()
        );
        for status in &req.containers {
            self.recover_container(&req.node_id, status, now);
        }
        if kept.is_some() {
            // What the RM had on the node and the node no longer runs has ended.
            let reported: HashSet<&str> = req.containers.iter().map(|c| c.container_id.as_str()).collect();
            let gone: Vec<String> = self
                .containers
                .values()
                .filter(|c| c.node == req.node_id && !reported.contains(c.id.as_str()))
                .map(|c| c.id.clone())
                .collect();
            for id in gone {
                let why = "Container not reported by its NodeManager when it registered again";
                let _ = self.end_reported(&req.node_id, &self.abnormal(&id, why), now);
            }
        }
        Ok(RegisterNodeResponse {
            action: NodeAction::Normal,
            container_token_master_key: Some(self.keys.container.current().clone()),
            nm_token_master_key: Some(self.keys.nm.current().clone()),
            session,
            heartbeat_interval_ms: self.conf.nm_heartbeat_ms,
            rm_identifier: self.cluster_ts,
            diagnostics: String::new(),
        })
    }

    /// `refreshNodes`: take the include and exclude lists anew; a running node they no longer
    /// allow is decommissioned (or shut down when it is in neither list), its containers end
    /// as on a lost node, and its next heartbeat tells it to shut down. The ids of the nodes
    /// that left.
    pub fn refresh_nodes(&mut self, hosts: crate::conf::HostLists, now: Millis) -> Vec<String> {
        self.conf.hosts = hosts;
        let leaving: Vec<(String, NodeState)> = self
            .nodes
            .values()
            .filter(|n| n.state == NodeState::Running)
            .filter_map(|n| {
                let host = n.names.id.rsplit_once(':').map_or(n.names.id.as_str(), |(h, _)| h);
                let ip = n.ip.as_deref();
                (!self.conf.hosts.allows(host, ip)).then(|| {
                    let to = if self.conf.hosts.untracked(host, ip) {
                        NodeState::Shutdown
                    } else {
                        NodeState::Decommissioned
                    };
                    (n.names.id.clone(), to)
                })
            })
            .collect();
        for (id, to) in &leaving {
            tracing::warn!("Forcefully decommissioning node {id}: {} by the host lists", to.name());
            self.deactivate_node(id, *to, now);
        }
        leaving.into_iter().map(|(id, _)| id).collect()
    }

    /// A running node leaves: the scheduler drops it, its containers end ABORTED as on a
    /// lost node, AMs hear of it.
    pub(super) fn deactivate_node(&mut self, id: &str, to: NodeState, now: Millis) {
        let node = self.nodes.get_mut(id).expect("listed");
        node.state = to;
        node.to_start.clear();
        node.to_kill.clear();
        let sched = node.sched;
        self.sched.remove_node(sched);
        self.node_changed(id);
        self.sweep_ended(now);
        // The scheduler's slot of this node goes to the next node that registers: a finished
        // application's AM container, exiting here and no longer the scheduler's, ends now,
        // or the next node in that slot could speak for it. Those are the finishing AMs'.
        let exiting: Vec<String> = (self.finishing.iter())
            .filter(|(_, am, _)| self.containers.get(am).is_some_and(|c| c.slot.is_none() && c.node == id))
            .map(|(_, am, _)| am.clone())
            .collect();
        for c in exiting {
            let why = format!("Container of a finished application lost with its node {id}");
            self.end_container(&c, fairloom_model::exit::ABORTED, &why);
        }
    }

    /// Keep at most `max-inactive-nodes` nodes that left: the longest silent go first (their
    /// id the tie-break), as the oldest finished applications do.
    pub(super) fn forget_inactive_nodes(&mut self) {
        let mut inactive: Vec<(Millis, &str)> = self
            .nodes
            .values()
            .filter(|n| n.state != NodeState::Running)
            .map(|n| (n.last_heartbeat, n.names.id.as_str()))
            .collect();
        let Some(over) = inactive.len().checked_sub(self.conf.max_inactive_nodes).filter(|&n| n > 0) else {
            return;
        };
        inactive.sort_unstable();
        let gone: Vec<String> = inactive[..over].iter().map(|(_, id)| id.to_string()).collect();
        for id in gone {
            tracing::info!("Forgetting node {id}: more than {} nodes that left", self.conf.max_inactive_nodes);
            self.nodes.remove(&id);
            self.node_changes.forget(&id);
            for a in self.apps.values_mut().filter_map(|a| a.attempt_mut()) {
                a.nm_tokens_sent.remove(&id);
            }
        }
    }

    /// A container a registering node reports: one the RM knows ends if the node says so; an
    /// unknown one is taken back when it belongs to a live attempt (work-preserving recovery,
    /// counted from its allocation as its token says), or, ended, is told to its AM;
    /// anything else is killed at the next heartbeat.
    pub(super) fn recover_container(&mut self, node: &str, status: &ContainerStatus, now: Millis) {
        let Ok(cid) = status.container_id.parse::<YarnContainerId>() else { return };
        let app_id = cid.attempt.application;
        if let Some(c) = self.containers.get_id(&cid) {
            // Only the node a container lives on speaks for it.
            if c.node == node && status.state == ContainerState::Complete {
                // Its next heartbeat report is acknowledged once it may be.
                let _ = self.end_reported(node, status, now);
            }
            return;
        }
        // What a node says it ran must be a container the RM could have allocated.
        let max = self.max_allocation();
        let (r, t) = (status.resource, status.creation_time);
        if r.memory <= 0 || r.vcores <= 0 || r.memory > max.memory || r.vcores > max.vcores || t > now {
            tracing::warn!(
                "node {node} reports container {} with <memory:{}, vCores:{}> created at {t}: not taken",
                status.container_id,
                r.memory,
                r.vcores
            );
            return;
        }
        if self.ended.get(&app_id).is_some_and(|e| e.contains(&cid)) || self.awaiting_flush(&status.container_id) {
            return;
        }
        let Some(submitted) = self.apps.get(&app_id).map(|a| a.submit_time) else { return };
        // No container is older than its application.
        if status.creation_time > 0 && status.creation_time < submitted {
            tracing::warn!(
                "node {node} reports container {} older than its application: not taken",
                status.container_id
            );
            return;
        }
        // Allocated before this RM started and ended while it was down: not counted before (an
        // end is acknowledged only once its usage is stored), so counted now, up to when its
        // node saw it end. One this RM allocated was counted when it ended.
        if status.state == ContainerState::Complete
            && status.creation_time > 0
            && status.creation_time < self.started_on
        {
            let end = status.finish_time.clamp(status.creation_time, now);
            self.add_usage(app_id, status.resource, status.creation_time, end);
            // Acknowledged once stored (or, with nothing stored, at its next heartbeat report).
            self.pending_ack(node, cid);
        }
        let Some(app) = self.apps.get(&app_id) else { return };
        let Some(attempt) = app.attempt() else { return };
        if app.state.is_final() || attempt.number != cid.attempt.attempt {
            return;
        }
        let is_am = attempt.am_container.as_deref() == Some(status.container_id.as_str());
        if is_am && attempt.am_node.as_deref().is_some_and(|n| n != node) {
            tracing::warn!("node {node} reports AM container {} of another node: not taken", status.container_id);
            return;
        }
        if status.state == ContainerState::Complete {
            self.note_ended(cid);
            if is_am {
                let why = format!("AM container exited with exitCode: {}. {}", status.exit_status, status.diagnostics);
                self.fail_attempt(app_id, why, Some(status.exit_status), now);
            } else if let Some(a) = self.apps.get_mut(&app_id).and_then(|a| a.attempt_mut()) {
                a.new_completed.push(status.clone());
            }
            return;
        }
        let Some(sched_app) = app.sched else { return };
        let node_id = self.nodes[node].sched;
        // It must fit what the node has left: a node cannot claim more than it offers.
        if !resource_of(status.resource).fits_in(&self.sched.cluster().node(node_id).unallocated()) {
            tracing::warn!(
                "node {node} reports container {} beyond its free resources: not taken",
                status.container_id
            );
            return;
        }
        let placed = self.sched.place_containers(&Placement {
            app: sched_app,
            node: node_id,
            capability: resource_of(status.resource),
            priority: status.priority,
            count: 1,
            am: is_am,
            label: None,
        });
        let Ok(placed) = placed else { return };
        let slot = placed[0];
        let seq = self.sched.container(slot).seq;
        self.containers.insert(RmContainer {
            id: status.container_id.clone(),
            cid,
            app: app_id,
            attempt: cid.attempt.attempt,
            slot: Some(Slot { id: slot, seq, app: sched_app }),
            node: node.to_string(),
            node_sched: node_id,
            resource: status.resource,
            priority: status.priority,
            is_am,
            // Counted from its allocation, as its token says, not from this registration.
            allocated_at: if status.creation_time > 0 { status.creation_time.min(now) } else { now },
            running: true,
        });
    }

    /// YARN's unRegisterNodeManager: the node is stopping. The containers it killed end with
    /// what it reports (their usage stored before it is told so), the rest as on a lost
    /// node, and the node is SHUTDOWN.
    pub fn unregister_node(
        &mut self,
        req: UnregisterNodeRequest,
        now: Millis,
    ) -> Result<UnregisterNodeResponse, RmError> {
        let Some(node) = self.nodes.get(&req.node_id) else {
            return Err(RmError::not_found(format!("node {} is not registered", req.node_id)));
        };
        if node.session != req.session {
            return Err(RmError::forbidden(format!(
                "unregistering node {} needs its registration's session",
                req.node_id
            )));
        }
        if node.state != NodeState::Running {
            return Ok(UnregisterNodeResponse { acknowledged: Vec::new() });
        }
        let mut acknowledged = Vec::new();
        for status in req.containers.iter().filter(|s| s.state == ContainerState::Complete) {
            let known = self.containers.get(&status.container_id).is_some_and(|c| c.node == req.node_id);
            if !known || self.end_reported(&req.node_id, status, now) {
                acknowledged.push(status.container_id.clone());
            }
        }
        tracing::info!("Node {} unregistered: SHUTDOWN", req.node_id);
        self.deactivate_node(&req.node_id, NodeState::Shutdown, now);
        // The node forgets what it is told here: the usage must be stored first.
        self.flush_usage(now);
        acknowledged
            .extend(self.nodes.get_mut(&req.node_id).map(|n| std::mem::take(&mut n.to_ack)).unwrap_or_default());
        Ok(UnregisterNodeResponse { acknowledged })
    }

    /// A completion status for a live container that is not a heartbeat's: the RM's
    /// container, the scheduler's slot and the AM learn it as from a heartbeat. Whether it may
    /// be acknowledged at once (nothing to store first).
    pub(super) fn end_reported(&mut self, node: &str, status: &ContainerStatus, now: Millis) -> bool {
        let Some(at) = self.nodes.get(node).map(|n| n.sched) else { return true };
        let Some(c) = self.containers.remove_on(&status.container_id, at) else { return true };
        self.note_ended(c.cid);
        self.count(c.app, |q| q.containers_released += 1);
        if let Some(slot) = c.slot.filter(|s| self.slot_alive(s)) {
            let _ = self.sched.complete_container(slot.id, status.exit_status);
        }
        let now_ack = self.pending_ack(node, c.cid);
        self.container_finished(c, status.clone(), now);
        now_ack
    }

    /// An ABORTED status for live container `id`, as YARN reports containers of lost nodes.
    pub(super) fn abnormal(&self, id: &str, why: &str) -> ContainerStatus {
        let c = self.containers.get(id);
        ContainerStatus {
            container_id: id.to_string(),
            state: ContainerState::Complete,
            exit_status: exit::ABORTED,
            diagnostics: why.to_string(),
            resource: c.map(|c| c.resource).unwrap_or_default(),
            priority: c.map_or(0, |c| c.priority),
            creation_time: c.map_or(0, |c| c.allocated_at),
            finish_time: self.now,
        }
    }

    /// After a restart, the nodes the running attempts' AMs were on: one that does not register
    /// within the NM expiry is gone, and so are the AMs it ran (an ABORTED exit, which does not
    /// count against the attempts). AMs hear it as LOST.
    pub(super) fn expire_awaited(&mut self, now: Millis) {
        let expiry = self.conf.nm_expiry_ms;
        let gone: Vec<String> =
            self.awaited.iter().filter(|(_, since)| now - **since > expiry).map(|(n, _)| n.clone()).collect();
        for node in gone {
            self.awaited.remove(&node);
            tracing::warn!("Node {node} did not register within {expiry} ms of the ResourceManager's restart: LOST");
            self.node_changes.record(NodeReport {
                node_id: node.clone(),
                http_address: String::new(),
                state: "LOST".into(),
            });
            let orphans: Vec<(fairloom_model::ApplicationId, String)> = self
                .apps
                .values()
                .filter(|a| !a.state.is_final())
                .filter_map(|a| {
                    let at = a.attempt()?;
                    let am = at.am_container.as_deref()?;
                    let on_it = at.am_node.as_deref() == Some(node.as_str()) && !at.state.is_final();
                    (on_it && self.containers.get(am).is_none()).then(|| (a.id, am.to_string()))
                })
                .collect();
            for (app, am) in orphans {
                let why = format!(
                    "AM Container {am} exited with exitCode: {}. Container released on a *lost* node ({node} did not come back after the ResourceManager restarted)",
                    exit::ABORTED
                );
                self.fail_attempt(app, why, Some(exit::ABORTED), now);
            }
        }
    }
}
