//! The ordered members of one queue (child queues of a parent, apps of a leaf), kept in a
//! sorted vector.
//!
//! An allocation or a completion changes one member's key by one container, which moves it
//! a few places at most: in one contiguous array that is a binary search and a short rotate,
//! where a B-tree removes and re-inserts through its nodes. Members join or leave only when
//! their pending demand appears or goes, which costs a shift of the array's tail; sets are
//! a parent's children or a leaf's apps, so that stays small next to a heartbeat.

use crate::order::OrderKey;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Members {
    keys: Vec<OrderKey>,
}

impl Members {
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn first(&self) -> Option<&OrderKey> {
        self.keys.first()
    }

    pub fn iter(&self) -> impl Iterator<Item = &OrderKey> {
        self.keys.iter()
    }

    /// The first member ordered after `key` (which need not be a member).
    pub fn after(&self, key: &OrderKey) -> Option<&OrderKey> {
        self.keys.get(self.keys.partition_point(|k| k <= key))
    }

    /// False if `key` was already a member.
    pub fn insert(&mut self, key: OrderKey) -> bool {
        match self.keys.binary_search(&key) {
            Ok(_) => false,
            Err(i) => {
                self.keys.insert(i, key);
                true
            }
        }
    }

    /// False if `key` was not a member.
    pub fn remove(&mut self, key: &OrderKey) -> bool {
        match self.keys.binary_search(key) {
            Ok(i) => {
                self.keys.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// Move a member from `old` to `new`, or insert `new` if `old` is not a member. `new`
    /// must not be another member's key (keys end in a unique id).
    pub fn replace(&mut self, old: &OrderKey, new: OrderKey) {
        let Ok(i) = self.keys.binary_search(old) else {
            self.insert(new);
            return;
        };
        let keys = &mut self.keys;
        if new > *old {
            // Everything after i that is still smaller than `new` moves one place left.
            let j = i + 1 + keys[i + 1..].partition_point(|k| *k < new);
            keys[i..j].rotate_left(1);
            keys[j - 1] = new;
        } else {
            let j = keys[..i].partition_point(|k| *k < new);
            keys[j..=i].rotate_right(1);
            keys[j] = new;
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
            let probe = key(v, 7);
            assert_eq!(m.after(&probe), reference.range(probe..).find(|k| **k != probe));
        }
    }
}
