//! The node protocol: registration (with the containers a node still runs, for recovery),
//! heartbeats (completions in, the scheduler's decisions out as AM launches and allocations),
//! containers the scheduler ended (preemption, lost nodes), and the node liveness monitor.

use fairloom_model::{ApplicationId, ContainerId as YarnContainerId, Millis};
use fairloom_protocol::am::{Container, NodeReport};
use fairloom_protocol::node::{KillContainer, NodeAction, NodeHeartbeatRequest, NodeHeartbeatResponse, StartContainer};
use fairloom_protocol::{env, exit, ContainerState, ContainerStatus, LaunchContext};
use fairloom_scheduler::Decision;

use super::am::AmState;
use super::{res_of, AttemptState, Core, NodeState, RmContainer, Slot};
use crate::error::RmError;

impl Core {
    pub fn node_heartbeat(
        &mut self,
        req: &NodeHeartbeatRequest,
        now: Millis,
    ) -> Result<NodeHeartbeatResponse, RmError> {
        let resync = |diagnostics: &str| NodeHeartbeatResponse {
            response_id: 0,
            action: NodeAction::Resync,
            start: Vec::new(),
            kill: Vec::new(),
            acknowledged: Vec::new(),
            next_heartbeat_ms: 0,
            diagnostics: diagnostics.to_string(),
            container_token_master_key: None,
            nm_token_master_key: None,
        };
        let Some(node) = self.nodes.get_mut(&req.node_id) else {
            return Ok(resync(&format!("Node not found resyncing {}", req.node_id)));
        };
        if node.session != req.session {
            // Not the process that registered the node: nothing it says is taken.
            if fairloom_serve::refusal_may_be_logged() {
                tracing::warn!(
                    "a heartbeat for node {} without its registration's session: told to register",
                    req.node_id
                );
            }
            return Ok(resync("this heartbeat is not from the node's registration; register again"));
        }
        match node.state {
            NodeState::Running => {}
            NodeState::Lost => return Ok(resync("node was lost; register again")),
            NodeState::Decommissioned | NodeState::Shutdown => {
                let host = req.node_id.rsplit_once(':').map_or(req.node_id.as_str(), |(h, _)| h);
                return Ok(NodeHeartbeatResponse {
                    action: NodeAction::Shutdown,
                    diagnostics: format!("Disallowed NodeManager nodeId: {} hostname: {host}", req.node_id),
                    ..resync("")
                });
            }
        }
        node.last_heartbeat = now;
        node.response_id += 1;
        if node.health_report != req.health_report {
            node.health_report = super::bounded(req.health_report.clone());
        }
        let node_sched = node.sched;
        let node_name = node.names.clone();
        let mut completed = Vec::new();
        let mut acknowledged = Vec::new();
        let mut unknown_running = Vec::new();
        let mut finished = Vec::new();
        for status in &req.containers {
            match status.state {
                ContainerState::Complete => {
                    if let Some(c) = self.containers.remove_on(&status.container_id, node_sched) {
                        self.note_ended(c.cid);
                        self.count(c.app, |q| q.containers_released += 1);
                        if let Some(slot) = c.slot.filter(|s| self.slot_alive(s)) {
                            completed.push((slot.id, status.exit_status));
                        }
                        // Acknowledged once the usage it adds is stored.
                        if self.pending_ack(&req.node_id, c.cid) {
                            acknowledged.push(status.container_id.clone());
                        }
                        finished.push((c, status.clone()));
                    } else if !self.awaiting_flush(&status.container_id) {
                        // Already noted and stored (or never ours).
                        acknowledged.push(status.container_id.clone());
                    }
                }
                _ => match self.containers.set_running(&status.container_id, node_sched) {
                    None => unknown_running.push(status.container_id.clone()),
                    Some(Some(c)) if c.is_am => {
                        let app = c.app;
                        self.am_state(app, AmState::Launched);
                    }
                    Some(_) => {}
                },
            }
        }
        let mut decisions = std::mem::take(&mut self.decisions);
        decisions.clear();
        self.sched.node_heartbeat_into(node_sched, &completed, now, &mut decisions);
        for (c, status) in finished {
            self.container_finished(c, status, now);
        }
        for d in &decisions {
            if let Decision::Allocated { app, container, .. } = *d {
                self.allocated(app, container, &node_name.id, now);
            }
        }
        self.decisions = decisions;
        let node = self.nodes.get_mut(&req.node_id).expect("present");
        for id in unknown_running {
            if !node.to_kill.iter().any(|k| k.container_id == id) {
                node.to_kill.push(KillContainer {
                    container_id: id,
                    exit_status: exit::KILLED_BY_RESOURCEMANAGER,
                    diagnostics: "Container not known to the ResourceManager.".to_string(),
                });
            }
        }
        acknowledged.append(&mut node.to_ack);
        // YARN's populateKeys: a next key the node does not have yet.
        let next = |k: &crate::secrets::RollingKey, known: i32| k.next().filter(|n| n.key_id != known).cloned();
        Ok(NodeHeartbeatResponse {
            response_id: node.response_id,
            action: NodeAction::Normal,
            start: std::mem::take(&mut node.to_start),
            kill: std::mem::take(&mut node.to_kill),
            acknowledged,
            next_heartbeat_ms: self.conf.nm_heartbeat_ms,
            diagnostics: String::new(),
            container_token_master_key: next(&self.keys.container, req.last_known_container_token_key_id),
            nm_token_master_key: next(&self.keys.nm, req.last_known_nm_token_key_id),
        })
    }

