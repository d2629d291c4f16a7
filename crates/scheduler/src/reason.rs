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
        }
    }
}
