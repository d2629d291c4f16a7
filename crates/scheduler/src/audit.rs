//! The auditor's vocabulary: each scheduler recomputes its incremental aggregates from
//! scratch and reports every difference as a [`Mismatch`].

/// One aggregate whose incremental value differs from the recomputed one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub what: String,
    pub incremental: String,
    pub recomputed: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: incremental {} but recomputed {}", self.what, self.incremental, self.recomputed)
    }
}

pub(crate) fn check<T: PartialEq + std::fmt::Debug>(
    out: &mut Vec<Mismatch>,
    what: impl FnOnce() -> String,
    incremental: T,
    recomputed: T,
) {
    if incremental != recomputed {
        out.push(Mismatch {
            what: what(),
            incremental: format!("{incremental:?}"),
            recomputed: format!("{recomputed:?}"),
        });
    }
}
