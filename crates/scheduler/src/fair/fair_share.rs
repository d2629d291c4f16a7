//! YARN's `ComputeFairShares`: weighted water-filling over one resource type, with its
//! truncation, its 25-step search evaluated at the right bound, and its overflow guards.

/// One schedulable as the computation sees it, for one resource type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShareInput {
    /// The weight, a Java float (widened to double in the arithmetic).
    pub weight: f32,
    pub min_share: i64,
    pub max_share: i64,
    /// Instantaneous shares give an inactive queue 0; apps and steady shares pass `true`.
    pub active: bool,
}

const ITERATIONS: usize = 25;

/// Shares for `inputs` out of `total`, in input order.
pub fn compute_shares(inputs: &[ShareInput], total: i64, steady: bool) -> Vec<i64> {
    let mut shares = vec![0; inputs.len()];
    compute_shares_into(inputs, total, steady, &mut shares);
    shares
}

/// As [`compute_shares`], writing into `out` (same length as `inputs`).
pub fn compute_shares_into(inputs: &[ShareInput], total: i64, steady: bool, out: &mut [i64]) {
    debug_assert_eq!(inputs.len(), out.len());
    let mut taken: i64 = 0;
    let mut searched: Vec<usize> = Vec::with_capacity(inputs.len());
    for (i, s) in inputs.iter().enumerate() {
        match fixed_share(s, steady) {
            Some(fixed) => {
                out[i] = fixed;
                // YARN accumulates fixed shares in an int capped at Integer.MAX_VALUE.
                taken = taken.saturating_add(fixed).min(i32::MAX as i64);
            }
            None => searched.push(i),
        }
    }
    if searched.is_empty() {
        return;
    }
    let mut total_max: i64 = 0;
    for &i in &searched {
        total_max = total_max.saturating_add(inputs[i].max_share);
        if total_max == i64::MAX {
            break;
        }
    }
    let target = total.saturating_sub(taken).max(0).min(total_max);
    let used = |ratio: f64| -> i64 {
        let mut sum: i64 = 0;
        for &i in &searched {
            sum = sum.saturating_add(share_at(&inputs[i], ratio));
            if sum == i64::MAX {
                break;
            }
        }
        sum
    };
    let mut r_max = 1.0f64;
    while used(r_max) < target {
        r_max *= 2.0;
    }
    let (mut left, mut right) = (0.0f64, r_max);
    for _ in 0..ITERATIONS {
        let mid = (left + right) / 2.0;
        let planned = used(mid);
        if planned == target {
            right = mid;
            break;
        } else if planned < target {
            left = mid;
        } else {
            right = mid;
        }
    }
    for &i in &searched {
        out[i] = share_at(&inputs[i], right);
    }
}

fn fixed_share(s: &ShareInput, steady: bool) -> Option<i64> {
    if s.max_share <= 0 {
        return Some(0);
    }
    if !steady && !s.active {
        return Some(0);
    }
    if s.weight <= 0.0 {
        return Some(s.min_share.max(0));
    }
    None
}

/// `(long) min(max(w·R, min), max)`: Java's cast saturates and truncates toward zero, as Rust's does.
#[inline]
fn share_at(s: &ShareInput, ratio: f64) -> i64 {
    let share = (s.weight as f64 * ratio).max(s.min_share as f64).min(s.max_share as f64);
    share as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn s(weight: f32, min: i64, max: i64) -> ShareInput {
        ShareInput { weight, min_share: min, max_share: max, active: true }
    }
    const U: i64 = i64::MAX;

    #[test]
    fn equal_split_rounds_up() {
        assert_eq!(compute_shares(&[s(1.0, 0, U); 3], 10240, false), [3414; 3]);
        assert_eq!(compute_shares(&[s(1.0, 0, U); 5], 8192, false), [1639; 5]);
        assert_eq!(compute_shares(&[s(1.0, 0, U); 2], 1, true), [1, 1]);
    }

    #[test]
    fn weighted_hierarchy_example() {
        // root{parentA w8, parentB w1, default w1} over 16384.
        assert_eq!(compute_shares(&[s(8.0, 0, U), s(1.0, 0, U), s(1.0, 0, U)], 16384, true), [13108, 1638, 1638]);
    }

    #[test]
    fn min_and_max_shares() {
        assert_eq!(
            compute_shares(&[s(1.0, 20, U), s(1.0, 18, U), s(1.0, 0, U), s(1.0, 2, U)], 40, false),
            [20, 18, 0, 2]
        );
        assert_eq!(
            compute_shares(&[s(1.0, 0, 100), s(1.0, 0, 50), s(1.0, 0, 11), s(1.0, 0, 3)], 40, false),
            [13, 13, 11, 3]
        );
        assert_eq!(compute_shares(&[s(0.75, 0, 1024), s(0.25, 0, 3072)], 8192, false), [1024, 3072]);
        assert_eq!(compute_shares(&[s(1.0, 1024, U), s(1.0, 2048, U)], 3072, false), [1024, 2048]);
    }

    #[test]
    fn fixed_schedulables() {
        assert_eq!(compute_shares(&[s(0.0, 0, U), s(0.0, 0, U)], 8192, false), [0, 0]);
        assert_eq!(compute_shares(&[s(0.0, 1, U), s(0.0, 1, U)], 8192, false), [1, 1]);
        let inactive = ShareInput { active: false, ..s(1.0, 500, U) };
        assert_eq!(compute_shares(&[inactive, s(1.0, 0, U)], 100, false), [0, 100]);
        assert_eq!(compute_shares(&[inactive, s(1.0, 0, U)], 100, true), [500, 0]);
        assert_eq!(compute_shares(&[s(1e-6, 0, U), s(1.0, 0, U)], 100, false), [0, 100]);
        assert_eq!(compute_shares(&[s(1.0, 0, 0)], 100, false), [0]);
        assert!(compute_shares(&[], 100, false).is_empty());
    }

    #[test]
    fn overflow_terminates() {
        let big = s(1.0, i32::MAX as i64, U);
        assert_eq!(compute_shares(&[big, big], i32::MAX as i64, false), [i32::MAX as i64; 2]);
        let huge = compute_shares(&[s(1.0, 0, U); 2], U, false);
        assert!(huge.iter().all(|&x| x > U / 4), "{huge:?}");
    }

    proptest! {
        #[test]
        fn shares_stay_within_bounds(
            items in proptest::collection::vec((0.0f32..10.0, 0i64..5000, 1i64..100_000), 1..12),
            total in 0i64..1_000_000,
        ) {
            let inputs: Vec<ShareInput> = items.iter().map(|&(w, min, max)| s(w, min.min(max), max)).collect();
            let shares = compute_shares(&inputs, total, false);
            let mut sum = 0i64;
            for (share, input) in shares.iter().zip(&inputs) {
                prop_assert!(*share >= 0 && *share <= input.max_share);
                if input.weight > 0.0 { prop_assert!(*share >= input.min_share); }
                sum += share;
            }
            let min_sum: i64 = inputs.iter().map(|i| i.min_share).sum();
            // Truncation rounds up: siblings exceed the total by at most one unit each,
            // unless min shares alone exceed it.
            prop_assert!(sum <= total.max(min_sum) + inputs.len() as i64);
            prop_assert_eq!(shares, compute_shares(&inputs, total, false));
        }
    }
}