    pub(super) fn slot_alive(&self, s: &Slot) -> bool {
        let c = self.sched.container(s.id);
        c.alive && c.app == s.app && c.seq == s.seq
    }

    /// A container of ours ended (its node reported it, or the scheduler ended it).
    pub(super) fn container_finished(&mut self, c: RmContainer, status: ContainerStatus, now: Millis) {
        self.add_usage(c.app, c.resource, c.allocated_at, now);
        let Some(app) = self.apps.get_mut(&c.app) else { return };
        if status.exit_status == exit::PREEMPTED {
            app.preempted.memory += c.resource.memory;
            app.preempted.vcores += c.resource.vcores;
            if c.is_am {
                app.preempted_am += 1;
            } else {
                app.preempted_non_am += 1;
            }
        }
        if app.state.is_final() {
            return;
        }
        let current = app.attempt().map(|a| a.number) == Some(c.attempt);
        if !current {
            return;
        }
        if c.is_am {
            let why = format!(
                "AM Container for {} exited with exitCode: {}. {}",
                app.attempt_id(c.attempt),
                status.exit_status,
                status.diagnostics
            );
            self.fail_attempt(c.app, why, Some(status.exit_status), now);
        } else if let Some(a) = app.attempt_mut() {
            a.new_completed.push(ContainerStatus { diagnostics: super::bounded(status.diagnostics), ..status });
        }
    }

    /// The scheduler allocated `container` to `sched_app` on `node`.
    fn allocated(
        &mut self,
        sched_app: fairloom_scheduler::AppId,
        container: fairloom_scheduler::ContainerId,
        node: &str,
        now: Millis,
    ) {
        let c = self.sched.container(container);
        let (seq, is_am, resource, priority) = (c.seq, c.is_am, res_of(c.resource), c.priority);
        let Some(app_id) = self.app_of_sched(sched_app) else {
            // Not ours (cannot happen: every scheduler app is submitted by this RM).
            let _ = self.sched.complete_container(container, exit::ABORTED);
            return;
        };
        let http = self.nodes[node].names.http.clone();
        let app = &self.apps[&app_id];
        let number = app.attempt().map(|a| a.number).unwrap_or(1);
        let cid =
            YarnContainerId { attempt: app.attempt_id(number), epoch: self.epoch.saturating_sub(1), id: seq as u64 };
        let id = cid.to_string();
        let token = self.container_token(cid, node, &app.user, resource, priority, is_am, now);
        let launch = is_am.then(|| (am_launch_context(app, &id, &self.conf), self.am_credentials(cid.attempt)));
        self.containers.insert(RmContainer {
            id: id.clone(),
            cid,
            app: app_id,
            attempt: number,
            slot: Some(Slot { id: container, seq, app: sched_app }),
            node: node.to_string(),
            node_sched: self.nodes[node].sched,
            resource,
            priority,
            is_am,
            allocated_at: now,
            running: false,
        });
        self.count(app_id, |q| q.containers_allocated += 1);
        let app = self.apps.get_mut(&app_id).expect("mapped apps exist");
        if let Some((launch, credentials)) = launch {
            if app.launch_time == 0 {
                app.launch_time = now;
            }
            if let Some(a) = app.attempt_mut() {
                a.state = AttemptState::Launched;
                a.am_container = Some(id.clone());
                a.am_node = Some(node.to_string());
                a.am_node_http = Some(http);
                a.last_heartbeat = now;
            }
            let attempt_id = app.attempt_id(number);
            self.am_state(app_id, AmState::Assigned);
            tracing::info!("{attempt_id} LAUNCHED: AM container {id} allocated on {node}");
            self.persist_or_log(app_id);
            self.nodes.get_mut(node).expect("heartbeating node").to_start.push(StartContainer {
                token,
                launch,
                credentials: Some(credentials),
            });
        } else if let Some(a) = app.attempt_mut() {
            a.new_allocated.push(Container {
                id,
                node_id: node.to_string(),
                node_http_address: http,
                resource,
                priority,
                token: Some(token),
            });
        }
    }

