//! An application's asks under the Capacity Scheduler: `allocate()`'s asks by priority and
//! resource name, the pending they add to the application, its queue path and its user, and
//! which users they make active (YARN's `AppSchedulingInfo` and `UsersManager`).

use fairloom_model::{Resource, ANY};

use super::state::{CsRequest, LocalityAsk};
use super::CapacityScheduler;
use crate::driver::{check_new_request_keys, Ask, SchedulerError};
use crate::ids::{AppId, PartitionId, QueueId};

/// What moving pending touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moved {
    Nothing,
    /// Only the application (not activated: its queue does not count it).
    App,
    /// The queue path from `leaf`; `app_flip`: the app started or stopped asking there.
    Path {
        leaf: QueueId,
        app_flip: bool,
    },
}

impl CapacityScheduler {
    /// YARN `allocate()` asks: each sets the outstanding ask at (priority, resource name),
    /// capability included.
    pub(crate) fn set_asks(&mut self, app: AppId, asks: &[Ask]) -> Result<(), SchedulerError> {
        let a = &self.apps[app];
        if !a.is_alive() {
            return Err(SchedulerError::AppNotAlive(a.name.clone()));
        }
        let leaf = a.queue.expect("an alive application has a queue");
        let mut resolved = Vec::with_capacity(asks.len());
        for ask in asks {
            if ask.num_containers < 0 {
                return Err(SchedulerError::InvalidRequest(format!(
                    "negative container count {} at priority {}",
                    ask.num_containers, ask.priority
                )));
            }
            let label = if ask.resource_name == ANY {
                let explicit = ask.node_label.as_deref().filter(|l| !l.is_empty());
                match explicit {
                    Some(l) => self.label_for(leaf, Some(l)).map_err(SchedulerError::InvalidRequest)?,
                    None => self.apps[app].default_label,
                }
            } else {
                PartitionId::DEFAULT
            };
            resolved.push((ask, self.normalize(leaf, ask.capability), label));
        }
        let held = &self.apps[app];
        check_new_request_keys(held.requests.len(), asks, |p| held.request(p).is_some())?;
        let mut cleared: Vec<i32> = Vec::new();
        for (ask, capability, label) in resolved {
            let value = LocalityAsk { capability, count: ask.num_containers, relax: ask.relax_locality };
            let idx = match self.apps[app].request(ask.priority) {
                Some(i) => i,
                None => {
                    let a = &mut self.apps[app];
                    let at = a.requests.partition_point(|r| r.priority <= ask.priority);
                    a.requests.insert(
                        at,
                        CsRequest {
                            priority: ask.priority,
                            any: None,
                            label: a.default_label,
                            locations: Default::default(),
                            scheduling_opportunities: 0,
                            missed_non_partitioned: 0,
                            re_reservations: 0,
                        },
                    );
                    at
                }
            };
            if ask.resource_name == ANY {
                let was_asking = self.apps[app].requests[idx].any.is_some_and(|a| a.count > 0);
                self.set_any(app, idx, Some(value), label);
                if !was_asking && ask.num_containers > 0 {
                    self.key_starts_asking(app);
                }
                if ask.num_containers <= 0 {
                    cleared.push(ask.priority);
                } else {
                    cleared.retain(|&p| p != ask.priority);
                }
            } else {
                // The entry holds its name until it goes (allocated down to nothing, or the
                // app finishes).
                let locations = &mut self.apps[app].requests[idx].locations;
                let l = self.cluster.locations.hold_for(locations, &ask.resource_name);
                locations.insert(l, value);
            }
        }
        // A `*` ask of nothing ends the key in YARN (AppSchedulingInfo.updatePendingResources
        // drops its placement allocator): every name at that priority goes with it, so a
        // later ask starts afresh, and counts its unique locations afresh (an off-switch ask
        // alone waits for no delay).
        for priority in cleared {
            if let Some(idx) = self.apps[app].request(priority) {
                let label = self.apps[app].requests[idx].label;
                self.set_any(app, idx, None, label);
                let names = std::mem::take(&mut self.apps[app].requests[idx].locations);
                self.cluster.locations.release_all(names.into_keys());
            }
        }
        // `demandUpdated`, once the AM container has come (YARN's allocate skips it while
        // the attempt waits for it): size-based weight sorts by demand.
        let a = &self.apps[app];
        if self.size_based(leaf) && (a.am_running || a.unmanaged_am) {
            self.resort_due(app);
        }
        self.headroom_asked(app);
        Ok(())
    }

    /// One of the application's keys starts asking: YARN's `UsersManager.activateApplication`
    /// makes its user active through it, unless the user has no activated application in
    /// the queue yet (then the application does not count until a later key starts asking,
    /// even once it is activated: YARN's activation of an application does not add it).
    pub(crate) fn key_starts_asking(&mut self, app: AppId) {
        let a = &self.apps[app];
        let Some(leaf) = a.queue.filter(|_| a.is_alive() && !a.users_active) else { return };
        if self.q(leaf).users.at(a.user_slot).active_apps == 0 || !a.has_pending() {
            return;
        }
        self.apps[app].users_active = true;
        self.user_asks(app, leaf, true);
    }

