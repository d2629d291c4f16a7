//! `bench rm --soak MINUTES`: the same load for a long time, sampled at a steady interval:
//! the process's resident memory and every collection the RM keeps (`/metrics`'
//! `fairloom_rm_entries`), then each one's slope after a warm-up. An RM that runs for
//! months must show none: what grows here by a few kilobytes a minute is gigabytes by then.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

/// What one sample read from `/metrics`.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    pub minute: f64,
    pub values: BTreeMap<String, f64>,
}

const RESIDENT: &str = "process_resident_memory_bytes";
const ENTRIES: &str = "fairloom_rm_entries{collection=\"";
const TABLES: &str = "fairloom_scheduler_entries{table=\"";

/// The figures a soak follows: resident memory (MB), the RM's collections, and the
/// containers allocated since the previous sample (how much work the interval saw).
pub fn sample(minute: f64, metrics: &HashMap<String, f64>, allocated: f64) -> Sample {
    let mut values = BTreeMap::new();
    if let Some(b) = metrics.get(RESIDENT) {
        values.insert("resident_mb".to_string(), b / (1024.0 * 1024.0));
    }
    for (k, v) in metrics {
        if let Some(name) = k.strip_prefix(ENTRIES).and_then(|r| r.strip_suffix("\"}")) {
            values.insert(name.to_string(), *v);
        }
        if let Some(name) = k.strip_prefix(TABLES).and_then(|r| r.strip_suffix("\"}")) {
            values.insert(format!("scheduler.{name}"), *v);
        }
    }
    values.insert("allocated".to_string(), allocated);
    Sample { minute, values }
}

/// Least-squares slope of `ys` over `xs` (per unit of x); 0 for fewer than two points.
pub fn slope(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len().min(ys.len());
    if n < 2 {
        return 0.0;
    }
    let (mx, my) = (xs[..n].iter().sum::<f64>() / n as f64, ys[..n].iter().sum::<f64>() / n as f64);
    let (mut num, mut den) = (0.0, 0.0);
    for i in 0..n {
        num += (xs[i] - mx) * (ys[i] - my);
        den += (xs[i] - mx) * (xs[i] - mx);
    }
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// Resident memory may rise by less than this a minute after the warm-up.
pub const RESIDENT_SLOPE_LIMIT_MB: f64 = 0.1;

/// How one figure moved after the warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Trend {
    pub slope_per_minute: f64,
    pub first: f64,
    pub last: f64,
    pub flat: bool,
}

/// Every figure's trend, and whether all are flat.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub warmup_minutes: f64,
    pub window_minutes: f64,
    pub flat: bool,
    pub figures: BTreeMap<String, Trend>,
}

