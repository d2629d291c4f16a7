//! Child ordering kept up to date incrementally.
//!
//! Each queue keeps the children that have pending demand (child queues of a parent,
//! runnable apps of a leaf) in a sorted [`Members`](super::members::Members) array, keyed by a total-order encoding of its
//! policy's comparator plus the tie-breaks. A key depends only on the child's own
//! aggregates (usage, cached demand, min share, weight, start time, name) and, under drf,
//! the cluster: an allocation moves the keys on one root-to-leaf path, O(depth · log fan-out),
//! instead of a sort at every level.
//!
//! The encoding matches `policy::compare` exactly, with one exception: in YARN's fair
//! demand stage, a (0 MB, n vcores) demand ties with a zero demand; here it sorts first.
//! YARN's comparator is not transitive there (see the policy tests), so no total order can
//! match it. Keys that would hold NaN (drf with a zero-weight queue, or a cluster with a
//! zero resource) switch the walk to sorting until the next rebuild.

use fairloom_model::{Resource, MEMORY, VCORES};

use super::policy::PolicyKind;
use super::ties::Ranked;
use super::FairScheduler;
use crate::ids::{AppId, QueueId};

/// Total-order key: smaller is served first. The policy's values are packed into `prim`
/// (and, for drf over three types, `sec`) so that one integer comparison usually settles
/// the order. `tie` is the rank of the tie-breaks: a queue's name among all queue names, or
/// an app's start time and then id string among live apps (YARN compares
/// `application_<ts>_<seq>` as strings; see [`super::ties`]). The dense `id` is unique.
/// 32 bytes: two keys to a cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OrderKey {
    prim: u128,
    sec: u64,
    tie: u32,
    id: u32,
}

const _: () = assert!(std::mem::size_of::<OrderKey>() == 32);

impl OrderKey {
    fn new(prim: u128, sec: u64, tie: u32, id: u32) -> Self {
        Self { prim, sec, tie, id }
    }

    /// `tie` and `id` as one number, ordered as the pair.
    #[inline(always)]
    fn rest(&self) -> u64 {
        (u64::from(self.tie) << 32) | u64::from(self.id)
    }

    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// The same key under another tie rank (the ranks were spread anew).
    pub(crate) fn with_tie(self, tie: u32) -> Self {
        Self { tie, ..self }
    }
}

impl Ord for OrderKey {
    /// This comparison is the innermost step of every re-keying: `prim` alone settles most.
    #[inline(always)]
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        if self.prim != o.prim {
            return self.prim.cmp(&o.prim);
        }
        (self.sec, self.rest()).cmp(&(o.sec, o.rest()))
    }
}

impl PartialOrd for OrderKey {
    #[inline(always)]
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }

    /// Without branches (`&` and `|` on bools evaluate both sides): the binary searches
    /// of the members' order branch on this result alone, which a select can take, and a
    /// search then costs no mispredicted jump per probe.
    #[inline(always)]
    fn lt(&self, o: &Self) -> bool {
        let rest = (self.sec < o.sec) | ((self.sec == o.sec) & (self.rest() < o.rest()));
        (self.prim < o.prim) | ((self.prim == o.prim) & rest)
    }
}

#[cfg(test)]
impl OrderKey {
    pub(crate) fn for_test(v: u64, id: u32) -> Self {
        Self::new(v as u128, 0, 0, id)
    }
}

/// Drf over more resource types than a key holds falls back to sorting.
const MAX_DRF_TYPES: usize = 3;

/// The bits of a non-negative, non-NaN `x`: for such values the bit patterns order as the
/// numbers do, and the sign bit is free. `None` for anything else (the key then cannot
/// hold it, and the walk sorts).
#[inline]
fn non_negative_bits(x: f64) -> Option<u64> {
    let b = x.to_bits();
    (b >> 63 == 0 && !x.is_nan()).then_some(b)
}

/// The order of YARN's zero-padded sequence string (`{:04}`) as a number: each digit in base
/// 11 with 0 for "ended", so a shorter string sorts before its extensions.
pub fn lexicographic_digits(n: u64) -> u64 {
    let digits = format!("{n:04}");
    let mut v: u64 = 0;
    for i in 0..18 {
        let d = digits.as_bytes().get(i).map_or(0, |b| (b - b'0') as u64 + 1);
        v = v * 11 + d;
    }
    v
}

