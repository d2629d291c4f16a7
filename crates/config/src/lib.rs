//! Hadoop's configuration files in, typed configuration out: yarn-site.xml properties, the
//! Fair Scheduler's allocation file and capacity-scheduler.xml. Validation with line numbers;
//! no scheduling logic.

pub mod acl;
pub mod allocation;
pub mod capacity;
pub mod error;
pub mod placement;
pub mod preemption;
pub mod properties;
pub mod resource_string;
mod xml;

pub use acl::Acl;
pub use allocation::{parse_allocation_file, trim_queue_name, AllocationFile, PolicyKind, QueueConfig, QueueType};
pub use capacity::{
    load_capacity_file, parse_capacity_config, parse_capacity_xml, CapacityConfig, CapacityQueueConfig,
};
pub use error::ConfigError;
pub use placement::{generated_policy, RuleConfig, RuleKind};
pub use preemption::PreemptionConfig;
pub use properties::{
    parse_site_xml, parse_site_xml_with_lines, Optimizations, Ordering, Properties, SchedulerProperties, UsageMode,
};
pub use resource_string::{parse_resource, ConfigurableResource};
