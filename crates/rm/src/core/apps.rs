//! Applications: new ids, submission, kill, move, priority, and the attempt lifecycle
//! (start, fail and retry up to the maximum, finish).

use fairloom_model::{ApplicationAttemptId, ApplicationId, Millis};
use fairloom_protocol::am::FinalStatus;
use fairloom_protocol::exit;
use fairloom_protocol::node::KillContainer;
use fairloom_protocol::Res;
use fairloom_scheduler::SubmitSpec;

use super::{resource_of, AppState, Attempt, AttemptState, Core, NodeState, RmApp, RmContainer};
use crate::access::Change;
use crate::error::RmError;
use crate::submission::Submission;

/// What a kill did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillOutcome {
    Killed,
    /// It had already reached a final state; the state is unchanged.
    AlreadyFinal(AppState),
}

impl Core {
    /// YARN's getNewApplication: an id to submit under, and the largest container.
    pub fn new_application(&mut self) -> Result<(ApplicationId, Res), RmError> {
        let id = ApplicationId { cluster_timestamp: self.cluster_ts, id: self.next_app };
        self.next_app = self
            .next_app
            .checked_add(1)
            .ok_or_else(|| RmError::internal("this ResourceManager has handed out every application id: restart it"))?;
        self.reserved_ids.insert(id);
        if self.reserved_ids.len() > super::MAX_RESERVED_IDS {
            self.reserved_ids.pop_first();
        }
        Ok((id, self.max_allocation()))
    }

    /// YARN's submitApplication: checked, stored, then given to the scheduler.
    pub fn submit(&mut self, mut sub: Submission, user: &str, now: Millis) -> Result<ApplicationId, RmError> {
        sub.normalize().map_err(RmError::bad_request)?;
        let id: ApplicationId = sub
            .application_id
            .parse()
            .map_err(|_| RmError::bad_request(format!("Invalid ApplicationId: {}", sub.application_id)))?;
        if self.apps.contains_key(&id) {
            return Err(RmError::bad_request(format!(
                "Application with id {id} is already present! Cannot add a duplicate!"
            )));
        }
        if !self.reserved_ids.contains(&id) {
            return Err(RmError::bad_request(format!(
                "Application id {id} was not issued by this ResourceManager (call apps/new-application)"
            )));
        }
        if sub.unmanaged() {
            return Err(RmError::bad_request("not supported: unmanaged application masters (unmanaged-AM=true)"));
        }
        let am = sub.am_resource();
        let max = self.max_allocation();
        if am.memory <= 0 || am.vcores <= 0 || am.memory > max.memory || am.vcores > max.vcores {
            return Err(RmError::yarn(
                "InvalidResourceRequestException",
                format!(
                    "Invalid resource request, requested resource <memory:{}, vCores:{}> is not in 0 < request <= maximum allocation <memory:{}, vCores:{}>",
                    am.memory, am.vcores, max.memory, max.vcores
                ),
            ));
        }
        if sub.launch_context().commands.is_empty() {
            return Err(RmError::bad_request("am-container-spec has no command to run"));
        }
        let queue = sub.queue.clone().filter(|q| !q.trim().is_empty()).unwrap_or_else(|| "default".to_string());
        // YARN checks the queue the placement picks; a placement that fails is the scheduler's
        // rejection below.
        if let Ok(leaf) = self.sched.placement(&queue, user) {
            if !self.conf.access.may_submit(&*self.sched, &leaf, user) {
                return Err(RmError::forbidden(format!(
                    "User {user} does not have permission to submit {id} to queue {leaf}"
                )));
            }
        }
        let priority = sub.priority.unwrap_or(0);
        let spec = SubmitSpec { priority, ..SubmitSpec::new(sub.name(), &queue, user, Some(resource_of(am))) };
        let sched = self.sched.submit(&spec, now);
        let view = self.sched.app(sched);
        if let Some(why) = view.rejection {
            let message = format!("Application {id} submitted by user {user} to queue {queue} was rejected: {why}");
            self.retire(sched);
            return Err(RmError::bad_request(message));
        }
        let placed = view.queue.unwrap_or(&queue).to_string();
        let mut app = RmApp {
            id,
            user: user.to_string(),
            sub,
            queue: placed,
            state: AppState::Accepted,
            final_status: FinalStatus::Undefined,
            diagnostics: String::new(),
            submit_time: now,
            start_time: now,
            launch_time: 0,
            finish_time: 0,
            priority,
            attempts: vec![Attempt::new(1, now)],
            sched: Some(sched),
            progress: 0.0,
            memory_seconds: 0,
            vcore_seconds: 0,
            preempted: Res::default(),
            preempted_am: 0,
            preempted_non_am: 0,
        };
        let record = super::recovery::record_of(&app);
        if let Err(e) = self.store.put_app(&record) {
            // Not stored, so not accepted: the scheduler lets it go again.
            let _ = self.sched.finish_app(sched);
            self.retire(sched);
            return Err(e.into());
        }
        app.diagnostics = "[fairloom] Application is added to the scheduler and is not yet activated.".to_string();
        self.reserved_ids.remove(&id);
        self.by_sched.insert(sched, id);
        tracing::info!("Application {id} submitted by user {user} to queue {}", app.queue);
        tracing::info!("{id} State change from SUBMITTED to ACCEPTED; appattempt {} SCHEDULED", app.attempt_id(1));
        self.apps.insert(id, app);
        self.count(id, |c| c.submitted += 1);
        Ok(id)
    }

