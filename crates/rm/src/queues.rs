//! One row per queue in tree order: the numbers behind the web UI's bars and status blocks
//! and the Prometheus queue gauges. (The REST scheduler DAO keeps YARN's own two layouts.)

use crate::core::Core;

pub use fairloom_scheduler::driver::QueueDetail as QueueRow;

/// Every live queue, each parent followed by its subtree.
pub fn rows(core: &Core) -> Vec<QueueRow> {
    core.sched.queue_details()
}
