//! Fair Scheduler preemption, as YARN does it since 2.9 (docs/preemption.md): starvation per app
//! (fair share) and per leaf (min share, attributed to apps), victims found on one node per
//! starved container, marked, killed after `waitTimeBeforeKill`, and the freed room offered
//! to the starved app first. Everything runs inside `update(now)`: no thread, no timer.

use fairloom_model::{Millis, Resource};

use super::ask_order::{Place, VisitedAsks};
use super::policy::Calculator;
use super::starved_queue::StarvedQueue;
use super::FairScheduler;
use crate::ids::{AppId, ContainerId, LocationId, NodeId, QueueId};

/// Exit status of a container killed by preemption (YARN's ContainerExitStatus.PREEMPTED).
pub const PREEMPTED: i32 = -102;

/// A kill waiting for its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingKill {
    pub at: Millis,
    pub container: ContainerId,
    /// The slot's generation when it was marked: a container that ended and whose slot a
    /// newer one took is not the one to kill.
    pub generation: u32,
    /// Marked for fair-share starvation (else min-share).
    pub for_fair_share: bool,
}

/// A starved application and the figures that make it starved.
#[derive(Debug, Clone, PartialEq)]
pub struct StarvedApp {
    pub app: AppId,
    pub name: String,
    pub queue: String,
    pub usage: Resource,
    pub fair_share: Resource,
    pub demand: Resource,
    pub threshold: f32,
    /// min(fair share × threshold, demand): what the app is owed.
    pub fair_demand: Resource,
    pub fair_share_timeout_ms: Option<i64>,
    /// How long usage has been below the fair demand (since it last was not).
    pub below_fair_demand_for_ms: Millis,
    pub fairshare_starvation: Resource,
    pub queue_min_share: Resource,
    pub min_share_timeout_ms: Option<i64>,
    pub minshare_starvation: Resource,
}

/// A container preemption would take, from whom, for whom.
#[derive(Debug, Clone, PartialEq)]
pub struct Victim {
    pub container: ContainerId,
    /// `APP/N`.
    pub name: String,
    pub app: String,
    pub queue: String,
    pub node: String,
    pub resource: Resource,
    pub is_am: bool,
    pub for_app: String,
    /// The victim app's usage once everything marked so far is gone: never below its fair share.
    pub app_usage_after: Resource,
    pub app_fair_share: Resource,
    /// The starved request it frees room for: priority, size and where it asks.
    pub request: String,
    /// When the request's own nodes would have cost AM containers and its relaxed locality
    /// sent the search to every other node (YARN-7655): what each would have cost.
    pub relaxed: Option<String>,
}

/// A container marked for a starved app, and for which of its requests.
struct Marked {
    node: NodeId,
    container: ContainerId,
    request: String,
    relaxed: Option<String>,
}

/// What preemption would do now, and why.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreemptionPlan {
    pub gate_open: bool,
    pub gate: String,
    pub starved: Vec<StarvedApp>,
    pub victims: Vec<Victim>,
    /// Apps that want more but are not starved, and why.
    pub not_starved: Vec<(String, String)>,
    /// By starved app: its requests in the order preemption walked them, and what became of
    /// each (served, not needed, too large for what is left).
    pub requests: std::collections::BTreeMap<String, Vec<String>>,
}

/// One starved request: its size, how many, and the nodes that can serve it.
struct StarvedRequest {
    priority: i32,
    capability: Resource,
    count: i32,
    nodes: Vec<NodeId>,
    relax: bool,
    any: bool,
    /// Where it asks (`node n1`, `rack /r1`, `*`), for explanations.
    at: String,
}

