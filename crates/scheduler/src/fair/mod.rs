//! YARN's Fair Scheduler: fair shares (steady and instantaneous) over a weighted queue tree,
//! the fair, drf and fifo policies, placement rules, maxRunningApps and maxAMShare, delay
//! scheduling, reservations and starvation-driven preemption.

mod apps;
mod ask_order;
mod assign;
mod audit;
mod charge;
mod driver;
pub mod fair_share;
pub mod members;
mod order;
mod placement;
pub mod policy;
pub mod preempt;
mod queue_tree;
mod runnable;
mod scheduler;
mod starved_queue;
pub mod state;
mod ties;
mod tree;
mod update;

pub use charge::Usage;
pub use placement::clean_name;
pub use scheduler::FairScheduler;
pub use state::{App, AppState, Queue, QueueSettings};
pub use tree::{valid_queue_path, ROOT};
