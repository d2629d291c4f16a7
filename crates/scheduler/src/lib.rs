//! The pure scheduling core of fairloom: YARN's Fair Scheduler, exactly, without threads,
//! clocks or I/O. Events and `now` go in; decisions and read-only views come out.
//!
//! The state is owned by one [`FairScheduler`]; every method that changes it takes
//! `&mut self`. Ordering is total everywhere (ties break by start time, then by name), so
//! the same events always give the same decisions.

mod apps;
mod assign;
pub mod audit;
pub mod fair_share;
pub mod ids;
pub mod live;
pub mod members;
mod order;
pub mod phases;
mod placement;
pub mod policy;
pub mod preempt;
pub mod reason;
mod runnable;
mod scheduler;
pub mod state;
mod tree;
mod update;

pub use ids::{AppId, ContainerId, LocationId, NodeId, QueueId};
pub use placement::clean_name;
pub use reason::WaitReason;
pub use scheduler::{Ask, Counters, Decision, FairScheduler, SchedulerError};
pub use state::{App, AppState, Container, Node, Queue, QueueSettings};
pub use tree::{valid_queue_path, ROOT};
