//! The application-master protocol: register (and re-register after an RM restart),
//! allocate with YARN's responseId rules, finish; and the AM liveness monitor.

use std::sync::Arc;

use fairloom_model::{ApplicationId, Millis, Resource, ANY};
use fairloom_protocol::am::{
    AllocateRequest, AllocateResponse, AmCommand, Container, FinishAmRequest, FinishAmResponse, NmToken,
    PreemptionMessage, RegisterAmRequest, RegisterAmResponse,
};
use fairloom_protocol::token::Token;
use fairloom_protocol::{exit, ContainerState, ContainerStatus, Res};
use fairloom_scheduler::Ask;

use super::{res_of, resource_of, AppState, AttemptState, Core};
use crate::error::RmError;

/// Where an attempt's AM stands between its submission and its registration: what YARN's
/// `SchedulerApplicationAttempt.AMState` puts in the app's diagnostics meanwhile (the
/// scheduler's wait reason before the AM has a container, these after; cleared when the AM
/// registers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AmState {
    Assigned,
    Launched,
}

impl AmState {
    pub(crate) fn diagnostics(self) -> &'static str {
        match self {
            AmState::Assigned => "Scheduler has assigned a container for AM, waiting for AM container to be launched",
            AmState::Launched => "AM container is launched, waiting for AM container to Register with RM",
        }
    }
}

const NOT_REGISTERED: &str = "ApplicationMasterNotRegisteredException";
pub const ATTEMPT_NOT_FOUND: &str = "ApplicationAttemptNotFoundException";
const INVALID_AM_REQUEST: &str = "InvalidApplicationMasterRequestException";

/// An allocate's answer, with the one it replaced as the attempt's last: handed back so
/// that the old answer, which may hold thousands of containers, is freed by the caller
/// and not on the scheduling loop (its drop was about 3% of the loop, perf).
pub struct Allocated {
    pub response: Arc<AllocateResponse>,
    pub superseded: Option<Arc<AllocateResponse>>,
}

impl Allocated {
    fn fresh(response: Arc<AllocateResponse>) -> Self {
        Allocated { response, superseded: None }
    }
}

impl Core {
    /// The AM of `app_id`'s current attempt reached `state` (its container was assigned, or
    /// its node reported it running): the diagnostics say so while the app is accepted.
    pub(super) fn am_state(&mut self, app_id: ApplicationId, state: AmState) {
        if let Some(app) = self.apps.get_mut(&app_id) {
            let registered = app.attempt().is_some_and(|a| a.registered);
            if app.state == AppState::Accepted && !registered {
                app.diagnostics = state.diagnostics().to_string();
            }
        }
    }

    /// The live attempt an AMRM token speaks for, and the id of the key that made the token.
    fn live_attempt(&self, token: &Token) -> Result<(ApplicationId, i32), RmError> {
        let id = self.check_amrm(token)?;
        let attempt = id.attempt;
        // YARN's ApplicationMasterService forgets an attempt once it ends; AMRMClientAsync
        // takes this exception as the order to shut down.
        let gone = |why: String| {
            RmError::yarn(
                ATTEMPT_NOT_FOUND,
                format!("Application attempt {attempt} doesn't exist in ApplicationMasterService cache. {why}"),
            )
        };
        let app = self.apps.get(&attempt.application).ok_or_else(|| gone("Its application is gone.".to_string()))?;
        let current = app.attempt().map(|a| a.number) == Some(attempt.attempt);
        if !current || app.attempt().is_some_and(|a| a.state.is_final()) || app.state.is_final() {
            let now_at = app.attempt().map_or(0, |a| a.number);
            return Err(gone(format!(
                "The attempt is over: its application is {} at attempt {now_at}.",
                app.state.name()
            )));
        }
        Ok((app.id, id.key_id))
    }

    pub fn register_am(
        &mut self,
        req: RegisterAmRequest,
        token: &Token,
        now: Millis,
    ) -> Result<RegisterAmResponse, RmError> {
        let (app_id, _) = self.live_attempt(token)?;
        let max = self.max_allocation();
        // Containers of this attempt the RM knows (after a restart: taken back from nodes).
        let known: Vec<Container> = self
            .containers
            .of_app(app_id)
            .filter(|c| !c.is_am)
            .map(|c| Container {
                id: c.id.clone(),
                node_id: c.node.clone(),
                node_http_address: self.nodes.get(&c.node).map(|n| n.names.http.clone()).unwrap_or_default(),
                resource: c.resource,
                priority: c.priority,
                token: None,
            })
            .collect();
        let app = self.apps.get_mut(&app_id).expect("live");
        let queue = app.queue.clone();
        let changes = self.node_changes.latest();
        let attempt = app.attempt_id(app.attempt().map_or(0, |a| a.number));
        let a = app.attempt_mut().expect("live");
        if a.registered {
            return Err(RmError::yarn(
                INVALID_AM_REQUEST,
                format!("Application Master is already registered : {app_id}"),
            ));
        }
        a.registered = true;
        a.state = AttemptState::Running;
        a.last_heartbeat = now;
        a.tracking_url = super::bounded(req.tracking_url.clone());
        a.node_changes_seen = changes;
        // What the AM re-learns at registration is not sent again in allocate.
        a.new_allocated.retain(|c| !known.iter().any(|k| k.id == c.id));
        a.response_id = 0;
        a.last_response = None;
        app.state = AppState::Running;
        // YARN resets the AM launch diagnostics once the AM registers.
        app.diagnostics.clear();
        self.persist(app_id)?;
        tracing::info!("{attempt} RUNNING: the AM registered");
        Ok(RegisterAmResponse { maximum_capability: max, queue, containers_from_previous_attempts: known })
    }

