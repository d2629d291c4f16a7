//! The ordered members of one queue (child queues of a parent, apps of a leaf).
//!
//! A sorted array of keys. At fair-share equilibrium the member that is served jumps from
//! the front towards the back, so a move shifts part of the array by one key (a memmove of
//! a few hundred bytes to a few kilobytes, a few dozen cycles); the binary searches read
//! keys in place, one load per probe. Two other layouts measured no better or worse (see
//! docs/performance.md): keys in a slab with sorted 4-byte slot numbers (a smaller shift,
//! but every probe two dependent loads), and that plus a parallel array of the keys'
//! leading parts for the searches.

use super::order::OrderKey;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Members {
    /// A copy of the first member's key. The walk reads only this at each level it passes
    /// through: one load from the queue instead of two dependent ones (the array, then its
    /// first key), each a likely cache miss in a large tree.
    head: Option<OrderKey>,
    /// In key order.
    keys: Vec<OrderKey>,
}

impl Members {
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    #[inline]
    pub fn first(&self) -> Option<&OrderKey> {
        self.head.as_ref()
    }

    /// Keep `head` in step with the order after a change.
    #[inline]
    fn set_head(&mut self) {
        self.head = self.keys.first().copied();
    }

    pub fn iter(&self) -> impl Iterator<Item = &OrderKey> {
        self.keys.iter()
    }

    /// The member at position `i` of the order (0 is the first).
    #[inline]
    pub fn get(&self, i: usize) -> Option<&OrderKey> {
        if i == 0 {
            self.head.as_ref()
        } else {
            self.keys.get(i)
        }
    }

    /// Give every key the tie rank `tie` returns for its id. The ranks must order the
    /// members as the old ones did (a respread), so the array stays sorted.
    pub fn retie(&mut self, tie: impl Fn(u32) -> u32) {
        for k in &mut self.keys {
            *k = k.with_tie(tie(k.id()));
        }
        self.set_head();
        debug_assert!(self.keys.windows(2).all(|w| w[0] < w[1]), "a respread kept the order");
    }

    /// False if `key` was already a member.
    pub fn insert(&mut self, key: OrderKey) -> bool {
        let Err(i) = self.search(&key) else { return false };
        self.keys.insert(i, key);
        self.set_head();
        true
    }

    /// False if `key` was not a member.
    pub fn remove(&mut self, key: &OrderKey) -> bool {
        let Ok(i) = self.search(key) else { return false };
        self.keys.remove(i);
        self.set_head();
        true
    }

    /// How many keys of `keys` (sorted) are less than `key`. Branch-free, unlike the
    /// standard searches here: the next probe is chosen by a select on the comparison, so
    /// the probes (each a likely cache miss) cost no mispredicted jumps.
    #[inline]
    fn count_less(keys: &[OrderKey], key: &OrderKey) -> usize {
        let mut base = 0;
        let mut size = keys.len();
        if size == 0 {
            return 0;
        }
        while size > 1 {
            let half = size / 2;
            let mid = base + half;
            base = if keys[mid] < *key { mid } else { base };
            size -= half;
        }
        base + usize::from(keys[base] < *key)
    }

    /// Position of `key`, or where it would go.
    #[inline]
    fn search(&self, key: &OrderKey) -> Result<usize, usize> {
        let i = Self::count_less(&self.keys, key);
        if self.keys.get(i) == Some(key) {
            Ok(i)
        } else {
            Err(i)
        }
    }

    /// Move a member from `old` to `new`, or insert `new` if `old` is not a member. `new`
    /// must not be another member's key (keys end in a unique id).
    pub fn replace(&mut self, old: &OrderKey, new: OrderKey) {
        // The searches below probe the array one dependent load after another; on a large
        // cluster it has usually left the cache since this queue was last served. Asked for
        // all at once, its lines arrive in about the time of one. (Asking for the sets of the
        // whole root-to-leaf path before the keys are computed measured no better.)
        crate::prefetch::slice(&self.keys);
        // The member just served is usually the first: look there before searching.
        let found = match self.head {
            Some(ref k) if k == old => Ok(0),
            _ => self.search(old),
        };
        let Ok(i) = found else {
            self.insert(new);
            return;
        };
        let keys = &mut self.keys;
        if new > *old {
            // Everything after i that is still smaller than `new` moves one place left. A
            // served member often lands last: one comparison settles that.
            let last = keys.len() - 1;
            let j =
                if i < last && keys[last] < new { last + 1 } else { i + 1 + Self::count_less(&keys[i + 1..], &new) };
            keys.copy_within(i + 1..j, i);
            keys[j - 1] = new;
        } else {
            let j = Self::count_less(&keys[..i], &new);
            keys.copy_within(j..i, j + 1);
            keys[j] = new;
        }
        if i == 0 || self.head.is_some_and(|h| new < h) {
            self.set_head();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn key(v: u64, id: u32) -> OrderKey {
        OrderKey::for_test(v, id)
    }

    #[test]
    fn behaves_like_an_ordered_set() {
        // A deterministic mix of inserts, removes and moves, checked against BTreeSet.
        let mut m = Members::default();
        let mut reference = BTreeSet::new();
        let mut current: Vec<Option<OrderKey>> = vec![None; 16];
        let mut x: u64 = 12345;
        for _ in 0..5_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let id = ((x >> 33) % 16) as u32;
            let v = (x >> 40) % 8;
            let new = key(v, id);
            match ((x >> 20) % 3, current[id as usize]) {
                (0, Some(old)) => {
                    assert!(m.remove(&old));
                    reference.remove(&old);
                    current[id as usize] = None;
                }
                (_, Some(old)) => {
                    m.replace(&old, new);
                    reference.remove(&old);
                    reference.insert(new);
                    current[id as usize] = Some(new);
                }
                (_, None) => {
                    assert!(m.insert(new));
                    reference.insert(new);
                    current[id as usize] = Some(new);
                }
            }
            assert!(m.iter().eq(reference.iter()));
            assert_eq!(m.first(), reference.first());
            for (i, k) in reference.iter().enumerate() {
                assert_eq!(m.get(i), Some(k), "position {i}");
            }
            assert_eq!(m.get(reference.len()), None);
        }
    }
}
