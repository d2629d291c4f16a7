//! The Capacity Scheduler's auditor: every incremental aggregate (queue used, reserved,
//! pending and AM usage per partition, users' usage and counts, applications' usage) is
//! recomputed from the containers, reservations and asks and compared.

use std::collections::BTreeMap;

use fairloom_model::Resource;

use super::state::CsUser;
use super::CapacityScheduler;
use crate::audit::{check, Mismatch};

/// One queue's aggregates in one partition, recomputed.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FreshPart {
    pub used: Resource,
    pub reserved: Resource,
    pub pending: Resource,
    pub am_used: Resource,
    pub usage_ratio: f32,
    pub active_used: Resource,
}

pub(crate) struct Fresh {
    /// By queue, then partition.
    pub parts: Vec<Vec<FreshPart>>,
    pub users: Vec<BTreeMap<String, CsUser>>,
    pub active_users: Vec<u32>,
}

impl CapacityScheduler {
    /// The aggregates as they follow from the applications alone.
    pub(crate) fn recompute(&self) -> Fresh {
        let nparts = self.nparts();
        let mut parts = vec![vec![FreshPart::default(); nparts]; self.queues.len()];
        let mut users: Vec<BTreeMap<String, CsUser>> = vec![BTreeMap::new(); self.queues.len()];
        for a in self.apps.iter().filter(|a| a.is_alive()) {
            let Some(leaf) = a.queue else { continue };
            let u = users[leaf.index()].entry(a.user.clone()).or_insert_with(|| {
                let mut fresh = CsUser::new(&a.user, nparts);
                // The drift a same-queue move left is part of the user's count (it is not
                // derived from the applications).
                let live = &self.queues[leaf].users;
                if let Some(slot) = live.slot(&a.user) {
                    fresh.used_drift = live.at(slot).used_drift.clone();
                    for (used, drift) in fresh.used.iter_mut().zip(&fresh.used_drift) {
                        used.add_assign(*drift);
                    }
                }
                fresh
            });
            if a.users_active {
                u.asking_apps += 1;
            }
            if a.activated {
                u.active_apps += 1;
                u.am_used[a.am_partition.index()].add_assign(a.am_resource);
            } else {
                u.pending_apps += 1;
            }
            for (p, user_used) in u.used.iter_mut().enumerate() {
                // The queues count what the containers hold, not the application's drift.
                let used = a.used[p].saturating_sub(a.used_drift[p]).saturating_add(a.reserved[p]);
                user_used.add_assign(used);
                for q in self.path_to_root(leaf) {
                    let f = &mut parts[q.index()][p];
                    f.used.add_assign(used);
                    f.reserved.add_assign(a.reserved[p]);
                    f.pending.add_assign(a.pending[p]);
                }
            }
            if a.activated {
                parts[leaf.index()][a.am_partition.index()].am_used.add_assign(a.am_resource);
            }
        }
        let mut active_users = vec![0u32; self.queues.len()];
        for (i, q) in self.queues.iter().enumerate() {
            for (part, live) in parts[i].iter_mut().zip(&q.parts) {
                part.usage_ratio = live.usage_ratio_drift;
            }
        }
        for (i, users) in users.iter_mut().enumerate() {
            for u in users.values_mut() {
                for (p, part) in parts[i].iter_mut().enumerate() {
                    let total = self.cluster.partitions[p].total;
                    u.ratio[p] = super::apps::share_of(&self.calc, &u.used[p], &total);
                    part.usage_ratio += u.ratio[p];
                    if u.is_active() {
                        part.active_used.add_assign(u.used[p]);
                    }
                }
                active_users[i] += u32::from(u.is_active());
            }
        }
        Fresh { parts, users, active_users }
    }