/// Preemption counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreemptionCounters {
    pub starved_app_checks: u64,
    /// Containers marked for an app starved for its fair share / for its queue's min share
    /// (an app starved for both counts as fair share).
    pub marked_for_fair_share: u64,
    pub marked_for_min_share: u64,
    /// Kills and memory freed, by the reason their container was marked.
    pub killed_for_fair_share: u64,
    pub killed_for_min_share: u64,
    pub memory_freed_for_fair_share_mb: i64,
    pub memory_freed_for_min_share_mb: i64,
    pub containers_marked: u64,
    pub containers_killed: u64,
    pub memory_freed_mb: i64,
    pub vcores_freed: i64,
}

impl FairScheduler {
    /// Both gates: preemption on, and utilization (the larger of memory and vcores) strictly
    /// above the threshold.
    pub(crate) fn preemption_gate(&self) -> bool {
        self.props.preemption && (self.props.preemption_utilization_threshold as f64) < self.cluster_utilization()
    }

    /// The larger of memory and vcore utilization of the cluster.
    fn cluster_utilization(&self) -> f64 {
        let used = self.q(super::tree::ROOT).usage;
        let ratio = |u: i64, c: i64| if c > 0 { u as f64 / c as f64 } else { 0.0 };
        ratio(used.memory(), self.cluster.total.memory()).max(ratio(used.vcores(), self.cluster.total.vcores()))
    }

    /// What the next update's preemption would do at `now`, and why, without doing it: the
    /// same update runs on a copy of the state and records what it finds.
    pub fn preemption_dry_run(&self, now: Millis) -> PreemptionPlan {
        let mut copy = self.clone();
        let mut plan =
            PreemptionPlan { gate_open: copy.preemption_gate(), gate: copy.gate_explanation(), ..Default::default() };
        copy.update_with(now, Some(&mut plan));
        // Every app that wants more and is not starved, with the reason.
        for (id, a) in copy.apps() {
            if !a.is_alive() || !a.runnable || a.pending.is_none() || plan.starved.iter().any(|s| s.app == id) {
                continue;
            }
            let why = copy.why_not_starved(id, now, plan.gate_open, &plan.gate);
            plan.not_starved.push((a.name.clone(), why));
        }
        plan
    }

    fn why_not_starved(&self, app: AppId, now: Millis, gate_open: bool, gate: &str) -> String {
        if !gate_open {
            return gate.to_string();
        }
        let a = &self.apps[app];
        let Some(queue) = a.queue else { return "no queue".to_string() };
        if now < a.next_starvation_check {
            return format!(
                "recently given resources by preemption: not checked again before {} ms",
                a.next_starvation_check
            );
        }
        let s = &self.q(queue).settings;
        let owed = a.fair_share.multiply_truncate(s.fair_share_preemption_threshold as f64).componentwise_min(a.demand);
        let show = crate::reason::ShowResource;
        let calc = Calculator::of(self.q(queue).policy);
        if !calc.below_share(&self.cluster.total, &a.usage, &owed, self.types) {
            return format!(
                "usage {} is not below what it is owed, {} (fair share {} × threshold {}, capped by demand)",
                show(&a.usage),
                show(&owed),
                show(&a.fair_share),
                s.fair_share_preemption_threshold
            );
        }
        match s.fair_share_preemption_timeout_ms {
            None => format!(
                "below what it is owed ({}), but {} has no fairSharePreemptionTimeout (never preempts for fair share)",
                show(&owed),
                self.q(queue).name
            ),
            Some(t) => format!(
                "below what it is owed ({}) for {} ms; the timeout is {t} ms",
                show(&owed),
                now - a.last_time_at_fair_share
            ),
        }
    }

    fn gate_explanation(&self) -> String {
        let utilization = self.cluster_utilization();
        let threshold = self.props.preemption_utilization_threshold;
        match (self.props.preemption, (threshold as f64) < utilization) {
            (false, _) => "preemption is off (yarn.scheduler.fair.preemption=false): no starvation is tracked".to_string(),
            (true, false) => format!(
                "cluster utilization {:.1}% (the larger of memory and vcores) is not above the threshold {:.1}%: no starvation is tracked",
                utilization * 100.0,
                threshold * 100.0
            ),
            (true, true) => format!("cluster utilization {:.1}% is above the threshold {:.1}%", utilization * 100.0, threshold * 100.0),
        }
    }

