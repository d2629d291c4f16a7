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