/// The sort-key values of one schedulable under `policy`, packed as `(prim, sec)`; `None`
/// if a value is NaN, negative, or more than the key holds. Inlined: returned through
/// memory, the `u128` was stored as two words and loaded as one, a load that cannot take
/// its value from the pending stores and waits for them (measured: most of the time of
/// computing an app's key).
#[inline(always)]
fn policy_values(
    policy: PolicyKind,
    usage: &Resource,
    demand: &Resource,
    min_share: &Resource,
    weight: f32,
    cluster: &Resource,
    types: usize,
) -> Option<(u128, u64)> {
    match policy {
        PolicyKind::Fifo => Some((0, 0)),
        PolicyKind::Fair => {
            let min = if min_share.memory() <= demand.memory() { *min_share } else { *demand };
            let needy = usage.memory() < min.memory();
            // (demand stage: 2 bits, needy, min-share ratio, zero weight, usage / weight).
            // A needy ratio is below 1, so its bits fit in 62; usage / weight fits in 63.
            let stage = (u128::from(demand.memory() == 0) << 1) | u128::from(!needy);
            let ratio = if needy { non_negative_bits(usage.memory() as f64 / min.memory().max(1) as f64)? } else { 0 };
            if ratio >> 62 != 0 {
                return None;
            }
            let w = weight as f64;
            let zero_weight = u128::from(w <= 0.0);
            let used = non_negative_bits(if w > 0.0 { usage.memory() as f64 / w } else { usage.memory() as f64 })?;
            Some(((stage << 126) | (u128::from(ratio) << 64) | (zero_weight << 63) | u128::from(used), 0))
        }
        PolicyKind::Drf => drf_values(usage, min_share, weight, cluster, types),
    }
}

#[inline(never)]
fn drf_values(
    usage: &Resource,
    min_share: &Resource,
    weight: f32,
    cluster: &Resource,
    types: usize,
) -> Option<(u128, u64)> {
    if types == 2 {
        let mem = usage.memory() as f64 / cluster.memory() as f64;
        let cpu = usage.vcores() as f64 / cluster.vcores() as f64;
        let dom = if cpu > mem { VCORES } else { MEMORY };
        let needy = usage.get(dom) < min_share.get(dom);
        let w = weight as f64;
        let (a, b) = if needy {
            let r = |i: usize| usage.get(i) as f64 / min_share.get(i) as f64;
            (r(dom), r(1 - dom))
        } else {
            let s = [mem / w, cpu / w];
            (s[dom], s[1 - dom])
        };
        let (a, b) = (non_negative_bits(a)?, non_negative_bits(b)?);
        return Some(((u128::from(!needy) << 127) | (u128::from(a) << 64) | u128::from(b), 0));
    }
    if types > MAX_DRF_TYPES {
        return None;
    }
    let w = weight as f64;
    let mut rows: Vec<[f64; 3]> = (0..types)
        .map(|i| {
            let share = usage.get(i) as f64 / cluster.get(i) as f64;
            [share, share / w, usage.get(i) as f64 / min_share.get(i) as f64]
        })
        .collect();
    if rows.iter().flatten().any(|x| x.is_nan()) {
        return None;
    }
    rows.sort_by(|x, y| y[0].total_cmp(&x[0]));
    let needy = rows[0][2] < 1.0;
    let mut v = [0u64; 3];
    for (slot, row) in v.iter_mut().zip(&rows) {
        *slot = non_negative_bits(if needy { row[2] } else { row[1] })?;
    }
    Some(((u128::from(!needy) << 127) | (u128::from(v[0]) << 64) | u128::from(v[1]), v[2]))
}

impl FairScheduler {
    /// The key of queue `q` in its parent's set.
    fn queue_key(&self, q: QueueId) -> Option<OrderKey> {
        let queue = self.q(q);
        let parent = queue.parent?;
        let policy = self.q(parent).policy;
        let (prim, sec) = policy_values(
            policy,
            &queue.usage,
            &queue.demand,
            &queue.settings.min_share,
            queue.settings.weight,
            &self.cluster.total,
            self.types,
        )?;
        Some(OrderKey::new(prim, sec, queue.order_rank, q.0))
    }