    /// The update's preemption part: starvation, then identify and act for each starved app,
    /// in the order YARN's starved-app queue gives them (see `starved_queue`), then the kills
    /// whose wait has expired. With a `plan`, it records instead of killing.
    pub(crate) fn preempt_with(&mut self, now: Millis, mut plan: Option<&mut PreemptionPlan>) {
        if self.preemption_gate() {
            let mut queue = StarvedQueue::default();
            for leaf in self.leaves_in_yarn_order() {
                self.update_starved_apps(leaf, now, &mut queue);
            }
            let starved = queue.drain(|a| self.starvation(a));
            if let Some(plan) = plan.as_deref_mut() {
                for &app in &starved {
                    plan.starved.push(self.explain_starved(app, now));
                }
            }
            for app in starved {
                self.preemption.starved_app_checks += 1;
                let walk = plan.as_deref_mut().map(|p| p.requests.entry(self.apps[app].name.clone()).or_default());
                let victims = self.identify_and_mark(app, now, walk);
                if let Some(plan) = plan.as_deref_mut() {
                    for m in victims {
                        plan.victims.push(self.explain_victim(app, m));
                    }
                }
                // YARN means to wait 4 heartbeats more (10 passes with continuous scheduling),
                // but FairScheduler.serviceInit builds its preemption thread before the
                // heartbeat interval is read, so the heartbeats count as 0 ms.
                let alloc_delay =
                    if self.props.continuous_scheduling { 10 * self.props.continuous_scheduling_sleep_ms } else { 0 };
                let delay = self.props.wait_time_before_kill_ms
                    + alloc_delay
                    + self.props.wait_time_before_next_starvation_check_ms;
                self.apps[app].next_starvation_check = now.saturating_add(delay);
            }
        }
        if plan.is_none() {
            self.run_kills(now);
        }
    }

    /// The app's total starvation: fair-share plus attributed min-share starvation.
    pub fn starvation(&self, app: AppId) -> Resource {
        let a = &self.apps[app];
        a.fairshare_starvation.saturating_add(a.minshare_starvation)
    }

    /// YARN's `FSLeafQueue.updateStarvedApps`: each starved app is offered to `starved` as
    /// soon as its starvation is known, as YARN adds it to its queue.
    fn update_starved_apps(&mut self, leaf: QueueId, now: Millis, starved: &mut StarvedQueue) {
        let calc = Calculator::of(self.q(leaf).policy);
        let settings = self.q(leaf).settings.clone();
        // Apps with pending demand that are not in their post-preemption back-off, in the
        // leaf's order.
        let apps: Vec<AppId> =
            self.apps_with_demand(leaf).into_iter().filter(|&a| now >= self.apps[a].next_starvation_check).collect();
        let mut fair_total = Resource::none();
        for &a in &apps {
            let s = self.fairshare_starvation_of(a, &settings, calc, now);
            if s.is_none() {
                break;
            }
            starved.offer(a, |x| self.starvation(x));
            fair_total.add_assign(s);
        }
        // Min-share starvation of the leaf, less what its apps' fair-share starvation covers.
        let q = self.q(leaf);
        let deficit = settings.min_share.componentwise_min(q.demand).sub_non_negative(q.usage.get());
        if deficit.is_none() {
            self.q_mut(leaf).last_time_at_min_share = now;
        }
        let last = self.q(leaf).last_time_at_min_share;
        let timed_out = settings.min_share_preemption_timeout_ms.is_some_and(|t| now - last >= t);
        let mut pending = if timed_out { deficit } else { Resource::none() };
        pending = pending.sub_non_negative(fair_total);
        for &a in &apps {
            if pending.is_none() {
                self.apps[a].minshare_starvation = Resource::none();
                continue;
            }
            let app = &self.apps[a];
            let mut share = app.demand.saturating_sub(app.usage.get()).sub_non_negative(app.fairshare_starvation);
            // YARN's quirk, kept: an app wanting more than the remaining deficit is credited
            // its want less the deficit (YARN's FSLeafQueue.updateStarvedAppsMinshare).
            if calc.compare(&self.cluster.total, &share, &pending, self.types).is_gt() {
                share = share.sub_non_negative(pending);
                pending = Resource::none();
            } else {
                pending = pending.sub_non_negative(share);
            }
            self.apps[a].minshare_starvation = share;
            starved.offer(a, |x| self.starvation(x));
        }
    }

