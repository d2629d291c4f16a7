//! "Why is my application waiting": the scheduler's reason with the numbers behind it, as
//! the web UI, `/ws/v1/cluster/apps/{id}/explain` and `fairloom explain app` show it.

use serde::Serialize;

use fairloom_model::Resource;
use fairloom_scheduler::reason::ShowResource;
use fairloom_scheduler::WaitReason;

use crate::core::{AppState, Core, RmApp};

/// An application's wait, ready to show.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Wait {
    /// The kind of reason, stable for scripts (`QueueMaxRunningApps`, `AmShareExceeded`, …).
    pub kind: &'static str,
    /// The sentence the scenario observations and REST `diagnostics` carry.
    pub reason: String,
    /// What to change to end the wait.
    pub remedy: &'static str,
    /// (label, value): the numbers behind the reason.
    pub numbers: Vec<(String, String)>,
}

fn show(r: &Resource) -> String {
    ShowResource(r).to_string()
}

/// Why `app` waits, if it does: it is ACCEPTED, or it runs with asks outstanding, and the
/// scheduler recorded a reason.
pub fn wait_of(core: &Core, app: &RmApp) -> Option<Wait> {
    let view = core.sched.app(app.sched?);
    let reason = view.wait.as_deref()?;
    let waiting = app.state == AppState::Accepted || (app.state == AppState::Running && !view.pending.is_none());
    if !waiting {
        return None;
    }
    let mut numbers: Vec<(String, String)> = Vec::new();
    let mut n = |label: &str, value: String| numbers.push((label.to_string(), value));
    let (kind, remedy) = match reason {
        WaitReason::QueueMaxRunningApps { queue, limit } => {
            n("queue", queue.clone());
            n("maxRunningApps", limit.to_string());
            (
                "QueueMaxRunningApps",
                "wait for an application of the queue to finish, or raise the queue's maxRunningApps",
            )
        }
        WaitReason::UserMaxRunningApps { user, limit } => {
            n("user", user.clone());
            n("maxRunningApps", limit.to_string());
            (
                "UserMaxRunningApps",
                "wait for another application of the user to finish, or raise the user's maxRunningApps",
            )
        }
        WaitReason::AmShareExceeded { queue, am_usage, request, limit } => {
            n("queue", queue.clone());
            n("AM usage", show(am_usage));
            n("AM request", show(request));
            n("AM limit (maxAMShare × fair share)", show(limit));
            (
                "AmShareExceeded",
                "wait for AMs of the queue to finish, raise maxAMShare, or give the queue a larger fair share",
            )
        }
        WaitReason::QueueMaxResources { queue, request } => {
            n("queue", queue.clone());
            n("request", show(request));
            ("QueueMaxResources", "wait for the queue's containers to finish, or raise its maxResources")
        }
        WaitReason::LargerThanNode { request } => {
            n("request", show(request));
            ("LargerThanNode", "ask for less, or add nodes large enough")
        }
        WaitReason::WaitingForLocality => {
            ("WaitingForLocality", "nothing: delay scheduling relaxes locality after the configured delay")
        }
        WaitReason::NodeFull { request } => {
            n("request", show(request));
            ("NodeFull", "wait for room: containers finish, or preemption frees the application's share")
        }
        WaitReason::Reserved { request } => {
            n("request", show(request));
            ("Reserved", "nothing: a node is reserved and the container starts when it frees room")
        }
        WaitReason::ClusterEmpty => ("ClusterEmpty", "start NodeManagers"),
        WaitReason::QueueAmLimit { queue, am_used, request, limit } => {
            n("queue", queue.clone());
            n("AM used", show(am_used));
            n("AM request", show(request));
            n("AM limit (maximum-am-resource-percent)", show(limit));
            ("QueueAmLimit", "wait for AMs of the queue to finish, or raise maximum-am-resource-percent")
        }
        WaitReason::UserAmLimit { user, am_used, request, limit } => {
            n("user", user.clone());
            n("AM used", show(am_used));
            n("AM request", show(request));
            n("user AM limit", show(limit));
            ("UserAmLimit", "wait for the user's other AMs to finish, or raise the user limit")
        }
        WaitReason::UserLimit { user, used, limit } => {
            n("user", user.clone());
            n("used", show(used));
            n("user limit", show(limit));
            (
                "UserLimit",
                "wait for the user's containers to finish, or raise minimum-user-limit-percent / user-limit-factor",
            )
        }
        WaitReason::QueueMaxCapacity { queue, limit } => {
            n("queue", queue.clone());
            n("limit", show(limit));
            ("QueueMaxCapacity", "wait for the queue's containers to finish, or raise its maximum-capacity")
        }
    };
    numbers.push(("application uses".to_string(), show(&view.usage)));
    numbers.push(("outstanding asks".to_string(), show(&view.pending)));
    Some(Wait { kind, reason: reason.to_string(), remedy, numbers })
}