    /// Forget a live container and have its node kill it, reporting `exit_status`.
    pub(super) fn end_container(&mut self, id: &str, exit_status: i32, why: &str) -> Option<RmContainer> {
        let c = self.containers.remove(id)?;
        self.note_ended(c.cid);
        self.ended_unstored(c.cid);
        self.count(c.app, |q| q.containers_released += 1);
        // A lost node's orders are never delivered: it registers afresh.
        if let Some(node) = self.nodes.get_mut(&c.node).filter(|n| n.state == NodeState::Running) {
            node.to_kill.push(KillContainer { container_id: c.id.clone(), exit_status, diagnostics: why.to_string() });
        }
        Some(c)
    }

    /// Kill every container of `app` (but its AM's when `keep_am`) and forget them.
    pub(super) fn kill_app_containers(&mut self, app: ApplicationId, exit_status: i32, why: &str, keep_am: bool) {
        let ids: Vec<String> =
            self.containers.of_app(app).filter(|c| !(keep_am && c.is_am)).map(|c| c.id.clone()).collect();
        for id in ids {
            self.end_container(&id, exit_status, why);
        }
    }

    /// The scheduler lets the current attempt go (its containers are released there).
    /// What the ended attempt kept for its AM's calls goes too: a finished application is
    /// kept (up to max-completed-applications) with its attempts, and an allocate answer of
    /// 500 containers is some 100 KB.
    fn release_attempt(&mut self, app: ApplicationId) {
        if let Some(a) = self.apps.get_mut(&app).and_then(|a| a.attempt_mut()) {
            a.last_response = None;
            a.new_allocated = Vec::new();
            a.new_completed = Vec::new();
            a.nm_tokens_sent = Default::default();
        }
        if let Some(sched) = self.apps.get_mut(&app).and_then(|a| a.sched.take()) {
            let _ = self.sched.finish_app(sched);
            self.retire(sched);
        }
    }

    /// YARN's kill (REST PUT state KILLED): every container stops, the app is KILLED.
    pub fn kill(&mut self, id: &str, caller: &str, now: Millis) -> Result<KillOutcome, RmError> {
        self.authorize(id, Change::Kill, caller)?;
        let app = self.app_mut(id)?;
        if app.state.is_final() {
            return Ok(KillOutcome::AlreadyFinal(app.state));
        }
        let app_id = app.id;
        app.state = AppState::Killed;
        app.final_status = FinalStatus::Killed;
        app.finish_time = now;
        app.diagnostics = "Application killed by user.".to_string();
        if let Some(a) = app.attempt_mut() {
            a.state = AttemptState::Killed;
            a.finish_time = now;
        }
        self.persist(app_id)?;
        tracing::info!("{app_id} State change to KILLED: killed by user {caller}");
        self.log_summary(app_id);
        self.count(app_id, |c| c.killed += 1);
        let why = "Container killed: its application was killed.";
        self.kill_app_containers(app_id, exit::KILLED_BY_RESOURCEMANAGER, why, false);
        self.release_attempt(app_id);
        self.evict_completed();
        Ok(KillOutcome::Killed)
    }

