//! Why an application waits: every "no" of the scheduler has one of these.

use std::fmt;

use fairloom_model::Resource;

/// YARN's rendering of a resource, `<memory:1024, vCores:1>`.
pub struct ShowResource<'a>(pub &'a Resource);

impl fmt::Display for ShowResource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<memory:{}, vCores:{}>", self.0.memory(), self.0.vcores())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitReason {
    /// Not runnable: a queue on its path is at maxRunningApps.
    QueueMaxRunningApps { queue: String, limit: i32 },
    /// Not runnable: the user is at maxRunningApps.
    UserMaxRunningApps { user: String, limit: i32 },
    /// The AM container would take the queue's AM usage past maxAMShare × fair share.
    AmShareExceeded { queue: String, am_usage: Resource, request: Resource, limit: Resource },
    /// The request would take the queue (or an ancestor) past its maxResources.
    QueueMaxResources { queue: String, request: Resource },
    /// The request does not fit in the node's total capability.
    LargerThanNode { request: Resource },
    /// Delay scheduling: waiting for a more local node.
    WaitingForLocality,
    /// The node lacks free room and the app may not reserve it.
    NodeFull { request: Resource },
    /// The node was reserved for this app's request.
    Reserved { request: Resource },
    /// Capacity Scheduler: not activated, the cluster has no resources yet.
    ClusterEmpty,
    /// Capacity Scheduler: not activated, the AM would take the queue past its AM limit.
    QueueAmLimit { queue: String, am_used: Resource, request: Resource, limit: Resource },
    /// Capacity Scheduler: not activated, the AM would take the user past its AM limit.
    UserAmLimit { user: String, am_used: Resource, request: Resource, limit: Resource },
    /// Capacity Scheduler: the user is above its user limit in the queue.
    UserLimit { user: String, used: Resource, limit: Resource },
    /// Capacity Scheduler: the queue (or an ancestor) is at its maximum capacity or at the
    /// limit its parent leaves it.
    QueueMaxCapacity { queue: String, limit: Resource },
}

impl fmt::Display for WaitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::QueueMaxRunningApps { queue, limit } => {
                write!(f, "not runnable: queue {queue} is at maxRunningApps ({limit})")
            }
            Self::UserMaxRunningApps { user, limit } => {
                write!(f, "not runnable: user {user} is at maxRunningApps ({limit})")
            }
            Self::AmShareExceeded { queue, am_usage, request, limit } => write!(
                f,
                "AM container {} would exceed queue {queue}'s AM limit {} (AM usage {}: maxAMShare × fair share)",
                ShowResource(request),
                ShowResource(limit),
                ShowResource(am_usage)
            ),
            Self::QueueMaxResources { queue, request } => {
                write!(f, "request {} would exceed maxResources of queue {queue}", ShowResource(request))
            }
            Self::LargerThanNode { request } => write!(f, "request {} is larger than the node", ShowResource(request)),
            Self::WaitingForLocality => f.write_str("waiting for a more local node (delay scheduling)"),
            Self::NodeFull { request } => {
                write!(f, "request {} does not fit on the node and cannot reserve it", ShowResource(request))
            }
            Self::Reserved { request } => write!(f, "node reserved for request {}", ShowResource(request)),
            Self::ClusterEmpty => f.write_str("not activated: the cluster has no resources"),
            Self::QueueAmLimit { queue, am_used, request, limit } => write!(
                f,
                "not activated: AM {} would take queue {queue}'s AM usage {} past its AM limit {} (maximum-am-resource-percent)",
                ShowResource(request),
                ShowResource(am_used),
                ShowResource(limit)
            ),
            Self::UserAmLimit { user, am_used, request, limit } => write!(
                f,
                "not activated: AM {} would take user {user}'s AM usage {} past the user AM limit {}",
                ShowResource(request),
                ShowResource(am_used),
                ShowResource(limit)
            ),
            Self::UserLimit { user, used, limit } => write!(
                f,
                "user {user} uses {}, above its user limit {} (minimum-user-limit-percent, user-limit-factor)",
                ShowResource(used),
                ShowResource(limit)
            ),
            Self::QueueMaxCapacity { queue, limit } => {
                write!(f, "queue {queue} is at its limit {} (maximum-capacity or its parent's)", ShowResource(limit))
            }
        }
    }
}
