//! The Fair Scheduler's usage changes only here. An application's usage and its queues'
//! (the leaf and every ancestor) are [`Usage`] values that take this module's proof to
//! change: a container that starts or ends, and an application that moves, go through
//! [`FairScheduler::charge`] and [`FairScheduler::charge_path`], so "a queue's usage is the
//! sum of its applications'" (checked by the audit) cannot be broken by a stray assignment
//! elsewhere.

use fairloom_model::Resource;

use super::FairScheduler;
use crate::ids::{AppId, QueueId};

/// The proof that a change of usage is this module's: nothing else can make one.
pub struct Charging(());

const PROOF: Charging = Charging(());

/// A Fair Scheduler usage: read as a [`Resource`], changed only by this module.
pub type Usage = crate::cluster::usage::Usage<Charging>;

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
    u.change(r, add, &PROOF);
}
