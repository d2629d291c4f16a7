//! The cluster and the script of steps, common to both schedulers. What differs (which
//! queues to submit to or move to, what a reload changes) comes from a [`Flavor`].

use serde_json::{json, Value};

use super::{between, chance, pick, Profile};
use crate::load::rng::Rng;

/// The users applications are submitted as.
pub(super) const USERS: [&str; 4] = ["u1", "u2", "u3", "u4"];

/// The largest container asked for: both configurations set maximum-allocation-mb to 8192
/// and leave the maximum vcores at YARN's 4. Asks stay within them because YARN refuses a
/// larger ask before it reaches the scheduler.
const MAX_ASK_MB: i64 = 8192;
const MAX_ASK_VCORES: i64 = 4;

/// The most applications a file submits.
const MAX_APPS: i64 = 8;

/// What the script needs from a scheduler's configuration.
pub(super) trait Flavor {
    /// A queue as a client names it in a submission, and whether the submission is certain
    /// to be rejected (then the script asks nothing for it).
    fn submit_queue(&self, rng: &mut Rng) -> (String, bool);
    /// A move target: usually an existing leaf, sometimes a parent or a missing queue.
    fn move_queue(&self, rng: &mut Rng) -> String;
    /// Two or more leaves that accept applications, the greedy application's first: the
    /// configuration leaves the first one room to grow over the whole cluster.
    fn starvation_queues(&self) -> Vec<String>;
    /// A whole `reload` step: a changed configuration, occasionally an invalid one.
    fn reload(&mut self, rng: &mut Rng) -> Value;
    /// How long a starved application waits before preemption kills for it (ms): the longest
    /// timeout plus the wait before kill.
    fn patience_ms(&self) -> i64;
}

#[derive(Debug, Clone)]
pub(super) struct Node {
    pub name: String,
    pub rack: Option<String>,
    pub memory: i64,
    pub vcores: i64,
}

impl Node {
    pub fn to_json(&self) -> Value {
        let mut v = json!({"name": self.name, "resource": {"memory-mb": self.memory, "vcores": self.vcores}});
        if let Some(rack) = &self.rack {
            v["rack"] = json!(rack);
        }
        v
    }

    fn rack_name(&self) -> &str {
        self.rack.as_deref().unwrap_or("/default-rack")
    }
}

/// The nodes registered at time 0.
#[derive(Debug, Clone)]
pub(super) struct Cluster {
    pub nodes: Vec<Node>,
    /// The racks in use: `/r1`.., or `/default-rack` when nodes name none.
    pub racks: Vec<String>,
    with_racks: bool,
}

impl Cluster {
    /// 2–20 nodes, mostly small clusters (where limits and preemption bite), often all of
    /// one size; 1–4 racks, or no rack at all (YARN's `/default-rack`).
    pub fn random(rng: &mut Rng) -> Self {
        let count = match rng.below(10) {
            0..=5 => between(rng, 2, 6),
            6..=8 => between(rng, 7, 12),
            _ => between(rng, 13, 20),
        };
        let with_racks = chance(rng, 0.85);
        let racks: Vec<String> = if with_racks {
            (1..=between(rng, 1, 4).min(count)).map(|i| format!("/r{i}")).collect()
        } else {
            vec!["/default-rack".to_string()]
        };
        let uniform = chance(rng, 0.6).then(|| node_size(rng));
        let nodes = (1..=count)
            .map(|i| {
                let (memory, vcores) = uniform.unwrap_or_else(|| node_size(rng));
                let rack = with_racks.then(|| racks[(i as usize - 1) % racks.len()].clone());
                Node { name: format!("n{i}"), rack, memory, vcores }
            })
            .collect();
        Self { nodes, racks, with_racks }
    }

    pub fn memory(&self) -> i64 {
        self.nodes.iter().map(|n| n.memory).sum()
    }

    pub fn vcores(&self) -> i64 {
        self.nodes.iter().map(|n| n.vcores).sum()
    }

    fn largest_memory(&self) -> i64 {
        self.nodes.iter().map(|n| n.memory).max().unwrap_or(0)
    }
}

