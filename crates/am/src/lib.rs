//! Application-master logic, pure: Spark-style locality-preferred container requests,
//! matching of allocated containers, exit-status classification, task scheduling with
//! locality levels and delay scheduling, the dynamic-allocation target, and YARN's
//! DistributedShell AM (what `fairloom shell` runs). No I/O; time is passed in.

pub mod dynamic;
pub mod exit;
pub mod matching;
pub mod plan;
pub mod shell;
pub mod tasks;

pub use plan::{explain, plan, AmState, Explained, NewRequest, PendingRequest, Plan, PlanError};