    /// Shared with the attempt: the answer is kept for an AM that asks again with the same
    /// response id, and copying its containers for that was about 3% of the loop (perf).
    pub fn allocate(&mut self, req: AllocateRequest, token: &Token, now: Millis) -> Result<Allocated, RmError> {
        let (app_id, held_key) = self.live_attempt(token)?;
        let app = self.apps.get(&app_id).expect("live");
        let a = app.attempt().expect("live");
        let attempt_id = app.attempt_id(a.number);
        if !a.registered {
            // After an RM restart: YARN's ApplicationMasterNotRegisteredException makes the
            // AM register again and send every outstanding ask.
            return Ok(Allocated::fresh(Arc::new(resync_response())));
        }
        // The AM's number, whatever it is, is compared, never computed with.
        if req.response_id.checked_add(1) == Some(a.response_id) {
            if let Some(last) = &a.last_response {
                return Ok(Allocated::fresh(last.clone()));
            }
        }
        if req.response_id != a.response_id {
            return Err(RmError::yarn(
                INVALID_AM_REQUEST,
                format!("Invalid responseId in AllocateRequest from application attempt: {attempt_id}, expect responseId to be {}, but get {}", a.response_id, req.response_id),
            ));
        }
        let max = self.max_allocation();
        let mut asks = Vec::with_capacity(req.asks.len());
        for r in &req.asks {
            let c = r.capability;
            if r.num_containers < 0 || c.memory < 0 || c.vcores < 0 || c.memory > max.memory || c.vcores > max.vcores {
                return Err(RmError::yarn(
                    "InvalidResourceRequestException",
                    format!(
                        "Invalid resource request, requested resource <memory:{}, vCores:{}> x {} is not in 0 <= request <= maximum allocation <memory:{}, vCores:{}>",
                        c.memory, c.vcores, r.num_containers, max.memory, max.vcores
                    ),
                ));
            }
            asks.push(Ask {
                priority: r.priority,
                resource_name: if r.resource_name.is_empty() { ANY.to_string() } else { r.resource_name.clone() },
                capability: resource_of(c),
                num_containers: r.num_containers,
                relax_locality: r.relax_locality,
                node_label: None,
            });
        }
        let sched = app.sched.ok_or_else(|| RmError::yarn(NOT_REGISTERED, "attempt has no scheduler application"))?;
        if !asks.is_empty() {
            self.sched
                .set_asks(sched, &asks)
                .map_err(|e| RmError::yarn("InvalidResourceRequestException", e.to_string()))?;
        }
        let mut released = Vec::new();
        for id in &req.releases {
            let owned = self.containers.get(id).is_some_and(|c| c.app == app_id && !c.is_am);
            if !owned {
                continue;
            }
            let why = "Container released by application";
            let c = self.end_container(id, exit::KILLED_BY_RESOURCEMANAGER, why).expect("checked");
            if let Some(slot) = c.slot.filter(|s| self.slot_alive(s)) {
                let _ = self.sched.complete_container(slot.id, exit::ABORTED);
            }
            released.push(ContainerStatus {
                container_id: id.clone(),
                state: ContainerState::Complete,
                exit_status: exit::ABORTED,
                diagnostics: "Container released by application".to_string(),
                resource: c.resource,
                priority: c.priority,
                creation_time: c.allocated_at,
                finish_time: now,
            });
        }
        // Containers the scheduler marked for preemption and not yet killed. The scheduler
        // counts an app's marks: without any, its containers are not walked (every allocate
        // call walked them all).
        let marked: Vec<String> = if self.sched.app(sched).preemption_marked == 0 {
            Vec::new()
        } else {
            self.containers
                .of_app(app_id)
                .filter(|c| c.slot.is_some_and(|s| self.slot_alive(&s) && self.sched.container(s.id).marked_for))
                .map(|c| c.id.clone())
                .collect()
        };
        let headroom = self.headroom(sched);
        let num_nodes = self.sched.cluster().live_nodes;
        let changes = self.node_changes.latest();
        let seen = self.apps[&app_id].attempt().map_or(changes, |a| a.node_changes_seen);
        let updated_nodes = self.node_changes.since(seen).cloned().collect();
        let amrm_token = self.rolled_amrm_token(attempt_id, held_key);
        let app = self.apps.get(&app_id).expect("live");
        let a = app.attempt().expect("live");
        // An NM token for each node of a new container that the attempt holds none for.
        let mut fresh: Vec<&str> = a.new_allocated.iter().map(|c| c.node_id.as_str()).collect();
        fresh.sort_unstable();
        fresh.dedup();
        fresh.retain(|n| !a.nm_tokens_sent.contains(*n));
        let nm_tokens: Vec<NmToken> = fresh
            .into_iter()
            .map(|n| NmToken { node_id: n.to_string(), token: self.nm_token(attempt_id, n, &app.user) })
            .collect();
        let app = self.apps.get_mut(&app_id).expect("live");
        app.progress = req.progress.clamp(0.0, 1.0);
        let a = app.attempt_mut().expect("live");
        a.last_heartbeat = now;
        a.nm_tokens_sent.extend(nm_tokens.iter().map(|t| t.node_id.clone()));
        let mut completed = std::mem::take(&mut a.new_completed);
        completed.extend(released);
        let response = Arc::new(AllocateResponse {
            response_id: a.response_id + 1,
            am_command: None,
            allocated: std::mem::take(&mut a.new_allocated),
            completed,
            preemption: (!marked.is_empty())
                .then(|| PreemptionMessage { strict_contract: marked, contract: Vec::new() }),
            headroom,
            updated_nodes,
            num_cluster_nodes: num_nodes,
            nm_tokens,
            amrm_token,
        });
        a.node_changes_seen = changes;
        a.response_id += 1;
        let superseded = a.last_response.replace(response.clone());
        Ok(Allocated { response, superseded })
    }