/// A node's memory (2048–16384 MB in 1024 MB steps) and vcores (2–16).
fn node_size(rng: &mut Rng) -> (i64, i64) {
    (1024 * between(rng, 2, 16), between(rng, 2, 16))
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// An application as the script knows it.
struct App {
    name: String,
    /// Not finished by the script and not certainly rejected: steps may name it.
    live: bool,
    /// It has been asked for at least once, so it may hold containers to complete.
    asked: bool,
}

#[derive(Debug, Clone, Copy)]
enum Group {
    Submit,
    Ask,
    Schedule,
    Time,
    Complete,
    Finish,
    Move,
    Reload,
    Nodes,
}

struct Script<'a> {
    rng: &'a mut Rng,
    flavor: &'a mut dyn Flavor,
    steps: Vec<Value>,
    /// The nodes registered at this point of the script.
    nodes: Vec<Node>,
    racks: Vec<String>,
    with_racks: bool,
    next_node: usize,
    largest_memory: i64,
    cluster_memory: i64,
    apps: Vec<App>,
    max_apps: usize,
    reloads: usize,
    groups_since_observe: usize,
}

/// The script: an optional starvation episode, then random groups of steps, most followed
/// by an observation, and always an observation at the end (at least five in all).
pub(super) fn steps(rng: &mut Rng, cluster: &Cluster, flavor: &mut dyn Flavor, profile: Profile) -> Vec<Value> {
    // 17–57 drawn steps: the last group may run a few past the target, and the validity
    // check may drop a few, so files mostly have 15–60.
    let mut target = between(rng, 17, 57) as usize;
    let mut max_apps = between(rng, 1, MAX_APPS) as usize;
    if profile.starve {
        // A greedy application and at least two it starves, and room for the rest.
        max_apps = max_apps.max(3);
        target = target.max(25);
    }
    let mut s = Script {
        rng,
        flavor,
        steps: Vec::new(),
        nodes: cluster.nodes.clone(),
        racks: cluster.racks.clone(),
        with_racks: cluster.with_racks,
        next_node: cluster.nodes.len() + 1,
        largest_memory: cluster.largest_memory(),
        cluster_memory: cluster.memory(),
        apps: Vec::new(),
        max_apps,
        reloads: 0,
        groups_since_observe: 0,
    };
    if profile.starve {
        s.starvation();
    } else {
        // Scripts start with an application in a queue that takes it: a heartbeat of an
        // empty cluster shows nothing.
        let queue = pick(s.rng, &s.flavor.starvation_queues()).clone();
        if let Some(app) = s.submit(Some(queue), None) {
            s.ask(app);
        }
        s.group(Group::Submit);
        s.maybe_observe();
    }
    while s.steps.len() + 1 < target {
        let group = s.draw_group();
        s.group(group);
        s.maybe_observe();
    }
    s.finish_off();
    s.steps
}

/// Give the observations their labels, `o1`, `o2`, ... in order.
pub(super) fn label_observes(steps: &mut [Value]) {
    let mut k = 0;
    for step in steps.iter_mut().filter(|s| s.get("observe").is_some()) {
        k += 1;
        step["observe"] = json!(format!("o{k}"));
    }
}

/// Drop an observation right after another (left by dropped steps), keeping at least five,
/// and label them again.
pub(super) fn tidy_observes(steps: &mut Vec<Value>) {
    let is_observe = |s: &Value| s.get("observe").is_some();
    let mut count = steps.iter().filter(|s| is_observe(s)).count();
    let mut i = 1;
    while i < steps.len() && count > 5 {
        if is_observe(&steps[i]) && is_observe(&steps[i - 1]) {
            steps.remove(i);
            count -= 1;
        } else {
            i += 1;
        }
    }
    label_observes(steps);
}

pub(super) fn observe() -> Value {
    json!({"observe": ""})
}