    fn fairshare_starvation_of(
        &mut self,
        a: AppId,
        s: &super::state::QueueSettings,
        calc: Calculator,
        now: Millis,
    ) -> Resource {
        let app = &self.apps[a];
        let threshold = app.fair_share.multiply_truncate(s.fair_share_preemption_threshold as f64);
        let fair_demand = threshold.componentwise_min(app.demand);
        let below = calc.below_share(&self.cluster.total, &app.usage, &fair_demand, self.types);
        let usage = app.usage.get();
        let app = &mut self.apps[a];
        if !below {
            app.last_time_at_fair_share = now;
        }
        let timed_out = s.fair_share_preemption_timeout_ms.is_some_and(|t| now - app.last_time_at_fair_share >= t);
        app.fairshare_starvation =
            if below && timed_out { fair_demand.sub_non_negative(usage) } else { Resource::none() };
        app.fairshare_starvation
    }

    /// For each container the starvation asks for: the cheapest set of victims on one node.
    /// Returns what was marked; with `walk`, also says what became of each starved request.
    fn identify_and_mark(&mut self, starved: AppId, now: Millis, mut walk: Option<&mut Vec<String>>) -> Vec<Marked> {
        let mut marked = Vec::new();
        let mut pending = self.starvation(starved);
        for request in self.starved_requests(starved) {
            let capability = request.capability;
            let describe = |n: i64| {
                let size = crate::reason::ShowResource(&capability);
                format!("priority {}, {n} × {size} at {}", request.priority, request.at)
            };
            if pending.is_none() {
                match walk.as_deref_mut() {
                    Some(w) => {
                        w.push(format!("{}: not needed, the starvation is covered", describe(request.count.into())))
                    }
                    None => break,
                }
                continue;
            }
            // How many containers of this size the starvation covers (memory, as YARN's
            // scheduler-wide calculator counts).
            let fit = if capability.memory() > 0 { pending.memory() / capability.memory() } else { 0 };
            let n = fit.min(request.count as i64);
            if n <= 0 {
                if let Some(w) = walk.as_deref_mut() {
                    w.push(if request.count <= 0 {
                        format!("{}: not served, it asks for none (as in YARN, it still hides the other locality levels of its priority and size)", describe(0))
                    } else {
                        format!(
                            "{}: not served, the {} of starvation left is less than one container",
                            describe(request.count.into()),
                            crate::reason::ShowResource(&pending)
                        )
                    });
                }
                continue;
            }
            pending = pending.sub_non_negative(capability.times(n));
            let explaining = walk.is_some();
            let described = match walk.as_deref_mut() {
                Some(w) => {
                    let d = describe(n);
                    w.push(format!("{d}: served"));
                    d
                }
                None => String::new(),
            };
            for _ in 0..n {
                let mut best = self.best_victims(capability, &request.nodes);
                let mut relaxed = None;
                // A request that may relax looks elsewhere when its own nodes would cost AMs. One
                // served in part relaxes whatever it asked: YARN rebuilds it with the short
                // ResourceRequest.newInstance, whose relaxLocality is true.
                let relax = request.relax || n < i64::from(request.count);
                if let Some((own, _, own_ams)) = best.as_ref().filter(|b| relax && !request.any && b.2 > 0) {
                    let (own, own_ams) = (*own, *own_ams);
                    let others: Vec<NodeId> = self
                        .cluster
                        .nodes_in_yarn_order()
                        .map(|(id, _)| id)
                        .filter(|id| !request.nodes.contains(id))
                        .collect();
                    let spare = self.best_victims(capability, &others).filter(|spare| spare.2 < own_ams);
                    let own_name = &self.cluster.nodes[own].name;
                    relaxed = explaining.then(|| match &spare {
                        Some((node, _, ams)) => format!(
                            "on {own_name} it would take {own_ams} AM container(s); the request relaxes locality, so every other node was searched and {} takes {ams} (YARN-7655)",
                            self.cluster.nodes[node].name
                        ),
                        None => format!(
                            "on {own_name} it takes {own_ams} AM container(s): the request relaxes locality, but no other node takes fewer (YARN-7655)"
                        ),
                    });
                    if spare.is_some() {
                        best = spare;
                    }
                }
                // Room that is free already (no victim needed) is not earmarked: YARN tracks a
                // preemption against a node only for containers it takes there.
                if let Some((node, victims, _)) = best.filter(|b| !b.1.is_empty()) {
                    self.mark(starved, node, &victims, now);
                    marked.extend(victims.iter().map(|&container| Marked {
                        node,
                        container,
                        request: described.clone(),
                        relaxed: relaxed.clone(),
                    }));
                }
            }
        }
        marked
    }

