//! Hadoop's configuration files in, typed configuration out: yarn-site.xml properties and
//! the Fair Scheduler's allocation file. Validation with line numbers; no scheduling logic.

pub mod acl;
pub mod allocation;
pub mod error;
pub mod placement;
pub mod properties;
pub mod resource_string;
mod xml;

pub use acl::Acl;
pub use allocation::{parse_allocation_file, trim_queue_name, AllocationFile, PolicyKind, QueueConfig, QueueType};
pub use error::ConfigError;
pub use placement::{generated_policy, RuleConfig, RuleKind};
pub use properties::{parse_site_xml, Optimizations, Ordering, Properties, SchedulerProperties, UsageMode};
pub use resource_string::{parse_resource, ConfigurableResource};
