//! Vocabulary shared by every fairloom crate: resource vectors and types, YARN ids, virtual
//! time. Arithmetic only: no I/O, no scheduling logic.

pub mod exit;
pub mod ids;
pub mod resource;
pub mod user;

pub use ids::{ApplicationAttemptId, ApplicationId, ContainerId, IdParseError};
pub use resource::{
    normalize, Resource, ResourceTypes, ResourceTypesError, MAX_RESOURCE_TYPES, MEMORY, UNBOUNDED, VCORES,
};

/// Milliseconds of virtual (or wall-clock) time, always passed in by the caller.
pub type Millis = i64;

/// Where a container may be placed relative to what was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeType {
    NodeLocal,
    RackLocal,
    OffSwitch,
}

/// The resource name that means "any host" in a YARN request.
pub const ANY: &str = "*";
/// The rack of a node that names none.
pub const DEFAULT_RACK: &str = "/default-rack";
