//! The Fair Scheduler's queues as an owned part: their slots, the name index and the creation
//! stamps (YARN's `QueueManager` bookkeeping). What the rest of the scheduler may not break
//! is kept here, behind private fields:
//!
//! - the index names exactly the queues not removed, each at its slot;
//! - a free slot is a removed queue's that no application names any more, and only such a
//!   slot is reused;
//! - a child's slot is above its parent's (bottom-up passes walk the slots down);
//! - each parent's YARN child list is its live children in creation-stamp order.
//!
//! A queue's other fields (shares, usage, members, settings) are the scheduler's to change
//! through [`QueueTree`]'s indexing; the tree's shape changes only here.

use std::collections::{BTreeSet, HashMap};

use super::state::Queue;
use crate::ids::{IdVec, QueueId};

#[derive(Debug, Clone, Default)]
pub(crate) struct QueueTree {
    /// By slot; a removed queue stays in its slot until a new queue takes it.
    slots: IdVec<QueueId, Queue>,
    free: BTreeSet<u32>,
    index: HashMap<String, QueueId>,
    /// The last creation stamp handed out (`Queue::created`).
    created: u64,
}

impl QueueTree {
    /// The live queue named `name`.
    pub(crate) fn id(&self, name: &str) -> Option<QueueId> {
        self.index.get(name).copied()
    }

    /// Slots, removed queues' included.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Every slot's queue in slot order, removed ones included.
    pub(crate) fn slots(&self) -> std::slice::Iter<'_, Queue> {
        self.slots.iter()
    }

    pub(crate) fn slots_mut(&mut self) -> std::slice::IterMut<'_, Queue> {
        self.slots.iter_mut()
    }

    /// The live queues in slot order.
    pub(crate) fn live(&self) -> impl Iterator<Item = (QueueId, &Queue)> {
        self.slots.iter().enumerate().filter(|(_, q)| !q.removed).map(|(i, q)| (QueueId(i as u32), q))
    }

    /// Free slots, lowest first.
    pub(crate) fn free_slots(&self) -> impl Iterator<Item = QueueId> + '_ {
        self.free.iter().map(|&s| QueueId(s))
    }

    /// The stamp the next queue created will get.
    pub(crate) fn next_stamp_value(&self) -> u64 {
        self.created + 1
    }

    fn next_stamp(&mut self) -> u64 {
        self.created += 1;
        self.created
    }

    /// Add `queue` (its `parent` set, its name not taken) under its parent: stamped as created
    /// now, in the lowest free slot above the parent's or a new one, named in the index and
    /// last in its parent's child lists.
    pub(crate) fn insert(&mut self, mut queue: Queue) -> QueueId {
        debug_assert!(!self.index.contains_key(&queue.name), "{} exists", queue.name);
        let above = queue.parent.map_or(0, |p| p.0 + 1);
        let free = self.free.range(above..).next().copied();
        let id = QueueId(free.unwrap_or(self.slots.len() as u32));
        queue.created = self.next_stamp();
        if let Some(slot) = free {
            self.free.remove(&slot);
        }
        let (name, parent) = (queue.name.clone(), queue.parent);
        crate::cluster::put_in_slot(&mut self.slots, id.0, queue);
        if let Some(p) = parent {
            self.slots[p].children.push(id);
            self.slots[p].yarn_children.push(id);
        }
        self.index.insert(name, id);
        id
    }

    /// Take a queue and its subtree out of the tree: out of the index and their parents'
    /// lists, marked removed, their slots freed once no application names them.
    pub(crate) fn remove_subtree(&mut self, id: QueueId) {
        let children = std::mem::take(&mut self.slots[id].children);
        for c in children {
            self.remove_subtree(c);
        }
        let q = &mut self.slots[id];
        q.removed = true;
        let parent = q.parent;
        self.index.remove(&q.name);
        if let Some(p) = parent {
            self.slots[p].children.retain(|&c| c != id);
            self.slots[p].yarn_children.retain(|&c| c != id);
        }
        self.free_if_unused(id);
    }

    /// A removed queue no application names any more gives its slot up.
    pub(crate) fn free_if_unused(&mut self, id: QueueId) {
        let q = &mut self.slots[id];
        if q.removed && q.app_refs == 0 {
            // Nothing of it is read again: its lists go now, its slot at the next new queue.
            q.members = Default::default();
            q.runnable_apps = Vec::new();
            q.non_runnable_apps = Vec::new();
            q.share_signature = Vec::new();
            self.free.insert(id.0);
        }
    }

    /// Stamp `id` as created now (YARN replaces a converted queue with a new one).
    pub(crate) fn stamp_now(&mut self, id: QueueId) {
        let stamp = self.next_stamp();
        self.slots[id].created = stamp;
        if let Some(p) = self.slots[id].parent {
            self.resort_yarn_children(p);
        }
    }

    /// Stamp `order` again from `from` on, in that order (the queues stamped `from` on, all
    /// of them): YARN created them in an order of its own.
    pub(crate) fn restamp(&mut self, from: u64, order: &[QueueId]) {
        self.created = from - 1;
        let mut parents = Vec::new();
        for &id in order {
            let stamp = self.next_stamp();
            self.slots[id].created = stamp;
            parents.extend(self.slots[id].parent);
        }
        parents.sort_unstable();
        parents.dedup();
        for p in parents {
            self.resort_yarn_children(p);
        }
    }

    /// Put a parent's children back in creation-stamp order after stamps changed.
    fn resort_yarn_children(&mut self, parent: QueueId) {
        let mut children = std::mem::take(&mut self.slots[parent].yarn_children);
        children.sort_by_key(|id| self.slots[*id].created);
        self.slots[parent].yarn_children = children;
    }
}

impl std::ops::Index<QueueId> for QueueTree {
    type Output = Queue;

    #[inline]
    fn index(&self, id: QueueId) -> &Queue {
        &self.slots[id]
    }
}

impl std::ops::IndexMut<QueueId> for QueueTree {
    #[inline]
    fn index_mut(&mut self, id: QueueId) -> &mut Queue {
        &mut self.slots[id]
    }
}
