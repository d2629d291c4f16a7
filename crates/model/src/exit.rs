//! YARN's `ContainerExitStatus` values, shared by the AM library and the service's protocol.

pub const SUCCESS: i32 = 0;
pub const INVALID: i32 = -1000;
/// The container was aborted: its node was lost, it was released, or the RM never heard of it again.
pub const ABORTED: i32 = -100;
pub const DISKS_FAILED: i32 = -101;
/// Killed by the scheduler's preemption.
pub const PREEMPTED: i32 = -102;
pub const KILLED_EXCEEDED_VMEM: i32 = -103;
pub const KILLED_EXCEEDED_PMEM: i32 = -104;
/// Stopped by its application master.
pub const KILLED_BY_APPMASTER: i32 = -105;
/// Killed by the ResourceManager (application killed or attempt failed).
pub const KILLED_BY_RESOURCEMANAGER: i32 = -106;
/// Killed because its application finished.
pub const KILLED_AFTER_APP_COMPLETION: i32 = -107;
