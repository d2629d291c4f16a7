//! A map for the few request keys one application tracks (usually one or two): a sorted
//! vector. It iterates in key order as a `BTreeMap` does, so the asks built from it come in
//! the same order, without a tree node per application per heartbeat.

#[derive(Debug, Clone)]
pub(crate) struct KeyMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for KeyMap<K, V> {
    fn default() -> Self {
        Self { entries: Vec::new() }
    }
}

impl<K: Ord + Copy, V> KeyMap<K, V> {
    fn find(&self, key: &K) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.cmp(key))
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.find(key).ok().map(|i| &mut self.entries[i].1)
    }

    pub fn entry_or_default(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (key, V::default()));
                i
            }
        };
        &mut self.entries[i].1
    }

    pub fn insert(&mut self, key: K, value: V) {
        match self.find(&key) {
            Ok(i) => self.entries[i].1 = value,
            Err(i) => self.entries.insert(i, (key, value)),
        }
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.entries.iter().map(|(k, _)| k)
    }
}

/// The keys of two maps, each once, in order (a sorted merge).
pub(crate) fn union<'a, K: Ord + Copy, A, B>(a: &'a KeyMap<K, A>, b: &'a KeyMap<K, B>) -> impl Iterator<Item = K> + 'a {
    let (mut a, mut b) = (a.keys().copied().peekable(), b.keys().copied().peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if x < y => a.next(),
        (Some(x), Some(y)) if y < x => b.next(),
        (Some(_), Some(_)) => {
            b.next();
            a.next()
        }
        (Some(_), None) => a.next(),
        (None, _) => b.next(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    #[test]
    fn behaves_as_a_btree_map_for_what_the_driver_asks() {
        let mut ours: KeyMap<(i32, i64), u64> = KeyMap::default();
        let mut theirs: BTreeMap<(i32, i64), u64> = BTreeMap::new();
        for (i, k) in [(3, 1), (1, 5), (3, 0), (1, 5), (2, 2), (9, 9), (3, 1)].into_iter().enumerate() {
            *ours.entry_or_default(k) += i as u64;
            *theirs.entry(k).or_default() += i as u64;
            if i % 3 == 0 {
                ours.insert((0, i as i64), 7);
                theirs.insert((0, i as i64), 7);
            }
        }
        assert_eq!(ours.keys().copied().collect::<Vec<_>>(), theirs.keys().copied().collect::<Vec<_>>());
        for k in theirs.keys() {
            assert_eq!(ours.get(k), theirs.get(k));
        }
        assert_eq!(ours.get(&(4, 4)), None);
        *ours.get_mut(&(9, 9)).unwrap() = 1;
        assert_eq!(ours.get(&(9, 9)), Some(&1));

        let mut other: KeyMap<(i32, i64), ()> = KeyMap::default();
        for k in [(0, 0), (2, 2), (5, 5), (9, 9)] {
            other.insert(k, ());
        }
        let expected: BTreeSet<(i32, i64)> = ours.keys().chain(other.keys()).copied().collect();
        assert_eq!(union(&ours, &other).collect::<Vec<_>>(), expected.into_iter().collect::<Vec<_>>());
        ours.clear();
        assert_eq!(union(&ours, &other).count(), 4);
    }
}