    /// The key of app `a` in its leaf's set.
    fn app_key(&self, a: AppId) -> Option<OrderKey> {
        let app = &self.apps[a];
        let policy = self.q(app.queue?).policy;
        let (prim, sec) = policy_values(
            policy,
            &app.usage,
            &app.demand,
            &Resource::none(),
            self.app_weight(a),
            &self.cluster.total,
            self.types,
        )?;
        Some(OrderKey::new(prim, sec, app.tie_rank, a.slot))
    }

    /// A member whose key cannot be totally ordered still has to be found by the walk (which
    /// then sorts): it is kept under its tie-breaks alone.
    fn fallback_key(&mut self, tie: u32, id: u32) -> OrderKey {
        self.order_exact = false;
        OrderKey::new(0, 0, tie, id)
    }

    fn app_wants(&self, a: AppId) -> bool {
        let app = &self.apps[a];
        app.runnable && app.is_alive() && app.has_pending_demand()
    }

    /// The key `a` should have in its leaf's set now, if it belongs there.
    fn desired_app_key(&mut self, a: AppId) -> Option<OrderKey> {
        if !self.app_wants(a) {
            return None;
        }
        match self.app_key(a) {
            Some(k) => Some(k),
            None => {
                let tie = self.apps[a].tie_rank;
                Some(self.fallback_key(tie, a.slot))
            }
        }
    }

    /// Re-place `a` in its leaf's set, then its leaf and ancestors in theirs.
    pub(crate) fn refresh_app(&mut self, a: AppId) {
        // The leaf's and its ancestors' usage may have moved even when the app's key did not.
        if let Some(leaf) = self.rekey_app(a) {
            self.refresh_path(leaf);
        }
    }

    /// Re-place `a` in its leaf's set only; the leaf, if it has one.
    pub(crate) fn rekey_app(&mut self, a: AppId) -> Option<QueueId> {
        let leaf = self.apps[a].queue?;
        let desired = self.desired_app_key(a);
        let current = self.apps[a].order_key;
        self.replace_member(leaf, current, desired);
        self.apps[a].order_key = desired;
        Some(leaf)
    }

    /// Give a new app its tie rank (before it joins a set).
    pub(crate) fn rank_app(&mut self, a: AppId) {
        let app = &self.apps[a];
        let name = lexicographic_digits(u64::from(app.yarn_id.id));
        match self.tie_ranks.add(app.start_time, name, a.slot) {
            Ranked::Rank(r) => self.apps[a].tie_rank = r,
            Ranked::Respread => {
                for (id, rank) in self.tie_ranks.iter() {
                    let app = &mut self.apps[id as usize];
                    app.tie_rank = rank;
                    app.order_key = app.order_key.map(|k| k.with_tie(rank));
                }
                let apps = &self.apps;
                for q in self.queues.slots_mut().filter(|q| q.leaf) {
                    q.members.retie(|id| apps[id as usize].tie_rank);
                }
            }
        }
    }

    /// A finished or rejected app's rank is no longer compared (after it left its set).
    pub(crate) fn unrank_app(&mut self, a: AppId) {
        let app = &self.apps[a];
        debug_assert!(app.order_key.is_none(), "an app leaves its set before its rank goes");
        self.tie_ranks.remove(app.start_time, lexicographic_digits(u64::from(app.yarn_id.id)), a.slot);
    }

    /// Take `a` out of its leaf's set (before it changes queue).
    pub(crate) fn detach_app(&mut self, a: AppId) {
        let Some(leaf) = self.apps[a].queue else { return };
        if let Some(old) = self.apps[a].order_key.take() {
            self.q_mut(leaf).members.remove(&old);
        }
        self.refresh_path(leaf);
    }

    /// The key `q` should have in its parent's set now (a queue is a member while it has
    /// members of its own).
    fn desired_queue_key(&mut self, q: QueueId) -> Option<OrderKey> {
        if self.q(q).members.is_empty() || self.q(q).parent.is_none() {
            return None;
        }
        match self.queue_key(q) {
            Some(k) => Some(k),
            None => {
                let rank = self.q(q).order_rank;
                Some(self.fallback_key(rank, q.0))
            }
        }
    }

