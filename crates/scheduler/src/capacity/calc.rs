//! YARN's `ResourceCalculator`s as the Capacity Scheduler uses them: the default one looks at
//! memory only, the dominant one at every type's share of the cluster. Each method keeps
//! YARN's arithmetic (float32 ratios, truncating or ceiling casts) because guarantees, user
//! limits and AM limits are compared at the unit.

use std::cmp::Ordering;

use fairloom_config::capacity::ResourceCalculatorKind;
use fairloom_model::Resource;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Calc {
    pub kind: ResourceCalculatorKind,
    /// Countable resource types in use.
    pub types: usize,
}

/// `Resources.createResource(memory)`: the memory, one vcore when it is positive, nothing else.
fn memory_only(memory: i64) -> Resource {
    Resource::new(memory, i64::from(memory > 0))
}

fn round_up_to(value: i64, step: i64) -> i64 {
    if step == 0 {
        value
    } else {
        (value + step - 1).div_euclid(step) * step
    }
}

/// Java's `(value / step) * step`: toward zero, also for a negative value (a limit below use).
fn round_down_to(value: i64, step: i64) -> i64 {
    if step == 0 {
        value
    } else {
        (value / step) * step
    }
}

fn share(value: i64, of: i64) -> f64 {
    value as f64 / of as f64
}

impl Calc {
    pub fn new(kind: ResourceCalculatorKind, types: usize) -> Self {
        Self { kind, types }
    }

    pub fn is_dominant(&self) -> bool {
        self.kind == ResourceCalculatorKind::Dominant
    }

    pub fn compare(&self, cluster: &Resource, a: &Resource, b: &Resource) -> Ordering {
        match self.kind {
            ResourceCalculatorKind::Default => a.memory().cmp(&b.memory()),
            ResourceCalculatorKind::Dominant => crate::calc::dominant_compare(cluster, a, b, self.types, false),
        }
    }

    pub fn lt(&self, cluster: &Resource, a: &Resource, b: &Resource) -> bool {
        self.compare(cluster, a, b) == Ordering::Less
    }

    pub fn le(&self, cluster: &Resource, a: &Resource, b: &Resource) -> bool {
        self.compare(cluster, a, b) != Ordering::Greater
    }

    pub fn gt(&self, cluster: &Resource, a: &Resource, b: &Resource) -> bool {
        self.compare(cluster, a, b) == Ordering::Greater
    }

    pub fn ge(&self, cluster: &Resource, a: &Resource, b: &Resource) -> bool {
        self.compare(cluster, a, b) != Ordering::Less
    }

    /// `Resources.min`: `a` when it compares ≤ `b`.
    pub fn min(&self, cluster: &Resource, a: Resource, b: Resource) -> Resource {
        if self.le(cluster, &a, &b) {
            a
        } else {
            b
        }
    }

    /// `Resources.max`: `a` when it compares ≥ `b`.
    pub fn max(&self, cluster: &Resource, a: Resource, b: Resource) -> Resource {
        if self.ge(cluster, &a, &b) {
            a
        } else {
            b
        }
    }

    /// `Resources.fitsIn(rc, smaller, bigger)`.
    pub fn fits_in(&self, smaller: &Resource, bigger: &Resource) -> bool {
        match self.kind {
            ResourceCalculatorKind::Default => smaller.memory() <= bigger.memory(),
            ResourceCalculatorKind::Dominant => (0..self.types).all(|i| smaller.get(i) <= bigger.get(i)),
        }
    }

    /// `divide(cluster, numerator, denominator)`: memory ratio, or dominant share over dominant
    /// share.
    pub fn divide(&self, cluster: &Resource, num: &Resource, den: &Resource) -> f32 {
        match self.kind {
            ResourceCalculatorKind::Default => num.memory() as f32 / den.memory() as f32,
            ResourceCalculatorKind::Dominant => {
                let (mut n, mut d) = (0f64, 0f64);
                for i in 0..self.types {
                    let (x, y) = (share(num.get(i), cluster.get(i)), share(den.get(i), cluster.get(i)));
                    if x > n {
                        n = x;
                    }
                    if y > d {
                        d = y;
                    }
                }
                (n / d) as f32
            }
        }
    }

    /// `ratio(a, b)`: memory ratio, or the largest per-type ratio.
    pub fn ratio(&self, a: &Resource, b: &Resource) -> f32 {
        let one = |x: i64, y: i64| -> f32 {
            if y == 0 {
                if x == 0 {
                    0.0
                } else {
                    f32::INFINITY
                }
            } else {
                x as f32 / y as f32
            }
        };
        match self.kind {
            ResourceCalculatorKind::Default => one(a.memory(), b.memory()),
            ResourceCalculatorKind::Dominant => (0..self.types).map(|i| one(a.get(i), b.get(i))).fold(0.0, f32::max),
        }
    }

    /// `multiplyAndNormalizeUp(r, by, step)`.
    pub fn multiply_and_normalize_up(&self, r: &Resource, by: f64, step: &Resource) -> Resource {
        match self.kind {
            // Hadoop 3.4: memory rounded half up, then to the step; the rest of the answer is
            // `Resources.createResource(memory)`: one vcore when memory is positive.
            ResourceCalculatorKind::Default => {
                memory_only(round_up_to((r.memory() as f64 * by + 0.5) as i64, step.memory()))
            }
            // Each type's product through float, then ceiling, then to its step.
            ResourceCalculatorKind::Dominant => {
                let mut out = *r;
                for i in 0..self.types {
                    out.set(i, round_up_to(((r.get(i) as f64 * by) as f32).ceil() as i64, step.get(i)));
                }
                out
            }
        }
    }

