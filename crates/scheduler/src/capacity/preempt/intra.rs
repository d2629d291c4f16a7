//! Intra-queue preemption (docs/capacity.md, "Proportional preemption"): inside an under-served leaf, applications of
//! higher priority (or users below their user limit) take from lower-priority applications
//! (or users above their limit), within `max-allowable-limit` of the guarantee. AM
//! containers are never taken.

use fairloom_config::preemption::IntraQueueOrder;
use fairloom_model::Resource;

use super::fifo::{deduct_selected, preemption_order, Need, Taker};
use super::snapshot::{Candidate, Snapshot, TempApp};
use crate::capacity::CapacityScheduler;
use crate::ids::{AppId, PartitionId, QueueId};

/// One application's figures in one partition.
#[derive(Debug, Clone)]
struct IntraApp {
    app: AppId,
    user: String,
    priority: i32,
    id: u32,
    used: Resource,
    am: Resource,
    pending: Resource,
    selected: Resource,
    ideal: Resource,
    to_preempt: Resource,
    from_others: Resource,
    actually: Resource,
}

#[derive(Debug, Clone)]
struct IntraUser {
    name: String,
    used: Resource,
    am: Resource,
    /// The scheduler's limit less the user's AM resource.
    limit: Resource,
    ideal: Resource,
    selected: Resource,
    quota_done: bool,
}

impl IntraUser {
    fn used_less_am(&self) -> Resource {
        self.used.saturating_sub(self.am)
    }
}

/// One leaf's intra-queue figures in one partition: apps from lowest priority up, users.
type Plan = ((QueueId, PartitionId), Vec<IntraApp>, Vec<IntraUser>);

/// Any major type exactly zero (`isAnyMajorResourceZero`).
fn any_zero(calc: &crate::capacity::calc::Calc, r: &Resource) -> bool {
    if calc.is_dominant() {
        (0..calc.types).any(|i| r.get(i) == 0)
    } else {
        r.memory() == 0
    }
}

fn am_in(app: &TempApp, p: PartitionId) -> Resource {
    app.containers
        .iter()
        .filter(|c| c.is_am && c.partition == p)
        .fold(Resource::none(), |acc, c| acc.saturating_add(c.resource))
}

