//! The ordered members of one queue (child queues of a parent, apps of a leaf).
//!
//! Keys live in a slab and a sorted array of slab indices gives the order. At fair-share
//! equilibrium the member that is served jumps from the front to the back, so a move crosses
//! the whole set: here that shifts 4-byte indices (400 bytes for 100 children) instead of
//! 48-byte keys, and the binary searches read keys within one small slab, where a B-tree
//! would walk and rebalance its nodes.

use super::order::OrderKey;

#[derive(Debug, Clone, Default)]
pub struct Members {
    /// A copy of the first member's key. The walk reads only this at each level it passes
    /// through: one load from the queue instead of two dependent ones (the order, then the
    /// slab), each a likely cache miss in a large tree.
    head: Option<OrderKey>,
    /// Keys by slot; free slots hold stale keys and are listed in `free`.
    slots: Vec<OrderKey>,
    free: Vec<u32>,
    /// Slots in key order.
    order: Vec<u32>,
}

impl PartialEq for Members {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Members {}

impl Members {
    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    #[inline]
    pub fn first(&self) -> Option<&OrderKey> {
        self.head.as_ref()
    }

    /// Keep `head` in step with the order after a change.
    #[inline]
    fn set_head(&mut self) {
        self.head = self.order.first().map(|&s| self.slots[s as usize]);
    }

    pub fn iter(&self) -> impl Iterator<Item = &OrderKey> {
        self.order.iter().map(|&s| &self.slots[s as usize])
    }

    /// Position of `key` in `order`, or where it would go.
    #[inline]
    fn search(&self, key: &OrderKey) -> Result<usize, usize> {
        let slots = &self.slots;
        self.order.binary_search_by(|&s| slots[s as usize].cmp(key))
    }

    /// The first member ordered after `key` (which need not be a member).
    pub fn after(&self, key: &OrderKey) -> Option<&OrderKey> {
        let slots = &self.slots;
        let i = self.order.partition_point(|&s| slots[s as usize] <= *key);
        self.order.get(i).map(|&s| &self.slots[s as usize])
    }

    /// False if `key` was already a member.
    pub fn insert(&mut self, key: OrderKey) -> bool {
        let Err(i) = self.search(&key) else { return false };
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = key;
                s
            }
            None => {
                self.slots.push(key);
                (self.slots.len() - 1) as u32
            }
        };
        self.order.insert(i, slot);
        self.set_head();
        true
    }

    /// False if `key` was not a member.
    pub fn remove(&mut self, key: &OrderKey) -> bool {
        let Ok(i) = self.search(key) else { return false };
        let slot = self.order.remove(i);
        self.free.push(slot);
        self.set_head();
        true
    }

    /// Move a member from `old` to `new`, or insert `new` if `old` is not a member. `new`
    /// must not be another member's key (keys end in a unique id).
    pub fn replace(&mut self, old: &OrderKey, new: OrderKey) {
        // The member just served is usually the first: look there before searching.
        let found = match self.first() {
            Some(k) if k == old => Ok(0),
            _ => self.search(old),
        };
        let Ok(i) = found else {
            self.insert(new);
            return;
        };
        let slot = self.order[i];
        let slots = &self.slots;
        if new > *old {
            // Everything after i that is still smaller than `new` moves one place left. A
            // served member often lands last: one comparison settles that.
            let last = self.order.len() - 1;
            let j = if i < last && slots[self.order[last] as usize] < new {
                last + 1
            } else {
                i + 1 + self.order[i + 1..].partition_point(|&s| slots[s as usize] < new)
            };
            // One memmove: `rotate_left` on short slices moves element by element.
            self.order.copy_within(i + 1..j, i);
            self.order[j - 1] = slot;
        } else {
            let j = self.order[..i].partition_point(|&s| slots[s as usize] < new);
            self.order.copy_within(j..i, j + 1);
            self.order[j] = slot;
        }
        self.slots[slot as usize] = new;
        self.set_head();
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
            let probe = key(v, 7);
            assert_eq!(m.after(&probe), reference.range(probe..).find(|k| **k != probe));
        }
    }
}
