//! An application's reservations under the Capacity Scheduler: making one, giving one back,
//! and the order YARN's maps of them iterate in (which reservation continue-looking gives back,
//! which ones the preemption policy drops first).

use fairloom_model::{Millis, Resource};

use super::state::HeldReservation;
use super::CapacityScheduler;
use crate::cluster::{hash_order, Reservation};
use crate::ids::{AppId, NodeId};

impl CapacityScheduler {
    /// Hold `node` for `app`'s request at `priority`: it counts as used by the queue and the
    /// user, and as reserved, but takes nothing from the node.
    pub(crate) fn reserve(&mut self, app: AppId, node: NodeId, priority: i32, resource: Resource, now: Millis) {
        let p = self.cluster.node(node).partition;
        let a = &mut self.apps[app];
        let seq = a.next_container_seq;
        a.next_container_seq += 1;
        a.reserved[p.index()].add_assign(resource);
        a.reservations.push(HeldReservation { node, priority, resource, partition: p, since: now });
        let held = a.reservations.iter().filter(|r| r.priority == priority).count();
        match a.reservation_peaks.iter_mut().find(|(k, _)| *k == priority) {
            Some((_, peak)) => *peak = (*peak).max(held),
            None => a.reservation_peaks.push((priority, held)),
        }
        self.cluster.nodes[node].reservation = Some(Reservation { app, priority, resource, seq });
        self.reset_re_reservations(app, priority);
        self.charge(app, p, resource, true, true);
        self.resort_due(app);
        self.counters.reservations_made += 1;
    }

    /// The app's reservations in the order YARN's `getReservedContainers` lists them: its
    /// `HashMap<SchedulerRequestKey, HashMap<NodeId, RMContainer>>`, keys by bucket then by
    /// their first reservation, and within a key by the node id's bucket in a table sized by
    /// the key's peak (see `reservation_peaks`), then in the order they were made. Indices into
    /// `reservations`.
    pub(crate) fn reservations_in_yarn_order(&self, app: AppId) -> Vec<usize> {
        let a = &self.apps[app];
        let mut keys: Vec<i32> = Vec::new();
        for h in &a.reservations {
            if !keys.contains(&h.priority) {
                keys.push(h.priority);
            }
        }
        let outer = hash_order::hash_map_capacity(keys.len());
        let inner = |priority: i32| {
            let held = a.reservations.iter().filter(|h| h.priority == priority).count();
            let peak = a.reservation_peaks.iter().find(|(k, _)| *k == priority).map_or(0, |&(_, n)| n);
            hash_order::hash_map_capacity(peak.max(held))
        };
        let mut order: Vec<usize> = (0..a.reservations.len()).collect();
        order.sort_by_cached_key(|&i| {
            let h = &a.reservations[i];
            let key_at = keys.iter().position(|&k| k == h.priority).unwrap_or(0);
            (
                hash_order::bucket(hash_order::request_key_hash(h.priority), outer),
                key_at,
                hash_order::bucket(self.cluster.node(h.node).yarn_hash, inner(h.priority)),
                i,
            )
        });
        order
    }

    /// YARN counts re-reservations per request key from its last new reservation or
    /// unreservation there (`resetReReservations`); an allocation leaves the count alone.
    fn reset_re_reservations(&mut self, app: AppId, priority: i32) {
        if let Some(idx) = self.apps[app].request(priority) {
            self.apps[app].requests[idx].re_reservations = 0;
        }
    }

    /// Drop `app`'s reservation on `node`: given back, a release as YARN's `completedContainer`
    /// counts one.
    pub(crate) fn unreserve(&mut self, app: AppId, node: NodeId) {
        self.drop_reservation(app, node);
        if self.apps[app].is_alive() {
            self.resort_due(app);
        }
    }

    /// Drop `app`'s reservation on `node` for the container that serves it: no release of
    /// its own (YARN turns the reserved container into the allocated one).
    pub(crate) fn drop_reservation(&mut self, app: AppId, node: NodeId) {
        let n = &mut self.cluster.nodes[node];
        if n.reservation.is_some_and(|r| r.app == app) {
            n.reservation = None;
            self.counters.reservations_released += 1;
        }
        let a = &mut self.apps[app];
        let Some(i) = a.reservations.iter().position(|r| r.node == node) else { return };
        let held = a.reservations.remove(i);
        // An emptied map goes (YARN removes the key), so the next one starts small again.
        if !a.reservations.iter().any(|r| r.priority == held.priority) {
            a.reservation_peaks.retain(|(k, _)| *k != held.priority);
        }
        a.reserved[held.partition.index()].sub_assign(held.resource);
        self.reset_re_reservations(app, held.priority);
        let a = &self.apps[app];
        if a.queue.is_some() && a.is_alive() {
            self.charge(app, held.partition, held.resource, false, true);
        }
    }
}