    /// `multiplyAndNormalizeDown(r, by, step)`.
    pub fn multiply_and_normalize_down(&self, r: &Resource, by: f64, step: &Resource) -> Resource {
        if !self.is_dominant() {
            return memory_only(round_down_to((r.memory() as f64 * by) as i64, step.memory()));
        }
        let mut out = *r;
        for i in 0..self.types {
            out.set(i, round_down_to((r.get(i) as f64 * by) as i64, step.get(i)));
        }
        out
    }

    /// `roundUp(r, step)`: to a multiple of the step. The default calculator answers
    /// `createResource(memory)`, so the vcores become 1 (0 without memory), as in Hadoop 3.4.
    pub fn round_up(&self, r: &Resource, step: &Resource) -> Resource {
        if !self.is_dominant() {
            return memory_only(round_up_to(r.memory(), step.memory()));
        }
        let mut out = *r;
        for i in 0..self.types {
            out.set(i, round_up_to(r.get(i), step.get(i)));
        }
        out
    }

    /// `roundDown(r, step)` (memory only under the default calculator, as `round_up`).
    pub fn round_down(&self, r: &Resource, step: &Resource) -> Resource {
        if !self.is_dominant() {
            return memory_only(round_down_to(r.memory(), step.memory()));
        }
        let mut out = *r;
        for i in 0..self.types {
            out.set(i, round_down_to(r.get(i), step.get(i)));
        }
        out
    }

    /// `divideAndCeil(r, by)`: `ceil(value / by)` in float, 0 when `by` is 0 (memory only
    /// under the default calculator, as `round_up`).
    pub fn divide_and_ceil(&self, r: &Resource, by: f32) -> Resource {
        let ceil = |v: i64| if by == 0.0 { 0 } else { (v as f32 / by).ceil() as i64 };
        if !self.is_dominant() {
            return memory_only(ceil(r.memory()));
        }
        let mut out = *r;
        for i in 0..self.types {
            out.set(i, ceil(r.get(i)));
        }
        out
    }

    /// How many `required` fit in `available`.
    pub fn available_containers(&self, available: &Resource, required: &Resource) -> i64 {
        let one = |a: i64, r: i64| if r <= 0 { i64::MAX } else { a.max(0) / r };
        match self.kind {
            ResourceCalculatorKind::Default => one(available.memory(), required.memory()),
            ResourceCalculatorKind::Dominant => {
                (0..self.types).map(|i| one(available.get(i), required.get(i))).min().unwrap_or(0)
            }
        }
    }

    /// `isAnyMajorResourceAboveZero`.
    pub fn any_above_zero(&self, r: &Resource) -> bool {
        match self.kind {
            ResourceCalculatorKind::Default => r.memory() > 0,
            ResourceCalculatorKind::Dominant => (0..self.types).any(|i| r.get(i) > 0),
        }
    }

    /// `greaterThan(cluster, r, none)`.
    pub fn positive(&self, cluster: &Resource, r: &Resource) -> bool {
        self.gt(cluster, r, &Resource::none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEF: Calc = Calc { kind: ResourceCalculatorKind::Default, types: 2 };
    const DRF: Calc = Calc { kind: ResourceCalculatorKind::Dominant, types: 2 };

    #[test]
    fn default_looks_at_memory_only() {
        let c = Resource::new(100, 100);
        assert!(DEF.lt(&c, &Resource::new(10, 90), &Resource::new(20, 1)));
        assert!(DEF.fits_in(&Resource::new(10, 90), &Resource::new(10, 1)));
        assert_eq!(DEF.available_containers(&Resource::new(10, 0), &Resource::new(3, 5)), 3);
        assert!((DEF.divide(&c, &Resource::new(30, 0), &Resource::new(40, 0)) - 0.75).abs() < 1e-7);
    }

    #[test]
    fn dominant_uses_shares() {
        let c = Resource::new(100, 10);
        assert!(DRF.gt(&c, &Resource::new(10, 5), &Resource::new(40, 1)));
        assert!(!DRF.fits_in(&Resource::new(10, 5), &Resource::new(40, 1)));
        assert_eq!(DRF.available_containers(&Resource::new(10, 3), &Resource::new(3, 2)), 1);
        assert!((DRF.divide(&c, &Resource::new(10, 5), &Resource::new(50, 1)) - 1.0).abs() < 1e-7);
    }

    #[test]
    fn normalisation_rounds_as_yarn() {
        let step = Resource::new(1024, 1);
        let r = Resource::new(10240, 10);
        assert_eq!(DEF.multiply_and_normalize_up(&r, 0.1, &step).memory(), 1024);
        assert_eq!(DEF.multiply_and_normalize_up(&r, 0.15, &step).memory(), 2048);
        assert_eq!(DRF.multiply_and_normalize_up(&r, 0.15, &step), Resource::new(2048, 2));
        assert_eq!(DEF.round_down(&Resource::new(3000, 3), &step).memory(), 2048);
        assert_eq!(DEF.divide_and_ceil(&Resource::new(10, 0), 3.0).memory(), 4);
    }
}
