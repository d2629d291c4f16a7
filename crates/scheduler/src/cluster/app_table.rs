//! A scheduler's applications as an owned part (both schedulers keep theirs in one): their
//! slots and submission numbers. A slot is added or given back only here, which keeps what
//! the rest of the scheduler relies on:
//!
//! - an application's id names its slot and its submission number, and submission numbers
//!   only grow (YARN's application ids count up);
//! - a free slot is a forgotten application's, and only such a slot is reused (an id of an
//!   application still held never points at another one).
//!
//! An application's own fields are the scheduler's to change through indexing.

use std::ops::{Deref, Index, IndexMut};

use crate::ids::{AppId, IdVec};

/// An application record a table holds.
pub(crate) trait AppRecord {
    /// Forgotten by its scheduler: its slot may be the next application's.
    fn forgotten(&self) -> bool;
}

#[derive(Debug, Clone)]
pub(crate) struct AppTable<App> {
    slots: IdVec<AppId, App>,
    free: Vec<u32>,
    /// The submission number of the next application.
    next_seq: u32,
}

impl<App> Default for AppTable<App> {
    fn default() -> Self {
        Self { slots: IdVec::new(), free: Vec::new(), next_seq: 0 }
    }
}

impl<App: AppRecord> AppTable<App> {
    /// Add the application `make` builds for its new id (the next submission number, a
    /// forgotten application's slot or a new one).
    pub(crate) fn insert(&mut self, make: impl FnOnce(AppId) -> App) -> AppId {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = crate::cluster::take_slot(&mut self.free, self.slots.len());
        let id = AppId { seq, slot };
        crate::cluster::put_in_slot(&mut self.slots, slot, make(id));
        id
    }

    /// Give a forgotten application's slot back for the next one.
    pub(crate) fn free(&mut self, id: AppId) {
        debug_assert!(self.slots[id].forgotten(), "only a forgotten application's slot is freed");
        self.free.push(id.slot);
    }

    /// Applications held (slots not free).
    pub(crate) fn held(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    pub(crate) fn iter_mut(&mut self) -> std::slice::IterMut<'_, App> {
        self.slots.iter_mut()
    }
}

/// Read access to every slot (forgotten ones included), by slot order.
impl<App> Deref for AppTable<App> {
    type Target = IdVec<AppId, App>;

    fn deref(&self) -> &Self::Target {
        &self.slots
    }
}

impl<App> Index<AppId> for AppTable<App> {
    type Output = App;

    #[inline]
    fn index(&self, id: AppId) -> &App {
        &self.slots[id]
    }
}

impl<App> IndexMut<AppId> for AppTable<App> {
    #[inline]
    fn index_mut(&mut self, id: AppId) -> &mut App {
        &mut self.slots[id]
    }
}

impl<App> Index<usize> for AppTable<App> {
    type Output = App;

    #[inline]
    fn index(&self, slot: usize) -> &App {
        &self.slots[slot]
    }
}

impl<App> IndexMut<usize> for AppTable<App> {
    #[inline]
    fn index_mut(&mut self, slot: usize) -> &mut App {
        &mut self.slots[slot]
    }
}

impl<'a, App> IntoIterator for &'a AppTable<App> {
    type Item = &'a App;
    type IntoIter = std::slice::Iter<'a, App>;

    fn into_iter(self) -> Self::IntoIter {
        self.slots.iter()
    }
}

impl<'a, App> IntoIterator for &'a mut AppTable<App> {
    type Item = &'a mut App;
    type IntoIter = std::slice::IterMut<'a, App>;

    fn into_iter(self) -> Self::IntoIter {
        self.slots.iter_mut()
    }
}