pub fn select(s: &CapacityScheduler, snap: &mut Snapshot, taker: &mut Taker<'_>, selector: usize) {
    let cfg = &s.policy;
    let calc = *taker.calc;
    let cluster = taker.cluster;
    let none = Resource::none();
    let userlimit_first = cfg.intra_queue_order == IntraQueueOrder::UserLimitFirst;
    // Per (leaf, partition): apps from lowest priority to highest, with their figures.
    let mut plans: Vec<Plan> = Vec::new();
    for (leaf, p) in snap.under_served.clone() {
        let t = snap.q(p, leaf);
        if !t.leaf {
            continue;
        }
        let reassignable = t.used.saturating_sub(t.actually);
        if t.used_capacity < cfg.intra_queue_minimum_threshold {
            continue;
        }
        let leaf_apps = &snap.apps[leaf];
        // AM resources of the running applications are frozen.
        let mut users: Vec<IntraUser> = Vec::new();
        let mut am_total = none;
        for a in leaf_apps.activated() {
            let am = am_in(a, p);
            am_total.add_assign(am);
            match users.iter_mut().find(|u| u.name == a.user) {
                Some(u) => u.am.add_assign(am),
                None => users.push(IntraUser {
                    name: a.user.clone(),
                    used: none,
                    am,
                    limit: none,
                    ideal: none,
                    selected: none,
                    quota_done: false,
                }),
            }
        }
        let mut reassignable = reassignable.saturating_sub(am_total);
        if leaf_apps.apps.len() == 1 {
            continue;
        }
        let mut apps: Vec<IntraApp> = leaf_apps
            .apps
            .iter()
            .map(|a| IntraApp {
                app: a.app,
                user: a.user.clone(),
                priority: a.priority,
                id: a.id,
                used: a.used[p.index()],
                am: am_in(a, p),
                pending: a.pending[p.index()],
                selected: none,
                ideal: none,
                to_preempt: none,
                from_others: none,
                actually: none,
            })
            .collect();
        for a in &apps {
            if !users.iter().any(|u| u.name == a.user) {
                users.push(IntraUser {
                    name: a.user.clone(),
                    used: none,
                    am: none,
                    limit: none,
                    ideal: none,
                    selected: none,
                    quota_done: false,
                });
            }
        }
        for u in &mut users {
            let tu = leaf_apps.user(&u.name);
            u.used = tu.map_or(none, |t| t.used[p.index()]);
            u.limit = tu.map_or(none, |t| t.limit[p.index()]).saturating_sub(u.am);
        }
        // Highest priority first: what each app would get of the reassignable resource.
        apps.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.id.cmp(&b.id)));
        for a in apps.iter_mut() {
            if calc.le(&cluster, &reassignable, &none) || any_zero(&calc, &reassignable) {
                continue;
            }
            let u = users.iter_mut().find(|u| u.name == a.user).expect("every app's user is listed");
            for pick in taker.selection.picked.iter().filter(|x| x.candidate.app == a.app && x.candidate.label == p) {
                a.selected.add_assign(pick.candidate.resource);
                u.selected.add_assign(pick.candidate.resource);
            }
            let wanted = a.used.saturating_sub(a.am).saturating_add(a.pending).saturating_sub(a.selected);
            if !calc.lt(&cluster, &u.ideal, &u.limit) {
                continue;
            }
            let ideal = calc.min(&cluster, wanted, u.limit.saturating_sub(u.ideal));
            a.ideal = calc.min(&cluster, reassignable, ideal);
            u.ideal.add_assign(a.ideal);
            let kept = a.used.saturating_sub(a.am).saturating_sub(a.selected);
            if calc.gt(&cluster, &a.ideal, &kept) {
                a.from_others = a.ideal.saturating_sub(kept);
            }
            reassignable = reassignable.sub_non_negative(a.ideal);
        }
        // Lowest priority first: what each app may give, within the queue's allowance.
        apps.reverse();
        let mut allowance = t.guaranteed.multiply_truncate(cfg.intra_queue_max_allowable_limit as f64);
        allowance =
            if calc.gt(&cluster, &allowance, &t.actually) { allowance.saturating_sub(t.actually) } else { none };
        let mut limit = calc.min(&cluster, allowance, *taker.budget);
        for a in apps.iter_mut() {
            if calc.le(&cluster, &limit, &none) || calc.le(&cluster, &a.used, &none) {
                continue;
            }
            let mut give = a.used.saturating_sub(a.ideal).sub_non_negative(a.selected).sub_non_negative(a.am);
            if userlimit_first {
                give = give.sub_non_negative(snap.minimum_allocation);
            }
            a.to_preempt = calc.min(&cluster, calc.max(&cluster, give, none), limit);
            limit = limit.sub_non_negative(a.to_preempt);
        }
        pair_demands(&calc, &cluster, &mut apps, &mut users, userlimit_first);
        plans.push(((leaf, p), apps, users));
    }
    // Deduct what earlier selectors took, from the queues and from every app of a queue.
    deduct_selected(snap, &calc, taker.selection);
    for pick in taker.selection.picked.clone() {
        for ((leaf, p), apps, _) in plans.iter_mut() {
            if *leaf == pick.queue && *p == pick.candidate.partition {
                for a in apps.iter_mut() {
                    if calc.gt(&cluster, &a.actually, &pick.candidate.resource) {
                        a.actually.sub_assign(pick.candidate.resource);
                    }
                    a.actually = calc.max(&cluster, a.actually, none);
                }
            }
        }
    }
    for p in snap.partitions().collect::<Vec<_>>() {
        for ((leaf, part), apps, users) in plans.iter() {
            if *part != p || snap.q(PartitionId::DEFAULT, *leaf).intra_disabled {
                continue;
            }
            let total = apps.iter().fold(none, |acc, a| acc.saturating_add(a.actually));
            let mut need: Need = [(p, total)].into_iter().collect();
            let mut rolling: Vec<(String, Resource)> = users.iter().map(|u| (u.name.clone(), u.used)).collect();
            let leaf_apps = snap.apps[leaf].apps.clone();
            for a in apps.iter().filter(|a| !a.actually.is_none()) {
                let Some(app) = leaf_apps.iter().find(|x| x.app == a.app) else { continue };
                let user = users.iter().find(|u| u.name == a.user).expect("every app's user is listed");
                let user_limit = user.limit.saturating_add(user.am);
                let mut live: Vec<Candidate> = app.containers.clone();
                preemption_order(&mut live);
                let used = &mut rolling.iter_mut().find(|(n, _)| *n == a.user).expect("listed").1;
                for c in &live {
                    if need.is_empty() {
                        break;
                    }
                    if taker.selection.contains(c) || c.is_am {
                        continue;
                    }
                    // Under user-limit-first, a user is not taken below its limit.
                    if userlimit_first && calc.le(&cluster, &used.saturating_sub(c.resource), &user_limit) {
                        break;
                    }
                    if taker.try_take(c, &mut need, *leaf, selector) && userlimit_first {
                        used.sub_assign(c.resource);
                    }
                }
            }
        }
    }
}

/// `validateOutSameAppPriorityFromDemand`: each app that needs resource from others takes
/// it from lower-priority apps (from the lowest up), skipping same-user apps of equal or
/// higher priority and, under user-limit-first, users not over their limit.
fn pair_demands(
    calc: &crate::capacity::calc::Calc,
    cluster: &Resource,
    apps: &mut [IntraApp],
    users: &mut [IntraUser],
    userlimit_first: bool,
) {
    let none = Resource::none();
    for h in (0..apps.len()).rev() {
        if !calc.gt(cluster, &apps[h].from_others, &none) {
            continue;
        }
        for l in 0..apps.len() {
            if !calc.gt(cluster, &apps[l].to_preempt, &none) {
                continue;
            }
            let same_user = apps[h].user == apps[l].user;
            if same_user && apps[l].priority >= apps[h].priority {
                continue;
            }
            if calc.le(cluster, &apps[l].to_preempt, &apps[l].actually) || apps[h].from_others.is_none() {
                continue;
            }
            let u = users.iter_mut().find(|u| u.name == apps[l].user).expect("every app's user is listed");
            let reached = calc.gt(cluster, &u.used_less_am(), &u.limit);
            if !same_user && !reached && userlimit_first {
                continue;
            }
            let mut offer = apps[l].to_preempt.saturating_sub(apps[l].actually);
            if !same_user && apps[l].priority == apps[h].priority && reached {
                let mut delta = u.used_less_am().saturating_sub(u.selected).saturating_sub(u.limit);
                if u.quota_done {
                    delta = none;
                }
                if calc.lt(cluster, &delta, &offer) {
                    u.quota_done = true;
                    offer = delta;
                }
            }
            if calc.gt(cluster, &offer, &none) {
                let take = calc.min(cluster, apps[h].from_others, offer);
                apps[h].from_others = apps[h].from_others.saturating_sub(take);
                apps[l].actually = apps[l].actually.saturating_add(take);
            }
        }
    }
}