    /// The starved app's requests as YARN's `getStarvedResourceRequests` takes them: every
    /// ask in the order YARN holds them (see `ask_order`), the first of each (priority,
    /// capability) hiding its others at other locality levels. An ask the AM set to 0 still
    /// takes its turn and hides the others (YARN serves none of it). `*` searches every node
    /// in YARN's node tracker order (`ClusterNodeTracker.getAllNodes`), a rack its nodes in
    /// registration order (its per-rack list).
    fn starved_requests(&self, app: AppId) -> Vec<StarvedRequest> {
        let mut visited = VisitedAsks::default();
        let mut out = Vec::new();
        for held in self.asks_in_yarn_order(app) {
            let place = self.place_of(held.location);
            if !visited.visit(held.priority, held.capability, &place) {
                continue;
            }
            let (nodes, at) = match place {
                Place::Nowhere => continue,
                Place::Any => (self.cluster.nodes_in_yarn_order().map(|(id, _)| id).collect(), "*".to_string()),
                Place::Host { node, .. } => (vec![node], format!("node {}", self.cluster.nodes[node].name)),
                Place::Rack { rack, nodes } => (nodes, format!("rack {}", self.cluster.location_name(rack))),
            };
            out.push(StarvedRequest {
                priority: held.priority,
                capability: held.capability,
                count: held.count,
                nodes,
                relax: held.relax,
                any: held.location.is_none(),
                at,
            });
        }
        out
    }

    /// What an ask's name means now: `*`, a live node's host, a rack with live nodes, or nothing.
    fn place_of(&self, location: Option<LocationId>) -> Place {
        let Some(loc) = location else { return Place::Any };
        // A live node's host is held under its name.
        if let Some(node) = self.cluster.node_id(self.cluster.location_name(loc)) {
            return Place::Host { node, rack: self.cluster.node(node).rack };
        }
        let nodes: Vec<NodeId> = self.cluster.nodes().filter(|(_, n)| n.rack == loc).map(|(id, _)| id).collect();
        if nodes.is_empty() {
            Place::Nowhere
        } else {
            Place::Rack { rack: loc, nodes }
        }
    }

    fn explain_starved(&self, app: AppId, now: Millis) -> StarvedApp {
        let a = &self.apps[app];
        let queue = a.queue.expect("a starved app has a queue");
        let s = &self.q(queue).settings;
        StarvedApp {
            app,
            name: a.name.clone(),
            queue: self.q(queue).name.clone(),
            usage: a.usage.get(),
            fair_share: a.fair_share,
            demand: a.demand,
            threshold: s.fair_share_preemption_threshold,
            fair_demand: a
                .fair_share
                .multiply_truncate(s.fair_share_preemption_threshold as f64)
                .componentwise_min(a.demand),
            fair_share_timeout_ms: s.fair_share_preemption_timeout_ms,
            below_fair_demand_for_ms: now - a.last_time_at_fair_share,
            fairshare_starvation: a.fairshare_starvation,
            queue_min_share: s.min_share,
            min_share_timeout_ms: s.min_share_preemption_timeout_ms,
            minshare_starvation: a.minshare_starvation,
        }
    }

