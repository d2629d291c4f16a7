//! Phase timers and counters of the allocation walk. The core reads no clock: a driver that
//! wants timings injects one (`FairScheduler::set_phase_clock`); counters are always kept.

/// A monotonic clock in nanoseconds, supplied by the driver.
pub trait PhaseClock: Send {
    fn now_ns(&self) -> u64;

    /// Time one heartbeat in this many, and scale its timings up to stand for all of
    /// them. A walk reads the clock at every step (a few dozen times when it tries many
    /// apps), which a service that reports phase times continuously need not pay on
    /// every heartbeat; a benchmark that wants exact totals keeps 1.
    fn sample_every(&self) -> u32 {
        1
    }
}

/// The driver's clock as the schedulers' walks read it (see [`PhaseClock::sample_every`]):
/// off between sampled heartbeats, where reading it costs nothing.
#[derive(Default)]
pub struct PhaseTimer {
    clock: Option<Box<dyn PhaseClock>>,
    every: u64,
    on: bool,
}

impl PhaseTimer {
    pub fn set(&mut self, clock: Box<dyn PhaseClock>) {
        self.every = u64::from(clock.sample_every().max(1));
        self.clock = Some(clock);
    }

    /// Heartbeat number `n` begins: whether it is timed.
    #[inline]
    pub fn heartbeat(&mut self, n: u64) {
        self.on = self.clock.is_some() && n.is_multiple_of(self.every.max(1));
    }

    #[inline]
    pub fn now(&self) -> u64 {
        match &self.clock {
            Some(c) if self.on => c.now_ns(),
            _ => 0,
        }
    }

    /// Nanoseconds since `t0` (a [`Self::now`]), scaled to stand for the heartbeats not timed.
    #[inline]
    pub fn since(&self, t0: u64) -> u64 {
        match &self.clock {
            Some(c) if self.on => c.now_ns().saturating_sub(t0) * self.every,
            _ => 0,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// Moves 10 ns at every read, and counts the reads.
    struct Ticks(Arc<AtomicU64>, u32);

    impl PhaseClock for Ticks {
        fn now_ns(&self) -> u64 {
            self.0.fetch_add(10, Ordering::Relaxed) + 10
        }
        fn sample_every(&self) -> u32 {
            self.1
        }
    }

    #[test]
    fn one_heartbeat_in_n_is_timed_and_stands_for_n() {
        let reads = Arc::new(AtomicU64::new(0));
        let mut t = PhaseTimer::default();
        t.heartbeat(1);
        assert_eq!((t.now(), t.since(0)), (0, 0), "no clock: nothing is read");
        t.set(Box::new(Ticks(reads.clone(), 4)));
        let mut total = 0;
        for n in 1..=8 {
            t.heartbeat(n);
            let t0 = t.now();
            total += t.since(t0);
        }
        // Heartbeats 4 and 8: two reads each, 10 ns apart, counted four-fold.
        assert_eq!(reads.load(Ordering::Relaxed), 40);
        assert_eq!(total, 2 * 10 * 4);
        let mut every = PhaseTimer::default();
        every.set(Box::new(Ticks(Arc::new(AtomicU64::new(0)), 1)));
        every.heartbeat(3);
        let t0 = every.now();
        assert_eq!(every.since(t0), 10, "sampling every heartbeat is exact");
    }
}
