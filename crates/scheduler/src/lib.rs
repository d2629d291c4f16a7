//! The pure scheduling core of fairloom: YARN's Fair Scheduler and Capacity Scheduler,
//! exactly, without threads, clocks or I/O. Events and `now` go in; decisions and read-only
//! views come out.
//!
//! The layout (docs/development.md, "Architecture"): [`cluster`] holds what both schedulers share (nodes,
//! partitions, containers), [`fair`] and [`capacity`] are the two schedulers, and [`driver`]
//! is the one interface the scenario runner, the simulator and the service call. Ordering is
//! total everywhere (ties break by start time, then by id), so the same events always give
//! the same decisions.

pub mod audit;
pub mod calc;
pub mod capacity;
pub mod cluster;
pub mod digest;
pub mod driver;
pub mod factory;
pub mod fair;
mod java_heap;
pub mod phases;
mod prefetch;
pub mod reason;

pub use cluster::{ids, live};
pub use driver::{
    AnyScheduler, Ask, Counters, Decision, Layout, NodeSpec, Placement, QueueAcl, Scheduler, SchedulerError,
    SubmitSpec, MAX_REQUEST_KEYS,
};
pub use factory::{build, Reconfigure, SchedulerConfig, SchedulerFile, SchedulerKind};
pub use fair::{clean_name, preempt, valid_queue_path, App, AppState, FairScheduler, Queue, QueueSettings, ROOT};
pub use ids::{AppId, ContainerId, LocationId, NodeId, PartitionId, QueueId};
pub use reason::WaitReason;