    fn explain_victim(&self, for_app: AppId, m: Marked) -> Victim {
        let (node, c) = (m.node, m.container);
        let container = &self.cluster.containers[c];
        let a = &self.apps[container.app];
        Victim {
            container: c,
            name: format!("{}/{}", a.name, container.seq),
            app: a.name.clone(),
            queue: a.queue.map_or_else(String::new, |q| self.q(q).name.clone()),
            node: self.cluster.nodes[node].name.clone(),
            resource: container.resource,
            is_am: container.is_am,
            for_app: self.apps[for_app].name.clone(),
            app_usage_after: a.usage.saturating_sub(a.marked_resource),
            app_fair_share: a.fair_share,
            request: m.request,
            relaxed: m.relaxed,
        }
    }

    /// Over every node: the victim set that frees `request` on that node with the fewest AM
    /// containers (the first node needing none ends the search).
    fn best_victims(&self, request: Resource, nodes: &[NodeId]) -> Option<(NodeId, Vec<ContainerId>, usize)> {
        let mut best: Option<(NodeId, Vec<ContainerId>, usize)> = None;
        let mut max_ams = usize::MAX;
        for &id in nodes {
            let n = &self.cluster.nodes[id];
            // The room free now, less what is promised (YARN's potential before any victim).
            let free = n.unallocated().sub_non_negative(self.promised_on(id));
            // Exact skip: every container already marked and the free room too small.
            if n.marked as usize == n.containers.len() && !request.fits_in(&free) {
                continue;
            }
            if let Some((victims, ams)) = self.victims_on(id, free, request, max_ams) {
                max_ams = ams;
                best = Some((id, victims, ams));
                if ams == 0 {
                    break;
                }
            }
        }
        best
    }

    /// Victims on one node, whose room not promised to anyone is `free`: non-AM containers
    /// first, AMs last; only from preemptable apps that stay at or above their fair share.
    /// `None` if the node cannot free `request` with fewer than `max_ams` AM containers.
    fn victims_on(
        &self,
        node: NodeId,
        free: Resource,
        request: Resource,
        max_ams: usize,
    ) -> Option<(Vec<ContainerId>, usize)> {
        let mut potential = free;
        // YARN's `getRunningContainersWithAMsAtTheEnd`: through the node's map of containers,
        // each non-AM put first and each AM last, so the non-AMs come in the reverse of the
        // map's order and the AMs in it; the ones already marked are left out.
        let in_map = self.cluster.node_containers_in_yarn_order(node);
        let unmarked = |c: &&ContainerId| !self.cluster.containers[**c].marked_for;
        let is_am = |c: &&ContainerId| self.cluster.containers[**c].is_am;
        let candidates: Vec<ContainerId> = (in_map.iter().rev().filter(|c| !is_am(c)))
            .chain(in_map.iter().filter(is_am))
            .filter(unmarked)
            .copied()
            .collect();
        let mut chosen = Vec::new();
        let mut considering: Vec<(AppId, Resource)> = Vec::new();
        let mut ams = 0;
        for c in candidates {
            let container = &self.cluster.containers[c];
            let app = container.app;
            let already = considering.iter().find(|(a, _)| *a == app).map_or(Resource::none(), |(_, r)| *r);
            if self.can_be_preempted(app, container.resource, already) {
                if container.is_am {
                    ams += 1;
                    if ams >= max_ams {
                        return None;
                    }
                }
                chosen.push(c);
                match considering.iter_mut().find(|(a, _)| *a == app) {
                    Some((_, r)) => r.add_assign(container.resource),
                    None => considering.push((app, container.resource)),
                }
                potential.add_assign(container.resource);
            }
            if request.fits_in(&potential) {
                return Some((chosen, ams));
            }
        }
        None
    }

