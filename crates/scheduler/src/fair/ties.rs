//! Apps' tie-breaks as 32-bit ranks.
//!
//! YARN breaks a tie between two apps by start time, then by id string. Carried in full
//! that is 16 bytes in every order key, which made a key 48 bytes; as a rank that orders
//! the live apps the same way it is 4, and a key is 32 (two per cache line, which the
//! searches and moves of the members' arrays read and write). Ranks have room between
//! them, so a new app almost always gets one without touching the others; when there is
//! none, every rank is spread anew (the order of the apps, and so every set, unchanged).

use std::collections::BTreeMap;

/// (start time, the id in YARN's string order, dense id): the order the ranks keep.
type Tie = (i64, u64, u32);

/// The step a new app takes above the rank before it when there is room to spare. Small,
/// so that a run of apps each sorting just after the previous one (many apps started in
/// the same millisecond, their ids crossing a digit boundary) uses little of the room.
const STEP: u64 = 1 << 8;

/// The widest spacing of a respread: it leaves most of the range above the last rank for
/// apps that start later, the usual case.
const MAX_SPACING: u64 = 1 << 16;

#[derive(Debug, Clone, Default)]
pub struct TieRanks {
    ranks: BTreeMap<Tie, u32>,
}

/// What [`TieRanks::add`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranked {
    /// The new app's rank; no other rank changed.
    Rank(u32),
    /// Every rank was reassigned (the new app's too): read them with [`TieRanks::iter`].
    Respread,
}

impl TieRanks {
    /// Live apps ranked.
    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    /// Rank a live app by its start time and id (`name`: the id in string order).
    pub fn add(&mut self, start: i64, name: u64, id: u32) -> Ranked {
        let tie = (start, name, id);
        let below = self.ranks.range(..tie).next_back().map(|(_, &r)| u64::from(r));
        let above = self.ranks.range(tie..).next().map(|(_, &r)| u64::from(r));
        // Free ranks: low..high.
        let low = below.map_or(0, |r| r + 1);
        let high = above.unwrap_or(u64::from(u32::MAX) + 1);
        if low < high {
            let rank = low + ((high - low - 1) / 2).min(STEP - 1);
            self.ranks.insert(tie, rank as u32);
            return Ranked::Rank(rank as u32);
        }
        self.ranks.insert(tie, 0);
        self.respread();
        Ranked::Respread
    }

    /// A finished or rejected app leaves (its rank is no longer compared).
    pub fn remove(&mut self, start: i64, name: u64, id: u32) {
        self.ranks.remove(&(start, name, id));
    }

    /// Every live app's dense id and rank.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.ranks.iter().map(|(&(_, _, id), &rank)| (id, rank))
    }

    fn respread(&mut self) {
        // n ranks spaced s apart from s: the last is n·s ≤ 2³¹ (at most half the range).
        let n = self.ranks.len() as u64;
        let spacing = ((1u64 << 31) / n.max(1)).clamp(1, MAX_SPACING);
        for (i, rank) in self.ranks.values_mut().enumerate() {
            *rank = ((i as u64 + 1) * spacing) as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ranks order the apps as their ties do, whatever the order they arrive in.
    fn check(t: &TieRanks) {
        let ranks: Vec<u32> = t.ranks.values().copied().collect();
        assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
    }

    #[test]
    fn appends_take_a_step_and_keep_the_order() {
        let mut t = TieRanks::default();
        for id in 0..1000u32 {
            assert!(matches!(t.add(i64::from(id), 0, id), Ranked::Rank(_)));
        }
        check(&t);
        assert_eq!(t.iter().map(|(id, _)| id).collect::<Vec<_>>(), (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn inserts_between_and_respreads_keep_the_order() {
        // Apps in one millisecond whose ids sort as strings ("10000" before "1001"): each
        // lands just after the previous one, inside an earlier gap. Then a pseudo-random
        // mix of starts, including ties and removals.
        let mut t = TieRanks::default();
        let mut respreads = 0;
        for id in 0..20_000u32 {
            let name = crate::fair::order::lexicographic_digits(u64::from(id) + 1);
            if t.add(0, name, id) == Ranked::Respread {
                respreads += 1;
            }
        }
        check(&t);
        assert!(respreads < 200, "{respreads} respreads");
        let mut x: u64 = 7;
        let mut live = Vec::new();
        for id in 20_000..60_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let start = ((x >> 40) % 50) as i64;
            t.add(start, x >> 20, id);
            live.push((start, x >> 20, id));
            if (x >> 10).is_multiple_of(3) {
                let (s, n, i) = live.swap_remove(((x >> 12) as usize) % live.len());
                t.remove(s, n, i);
            }
        }
        check(&t);
    }

    #[test]
    fn a_full_range_respreads() {
        let mut t = TieRanks::default();
        // The first app gets STEP - 1; each app started earlier than all the others takes
        // the middle of the room below the lowest rank, which runs out after eight.
        t.add(10, 0, 0);
        let mut saw = false;
        for id in 1..64u32 {
            saw |= t.add(-i64::from(id), 0, id) == Ranked::Respread;
        }
        check(&t);
        assert!(saw, "an insert below rank 0 needs a respread");
    }
}