/// Each figure's slope over the samples after `warmup` minutes, and whether it is flat: for
/// resident memory, under [`RESIDENT_SLOPE_LIMIT_MB`] a minute; for a count, either drifting
/// over the whole window by no more than 5% of its mean level (or one entry), or ending (the
/// mean of its last third of samples) no higher than the highest it was in its first third.
/// Live work comes and goes: 100 applications a moment ago 99 give a small slope of noise,
/// while what leaks keeps rising past where it started.
pub fn verdict(samples: &[Sample], warmup: f64) -> Verdict {
    let after: Vec<&Sample> = samples.iter().filter(|s| s.minute >= warmup).collect();
    let xs: Vec<f64> = after.iter().map(|s| s.minute).collect();
    let window = xs.last().copied().unwrap_or(0.0) - xs.first().copied().unwrap_or(0.0);
    let names: Vec<&String> = after.first().map(|s| s.values.keys().collect()).unwrap_or_default();
    let mut figures = BTreeMap::new();
    let mut flat_all = after.len() >= 2;
    for name in names.into_iter().filter(|n| n.as_str() != "allocated") {
        let ys: Vec<f64> = after.iter().map(|s| s.values.get(name).copied().unwrap_or(0.0)).collect();
        let m = slope(&xs, &ys);
        let mean = ys.iter().sum::<f64>() / ys.len().max(1) as f64;
        let third = (ys.len() / 3).max(1);
        let early_max = ys[..third].iter().copied().fold(f64::MIN, f64::max);
        let late_mean = ys[ys.len() - third..].iter().sum::<f64>() / third as f64;
        let flat = if name == "resident_mb" {
            m < RESIDENT_SLOPE_LIMIT_MB
        } else {
            m * window <= (0.05 * mean).max(1.0) || late_mean <= early_max
        };
        flat_all &= flat;
        let first = ys.first().copied().unwrap_or(0.0);
        let last = ys.last().copied().unwrap_or(0.0);
        figures.insert(name.clone(), Trend { slope_per_minute: m, first, last, flat });
    }
    Verdict { warmup_minutes: warmup, window_minutes: window, flat: flat_all, figures }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(f: impl Fn(f64) -> (f64, f64)) -> Vec<Sample> {
        (0..=30)
            .map(|m| {
                let m = m as f64;
                let (rss, apps) = f(m);
                let mut metrics = HashMap::new();
                metrics.insert(RESIDENT.to_string(), rss * 1024.0 * 1024.0);
                metrics.insert(format!("{ENTRIES}apps_finished_kept\"}}"), apps);
                sample(m, &metrics, 100.0)
            })
            .collect()
    }

    #[test]
    fn slope_of_a_line_and_of_too_few_points() {
        assert!((slope(&[0.0, 1.0, 2.0], &[1.0, 3.0, 5.0]) - 2.0).abs() < 1e-12);
        assert_eq!(slope(&[1.0], &[5.0]), 0.0);
        assert_eq!(slope(&[2.0, 2.0], &[1.0, 5.0]), 0.0);
    }

    #[test]
    fn growth_after_the_warm_up_is_found_and_growth_before_it_is_not() {
        // Warm-up fills the kept applications to their bound, then both stay level.
        let level = samples(|m| (100.0 + m.min(10.0) * 3.0, (m * 100.0).min(1000.0)));
        let v = verdict(&level, 10.0);
        assert!(v.flat, "{v:?}");
        assert_eq!(v.figures["apps_finished_kept"].last, 1000.0);
        // 0.2 MB a minute after the warm-up: not flat.
        let leaking = samples(|m| (100.0 + m * 0.2, 1000.0));
        let v = verdict(&leaking, 10.0);
        assert!(!v.flat, "{v:?}");
        assert!(!v.figures["resident_mb"].flat);
        assert!((v.figures["resident_mb"].slope_per_minute - 0.2).abs() < 1e-9);
        // A count that keeps growing is caught even when memory looks level.
        let counting = samples(|m| (100.0, 1000.0 + m * 10.0));
        assert!(!verdict(&counting, 10.0).figures["apps_finished_kept"].flat);
        // One that dips now and then (an application finished, its successor not yet in) is
        // not growing, though its slope is not quite zero.
        let dipping = samples(|m| (100.0, if m < 20.0 && (m as i64) % 3 == 0 { 80.0 } else { 100.0 }));
        let v = verdict(&dipping, 10.0);
        assert!(v.figures["apps_finished_kept"].slope_per_minute > 0.0, "{v:?}");
        assert!(v.figures["apps_finished_kept"].flat, "{v:?}");
        assert!(v.flat);
        // A slow leak of small numbers, past where it began.
        let creeping = samples(|m| (100.0, 10.0 + (m - 10.0).max(0.0).floor() * 0.1));
        assert!(!verdict(&creeping, 10.0).figures["apps_finished_kept"].flat);
    }

    #[test]
    fn no_samples_after_the_warm_up_is_not_a_pass() {
        let v = verdict(&samples(|_| (100.0, 1.0)), 60.0);
        assert!(!v.flat, "{v:?}");
    }
}