    /// YARN's `canContainerBePreempted`: the app's queue allows it, and the app stays at or
    /// above its fair share without this container, what is already marked and what is
    /// being considered.
    fn can_be_preempted(&self, app: AppId, resource: Resource, considering: Resource) -> bool {
        let a = &self.apps[app];
        let Some(queue) = a.queue else { return false };
        if !self.q(queue).settings.allow_preemption_from || !a.is_alive() {
            return false;
        }
        let after = a.usage.saturating_sub(a.marked_resource).saturating_sub(resource).saturating_sub(considering);
        let calc = Calculator::of(self.q(queue).policy);
        !calc.below_share(&self.cluster.total, &after, &a.fair_share, self.types)
    }

    /// Earmark victims on `node` for `starved`, warn their apps, and schedule the kills.
    fn mark(&mut self, starved: AppId, node: NodeId, victims: &[ContainerId], now: Millis) {
        let for_fair_share = !self.apps[starved].fairshare_starvation.is_none();
        if for_fair_share {
            self.preemption.marked_for_fair_share += victims.len() as u64;
        } else {
            self.preemption.marked_for_min_share += victims.len() as u64;
        }
        let mut freed = Resource::none();
        for &c in victims {
            let container = &mut self.cluster.containers[c];
            container.marked_for = true;
            let (app, r) = (container.app, container.resource);
            self.cluster.nodes[node].marked += 1;
            freed.add_assign(r);
            let a = &mut self.apps[app];
            a.marked += 1;
            a.marked_resource.add_assign(r);
            self.preemption.containers_marked += 1;
            self.kills.push(PendingKill {
                at: now.saturating_add(self.props.wait_time_before_kill_ms),
                container: c,
                generation: self.cluster.container_gen[c.index()],
                for_fair_share,
            });
        }
        if freed.is_none() {
            return;
        }
        let list = &mut self.preempted_for[node.index()];
        match list.iter_mut().find(|(a, _)| *a == starved) {
            Some((_, r)) => r.add_assign(freed),
            None => list.push((starved, freed)),
        }
    }

    /// Kill the marked containers whose wait has expired (in marking order).
    pub(crate) fn run_kills(&mut self, now: Millis) {
        // In place: the waiting kills stay where they are (a partition into two new lists
        // moved every one of them at every update).
        let mut due = Vec::new();
        self.kills.retain(|k| {
            let now_due = k.at <= now;
            if now_due {
                due.push(*k);
            }
            !now_due
        });
        for k in due {
            let c = &self.cluster.containers[k.container];
            if !c.alive || !c.marked_for || self.cluster.container_gen[k.container.index()] != k.generation {
                continue;
            }
            let (app, r) = (c.app, c.resource);
            self.counters.decisions.killed(app, self.cluster.nodes[c.node].seq, r);
            self.finish_container(k.container, PREEMPTED);
            let a = &mut self.apps[app];
            a.preempted += 1;
            self.preemption.containers_killed += 1;
            self.preemption.memory_freed_mb += r.memory();
            self.preemption.vcores_freed += r.vcores();
            if k.for_fair_share {
                self.preemption.killed_for_fair_share += 1;
                self.preemption.memory_freed_for_fair_share_mb += r.memory();
            } else {
                self.preemption.killed_for_min_share += 1;
                self.preemption.memory_freed_for_min_share_mb += r.memory();
            }
        }
    }

