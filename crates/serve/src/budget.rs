//! A bound on how many lines of one kind a process logs per second: refusals are logged
//! with who and why, and a caller repeating a bad request must not be able to fill the disk.
//! Lines past the bound are counted; the count is logged with the next line that may be.
//! The RM's REST, node and AM protocols and the NodeManagers' calls share one budget per
//! process ([`refusal_may_be_logged`]).

/// Refusal lines a process logs in one second.
pub const REFUSAL_LINES_PER_SECOND: u64 = 20;

static REFUSALS: LineBudget = LineBudget::new(REFUSAL_LINES_PER_SECOND);

/// Whether a refusal may be logged now (by the wall clock's second); the first line after
/// some were dropped says how many.
pub fn refusal_may_be_logged() -> bool {
    let second = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    match REFUSALS.take(second) {
        Budget::Log { unlogged: 0 } => true,
        Budget::Log { unlogged } => {
            tracing::warn!("{unlogged} refused calls were not logged (more than {REFUSAL_LINES_PER_SECOND} a second)");
            true
        }
        Budget::Spent => false,
    }
}

/// A number of lines a second, for the whole process.
pub(crate) struct LineBudget {
    per_second: u64,
    /// The second, the lines logged in it, the lines not logged since the last one that was.
    state: std::sync::Mutex<(i64, u64, u64)>,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Budget {
    /// Log this line; `unlogged` lines were dropped before it.
    Log {
        unlogged: u64,
    },
    Spent,
}

impl LineBudget {
    pub const fn new(per_second: u64) -> Self {
        Self { per_second, state: std::sync::Mutex::new((i64::MIN, 0, 0)) }
    }

    pub fn take(&self, second: i64) -> Budget {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.0 != second {
            s.0 = second;
            s.1 = 0;
        }
        if s.1 >= self.per_second {
            s.2 += 1;
            return Budget::Spent;
        }
        s.1 += 1;
        Budget::Log { unlogged: std::mem::take(&mut s.2) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded_per_second_and_the_dropped_ones_counted() {
        let budget = LineBudget::new(3);
        for _ in 0..3 {
            assert_eq!(budget.take(10), Budget::Log { unlogged: 0 });
        }
        for _ in 0..5 {
            assert_eq!(budget.take(10), Budget::Spent);
        }
        // The next second: the first line says how many were dropped, once.
        assert_eq!(budget.take(11), Budget::Log { unlogged: 5 });
        assert_eq!(budget.take(11), Budget::Log { unlogged: 0 });
    }
}
