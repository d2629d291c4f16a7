//! What is stored of an application, and the restart: stored applications come back, the
//! attempts that were running wait for their AM to re-register and their nodes to report
//! the containers they still run.

use fairloom_model::{ApplicationId, Millis};
use fairloom_protocol::am::FinalStatus;
use fairloom_protocol::Res;
use fairloom_scheduler::SubmitSpec;

use super::{resource_of, AppState, Attempt, AttemptState, Core, RmApp};
use crate::error::RmError;
use crate::store::{AppRecord, AttemptRecord, Recovered, UsageRecord};

pub(crate) fn record_of(app: &RmApp) -> AppRecord {
    AppRecord {
        id: app.id.to_string(),
        user: app.user.clone(),
        submission: app.sub.clone(),
        queue: app.queue.clone(),
        submit_time: app.submit_time,
        start_time: app.start_time,
        finish_time: app.finish_time,
        state: app.state.name().to_string(),
        final_status: app.final_status.name().to_string(),
        diagnostics: app.diagnostics.clone(),
        priority: app.priority,
        attempts: app
            .attempts
            .iter()
            .map(|a| AttemptRecord {
                number: a.number,
                start_time: a.start_time,
                finish_time: a.finish_time,
                state: a.state.name().to_string(),
                am_container: a.am_container.clone(),
                am_node: a.am_node.clone(),
                am_node_http: a.am_node_http.clone(),
                diagnostics: a.diagnostics.clone(),
                counts: a.counts,
            })
            .collect(),
        usage: usage_of(app),
    }
}

/// What `app` has used, as stored.
pub(crate) fn usage_of(app: &RmApp) -> UsageRecord {
    UsageRecord {
        memory_seconds: app.memory_seconds,
        vcore_seconds: app.vcore_seconds,
        launch_time: app.launch_time,
        preempted_memory: app.preempted.memory,
        preempted_vcores: app.preempted.vcores,
        preempted_am: app.preempted_am,
        preempted_non_am: app.preempted_non_am,
    }
}

fn final_status(text: &str) -> Option<FinalStatus> {
    Some(match text {
        "SUCCEEDED" => FinalStatus::Succeeded,
        "FAILED" => FinalStatus::Failed,
        "KILLED" => FinalStatus::Killed,
        // Empty: a record from before the final status was stored.
        "UNDEFINED" | "" => FinalStatus::Undefined,
        _ => return None,
    })
}

/// A stored value this RM cannot read: recovery stops rather than guess, since a guess
/// (an unknown state taken for ACCEPTED) would run again what had finished.
fn unreadable(app: &str, what: &str, value: &str) -> RmError {
    RmError::internal(format!(
        "state store: application {app} has {what} '{value}', which this ResourceManager does not know; the store was written by another version or is damaged"
    ))
}

impl Core {
    pub(super) fn recover(&mut self, recovered: Recovered, now: Millis) -> Result<(), RmError> {
        for (key, record) in recovered.apps {
            let id: ApplicationId =
                key.parse().map_err(|_| RmError::internal(format!("state store: bad application id '{key}'")))?;
            let state = AppState::parse(&record.state).ok_or_else(|| unreadable(&key, "state", &record.state))?;
            let final_status = final_status(&record.final_status)
                .ok_or_else(|| unreadable(&key, "final status", &record.final_status))?;
            let mut attempts: Vec<Attempt> = record
                .attempts
                .iter()
                .map(|r| {
                    let mut a = Attempt::new(r.number, r.start_time);
                    a.state = AttemptState::parse(&r.state)
                        .ok_or_else(|| unreadable(&key, &format!("attempt {} in state", r.number), &r.state))?;
                    a.finish_time = r.finish_time;
                    a.am_container = r.am_container.clone();
                    a.am_node = r.am_node.clone();
                    a.am_node_http = r.am_node_http.clone();
                    a.diagnostics = r.diagnostics.clone();
                    a.counts = r.counts;
                    // The monitor waits a whole expiry for the AM to come back.
                    a.last_heartbeat = now;
                    Ok(a)
                })
                .collect::<Result<_, RmError>>()?;
            if attempts.is_empty() {
                attempts.push(Attempt::new(1, now));
            }
            let mut app = RmApp {
                id,
                user: record.user.clone(),
                sub: record.submission.clone(),
                queue: record.queue.clone(),
                state,
                final_status,
                diagnostics: record.diagnostics.clone(),
                submit_time: record.submit_time,
                start_time: record.start_time,
                launch_time: record.usage.launch_time,
                finish_time: record.finish_time,
                priority: record.priority,
                attempts,
                sched: None,
                progress: if state.is_final() { 1.0 } else { 0.0 },
                memory_seconds: record.usage.memory_seconds,
                vcore_seconds: record.usage.vcore_seconds,
                preempted: Res::new(record.usage.preempted_memory, record.usage.preempted_vcores),
                preempted_am: record.usage.preempted_am,
                preempted_non_am: record.usage.preempted_non_am,
            };
            if !state.is_final() {
                let launched = app.attempt().is_some_and(|a| a.am_container.is_some() && !a.state.is_final());
                // Its AM's node must register again within the NM expiry, or the AM is lost.
                if let Some(node) = app.attempt().filter(|_| launched).and_then(|a| a.am_node.clone()) {
                    self.awaited.insert(node, now);
                }
                // A launched attempt's AM runs somewhere: its node will report it, so the
                // scheduler must not allocate another.
                let am = (!launched).then(|| resource_of(app.sub.am_resource()));
                let spec =
                    SubmitSpec { priority: app.priority, ..SubmitSpec::new(app.sub.name(), &app.queue, &app.user, am) };
                let sched = self.sched.submit(&spec, now);
                if let Some(why) = self.sched.app(sched).rejection {
                    self.retired.push(sched);
                    app.state = AppState::Failed;
                    app.final_status = FinalStatus::Failed;
                    app.finish_time = now;
                    app.diagnostics = format!("Application could not be recovered: {why}");
                } else {
                    self.by_sched.insert(sched, id);
                    app.sched = Some(sched);
                    if let Some(a) = app.attempt_mut() {
                        if a.state.is_final() {
                            // Stored between a failed attempt and its successor.
                            let next = a.number + 1;
                            app.attempts.push(Attempt::new(next, now));
                        } else if !launched {
                            a.state = AttemptState::Scheduled;
                        }
                    }
                }
            }
            tracing::debug!("recovered {id} ({}, {} attempts)", app.state.name(), app.attempts.len());
            self.apps.insert(id, app);
            self.persist_or_log(id);
        }
        let running = self.apps.values().filter(|a| !a.state.is_final()).count();
        tracing::info!(
            "Recovered {} applications from the state store: {running} to resume, {} finished",
            self.apps.len(),
            self.apps.len() - running
        );
        Ok(())
    }
}