    /// A container's preemption mark is dropped when it finishes (killed or otherwise).
    pub(crate) fn unmark(&mut self, container: ContainerId) {
        let c = &mut self.cluster.containers[container];
        if !c.marked_for {
            return;
        }
        c.marked_for = false;
        let (app, r, node) = (c.app, c.resource, c.node);
        self.cluster.nodes[node].marked -= 1;
        let a = &mut self.apps[app];
        a.marked = a.marked.saturating_sub(1);
        a.marked_resource.sub_assign(r);
    }

    /// Heartbeat, first step: room freed by preemption goes to the apps it was freed for, in
    /// the order they were first owed room here (FSSchedulerNode's LinkedHashMap), while they
    /// are still starved and alive. An app is served until what it is owed is met, nothing
    /// more fits, or it reserves. What an app is owed shrinks with every container it gets on
    /// this node, whichever walk allocates it ([`Self::preemption_fulfilled`]).
    pub(crate) fn assign_preempted(&mut self, node: NodeId, now: Millis, out: &mut Vec<crate::driver::Decision>) {
        self.cleanup_preempted_for(node);
        let list = self.preempted_for[node.index()].clone();
        for (app, amount) in list {
            let mut pending = amount;
            while !pending.is_none() && self.apps[app].is_alive() {
                match self.assign_app_for_preemption(app, node, now, out) {
                    Some(r) => pending = pending.sub_non_negative(r),
                    None => break,
                }
            }
        }
    }

    /// FSSchedulerNode.cleanupPreemptionList, run when a heartbeat reads the list: an app
    /// stopped, no longer starved, or with neither starvation left from the last update is
    /// owed nothing more here.
    fn cleanup_preempted_for(&mut self, node: NodeId) {
        let mut list = std::mem::take(&mut self.preempted_for[node.index()]);
        list.retain(|&(app, _)| {
            let a = &self.apps[app];
            a.is_alive()
                && self.is_starved(app)
                && !(a.fairshare_starvation.is_none() && a.minshare_starvation.is_none())
        });
        self.preempted_for[node.index()] = list;
    }

    /// FSSchedulerNode.allocateContainer: a container `app` gets on `node` meets that much of
    /// the room preempted there for it; an app owed nothing more leaves the list.
    pub(crate) fn preemption_fulfilled(&mut self, node: NodeId, app: AppId, allocated: Resource) {
        let list = &mut self.preempted_for[node.index()];
        if let Some(i) = list.iter().position(|(a, _)| *a == app) {
            let owed = &mut list[i].1;
            *owed = owed.sub_non_negative(owed.componentwise_min(allocated));
            if owed.is_none() {
                list.remove(i);
            }
        }
    }

    /// Room on `node` already promised: its reservation and what preemption freed there for
    /// starved apps (FSSchedulerNode.getTotalReserved), which a new victim search cannot count.
    fn promised_on(&self, node: NodeId) -> Resource {
        let n = &self.cluster.nodes[node];
        let mut total = n.reservation.map_or(Resource::none(), |r| r.resource);
        for (_, owed) in &self.preempted_for[node.index()] {
            total.add_assign(*owed);
        }
        total
    }

    /// YARN's `isStarved`: below fair share, or attributed min-share starvation.
    pub(crate) fn is_starved(&self, app: AppId) -> bool {
        let a = &self.apps[app];
        let Some(queue) = a.queue else { return false };
        let calc = Calculator::of(self.q(queue).policy);
        calc.below_share(&self.cluster.total, &a.usage, &a.fair_share, self.types) || !a.minshare_starvation.is_none()
    }

    /// The preemption warning an AM sees in its allocate response: its containers selected
    /// for preemption and not yet killed.
    pub fn preemption_warnings(&self, app: AppId) -> Vec<ContainerId> {
        let mut marked: Vec<ContainerId> =
            self.app_containers(app).filter(|c| self.cluster.containers[c].marked_for).collect();
        marked.sort_by_key(|c| self.cluster.containers[c].seq);
        marked
    }

    pub(crate) fn node_preempted_for(&self, node: NodeId, app: AppId) -> bool {
        self.preempted_for[node.index()].iter().any(|(a, _)| *a == app)
    }
}