    /// What the app may still get: its queue's room under its maximum, within the
    /// cluster's free room (the root's usage is the cluster's, so no node is walked).
    fn headroom(&self, sched: fairloom_scheduler::AppId) -> Res {
        let summaries = self.sched.queue_summaries();
        let used = summaries.first().map_or(Resource::none(), |root| root.usage);
        let free = self.sched.cluster().total.saturating_sub(used);
        let queue = self.sched.app(sched).queue;
        let room = queue.and_then(|q| summaries.iter().find(|s| s.name == q)).map(|s| s.max.saturating_sub(s.usage));
        let h = match room {
            Some(room) => Resource::new(room.memory().min(free.memory()), room.vcores().min(free.vcores())),
            None => free,
        };
        res_of(h)
    }

    pub fn finish_am(&mut self, req: FinishAmRequest, token: &Token, now: Millis) -> Result<FinishAmResponse, RmError> {
        let (app_id, _) = self.live_attempt(token)?;
        let app = &self.apps[&app_id];
        let attempt = app.attempt_id(app.attempt().map_or(0, |a| a.number));
        if !app.attempt().is_some_and(|a| a.registered) {
            return Err(RmError::yarn(
                NOT_REGISTERED,
                format!("Application Master is trying to unregister before registering for: {attempt}"),
            ));
        }
        if let Some(a) = self.apps.get_mut(&app_id).and_then(|a| a.attempt_mut()) {
            a.tracking_url = super::bounded(req.tracking_url.clone());
        }
        tracing::info!("{attempt} unregistered with final status {}", req.final_status.name());
        self.finish_app(app_id, req.final_status, super::bounded(req.diagnostics), now);
        Ok(FinishAmResponse { unregistered: true })
    }

    /// YARN's AMLivenessMonitor: an AM launched or registered and silent past the expiry
    /// fails its attempt.
    pub(super) fn expire_attempts(&mut self, now: Millis) {
        let expiry = self.conf.am_expiry_ms;
        let expired: Vec<(ApplicationId, String)> = self
            .apps
            .values()
            .filter(|app| !app.state.is_final())
            .filter_map(|app| {
                let a = app.attempt()?;
                let watched = matches!(a.state, AttemptState::Launched | AttemptState::Running);
                (watched && now - a.last_heartbeat > expiry).then(|| (app.id, app.attempt_id(a.number).to_string()))
            })
            .collect();
        for (app, attempt) in expired {
            self.fail_attempt(app, format!("ApplicationMaster for attempt {attempt} timed out"), None, now);
        }
    }
}

fn resync_response() -> AllocateResponse {
    AllocateResponse {
        response_id: 0,
        am_command: Some(AmCommand::AmResync),
        allocated: Vec::new(),
        completed: Vec::new(),
        preemption: None,
        headroom: Res::default(),
        updated_nodes: Vec::new(),
        num_cluster_nodes: 0,
        nm_tokens: Vec::new(),
        amrm_token: None,
    }
}