    /// Containers the scheduler ended by itself (preemption, a removed node): their nodes
    /// kill them and their AMs learn it.
    pub(super) fn sweep_ended(&mut self, now: Millis) {
        // The walk is over every live container; most updates end none (bench rm: 50,000
        // live, the walk took a tenth of the loop). Equal counts mean every slot is alive.
        if self.containers.slotted() == self.sched.cluster().live_count() {
            return;
        }
        let ended: Vec<String> = self
            .containers
            .values()
            .filter(|c| c.slot.is_some_and(|s| !self.slot_alive(&s)))
            .map(|c| c.id.clone())
            .collect();
        for id in ended {
            // An earlier one may have failed its attempt and taken its siblings with it.
            let Some(slot) = self.containers.get(&id).and_then(|c| c.slot) else { continue };
            let sc = self.sched.container(slot.id);
            let status = if sc.app == slot.app && sc.seq == slot.seq {
                sc.exit_status.unwrap_or(exit::ABORTED)
            } else {
                exit::ABORTED
            };
            let diagnostics = match status {
                exit::PREEMPTED => "Container preempted by scheduler".to_string(),
                exit::ABORTED => "Container released on a *lost* node".to_string(),
                other => format!("Container ended by the scheduler (exit status {other})"),
            };
            let c = self.end_container(&id, status, &diagnostics).expect("present");
            let report = ContainerStatus {
                container_id: id,
                state: ContainerState::Complete,
                exit_status: status,
                diagnostics,
                resource: c.resource,
                priority: c.priority,
                creation_time: c.allocated_at,
                finish_time: now,
            };
            self.container_finished(c, report, now);
        }
    }

    /// YARN's NMLivenessMonitor: a node silent past the expiry is LOST; the scheduler
    /// drops it and its containers end ABORTED.
    pub(super) fn expire_nodes(&mut self, now: Millis) {
        let expiry = self.conf.nm_expiry_ms;
        let lost: Vec<String> = self
            .nodes
            .values()
            .filter(|n| n.state == NodeState::Running && now - n.last_heartbeat > expiry)
            .map(|n| n.names.id.clone())
            .collect();
        for id in lost {
            tracing::warn!("Deactivating node {id}: it is LOST (no heartbeat for more than {expiry} ms)");
            self.deactivate_node(&id, NodeState::Lost, now);
        }
    }

    pub(super) fn node_changed(&mut self, id: &str) {
        let n = &self.nodes[id];
        self.node_changes.record(NodeReport {
            node_id: n.names.id.clone(),
            http_address: n.names.http.clone(),
            state: n.state.name().to_string(),
        });
    }

    /// The app an attempt-id string names, with the attempt number.
    pub fn parse_attempt(&self, text: &str) -> Option<(ApplicationId, u32)> {
        let a: fairloom_model::ApplicationAttemptId = text.parse().ok()?;
        Some((a.application, a.attempt))
    }
}

/// The AM container's launch context: the submitted one, plus what YARN gives every AM
/// (its container id, the submitter, the attempt limit) and how to reach the RM.
fn am_launch_context(app: &super::RmApp, container: &str, conf: &crate::conf::RmConf) -> LaunchContext {
    let mut launch = app.sub.launch_context();
    let extra = [
        (env::CONTAINER_ID, container.to_string()),
        (env::APP_SUBMITTER_USER, app.user.clone()),
        (env::MAX_APP_ATTEMPTS, app.max_attempts(conf.am_max_attempts).to_string()),
        (env::APP_SUBMIT_TIME_ENV, app.submit_time.to_string()),
        (env::RM_SCHEDULER_ADDRESS, conf.scheduler_address.to_string()),
        (env::RM_WEBAPP_ADDRESS, conf.webapp.to_string()),
    ];
    for (k, v) in extra {
        launch.environment.retain(|(name, _)| name != k);
        launch.environment.push((k.to_string(), v));
    }
    launch
}