    /// YARN's moveApplicationAcrossQueues.
    pub fn move_app(&mut self, id: &str, queue: &str, caller: &str) -> Result<String, RmError> {
        self.authorize(id, Change::Move, caller)?;
        // YARN also asks that the caller could have submitted to the target queue.
        if !self.conf.access.may_submit(&*self.sched, queue, caller) {
            return Err(RmError::forbidden(format!(
                "User {caller} cannot move application {id} to queue {queue}: no submit or administer ACL there"
            )));
        }
        let app = self.app_mut(id)?;
        if app.state.is_final() {
            return Err(RmError::bad_request(format!("App in {} state cannot be moved.", app.state.name())));
        }
        let (app_id, sched) = (app.id, app.sched);
        let target = match sched {
            Some(s) => {
                self.sched.move_app(s, queue).map_err(|e| RmError::bad_request(e.to_string()))?;
                self.sched.app(s).queue.unwrap_or(queue).to_string()
            }
            None => queue.to_string(),
        };
        self.apps.get_mut(&app_id).expect("checked").queue = target.clone();
        self.persist(app_id)?;
        tracing::info!("{app_id} moved to queue {target} by user {caller}");
        Ok(target)
    }

    /// YARN's updateApplicationPriority. The Fair Scheduler has no application priorities
    /// (YARN's answers 0); the Capacity Scheduler's order takes it at the next submission
    /// of an attempt (the live order is not re-keyed yet).
    pub fn set_priority(&mut self, id: &str, priority: i32, caller: &str) -> Result<i32, RmError> {
        self.authorize(id, Change::Priority, caller)?;
        let priorities = self.sched.has_app_priorities();
        let app = self.app_mut(id)?;
        if app.state.is_final() {
            return Err(RmError::bad_request(format!(
                "Application {id} is in {} state, cannot update priority",
                app.state.name()
            )));
        }
        let app_id = app.id;
        app.priority = if priorities { priority } else { 0 };
        let p = app.priority;
        self.persist(app_id)?;
        tracing::info!("{app_id} priority set to {p} by user {caller}");
        Ok(p)
    }

    /// The caller may make `change` to application `id` (see [`crate::access`]).
    fn authorize(&self, id: &str, change: Change, caller: &str) -> Result<(), RmError> {
        self.conf.access.check_change(&*self.sched, change, self.app(id)?, caller)
    }

    /// The current attempt failed (its AM container ended with `exit`, when it did): retry
    /// while the failures that count stay below the maximum, else the app fails. As in YARN,
    /// an AM preempted, on a lost node, on a failed disk or killed by the RM does not count,
    /// and with one attempt allowed there is no retry.
    pub(super) fn fail_attempt(&mut self, app_id: ApplicationId, why: String, exit: Option<i32>, now: Millis) {
        let why = super::bounded(why);
        let global = self.conf.am_max_attempts;
        let Some(app) = self.apps.get_mut(&app_id) else { return };
        if app.state.is_final() {
            return;
        }
        let number = app.attempt().map(|a| a.number).unwrap_or(0);
        let attempt_id = app.attempt_id(number);
        let counts = !matches!(
            exit,
            Some(exit::PREEMPTED | exit::ABORTED | exit::DISKS_FAILED | exit::KILLED_BY_RESOURCEMANAGER)
        );
        if let Some(a) = app.attempt_mut() {
            a.state = AttemptState::Failed;
            a.finish_time = now;
            a.diagnostics = why.clone();
            a.counts = counts;
        }
        let max = app.max_attempts(global);
        let failures = app.attempts.iter().filter(|a| a.state == AttemptState::Failed && a.counts).count() as u32;
        let retry = max > 1 && failures < max;
        tracing::warn!(
            "{attempt_id} State change to FAILED{}: {why}",
            if counts { "" } else { " (not counted against the attempts: the framework's doing)" }
        );
        self.kill_app_containers(app_id, exit::KILLED_BY_RESOURCEMANAGER, "Container of a failed attempt.", false);
        self.release_attempt(app_id);
        let app = self.apps.get_mut(&app_id).expect("present");
        if retry {
            let (name, queue, user, am, priority) =
                (app.sub.name().to_string(), app.queue.clone(), app.user.clone(), app.sub.am_resource(), app.priority);
            app.attempts.push(Attempt::new(number + 1, now));
            app.state = AppState::Accepted;
            app.diagnostics = format!("Attempt {attempt_id} failed: {why}. Starting attempt {}.", number + 1);
            let spec = SubmitSpec { priority, ..SubmitSpec::new(&name, &queue, &user, Some(resource_of(am))) };
            let sched = self.sched.submit(&spec, now);
            if let Some(reason) = self.sched.app(sched).rejection {
                let reason = reason.to_string();
                self.retire(sched);
                self.finish_failed(app_id, format!("the new attempt was rejected: {reason}"), now);
                return;
            }
            self.by_sched.insert(sched, app_id);
            self.apps.get_mut(&app_id).expect("present").sched = Some(sched);
            tracing::info!(
                "{} SCHEDULED ({failures} of {max} allowed failures so far)",
                ApplicationAttemptId { application: app_id, attempt: number + 1 },
            );
            self.persist_or_log(app_id);
        } else {
            self.finish_failed(
                app_id,
                format!("Application {app_id} failed {max} times due to: {why}. Failing the application."),
                now,
            );
        }
    }

