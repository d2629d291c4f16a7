//! Phase timers and counters of the allocation walk. The core reads no clock: a driver that
//! wants timings injects one (`FairScheduler::set_phase_clock`); counters are always kept.

/// A monotonic clock in nanoseconds, supplied by the driver.
pub trait PhaseClock: Send {
    fn now_ns(&self) -> u64;
}

/// Where the heartbeats' time went, and what the walk did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    /// Serving reservations and room freed by preemption before the walk.
    pub reservations_ns: u64,
    /// Queue pre-checks (max share) during the walk.
    pub precheck_ns: u64,
    /// Finding the next child in order (set lookups, or sorts in the sorted mode).
    pub ordering_ns: u64,
    /// Trying apps: AM share, locality, fit, allocation or reservation.
    pub assignment_ns: u64,
    pub parents_visited: u64,
    /// Children of visited parents never looked at because they have no pending demand.
    pub children_skipped: u64,
    pub apps_tried: u64,
}
