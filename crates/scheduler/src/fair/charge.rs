//! Usage changes only here. An application's usage and its queues' (the leaf and every
//! ancestor) are [`Usage`] values, which no code outside this module can change: a container
//! that starts or ends, and an application that moves, go through [`FairScheduler::charge`]
//! and [`FairScheduler::charge_path`], so "a queue's usage is the sum of its applications'"
//! (checked by the audit) cannot be broken by a stray assignment elsewhere.

use fairloom_model::Resource;

use super::FairScheduler;
use crate::ids::{AppId, QueueId};

/// A usage: read as a [`Resource`], changed only by this module.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct Usage(Resource);

impl Usage {
    pub fn get(self) -> Resource {
        self.0
    }
}

impl std::ops::Deref for Usage {
    type Target = Resource;

    #[inline]
    fn deref(&self) -> &Resource {
        &self.0
    }
}

impl FairScheduler {
    /// A container of `r` started (`add`) or ended for `app`: its usage and its queue path's.
    pub(crate) fn charge(&mut self, app: AppId, r: Resource, add: bool) {
        let a = &mut self.apps[app];
        change(&mut a.usage, r, add);
        if let Some(q) = a.queue {
            self.charge_path(q, r, add);
        }
    }

    /// Add (or take) `r` to the usage of `leaf` and every ancestor: an application's whole
    /// usage moving between queues, or [`charge`](Self::charge)'s path.
    pub(crate) fn charge_path(&mut self, leaf: QueueId, r: Resource, add: bool) {
        let mut q = Some(leaf);
        while let Some(id) = q {
            let queue = &mut self.queues[id];
            change(&mut queue.usage, r, add);
            q = queue.parent;
        }
    }
}

fn change(u: &mut Usage, r: Resource, add: bool) {
    if add {
        u.0.add_assign(r);
    } else {
        u.0.sub_assign(r);
    }
}