    /// YARN's `checkForDeactivation`: an application that asks for nothing any more stops
    /// making its user active. Checked once an update is whole (a `*` ask is replaced by
    /// taking the old out and putting the new in).
    fn check_deactivation(&mut self, app: AppId) {
        let a = &self.apps[app];
        if !a.users_active || a.has_pending() {
            return;
        }
        let Some(leaf) = a.queue else { return };
        self.apps[app].users_active = false;
        self.user_asks(app, leaf, false);
    }

    /// Replace the `*` ask of request `idx` (and the partition it asks for), moving pending.
    pub(crate) fn set_any(&mut self, app: AppId, idx: usize, value: Option<LocalityAsk>, label: PartitionId) {
        let r = &self.apps[app].requests[idx];
        let old = r.any.map_or(Resource::none(), |a| a.capability.times(a.count.max(0) as i64));
        let old_label = r.label;
        let new = value.map_or(Resource::none(), |a| a.capability.times(a.count.max(0) as i64));
        let r = &mut self.apps[app].requests[idx];
        r.any = value;
        r.label = label;
        let a = self.move_pending(app, old_label, old, false);
        let b = self.move_pending(app, label, new, true);
        self.check_deactivation(app);
        self.rekey_after_pending(app, old_label, a);
        if label != old_label || a != b {
            self.rekey_after_pending(app, label, b);
        }
    }

    /// Add (or take) `r` to the app's pending in partition `p`; it also counts in its queue
    /// path, and whether an activated app asks at all makes its user active.
    pub(crate) fn shift_pending(&mut self, app: AppId, p: PartitionId, r: Resource, add: bool) {
        let moved = self.move_pending(app, p, r, add);
        self.check_deactivation(app);
        self.rekey_after_pending(app, p, moved);
    }

    /// Re-key after [`Self::move_pending`] moved something: the app's place when its asking
    /// in `p` started or stopped, the queue path in `p`.
    fn rekey_after_pending(&mut self, app: AppId, p: PartitionId, moved: Moved) {
        let Moved::Path { leaf, app_flip } = moved else { return };
        if app_flip {
            self.refresh_app_keys(app);
        }
        self.refresh_path(leaf, p);
    }

    /// The bookkeeping of [`Self::shift_pending`], without re-keying.
    fn move_pending(&mut self, app: AppId, p: PartitionId, r: Resource, add: bool) -> Moved {
        if r.is_none() {
            return Moved::Nothing;
        }
        let a = &mut self.apps[app];
        let had = a.pending[p.index()].any_positive();
        if add {
            a.pending[p.index()].add_assign(r);
        } else {
            a.pending[p.index()].sub_assign(r);
        }
        let has = a.pending[p.index()].any_positive();
        // Every accepted application's asks count in its queue path, activated or not, as
        // YARN's AppSchedulingInfo counts them (queue.incPendingResource).
        let Some(leaf) = a.queue.filter(|_| a.is_alive()) else { return Moved::App };
        let activated = a.activated;
        let mut q = Some(leaf);
        while let Some(id) = q {
            let part = &mut self.queues[id].parts[p.index()];
            if add {
                part.pending.add_assign(r);
            } else {
                part.pending.sub_assign(r);
            }
            q = self.queues[id].parent;
        }
        Moved::Path { leaf, app_flip: activated && had != has }
    }

    /// Fair ordering with size-based weight orders by demand, which pending changes.
    fn size_based(&self, leaf: QueueId) -> bool {
        matches!(
            self.queues[leaf].settings.app_ordering,
            fairloom_config::capacity::AppOrdering::Fair { size_based_weight: true }
        )
    }

    /// One of the user's applications starts (or stops) making the user active (see
    /// `key_starts_asking`): the user becomes active with its first such app and inactive
    /// with its last.
    pub(crate) fn user_asks(&mut self, app: AppId, leaf: QueueId, asking: bool) {
        let q = &mut self.queues[leaf];
        let u = q.users.at_mut(self.apps[app].user_slot);
        let was_active = u.is_active();
        if asking {
            u.asking_apps += 1;
        } else {
            u.asking_apps -= 1;
        }
        if was_active != u.is_active() {
            let used = u.used.clone();
            for (part, r) in q.parts.iter_mut().zip(used) {
                if asking {
                    part.active_used.add_assign(r);
                } else {
                    part.active_used.sub_assign(r);
                }
            }
            if asking {
                q.active_users += 1;
            } else {
                q.active_users -= 1;
            }
            for p in 0..self.nparts() {
                self.unhold(leaf, PartitionId(p as u32));
            }
            self.users_changed(leaf);
        }
    }
}
