//! Resource vectors over YARN resource types.
//!
//! A [`Resource`] holds one 64-bit value per resource type. Index 0 is always `memory-mb`
//! and index 1 `vcores`; configured countable types (`yarn.io/gpu`, ...) follow in the order
//! of [`ResourceTypes`]. Slots past the configured count are always 0, so whole-array
//! operations stay correct without knowing the count.
//!
//! Arithmetic saturates: YARN's "unbounded" is `i64::MAX` per type and must stay unbounded
//! when something is added to it.

use std::fmt;

/// The most resource types one cluster may configure (memory and vcores included).
///
/// Four by default: memory, vcores and two countable types (YARN's own plugins are
/// `yarn.io/gpu` and `yarn.io/fpga`). Every usage, demand and share in the scheduler's hot
/// records is a `Resource`, so its size is paid on every allocation: at 8 slots one value
/// is a whole cache line, and meituan-12k ran 15% slower, hyperscale-100k 21% (measured side
/// by side). Clusters with more types build with the `wide-resources` feature (8).
#[cfg(not(feature = "wide-resources"))]
pub const MAX_RESOURCE_TYPES: usize = 4;
/// The most resource types one cluster may configure (memory and vcores included).
#[cfg(feature = "wide-resources")]
pub const MAX_RESOURCE_TYPES: usize = 8;
/// Index of `memory-mb`.
pub const MEMORY: usize = 0;
/// Index of `vcores`.
pub const VCORES: usize = 1;
/// YARN's "unbounded" value for one resource type (Long.MAX_VALUE).
pub const UNBOUNDED: i64 = i64::MAX;

pub const MEMORY_NAME: &str = "memory-mb";
pub const VCORES_NAME: &str = "vcores";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceTypesError {
    #[error(
        "too many resource types: at most {max} are supported (memory-mb and vcores included); \
         build fairloom with `--features wide-resources` for up to 8"
    )]
    TooMany { max: usize },
    #[error("resource type '{0}' is declared twice")]
    Duplicate(String),
    #[error("invalid resource type name '{0}'")]
    InvalidName(String),
}

/// The resource types known to a cluster, in index order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceTypes {
    names: Vec<String>,
}

impl Default for ResourceTypes {
    fn default() -> Self {
        Self { names: vec![MEMORY_NAME.to_string(), VCORES_NAME.to_string()] }
    }
}

impl ResourceTypes {
    /// memory-mb, vcores, then `extra` in the given order.
    pub fn with_extra<I, S>(extra: I) -> Result<Self, ResourceTypesError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut types = Self::default();
        for name in extra {
            let name = name.as_ref().trim();
            if name.is_empty() || name.contains(char::is_whitespace) || name.contains(',') {
                return Err(ResourceTypesError::InvalidName(name.to_string()));
            }
            if types.names.iter().any(|n| n == name) {
                // memory-mb and vcores may be listed again (yarn.resource-types allows it).
                if name == MEMORY_NAME || name == VCORES_NAME {
                    continue;
                }
                return Err(ResourceTypesError::Duplicate(name.to_string()));
            }
            if types.names.len() == MAX_RESOURCE_TYPES {
                return Err(ResourceTypesError::TooMany { max: MAX_RESOURCE_TYPES });
            }
            types.names.push(name.to_string());
        }
        Ok(types)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn name(&self, index: usize) -> &str {
        &self.names[index]
    }

    /// Index of a type by its full name. `memory` and `mb` are accepted for memory-mb,
    /// and a custom type may be named without its `yarn.io/` prefix.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        if let Some(i) = self.names.iter().position(|n| n == name) {
            return Some(i);
        }
        self.names.iter().position(|n| n.strip_prefix("yarn.io/") == Some(name))
    }

    /// A resource with `value` in every configured type (0 in unused slots).
    pub fn filled(&self, value: i64) -> Resource {
        let mut r = Resource::none();
        for i in 0..self.len() {
            r.v[i] = value;
        }
        r
    }

    /// YARN's `Resources.unbounded()` for this cluster's types.
    pub fn unbounded(&self) -> Resource {
        self.filled(UNBOUNDED)
    }
}

/// One value per resource type. Cheap to copy.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Resource {
    v: [i64; MAX_RESOURCE_TYPES],
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let last = self.v.iter().rposition(|&x| x != 0).map_or(2, |i| (i + 1).max(2));
        f.debug_list().entries(&self.v[..last]).finish()
    }
}