impl Script<'_> {
    // ----- the groups ---------------------------------------------------------------------

    /// A weighted draw among the groups that can run now.
    fn draw_group(&mut self) -> Group {
        let live = self.apps.iter().any(|a| a.live);
        let room = self.apps.len() < self.max_apps;
        // Without a live application only a submission makes the script go anywhere.
        let submit = match (room, live) {
            (false, _) => 0,
            (true, false) => 100,
            (true, true) => 18,
        };
        let weights: [(Group, u64); 9] = [
            (Group::Submit, submit),
            (Group::Ask, if live { 16 } else { 0 }),
            (Group::Schedule, 24),
            (Group::Time, 12),
            (Group::Complete, if live { 7 } else { 0 }),
            (Group::Finish, if live { 4 } else { 0 }),
            (Group::Move, if live { 4 } else { 0 }),
            (Group::Reload, if self.reloads < 2 { 4 } else { 0 }),
            (Group::Nodes, 4),
        ];
        let total: u64 = weights.iter().map(|(_, w)| w).sum();
        let mut x = self.rng.below(total);
        for (group, w) in weights {
            if x < w {
                return group;
            }
            x -= w;
        }
        unreachable!("x is below the total weight")
    }

    fn group(&mut self, group: Group) {
        match group {
            Group::Submit => {
                if self.apps.len() >= self.max_apps {
                    return;
                }
                let n = between(self.rng, 1, (self.max_apps - self.apps.len()).min(3) as i64);
                for _ in 0..n {
                    let app = self.submit(None, None);
                    if chance(self.rng, 0.75) {
                        if let Some(app) = app {
                            self.ask(app);
                        }
                    }
                }
                if chance(self.rng, 0.4) {
                    self.schedule();
                }
            }
            Group::Ask => {
                let app = self.live_app(false);
                self.ask(app);
            }
            Group::Schedule => self.schedule(),
            Group::Time => {
                self.advance(None);
                self.steps.push(json!({"update": {}}));
                if chance(self.rng, 0.5) {
                    self.heartbeat();
                }
            }
            Group::Complete => self.complete(),
            Group::Finish => {
                let app = self.live_app(false);
                self.steps.push(json!({"finish": self.apps[app].name}));
                self.apps[app].live = false;
            }
            Group::Move => {
                let app = self.live_app(false);
                let queue = self.flavor.move_queue(self.rng);
                self.steps.push(json!({"move": {"app": self.apps[app].name, "queue": queue}}));
            }
            Group::Reload => {
                let step = self.flavor.reload(self.rng);
                self.steps.push(step);
                self.reloads += 1;
            }
            Group::Nodes => self.node_churn(),
        }
    }

    /// One greedy application fills the cluster (asking two to five times its memory), then
    /// one to three others ask in other queues; the clock then runs past the preemption
    /// timeouts and waits, with updates, so that starvation and preemption can play out.
    fn starvation(&mut self) {
        let queues = self.flavor.starvation_queues();
        if queues.len() < 2 {
            return;
        }
        let Some(greedy) = self.submit(Some(queues[0].clone()), Some("u1")) else { return };
        let size = 512 * between(self.rng, 2, 8);
        let factor = between(self.rng, 2, 5);
        let count = ceil_div(factor * self.cluster_memory, size);
        let request = json!({"priority": 1, "resource_name": "*", "capability": {"memory-mb": size, "vcores": 1}, "num_containers": count});
        self.steps.push(json!({"ask": {"app": self.apps[greedy].name, "requests": [request]}}));
        self.apps[greedy].asked = true;
        self.steps.push(json!({"update": {}}));
        // Enough rounds to fill the largest node one container per heartbeat (assignmultiple
        // off, one off-switch assignment per heartbeat).
        let rounds = ceil_div(self.largest_memory, size) + 1;
        self.steps.push(json!({"heartbeat": "all", "rounds": rounds}));
        self.steps.push(observe());
        let others = between(self.rng, 1, 3).min(self.max_apps as i64 - 1) as usize;
        for (i, queue) in queues.iter().skip(1).cycle().take(others).enumerate() {
            let user = USERS[1 + i % 3];
            if let Some(app) = self.submit(Some(queue.clone()), Some(user)) {
                self.ask(app);
            }
        }
        self.steps.push(json!({"update": {}}));
        let patience = self.flavor.patience_ms() + 500 * between(self.rng, 1, 4);
        self.advance(Some(patience));
        self.steps.push(json!({"update": {}}));
        if chance(self.rng, 0.5) {
            let wait = 1000 + 500 * between(self.rng, 0, 2);
            self.advance(Some(wait));
            self.steps.push(json!({"update": {}}));
        }
        self.steps.push(json!({"heartbeat": "all", "rounds": between(self.rng, 1, 3)}));
        self.steps.push(observe());
    }

    // ----- single steps -------------------------------------------------------------------

    /// Submit an application; `None` when the submission is certain to be rejected.
    fn submit(&mut self, queue: Option<String>, user: Option<&str>) -> Option<usize> {
        let name = format!("app{}", self.apps.len() + 1);
        let (queue, rejected) = match queue {
            Some(q) => (q, false),
            None => self.flavor.submit_queue(self.rng),
        };
        let user = user.unwrap_or_else(|| *pick(self.rng, &USERS));
        let am = if chance(self.rng, 0.6) {
            json!({"memory-mb": 512 * between(self.rng, 1, 4), "vcores": 1})
        } else {
            Value::Null
        };
        self.steps.push(json!({"submit": {"app": name, "queue": queue, "user": user, "am": am}}));
        self.apps.push(App { name, live: !rejected, asked: false });
        (!rejected).then_some(self.apps.len() - 1)
    }

    fn ask(&mut self, app: usize) {
        let requests = self.requests();
        self.steps.push(json!({"ask": {"app": self.apps[app].name, "requests": requests}}));
        self.apps[app].asked = true;
    }

    /// One to three priorities (of 1–3), each at `*` alone or with a rack or a host (and its
    /// rack) in front, as AMRMClient sends them; counts 0–10 (0 cancels).
    fn requests(&mut self) -> Vec<Value> {
        let how_many = match self.rng.below(10) {
            0..=5 => 1,
            6..=8 => 2,
            _ => 3,
        };
        let first = between(self.rng, 1, 3);
        let mut out = Vec::new();
        for k in 0..how_many {
            let priority = (first + k - 1) % 3 + 1;
            let capability = self.capability();
            let count = if chance(self.rng, 0.08) { 0 } else { between(self.rng, 1, 10) };
            let local = between(self.rng, 0, count.max(1)).min(count);
            let entry = |name: &str, n: i64, rng: &mut Rng| {
                let mut r =
                    json!({"priority": priority, "resource_name": name, "capability": capability, "num_containers": n});
                // relax_locality false only below `*`: it keeps the request at its location.
                if name != "*" && chance(rng, 0.1) {
                    r["relax_locality"] = json!(false);
                }
                r
            };
            match self.rng.below(100) {
                0..=69 => out.push(entry("*", count, self.rng)),
                70..=84 => {
                    let rack = pick(self.rng, &self.racks).clone();
                    out.push(entry(&rack, local, self.rng));
                    out.push(entry("*", count, self.rng));
                }
                _ => {
                    let node = pick(self.rng, &self.nodes).clone();
                    out.push(entry(&node.name, local, self.rng));
                    // Sometimes the host alone, without its rack and `*`.
                    if chance(self.rng, 0.8) {
                        out.push(entry(node.rack_name(), local, self.rng));
                        out.push(entry("*", count, self.rng));
                    }
                }
            }
        }
        out
    }

    /// 512–4096 MB and 1–4 vcores; rarely more memory than any node has.
    fn capability(&mut self) -> Value {
        if self.largest_memory < MAX_ASK_MB && chance(self.rng, 0.05) {
            let memory = 512 * between(self.rng, self.largest_memory / 512 + 1, MAX_ASK_MB / 512);
            return json!({"memory-mb": memory, "vcores": 1});
        }
        let vcores = if chance(self.rng, 0.5) { 1 } else { between(self.rng, 2, MAX_ASK_VCORES) };
        json!({"memory-mb": 512 * between(self.rng, 1, 8), "vcores": vcores})
    }

    /// An update (usually) and heartbeats of all nodes, one node or a few, 1–4 rounds.
    fn schedule(&mut self) {
        if chance(self.rng, 0.6) {
            self.steps.push(json!({"update": {}}));
        }
        self.heartbeat();
    }

    fn heartbeat(&mut self) {
        let nodes = match self.rng.below(100) {
            0..=54 => json!("all"),
            55..=84 => json!(pick(self.rng, &self.nodes).name),
            _ => {
                let a = pick(self.rng, &self.nodes).name.clone();
                let b = pick(self.rng, &self.nodes).name.clone();
                if a == b {
                    json!([a])
                } else {
                    json!([a, b])
                }
            }
        };
        let rounds = between(self.rng, 1, 4);
        if rounds == 1 && chance(self.rng, 0.5) {
            self.steps.push(json!({"heartbeat": nodes}));
        } else {
            self.steps.push(json!({"heartbeat": nodes, "rounds": rounds}));
        }
    }

    /// The clock moves: `ms`, or 0–20 s in 500 ms steps.
    fn advance(&mut self, ms: Option<i64>) {
        let ms = ms.unwrap_or_else(|| if chance(self.rng, 0.1) { 0 } else { 500 * between(self.rng, 1, 40) });
        self.steps.push(json!({"advance_ms": ms}));
    }

    /// `complete` or `release` of the newest 1–3 containers of an application that was asked
    /// for, sometimes only on one node. The validity check trims the count to what the
    /// application holds, or drops the step.
    fn complete(&mut self) {
        let app = self.live_app(true);
        let count = if chance(self.rng, 0.7) { 1 } else { between(self.rng, 2, 3) };
        let mut body = json!({"app": self.apps[app].name, "count": count});
        if chance(self.rng, 0.15) {
            body["node"] = json!(pick(self.rng, &self.nodes).name);
        }
        let kind = if chance(self.rng, 0.6) { "complete" } else { "release" };
        let mut step = serde_json::Map::new();
        step.insert(kind.to_string(), body);
        self.steps.push(Value::Object(step));
    }

    /// A node joins (up to 20 in all) or leaves (never the last one).
    fn node_churn(&mut self) {
        if self.nodes.len() < 20 && (self.nodes.len() < 2 || chance(self.rng, 0.6)) {
            let (memory, vcores) = node_size(self.rng);
            let rack = self.with_racks.then(|| pick(self.rng, &self.racks).clone());
            let node = Node { name: format!("n{}", self.next_node), rack, memory, vcores };
            self.next_node += 1;
            self.largest_memory = self.largest_memory.max(memory);
            self.steps.push(json!({"add_node": node.to_json()}));
            if chance(self.rng, 0.5) {
                self.steps.push(json!({"heartbeat": node.name, "rounds": between(self.rng, 1, 4)}));
            }
            self.nodes.push(node);
        } else {
            let i = self.rng.below(self.nodes.len() as u64) as usize;
            let node = self.nodes.remove(i);
            self.steps.push(json!({"remove_node": node.name}));
        }
    }

    /// A live application, one that was asked for when `asked` and there is one.
    fn live_app(&mut self, asked: bool) -> usize {
        let mut candidates: Vec<usize> = (0..self.apps.len()).filter(|&i| self.apps[i].live).collect();
        if asked && candidates.iter().any(|&i| self.apps[i].asked) {
            candidates.retain(|&i| self.apps[i].asked);
        }
        *pick(self.rng, &candidates)
    }

    // ----- observations -------------------------------------------------------------------

    /// Observe after most groups, and never let three pass without one.
    fn maybe_observe(&mut self) {
        self.groups_since_observe += 1;
        if self.groups_since_observe >= 3 || chance(self.rng, 0.7) {
            self.steps.push(observe());
            self.groups_since_observe = 0;
        }
    }

    /// End with an observation, make sure of five in all, and label them.
    fn finish_off(&mut self) {
        if self.steps.last().is_none_or(|s| s.get("observe").is_none()) {
            self.steps.push(observe());
        }
        let is_observe = |s: &Value| s.get("observe").is_some();
        while self.steps.iter().filter(|s| is_observe(s)).count() < 5 {
            // After a step that is not followed by an observation already.
            let spots: Vec<usize> = (0..self.steps.len() - 1)
                .filter(|&i| !is_observe(&self.steps[i]) && !is_observe(&self.steps[i + 1]))
                .collect();
            if spots.is_empty() {
                break;
            }
            let at = *pick(self.rng, &spots);
            self.steps.insert(at + 1, observe());
        }
        label_observes(&mut self.steps);
    }
}
