//! Cache prefetch hints. They change no state and no decision: they only ask the memory
//! system for lines the scheduler is about to read, so that several misses overlap instead
//! of waiting one after the other. (Hints from the simulator for the next heartbeat's node,
//! containers and apps gained 2-3% on meituan-12k and were not kept: docs/performance.md.)

/// Prefetch every cache line of `v`.
#[inline]
pub(crate) fn slice<T>(v: &[T]) {
    lines(v.as_ptr().cast(), std::mem::size_of_val(v));
}

#[inline]
fn lines(base: *const i8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        for offset in (0..bytes).step_by(64) {
            // SAFETY: a prefetch is a hint that never faults, and SSE (which provides it) is
            // part of every x86_64 target; the address stays inside the caller's object.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(base.wrapping_add(offset)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (base, bytes);
}
