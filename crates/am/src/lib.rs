//! Application-master logic, pure: Spark-style locality-preferred container requests,
//! matching of allocated containers, exit-status classification, task scheduling with
//! locality levels and delay scheduling, and the dynamic-allocation target. No I/O; time is
//! passed in.

pub mod dynamic;
pub mod exit;
pub mod matching;
pub mod plan;
pub mod tasks;

pub use plan::{explain, plan, AmState, Explained, NewRequest, PendingRequest, Plan, PlanError};
