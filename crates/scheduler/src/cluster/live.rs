//! The live containers of one app or one node, without touching the list when one finishes.
//!
//! A container's arena slot carries a generation that moves on when the container ends, so
//! a list entry is live while its generation is the slot's current one. Finishing a container
//! then costs no visit to its app's or node's list (nor to the container that a swap-remove
//! would move, each a cache miss on a large cluster); the list drops its dead entries when
//! they outnumber the live ones, reading only the compact generation array.

use crate::ids::ContainerId;

#[derive(Debug, Clone, Default)]
pub struct LiveList {
    entries: Vec<(ContainerId, u32)>,
    live: u32,
}

impl LiveList {
    /// How many of the listed containers are live.
    pub fn len(&self) -> usize {
        self.live as usize
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    pub(crate) fn push(&mut self, id: ContainerId, generation: u32) {
        self.entries.push((id, generation));
        self.live += 1;
    }

    /// One listed container has ended (its slot's generation has moved on).
    pub(crate) fn note_ended(&mut self, generations: &[u32]) {
        self.live -= 1;
        if self.entries.len() > 2 * self.live as usize + 8 {
            self.entries.retain(|&(id, g)| generations[id.index()] == g);
        }
    }

    /// The live containers, oldest entry first.
    pub fn iter<'a>(&'a self, generations: &'a [u32]) -> LiveIter<'a> {
        LiveIter { entries: self.entries.iter(), generations }
    }
}

/// The live containers of a [`LiveList`], oldest first.
#[derive(Debug, Clone)]
pub struct LiveIter<'a> {
    entries: std::slice::Iter<'a, (ContainerId, u32)>,
    generations: &'a [u32],
}

impl Iterator for LiveIter<'_> {
    type Item = ContainerId;

    #[inline]
    fn next(&mut self) -> Option<ContainerId> {
        self.entries.by_ref().find(|&&(id, g)| self.generations[id.index()] == g).map(|&(id, _)| id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ended_entries_disappear_and_slots_can_be_reused() {
        let mut gens = vec![0u32; 4];
        let mut list = LiveList::default();
        for i in 0..4 {
            list.push(ContainerId(i), 0);
        }
        gens[1] += 1;
        list.note_ended(&gens);
        assert_eq!(list.len(), 3);
        assert_eq!(list.iter(&gens).collect::<Vec<_>>(), vec![ContainerId(0), ContainerId(2), ContainerId(3)]);
        // Slot 1 is reused by another list: this one must not see it.
        let mut other = LiveList::default();
        other.push(ContainerId(1), gens[1]);
        assert_eq!(list.iter(&gens).count(), 3);
        assert_eq!(other.iter(&gens).collect::<Vec<_>>(), vec![ContainerId(1)]);
        for i in [0, 2, 3] {
            gens[i] += 1;
            list.note_ended(&gens);
        }
        assert!(list.is_empty());
        assert_eq!(list.iter(&gens).count(), 0);
    }

    #[test]
    fn compaction_keeps_the_list_proportional_to_the_live_set() {
        let mut gens = vec![0u32; 1];
        let mut list = LiveList::default();
        for _ in 0..1_000 {
            list.push(ContainerId(0), gens[0]);
            gens[0] += 1;
            list.note_ended(&gens);
        }
        assert!(list.entries.len() <= 9);
    }
}
