//! Completed containers classified by exit status, as Spark's YarnAllocator does: did the
//! application cause it (counts towards executor failures), or YARN?

/// YARN's ContainerExitStatus values.
pub use fairloom_model::exit as status;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Exited normally (a YARN event such as a node going away, not the job).
    Success,
    Preempted,
    /// Memory limits: the app's configuration.
    VirtualMemoryExceeded,
    PhysicalMemoryExceeded,
    /// Aborted, disks failed, killed by the RM or the AM or after completion.
    System,
    /// Anything else: the container came from a bad node or the app failed.
    Other,
    /// The AM released it itself.
    Released,
}

impl Cause {
    /// True when the exit counts against the application (Spark's `exitCausedByApp`).
    pub fn caused_by_app(self) -> bool {
        matches!(self, Self::VirtualMemoryExceeded | Self::PhysicalMemoryExceeded | Self::Other)
    }
}

/// Classify a completion. `released_by_am`: the AM gave the container back itself, which is
/// never a failure.
pub fn classify(exit_status: i32, released_by_am: bool) -> Cause {
    use status::*;
    if released_by_am {
        return Cause::Released;
    }
    match exit_status {
        SUCCESS => Cause::Success,
        PREEMPTED => Cause::Preempted,
        KILLED_EXCEEDED_VMEM => Cause::VirtualMemoryExceeded,
        KILLED_EXCEEDED_PMEM => Cause::PhysicalMemoryExceeded,
        ABORTED | DISKS_FAILED | KILLED_BY_APPMASTER | KILLED_BY_RESOURCEMANAGER | KILLED_AFTER_APP_COMPLETION => {
            Cause::System
        }
        _ => Cause::Other,
    }
}
