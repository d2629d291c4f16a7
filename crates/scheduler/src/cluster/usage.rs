//! Usage that changes only where its scheduler charges it. A [`Usage`] reads as a
//! [`Resource`] anywhere, but changing it takes a proof `K` that only one module can make
//! (each scheduler's `charge` module): any other change of an application's or a queue's
//! usage does not compile, so "usage changes only through charge" is the compiler's to hold.

use std::marker::PhantomData;

use fairloom_model::Resource;

#[repr(transparent)]
pub struct Usage<K>(Resource, PhantomData<K>);

impl<K> Usage<K> {
    #[inline]
    pub fn get(&self) -> Resource {
        self.0
    }

    /// Add (or take) `r`, with the charging module's proof.
    #[inline]
    pub(crate) fn change(&mut self, r: Resource, add: bool, _proof: &K) {
        if add {
            self.0.add_assign(r);
        } else {
            self.0.sub_assign(r);
        }
    }

    /// Set it outright (an aggregate recomputed from scratch), with the proof.
    pub(crate) fn set(&mut self, r: Resource, _proof: &K) {
        self.0 = r;
    }
}

impl<K> std::ops::Deref for Usage<K> {
    type Target = Resource;

    #[inline]
    fn deref(&self) -> &Resource {
        &self.0
    }
}

impl<K> Default for Usage<K> {
    fn default() -> Self {
        Self(Resource::none(), PhantomData)
    }
}

impl<K> Clone for Usage<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Usage<K> {}

impl<K> PartialEq for Usage<K> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<K> std::fmt::Debug for Usage<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}