    /// Every mismatch between an incremental aggregate and its recomputed value.
    pub(crate) fn audit(&self) -> Vec<Mismatch> {
        let mut out = Vec::new();
        let asks = self.apps.iter().flat_map(|a| a.requests.iter().flat_map(|r| r.locations.keys().copied()));
        self.cluster.audit(&mut out, asks);
        let nparts = self.nparts();
        let mut app_used = vec![vec![Resource::none(); nparts]; self.apps.len()];
        let mut app_count = vec![0usize; self.apps.len()];
        for c in self.cluster.containers.iter().filter(|c| c.alive) {
            let p = self.cluster.node(c.node).partition;
            app_used[c.app.index()][p.index()].add_assign(c.resource);
            app_count[c.app.index()] += 1;
        }
        for (i, a) in self.apps.iter().enumerate().filter(|(_, a)| !a.forgotten) {
            for (used, drift) in app_used[i].iter_mut().zip(&a.used_drift) {
                used.add_assign(*drift);
            }
            check(
                &mut out,
                || format!("app {} used", a.name),
                a.used.iter().map(|u| u.get()).collect::<Vec<_>>(),
                app_used[i].clone(),
            );
            let total = app_used[i].iter().fold(Resource::none(), |acc, r| acc.saturating_add(*r));
            check(&mut out, || format!("app {} usage", a.name), a.usage.get(), total);
            check(&mut out, || format!("app {} live containers", a.name), a.live.len(), app_count[i]);
            // Only an alive application that asks for something makes its user active.
            let may_be_active = a.is_alive() && a.queue.is_some() && a.has_pending();
            check(
                &mut out,
                || format!("app {} makes its user active", a.name),
                a.users_active,
                a.users_active && may_be_active,
            );
            let mut pending = vec![Resource::none(); nparts];
            for r in &a.requests {
                if let Some(any) = r.any {
                    pending[r.label.index()].add_assign(any.capability.times(any.count.max(0) as i64));
                }
            }
            check(&mut out, || format!("app {} pending", a.name), &a.pending, &pending);
            let mut reserved = vec![Resource::none(); nparts];
            for h in &a.reservations {
                reserved[h.partition.index()].add_assign(h.resource);
                let holds = self.cluster.node(h.node).reservation.is_some_and(|r| r.app == a.id);
                check(
                    &mut out,
                    || format!("app {} reservation on {}", a.name, self.cluster.node(h.node).name),
                    holds,
                    true,
                );
            }
            check(&mut out, || format!("app {} reserved", a.name), &a.reserved, &reserved);
            if let Some(q) = a.queue.filter(|_| a.is_alive()) {
                let named = self.q(q).users.slot(&a.user);
                check(&mut out, || format!("app {} user slot", a.name), named, Some(a.user_slot));
                let listed = if a.activated { &self.q(q).active } else { &self.q(q).waiting };
                check(
                    &mut out,
                    || format!("app {} listed in {}", a.name, self.q(q).name),
                    listed.contains(&a.id),
                    true,
                );
            }
        }
        let fresh = self.recompute();
        for (i, q) in self.queues.iter().enumerate().filter(|(_, q)| !q.removed) {
            for (p, part) in q.parts.iter().enumerate() {
                let f = &fresh.parts[i][p];
                let label = &self.cluster.partitions[p].name;
                check(&mut out, || format!("queue {} used [{label}]", q.name), part.used.get(), f.used);
                check(&mut out, || format!("queue {} reserved [{label}]", q.name), part.reserved, f.reserved);
                check(&mut out, || format!("queue {} pending [{label}]", q.name), part.pending, f.pending);
                check(&mut out, || format!("queue {} AM used [{label}]", q.name), part.am_used, f.am_used);
                check(
                    &mut out,
                    || format!("queue {} active users' usage [{label}]", q.name),
                    part.active_used,
                    f.active_used,
                );
                // A float kept by deltas, as YARN keeps it: equal within rounding.
                let drift = (part.usage_ratio - f.usage_ratio).abs() > 1e-3 * f.usage_ratio.abs().max(1.0);
                check(&mut out, || format!("queue {} usage ratio [{label}]", q.name), drift, false);
            }
            check(&mut out, || format!("queue {} users", q.name), &q.users.to_map(), &fresh.users[i]);
            // A user leaves its leaf with its last application: slots are held by users present.
            check(&mut out, || format!("queue {} user slots held", q.name), q.users.held(), fresh.users[i].len());
            check(&mut out, || format!("queue {} active users", q.name), q.active_users, fresh.active_users[i]);
        }
        let (children, apps) = self.fresh_orders();
        for (parent, p, sorted) in children {
            let kept: Vec<_> = self.q(parent).parts[p.index()].members.iter().map(|k| k.id).collect();
            let reserving: Vec<_> = self.q(parent).parts[p.index()].reserving.iter().map(|k| k.id).collect();
            let fresh_reserving: Vec<_> = sorted.iter().copied().filter(|&c| self.may_unreserve(c, p)).collect();
            check(&mut out, || format!("queue {} order of children [{}]", self.q(parent).name, p.0), kept, sorted);
            let what = || format!("queue {} reserving children [{}]", self.q(parent).name, p.0);
            check(&mut out, what, reserving, fresh_reserving);
        }
        for (leaf, p, sorted) in apps {
            let kept: Vec<_> = self.q(leaf).parts[p.index()].apps.iter().map(|k| k.app).collect();
            check(&mut out, || format!("queue {} order of apps [{}]", self.q(leaf).name, p.0), kept, sorted);
        }
        out
    }
}
