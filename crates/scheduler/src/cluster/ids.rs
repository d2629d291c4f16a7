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
dense_id!(
    /// An application (attempt) in the application arena.
    AppId
);
dense_id!(
    /// A node in the node arena.
    NodeId
);
dense_id!(
    /// A live or finished container in the container arena.
    ContainerId
);
dense_id!(
    /// A host or rack name, interned.
    LocationId
);
dense_id!(
    /// A node partition (node label); 0 is the default partition.
    PartitionId
);

impl PartitionId {
    pub const DEFAULT: Self = Self(0);
}
