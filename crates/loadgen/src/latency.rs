//! Latencies counted in buckets: a few kilobytes however long the bench runs (a list of
//! every sample grew by half a megabyte a minute at 2,000 nodes, which a soak would have
//! counted against the RM). Below 64 µs each microsecond has its bucket; above, each power
//! of two is cut in 32, so a percentile is within about 3% of the sample it stands for.

const EXACT: u32 = 64;
const SUB_BITS: u32 = 5;
const BUCKETS: usize = EXACT as usize + (32 - 6) * (1 << SUB_BITS);

pub struct Latencies {
    counts: Vec<u64>,
    total: u64,
}

impl Default for Latencies {
    fn default() -> Self {
        Self { counts: vec![0; BUCKETS], total: 0 }
    }
}

fn bucket(us: u32) -> usize {
    if us < EXACT {
        return us as usize;
    }
    let log = 31 - us.leading_zeros(); // 6..=31
    let sub = (us >> (log - SUB_BITS)) & ((1 << SUB_BITS) - 1);
    EXACT as usize + ((log - 6) << SUB_BITS) as usize + sub as usize
}

/// The middle of bucket `i`, in microseconds.
fn middle(i: usize) -> f64 {
    if i < EXACT as usize {
        return i as f64;
    }
    let k = i - EXACT as usize;
    let log = (k >> SUB_BITS) as u32 + 6;
    let sub = (k & ((1 << SUB_BITS) - 1)) as u64;
    let width = 1u64 << (log - SUB_BITS);
    ((1u64 << log) + sub * width) as f64 + width as f64 / 2.0
}

impl Latencies {
    pub fn record(&mut self, us: u32) {
        self.counts[bucket(us)] += 1;
        self.total += 1;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// The `p` quantile (0..=1), in milliseconds; 0 with no samples.
    pub fn percentile_ms(&self, p: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((self.total - 1) as f64 * p.clamp(0.0, 1.0)).round() as u64;
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen > rank {
                return middle(i) / 1000.0;
            }
        }
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut last = 0;
        for us in (0..70).chain([100, 1000, 65_535, 1 << 20, u32::MAX - 1, u32::MAX]) {
            let b = bucket(us);
            assert!(b < BUCKETS && b >= last, "{us} in bucket {b}");
            last = b;
            let mid = middle(b);
            assert!((mid - us as f64).abs() <= (us as f64 / 32.0).max(0.0) + 0.5, "{us}: {mid}");
        }
    }

    #[test]
    fn percentiles_within_three_percent() {
        let mut l = Latencies::default();
        assert_eq!(l.percentile_ms(0.5), 0.0);
        for us in 1..=10_000u32 {
            l.record(us);
        }
        assert_eq!(l.count(), 10_000);
        for (p, exact) in [(0.5, 5.0), (0.99, 9.9), (1.0, 10.0)] {
            let got = l.percentile_ms(p);
            assert!((got - exact).abs() / exact < 0.03, "p{p}: {got} against {exact}");
        }
        assert_eq!(Latencies::default().percentile_ms(0.99), 0.0);
        l.record(3);
        assert!(l.percentile_ms(0.0) <= 0.0011);
    }
}
