//! The Fair Scheduler's auditor: recompute every incremental aggregate from scratch and compare.

use fairloom_model::Resource;

use super::state::AppState;
use super::FairScheduler;
use crate::audit::{check, Mismatch};
use crate::ids::QueueId;

impl FairScheduler {
    /// Every mismatch between an incremental aggregate and its value recomputed from the
    /// live containers, requests and apps. Empty when the state is consistent.
    pub(crate) fn audit(&self) -> Vec<Mismatch> {
        let mut out = Vec::new();
        let mut app_usage = vec![Resource::none(); self.apps.len()];
        let mut app_count = vec![0usize; self.apps.len()];
        for c in self.cluster.containers.iter().filter(|c| c.alive) {
            app_usage[c.app.index()].add_assign(c.resource);
            app_count[c.app.index()] += 1;
        }
        let mut queue_usage = vec![Resource::none(); self.queues.len()];
        let mut queue_am = vec![Resource::none(); self.queues.len()];
        let mut queue_runnable = vec![0u32; self.queues.len()];
        for (i, a) in self.apps.iter().enumerate().filter(|(_, a)| !a.forgotten) {
            let id = a.id;
            check(&mut out, || format!("app {} usage", a.name), a.usage.get(), app_usage[i]);
            check(&mut out, || format!("app {} live containers", a.name), a.live.len(), app_count[i]);
            let listed = self.app_containers(id).filter(|c| self.cluster.containers[c].app == id).count();
            check(&mut out, || format!("app {} container list", a.name), listed, app_count[i]);
            let pending = a
                .requests
                .iter()
                .fold(Resource::none(), |acc, e| acc.saturating_add(e.capability.times(e.any_count() as i64)));
            check(&mut out, || format!("app {} pending", a.name), a.pending, pending);
            if matches!(a.state, AppState::Finished | AppState::Rejected) {
                continue;
            }
            let Some(q) = a.queue else { continue };
            for p in self.path_to_root(q) {
                queue_usage[p.index()].add_assign(a.usage.get());
                if a.runnable {
                    queue_runnable[p.index()] += 1;
                }
            }
            if a.runnable && a.am_running {
                queue_am[q.index()].add_assign(a.am_resource);
            }
            let listed = if a.runnable {
                self.q(q).runnable_apps.contains(&id)
            } else {
                self.q(q).non_runnable_apps.contains(&id)
            };
            check(&mut out, || format!("app {} listed in {}", a.name, self.q(q).name), listed, true);
        }
        for (i, q) in self.queues.slots().enumerate().filter(|(_, q)| !q.removed) {
            let id = QueueId(i as u32);
            check(&mut out, || format!("queue {} usage", q.name), q.usage.get(), queue_usage[i]);
            check(&mut out, || format!("queue {} runnable apps", q.name), q.runnable_count, queue_runnable[i]);
            if q.leaf {
                let expected = queue_am[i].saturating_add(q.am_drift);
                check(&mut out, || format!("queue {} AM usage", q.name), q.am_usage, expected);
            }
            check(&mut out, || format!("queue {} index", q.name), self.queue_id(&q.name), Some(id));
            let bounded = self.is_bounded(&q.max_share);
            check(&mut out, || format!("queue {} max share bounded", q.name), q.max_share_bounded, bounded);
            let path_bounded = self.path_to_root(id).any(|p| self.is_bounded(&self.max_share(p)));
            check(&mut out, || format!("queue {} path max share bounded", q.name), q.path_bounded, path_bounded);
        }
        self.audit_order(&mut out);
        let asks = self.apps.iter().flat_map(|a| a.requests.iter().flat_map(|e| e.locations.keys().copied()));
        self.cluster.audit(&mut out, asks);
        let mut user_runnable: std::collections::HashMap<&str, i32> = std::collections::HashMap::new();
        for a in self.apps.iter().filter(|a| a.runnable && a.is_alive()) {
            *user_runnable.entry(a.user.as_str()).or_default() += 1;
        }
        let mut refs = vec![0u32; self.queues.len()];
        for a in self.apps.iter().filter(|a| !a.forgotten) {
            if let Some(q) = a.queue {
                refs[q.index()] += 1;
            }
        }
        for (q, n) in self.queues.slots().zip(refs) {
            check(&mut out, || format!("queue {} applications naming it", q.name), q.app_refs, n);
        }
        for slot in self.queues.free_slots() {
            let q = &self.queues[slot];
            check(&mut out, || format!("free queue slot {} unused", slot.0), q.removed && q.app_refs == 0, true);
        }
        for (user, state) in &self.users {
            let runnable = user_runnable.get(user.as_str()).copied().unwrap_or(0);
            check(&mut out, || format!("user {user} runnable apps"), state.runnable, runnable);
            let idle = state.runnable == 0 && state.waiting.is_empty();
            check(&mut out, || format!("user {user} kept with nothing running or waiting"), idle, false);
        }
        out
    }

    /// Each ordered set holds exactly the keys its members store, sorted; live apps' tie
    /// ranks order them by start time, then id string.
    fn audit_order(&self, out: &mut Vec<Mismatch>) {
        let mut expected = vec![Vec::new(); self.queues.len()];
        for a in self.apps.iter() {
            if let (Some(k), Some(q)) = (a.order_key, a.queue) {
                expected[q.index()].push(k);
            }
        }
        for q in self.queues.slots() {
            if let (Some(k), Some(p)) = (q.order_key, q.parent) {
                expected[p.index()].push(k);
            }
        }
        for (q, mut keys) in self.queues.slots().zip(expected) {
            keys.sort();
            let held: Vec<_> = q.members.iter().copied().collect();
            check(out, || format!("queue {} ordered members", q.name), held, keys);
        }
        let mut live: Vec<(i64, u64, usize)> = (self.apps.iter().enumerate())
            .filter(|(_, a)| a.is_alive())
            .map(|(i, a)| (a.start_time, super::order::lexicographic_digits(u64::from(a.yarn_id.id)), i))
            .collect();
        live.sort_unstable();
        let ranks: Vec<u32> = live.iter().map(|&(_, _, i)| self.apps[i].tie_rank).collect();
        let increasing = ranks.windows(2).all(|w| w[0] < w[1]);
        check(out, || "apps' tie ranks in start time and id order".to_string(), increasing, true);
    }
}