    fn finish_failed(&mut self, app_id: ApplicationId, diagnostics: String, now: Millis) {
        let app = self.apps.get_mut(&app_id).expect("present");
        app.state = AppState::Failed;
        app.final_status = FinalStatus::Failed;
        app.finish_time = now;
        app.diagnostics = diagnostics;
        tracing::info!("{app_id} State change to FAILED: {}", app.diagnostics);
        self.persist_or_log(app_id);
        self.log_summary(app_id);
        self.count(app_id, |c| c.failed += 1);
        self.evict_completed();
    }

    /// The AM unregistered with `status`: the app finishes (FINISHED, with that final status).
    pub(super) fn finish_app(&mut self, app_id: ApplicationId, status: FinalStatus, diagnostics: String, now: Millis) {
        let Some(app) = self.apps.get_mut(&app_id) else { return };
        app.state = AppState::Finished;
        app.final_status = if status == FinalStatus::Undefined { FinalStatus::Succeeded } else { status };
        app.finish_time = now;
        app.diagnostics = diagnostics;
        app.progress = 1.0;
        if let Some(a) = app.attempt_mut() {
            a.state = AttemptState::Finished;
            a.finish_time = now;
        }
        tracing::info!(
            "{app_id} State change to FINISHED with final status {}: {}",
            app.final_status.name(),
            app.diagnostics
        );
        self.persist_or_log(app_id);
        self.log_summary(app_id);
        self.count(app_id, |c| c.completed += 1);
        // Its containers stop, except the AM's, which is exiting on its own: it has an AM
        // expiry to do so (YARN's AM-finishing wait), then it is stopped.
        let why = "Container killed after the application finished.";
        self.kill_app_containers(app_id, exit::KILLED_AFTER_APP_COMPLETION, why, true);
        if let Some(am) = self.containers.of_app(app_id).find(|c| c.is_am).map(|c| c.id.clone()) {
            self.finishing.push((app_id, am, now.saturating_add(self.conf.am_expiry_ms)));
        }
        self.containers.detach_app(app_id);
        self.release_attempt(app_id);
        self.evict_completed();
    }

    /// AMs that unregistered and have not exited within the wait are stopped, as YARN's
    /// AM-finishing monitor has them cleaned up.
    pub(super) fn stop_finished_ams(&mut self, now: Millis) {
        let (due, waiting): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.finishing).into_iter().partition(|f| f.2 <= now);
        self.finishing = waiting;
        self.finishing.retain(|(_, id, _)| self.containers.get(id).is_some());
        for (app, id, _) in due {
            if self.containers.get(&id).is_some() {
                tracing::warn!("{app}: its AM container {id} did not exit after unregistering: stopping it");
                let why = "Container killed: the ApplicationMaster unregistered and did not exit within yarn.am.liveness-monitor.expiry-interval-ms";
                self.end_container(&id, exit::KILLED_AFTER_APP_COMPLETION, why);
            }
        }
    }

    /// Keep at most `max-completed-applications` finished applications (the oldest go).
    fn evict_completed(&mut self) {
        let finished: Vec<(i64, ApplicationId)> =
            self.apps.values().filter(|a| a.state.is_final()).map(|a| (a.finish_time, a.id)).collect();
        if finished.len() <= self.conf.max_completed_apps {
            return;
        }
        let mut finished = finished;
        finished.sort();
        for (_, id) in finished.iter().take(finished.len() - self.conf.max_completed_apps) {
            self.apps.remove(id);
            tracing::debug!("{id} forgotten: more than {} completed applications", self.conf.max_completed_apps);
            if let Err(e) = self.store.remove_app(&id.to_string()) {
                tracing::error!("{id}: cannot remove it from the state store: {e}");
            }
        }
    }
}