impl Resource {
    pub const fn none() -> Self {
        Self { v: [0; MAX_RESOURCE_TYPES] }
    }

    pub fn new(memory: i64, vcores: i64) -> Self {
        let mut r = Self::none();
        r.v[MEMORY] = memory;
        r.v[VCORES] = vcores;
        r
    }

    /// From values in type order; missing trailing types are 0.
    pub fn from_values(values: &[i64]) -> Self {
        let mut r = Self::none();
        for (slot, &x) in r.v.iter_mut().zip(values) {
            *slot = x;
        }
        r
    }

    #[inline]
    pub fn get(&self, index: usize) -> i64 {
        self.v[index]
    }

    #[inline]
    pub fn set(&mut self, index: usize, value: i64) {
        self.v[index] = value;
    }

    #[inline]
    pub fn memory(&self) -> i64 {
        self.v[MEMORY]
    }

    #[inline]
    pub fn vcores(&self) -> i64 {
        self.v[VCORES]
    }

    /// All slots, e.g. to use a resource in a map key (resources have no order of their own:
    /// compare them with `fits_in` or a policy's calculator).
    pub fn to_array(&self) -> [i64; MAX_RESOURCE_TYPES] {
        self.v
    }

    pub fn values(&self, types: usize) -> &[i64] {
        &self.v[..types]
    }

    /// True when every component is 0 (YARN's `Resources.none()` equality).
    #[inline]
    pub fn is_none(&self) -> bool {
        self.v.iter().all(|&x| x == 0)
    }

    #[inline]
    pub fn saturating_add(self, other: Self) -> Self {
        self.zip(other, i64::saturating_add)
    }

    #[inline]
    pub fn saturating_sub(self, other: Self) -> Self {
        self.zip(other, i64::saturating_sub)
    }

    #[inline]
    pub fn add_assign(&mut self, other: Self) {
        *self = self.saturating_add(other);
    }

    #[inline]
    pub fn sub_assign(&mut self, other: Self) {
        *self = self.saturating_sub(other);
    }

    /// `self - other`, each component floored at 0 (YARN's `subtractFromNonNegative`).
    #[inline]
    pub fn sub_non_negative(self, other: Self) -> Self {
        self.zip(other, |a, b| a.saturating_sub(b).max(0))
    }

    /// Every component of `self` is ≤ the matching one of `other` (YARN's `fitsIn`).
    #[inline]
    pub fn fits_in(&self, other: &Self) -> bool {
        self.v.iter().zip(other.v.iter()).all(|(a, b)| a <= b)
    }

    #[inline]
    pub fn componentwise_min(self, other: Self) -> Self {
        self.zip(other, i64::min)
    }

    #[inline]
    pub fn componentwise_max(self, other: Self) -> Self {
        self.zip(other, i64::max)
    }

    /// `(long)(value × by)` per component, as YARN's `Resources.multiply`.
    pub fn multiply_truncate(self, by: f64) -> Self {
        self.map(|x| (x as f64 * by) as i64)
    }

    /// `ceil(value × by)` per component, as YARN's `Resources.multiplyAndRoundUp`.
    pub fn multiply_round_up(self, by: f64) -> Self {
        self.map(|x| (x as f64 * by).ceil() as i64)
    }

    /// `value × count` per component, saturating.
    pub fn times(self, count: i64) -> Self {
        self.map(|x| x.saturating_mul(count))
    }

    /// True if some component is greater than 0.
    pub fn any_positive(&self) -> bool {
        self.v.iter().any(|&x| x > 0)
    }

    #[inline]
    fn zip(self, other: Self, f: impl Fn(i64, i64) -> i64) -> Self {
        let mut out = Self::none();
        for i in 0..MAX_RESOURCE_TYPES {
            out.v[i] = f(self.v[i], other.v[i]);
        }
        out
    }

    #[inline]
    fn map(self, f: impl Fn(i64) -> i64) -> Self {
        let mut out = self;
        for x in out.v.iter_mut() {
            *x = f(*x);
        }
        out
    }
}

