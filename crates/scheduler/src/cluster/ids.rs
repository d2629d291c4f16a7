//! Dense indices into the scheduler's arenas.

macro_rules! dense_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub u32);

        impl $name {
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

dense_id!(
    /// A queue in the queue arena.
    QueueId
);
/// An application (attempt): its slot in the application arena and its number in
/// submission order. A slot is reused once its application is forgotten; a number never is,
/// and ids compare by it, so any order of ids is submission order (YARN's order of
/// ApplicationIds) however the slots were reused, and an id kept past its application's
/// forgetting names no other one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct AppId {
    pub seq: u32,
    pub slot: u32,
}

impl AppId {
    #[inline]
    pub fn index(self) -> usize {
        self.slot as usize
    }

    /// The `n`th application of a scheduler that has forgotten none: its slot is its number.
    pub fn nth(n: u32) -> Self {
        Self { seq: n, slot: n }
    }
}
dense_id!(
    /// A node in the node arena.
    NodeId
);
dense_id!(
    /// A live or finished container in the container arena.
    ContainerId
);
/// A host or rack name, interned. Numbered in the order names were first held and never
/// reused (64 bits: an AM naming a million new hosts a second would run through 32 in an
/// hour), so the order of ids is the order names came, however many were let go between.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct LocationId(pub u64);
dense_id!(
    /// A node partition (node label); 0 is the default partition.
    PartitionId
);

impl PartitionId {
    pub const DEFAULT: Self = Self(0);
}

/// An id that names a slot of an arena.
pub trait Slot: Copy {
    fn slot(self) -> usize;
}

macro_rules! slot {
    ($($name:ident),*) => {
        $(impl Slot for $name {
            #[inline]
            fn slot(self) -> usize {
                self.index()
            }
        })*
    };
}
slot!(QueueId, AppId, NodeId, ContainerId, PartitionId);

/// An arena indexed by one kind of id: `apps[id]` reads the application `id` names, and an
/// id of another kind does not compile. A raw slot (`usize`) still indexes, for the walks
/// over every slot; everything else of a `Vec` (length, iteration, `push`) is there through
/// `Deref`.
///
/// ```
/// use fairloom_scheduler::ids::{AppId, IdVec};
/// let mut apps: IdVec<AppId, &str> = vec!["first", "second"].into();
/// apps[AppId::nth(1)] = "the second";
/// assert_eq!((apps[AppId::nth(0)], apps[1], apps.len()), ("first", "the second", 2));
/// ```
///
/// An id of another kind is refused:
///
/// ```compile_fail
/// use fairloom_scheduler::ids::{AppId, IdVec, QueueId};
/// let apps: IdVec<AppId, &str> = vec!["first"].into();
/// let _ = apps[QueueId(0)];
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct IdVec<I, T> {
    items: Vec<T>,
    id: std::marker::PhantomData<fn() -> I>,
}

impl<I, T> IdVec<I, T> {
    pub fn new() -> Self {
        Self { items: Vec::new(), id: std::marker::PhantomData }
    }
}

impl<I, T> Default for IdVec<I, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<I, T> From<Vec<T>> for IdVec<I, T> {
    fn from(items: Vec<T>) -> Self {
        Self { items, id: std::marker::PhantomData }
    }
}

impl<I, T> FromIterator<T> for IdVec<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(iter: It) -> Self {
        Vec::from_iter(iter).into()
    }
}

impl<I, T> std::ops::Deref for IdVec<I, T> {
    type Target = Vec<T>;
    #[inline]
    fn deref(&self) -> &Vec<T> {
        &self.items
    }
}

impl<I, T> std::ops::DerefMut for IdVec<I, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.items
    }
}

impl<I: Slot, T> std::ops::Index<I> for IdVec<I, T> {
    type Output = T;
    #[inline]
    fn index(&self, id: I) -> &T {
        &self.items[id.slot()]
    }
}

impl<I: Slot, T> std::ops::IndexMut<I> for IdVec<I, T> {
    #[inline]
    fn index_mut(&mut self, id: I) -> &mut T {
        &mut self.items[id.slot()]
    }
}

impl<I: Slot, T> std::ops::Index<&I> for IdVec<I, T> {
    type Output = T;
    #[inline]
    fn index(&self, id: &I) -> &T {
        &self.items[id.slot()]
    }
}

impl<I, T> std::ops::Index<usize> for IdVec<I, T> {
    type Output = T;
    #[inline]
    fn index(&self, slot: usize) -> &T {
        &self.items[slot]
    }
}

impl<I, T> std::ops::IndexMut<usize> for IdVec<I, T> {
    #[inline]
    fn index_mut(&mut self, slot: usize) -> &mut T {
        &mut self.items[slot]
    }
}

impl<'a, I, T> IntoIterator for &'a IdVec<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a, I, T> IntoIterator for &'a mut IdVec<I, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter_mut()
    }
}
