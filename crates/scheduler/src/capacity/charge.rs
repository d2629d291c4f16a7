//! The Capacity Scheduler's usage changes only here. Queues' usage by partition
//! (`QueuePart::used`) and applications' (`CsApp::usage`, `CsApp::used`) are [`Usage`]
//! values that take this module's proof to change: containers starting and ending, what an
//! application is charged beyond its containers, and the aggregates rebuilt after a refresh
//! go through the functions below, and no stray assignment elsewhere compiles.

use fairloom_model::Resource;

use super::apps::share_of;
use super::CapacityScheduler;
use crate::ids::{AppId, PartitionId};

/// The proof that a change of usage is this module's: nothing else can make one.
pub struct Charging(());

const PROOF: Charging = Charging(());

/// A Capacity Scheduler usage: read as a [`Resource`], changed only by this module.
pub type Usage = crate::cluster::usage::Usage<Charging>;

/// A usage recomputed from scratch (a refresh's rebuilt aggregates).
pub(crate) fn set_rebuilt(u: &mut Usage, r: Resource) {
    u.set(r, &PROOF);
}

impl CapacityScheduler {
    /// Charge (or release) `r` in partition `p` to the app's leaf path and user; `reserved`
    /// also moves the queues' reserved resource.
    pub(crate) fn charge(&mut self, app: AppId, p: PartitionId, r: Resource, add: bool, reserved: bool) {
        let leaf = self.apps[app].queue.expect("a charged application has a queue");
        let mut q = Some(leaf);
        while let Some(id) = q {
            let part = &mut self.queues[id].parts[p.index()];
            if add {
                part.used.change(r, true, &PROOF);
                if reserved {
                    part.reserved.add_assign(r);
                }
            } else {
                part.used.change(r, false, &PROOF);
                if reserved {
                    part.reserved.sub_assign(r);
                }
            }
            q = self.queues[id].parent;
        }
        self.users_changed(leaf);
        let total = self.cluster.partitions[p.index()].total;
        let calc = self.calc;
        let queue = &mut self.queues[leaf];
        let u = queue.users.at_mut(self.apps[app].user_slot);
        if add {
            u.used[p.index()].add_assign(r);
        } else {
            u.used[p.index()].sub_assign(r);
        }
        let ratio = share_of(&calc, &u.used[p.index()], &total);
        let part = &mut queue.parts[p.index()];
        part.forget_user_limit();
        part.usage_ratio += ratio - u.ratio[p.index()];
        u.ratio[p.index()] = ratio;
        if u.is_active() {
            if add {
                part.active_used.add_assign(r);
            } else {
                part.active_used.sub_assign(r);
            }
        }
        self.refresh_path(leaf, p);
        if p == PartitionId::DEFAULT {
            for other in (1..self.nparts()).map(|i| PartitionId(i as u32)) {
                // Which children hold a reservation is read from the default partition in
                // every partition's order.
                if reserved {
                    self.refresh_path(leaf, other);
                }
                // Continue-looking reads the user's default-partition usage and the app's
                // default-partition reservation in every partition's user check.
                if self.conf.reservations_continue_looking {
                    self.release_hold(leaf, other);
                }
            }
        }
    }

    /// `app` alone holds `r` more (or less) in partition `p`: its total and its partition's.
    pub(crate) fn charge_app(&mut self, app: AppId, p: PartitionId, r: Resource, add: bool) {
        let a = &mut self.apps[app];
        a.usage.change(r, add, &PROOF);
        a.used[p.index()].change(r, add, &PROOF);
    }

    /// What `app` was charged beyond its containers goes with its attempt.
    pub(crate) fn discharge_drift(&mut self, app: AppId) {
        let a = &mut self.apps[app];
        for (used, drift) in a.used.iter_mut().zip(&mut a.used_drift) {
            used.change(*drift, false, &PROOF);
            a.usage.change(*drift, false, &PROOF);
            *drift = Resource::none();
        }
    }
}