    /// Re-place `q` and each ancestor in its parent's set, stopping where nothing changes.
    pub(crate) fn refresh_path(&mut self, mut q: QueueId) {
        while let Some(parent) = self.q(q).parent {
            let desired = self.desired_queue_key(q);
            let current = self.q(q).order_key;
            self.replace_member(parent, current, desired);
            self.q_mut(q).order_key = desired;
            q = parent;
        }
    }

    /// Move a member of `owner`'s set from its `current` key to `desired` (either may be none).
    #[inline(always)]
    fn replace_member(&mut self, owner: QueueId, current: Option<OrderKey>, desired: Option<OrderKey>) {
        if desired == current {
            return;
        }
        let set = &mut self.q_mut(owner).members;
        match (current, desired) {
            (Some(old), Some(new)) => set.replace(&old, new),
            (Some(old), None) => {
                set.remove(&old);
            }
            (None, Some(new)) => {
                set.insert(new);
            }
            (None, None) => {}
        }
    }

    /// After an update: demand (and size-based weights) changed, usage did not; re-place
    /// only the apps whose key moved, then every queue children first (a child always has a
    /// higher id than its parent), each once.
    pub(crate) fn refresh_all_keys(&mut self) {
        for i in 0..self.apps.len() {
            let a = self.apps[i].id;
            let Some(leaf) = self.apps[i].queue else { continue };
            let desired = self.desired_app_key(a);
            let current = self.apps[i].order_key;
            self.replace_member(leaf, current, desired);
            self.apps[i].order_key = desired;
        }
        for i in (0..self.queues.len()).rev() {
            let q = QueueId(i as u32);
            let Some(parent) = self.q(q).parent else { continue };
            if self.q(q).removed {
                continue;
            }
            let desired = self.desired_queue_key(q);
            let current = self.q(q).order_key;
            self.replace_member(parent, current, desired);
            self.q_mut(q).order_key = desired;
        }
    }

    /// Rebuild every set from scratch (after a reload, a tree change or a cluster change).
    pub(crate) fn rebuild_order(&mut self) {
        self.order_exact = true;
        self.demand_full = true;
        self.shares_stale = true;
        let mut names: Vec<(String, QueueId)> = self.queues().map(|(id, q)| (q.name.clone(), id)).collect();
        names.sort();
        for (rank, (_, id)) in names.into_iter().enumerate() {
            self.q_mut(id).order_rank = rank as u32;
        }
        for q in self.queues.slots_mut() {
            q.members = Default::default();
            q.order_key = None;
        }
        for app in self.apps.iter_mut() {
            app.order_key = None;
        }
        self.refresh_all_keys();
    }