/// Normalise a request as the Fair Scheduler does (its DominantResourceCalculator):
/// per type, raise to the minimum, round up to a multiple of the increment, cap at the maximum.
pub fn normalize(
    request: Resource,
    minimum: Resource,
    maximum: Resource,
    increment: Resource,
    types: usize,
) -> Resource {
    let mut out = request;
    for i in 0..types {
        let mut value = request.get(i).max(minimum.get(i));
        let step = increment.get(i);
        if step != 0 {
            value = round_up(value, step);
        }
        out.set(i, value.min(maximum.get(i)));
    }
    out
}

fn round_up(value: i64, step: i64) -> i64 {
    let rem = value.rem_euclid(step);
    if rem == 0 {
        value
    } else {
        value.saturating_add(step - rem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn normalisation_rounds_up_then_clamps() {
        let min = Resource::new(0, 1);
        let max = Resource::new(10240, 4);
        let step = Resource::new(1024, 1);
        let n = |m, v| normalize(Resource::new(m, v), min, max, step, 2);
        assert_eq!(n(1860, 1), Resource::new(2048, 1));
        assert_eq!(n(3074, 1), Resource::new(4096, 1));
        assert_eq!(n(0, 0), Resource::new(0, 1));
        assert_eq!(n(20000, 9), Resource::new(10240, 4));
        let step256 = Resource::new(256, 1);
        assert_eq!(normalize(Resource::new(769, 1), min, max, step256, 2).memory(), 1024);
        assert_eq!(normalize(Resource::new(1025, 1), min, max, step256, 2).memory(), 1280);
    }

    #[test]
    fn unbounded_stays_unbounded() {
        let types = ResourceTypes::default();
        let u = types.unbounded();
        assert_eq!(u.saturating_add(Resource::new(5, 5)), u);
        assert!(Resource::new(1, 1).fits_in(&u));
        assert!(!u.is_none());
        assert_eq!(u.get(2), 0);
    }

    #[test]
    fn multiply_matches_java_float_widening() {
        // 0.2f widened to double is 0.20000000298..., so the AM limit of 10240 is 2049.
        let share = 0.2f32 as f64;
        assert_eq!(Resource::new(10240, 0).multiply_round_up(share).memory(), 2049);
        assert_eq!(Resource::new(10240, 3).multiply_truncate(0.5).vcores(), 1);
    }

    #[test]
    fn type_lookup() {
        let t = ResourceTypes::with_extra(["yarn.io/gpu", "test1"]).unwrap();
        assert_eq!(t.index_of("yarn.io/gpu"), Some(2));
        assert_eq!(t.index_of("gpu"), Some(2));
        assert_eq!(t.index_of("test1"), Some(3));
        assert!(ResourceTypes::with_extra(["a", "a"]).is_err());
        assert!(ResourceTypes::with_extra(["a,b"]).is_err());
    }

    #[test]
    fn more_types_than_slots_is_a_clear_error() {
        let names: Vec<String> = (0..MAX_RESOURCE_TYPES - 1).map(|i| format!("t{i}")).collect();
        let err = ResourceTypes::with_extra(&names).unwrap_err();
        assert_eq!(err, ResourceTypesError::TooMany { max: MAX_RESOURCE_TYPES });
        assert!(err.to_string().contains("wide-resources"), "{err}");
        assert_eq!(ResourceTypes::with_extra(&names[1..]).unwrap().len(), MAX_RESOURCE_TYPES);
    }

    proptest! {
        #[test]
        fn add_then_sub_round_trips(a in 0i64..1 << 40, b in 0i64..1 << 40, c in 0i64..1 << 40, d in 0i64..1 << 40) {
            let x = Resource::new(a, b);
            let y = Resource::new(c, d);
            prop_assert_eq!(x.saturating_add(y).saturating_sub(y), x);
            prop_assert!(x.fits_in(&x.saturating_add(y)));
        }

        #[test]
        fn normalised_is_within_bounds(m in 0i64..100_000, v in 0i64..64, step in 1i64..2048) {
            let min = Resource::new(512, 1);
            let max = Resource::new(16384, 8);
            let n = normalize(Resource::new(m, v), min, max, Resource::new(step, 1), 2);
            prop_assert!(n.memory() <= 16384 && n.memory() >= 512);
            prop_assert!(n.vcores() <= 8 && n.vcores() >= 1);
            if n.memory() < 16384 { prop_assert_eq!(n.memory() % step, 0); }
        }
    }
}