    pub(crate) fn member_id(key: &OrderKey) -> u32 {
        key.id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_order_like_strings() {
        let mut ids: Vec<u64> = vec![1, 2, 9, 10, 99, 100, 999, 1000, 9999, 10000, 12345, 5];
        let mut by_string = ids.clone();
        by_string.sort_by_key(|n| format!("{n:04}"));
        ids.sort_by_key(|&n| lexicographic_digits(n));
        assert_eq!(ids, by_string);
    }

    #[test]
    fn keys_order_by_prim_sec_tie_id() {
        let k = OrderKey::new;
        let ordered = [
            k(1, 0, u32::MAX, u32::MAX),
            k(2, 0, 0, 5),
            k(2, 0, 1, 0),
            k(2, 0, 1, 1),
            k(2, 0, 1, u32::MAX),
            k(2, 0, 2, 0),
            k(2, 0, u32::MAX, 0),
            k(2, 1, 0, 0),
            k(2, u64::MAX, 0, 0),
            k(u128::MAX, 0, 0, 0),
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(a.cmp(b), i.cmp(&j), "{a:?} {b:?}");
                // The branch-free `<` agrees with `cmp`.
                assert_eq!(a < b, i < j, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn float_bits_keep_order() {
        let xs = [0.0, 1e-300, 1e-9, 0.5, 0.999_999, 1.0, 3.0, 1e300, f64::INFINITY];
        for w in xs.windows(2) {
            assert!(non_negative_bits(w[0]).unwrap() < non_negative_bits(w[1]).unwrap(), "{w:?}");
        }
        // A needy ratio (below 1) leaves the two top bits free for the packed fair key.
        assert!(non_negative_bits(0.999_999).unwrap() >> 62 == 0);
        for bad in [-0.0, -1e-9, -f64::INFINITY, f64::NAN] {
            assert_eq!(non_negative_bits(bad), None, "{bad}");
        }
    }

    #[test]
    fn packed_fair_keys_order_as_the_comparator() {
        // Stage, then needy ratio, then zero weight, then usage / weight, each deciding
        // only when everything before it ties.
        let types = 2;
        let cluster = Resource::new(100_000, 100);
        let key = |usage: i64, demand: i64, min: i64, weight: f32| {
            policy_values(
                PolicyKind::Fair,
                &Resource::new(usage, 1),
                &Resource::new(demand, 1),
                &Resource::new(min, 0),
                weight,
                &cluster,
                types,
            )
            .unwrap()
        };
        let ordered = [
            key(0, 4096, 4096, 1.0),    // needy, ratio 0
            key(1024, 4096, 4096, 1.0), // needy, ratio 0.25
            key(3072, 4096, 4096, 1.0), // needy, ratio 0.75
            key(0, 4096, 0, 2.0),       // not needy, usage 0
            key(2048, 4096, 0, 2.0),    // usage / weight 1024
            key(2048, 4096, 0, 1.0),    // usage / weight 2048
            key(1_000_000, 4096, 0, 1.0),
            key(0, 4096, 0, 0.0), // zero weight sorts after every weighted one
        ];
        for w in ordered.windows(2) {
            assert!(w[0] < w[1], "{w:?}");
        }
        assert_eq!(
            policy_values(
                PolicyKind::Fair,
                &Resource::new(-1, 0),
                &Resource::new(4096, 1),
                &Resource::none(),
                1.0,
                &cluster,
                types
            ),
            None
        );
    }

    proptest::proptest! {
        /// The packed key orders two schedulables exactly as the policy's comparator does,
        /// wherever the key can hold them (the walk sorts otherwise).
        #[test]
        fn keys_order_as_the_comparator(
            x in (0i64..6, 0i64..6, 0i64..4, 0i64..4, 0i64..4, 0i64..4, 0u8..3, 0u8..3),
            y in (0i64..6, 0i64..6, 0i64..4, 0i64..4, 0i64..4, 0i64..4, 0u8..3, 0u8..3),
            p in 0usize..3,
        ) {
            use crate::fair::policy::{compare, SchedView};
            let policy = [PolicyKind::Fair, PolicyKind::Drf, PolicyKind::Fifo][p];
            let cluster = Resource::new(8, 8);
            let view = |t: (i64, i64, i64, i64, i64, i64, u8, u8), name: &'static str| SchedView {
                usage: Resource::new(t.0 * 512, t.1),
                // The documented exception: a (0 MB, n vcores) demand (see the module doc).
                demand: Resource::new(t.2 * 512, if t.2 == 0 { 0 } else { t.3 }),
                min_share: Resource::new(t.4 * 512, t.5),
                weight: t.6 as f32,
                start_time: t.7 as i64,
                name,
            };
            let (a, b) = (view(x, "a"), view(y, "b"));
            // Tie ranks in the order of (start time, name), as TieRanks keeps them.
            let key = |v: &SchedView<'_>, name: u32, id: u32| {
                policy_values(policy, &v.usage, &v.demand, &v.min_share, v.weight, &cluster, 2)
                    .map(|(prim, sec)| OrderKey::new(prim, sec, v.start_time as u32 * 2 + name, id))
            };
            if let (Some(ka), Some(kb)) = (key(&a, 0, 0), key(&b, 1, 1)) {
                proptest::prop_assert_eq!(ka.cmp(&kb), compare(policy, &a, &b, &cluster, 2), "{:?} {:?}", ka, kb);
            }
        }
    }
}
