//! The Capacity Scheduler's side: yarn-site properties with the preemption policy, a
//! capacity-scheduler.xml tree of percentages with user, AM and application limits, and its
//! refreshes. It keeps to the plain middle of the configuration space (no labels, absolute
//! or weight capacities, mappings or queue creation), with full clusters and tight limits.

use serde_json::{json, Map, Value};

use super::script::{Cluster, Flavor};
use super::tree::Tree;
use super::{between, chance, pick, tenths, Profile};
use crate::load::rng::Rng;

const PREFIX: &str = "yarn.scheduler.capacity.";
const PREEMPTION: &str = "yarn.resourcemanager.monitor.capacity.preemption.";
const DRC: &str = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator";
const DEFAULT_RC: &str = "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator";

/// The configuration drawn for a file, kept to draw submissions, moves and refreshes.
struct Capacity {
    tree: Tree,
    profile: Profile,
    /// The greedy application's leaf, first in pre-order: with the starvation episode it and
    /// its ancestors have no maximum-capacity below 100 and its user limit factor lets one
    /// user take the whole cluster.
    greedy: usize,
    /// A leaf in state STOPPED, rarely.
    stopped: Option<usize>,
    /// Settings that are not per queue, drawn once: a refresh keeps them.
    globals: Vec<(String, String)>,
    min_allocation_mb: &'static str,
    /// The policy's max_wait_before_kill (ms).
    wait_before_kill_ms: i64,
}

pub(super) fn configure(
    rng: &mut Rng,
    _cluster: &Cluster,
    profile: Profile,
) -> (Vec<(&'static str, Value)>, Box<dyn Flavor>) {
    // A leaf named `default` makes `default` a queue to submit to, as in most clusters.
    let first = chance(rng, 0.3).then_some("default");
    let tree = Tree::random(rng, first);
    let leaves = tree.leaf_indices();
    let greedy = leaves[0];
    let stopped = (leaves.len() >= 3 && chance(rng, 0.08)).then(|| *pick(rng, &leaves[1..]));
    let min_allocation_mb = *pick(rng, &["512", "512", "1024"]);
    let (properties, wait_before_kill_ms) = properties(rng, min_allocation_mb, profile.preemption);
    let mut cs =
        Capacity { tree, profile, greedy, stopped, globals: Vec::new(), min_allocation_mb, wait_before_kill_ms };
    cs.globals = globals(rng);
    let capacity = cs.settings(rng, stopped, false);
    let header = vec![("scheduler", json!("capacity")), ("properties", properties), ("capacity", capacity)];
    (header, Box::new(cs))
}

/// Sizes (512 or 1024 MB minimum, 8192 MB maximum), the monitor switch and the preemption
/// policy's values. Also max_wait_before_kill (ms).
fn properties(rng: &mut Rng, min_mb: &str, preemption: bool) -> (Value, i64) {
    let mut p = Map::new();
    p.insert("yarn.scheduler.minimum-allocation-mb".into(), json!(min_mb));
    p.insert("yarn.scheduler.maximum-allocation-mb".into(), json!("8192"));
    if preemption || chance(rng, 0.5) {
        p.insert("yarn.resourcemanager.scheduler.monitor.enable".into(), json!(preemption.to_string()));
    }
    let mut policy = |k: &str, v: String| {
        p.insert(format!("{PREEMPTION}{k}"), json!(v));
    };
    // Always set: YARN's 15 s default would make every kill wait long.
    let wait = *pick(rng, &[0, 1000]);
    policy("max_wait_before_kill", wait.to_string());
    let often = if preemption { 0.85 } else { 0.3 };
    if chance(rng, often) {
        policy("total_preemption_per_round", tenths(rng, 1, 10));
    }
    if chance(rng, often) {
        policy("natural_termination_factor", tenths(rng, 2, 10));
    }
    if chance(rng, often) {
        policy("max_ignored_over_capacity", pick(rng, &["0", "0.1"]).to_string());
    }
    if chance(rng, 0.25) {
        policy("intra-queue-preemption.enabled", "true".to_string());
    }
    (Value::Object(p), wait)
}

/// The scheduler-wide settings: resource calculator, locality delay, off-switch assignments
/// per heartbeat, the default AM share.
fn globals(rng: &mut Rng) -> Vec<(String, String)> {
    let mut g = Vec::new();
    match rng.below(10) {
        0..=3 => g.push(("resource-calculator", DRC.to_string())),
        4 => g.push(("resource-calculator", DEFAULT_RC.to_string())),
        _ => {}
    }
    if chance(rng, 0.7) {
        g.push(("node-locality-delay", pick(rng, &["-1", "0", "2"]).to_string()));
    }
    if chance(rng, 0.7) {
        g.push(("per-node-heartbeat.maximum-offswitch-assignments", pick(rng, &["1", "100"]).to_string()));
    }
    if chance(rng, 0.3) {
        // YARN's default is 0.1, which holds most managed AMs back on a small cluster.
        g.push(("maximum-am-resource-percent", tenths(rng, 2, 10)));
    }
    g.into_iter().map(|(k, v)| (format!("{PREFIX}{k}"), v)).collect()
}

/// Integer percentages over `n` children summing to exactly 100: equal shares (the last one
/// takes the remainder, 33/33/34) or random weights.
fn split(rng: &mut Rng, n: usize) -> Vec<i64> {
    let mut shares: Vec<i64> = if chance(rng, 0.3) {
        vec![100 / n as i64; n]
    } else {
        let weights: Vec<i64> = (0..n).map(|_| between(rng, 1, 6)).collect();
        let total: i64 = weights.iter().sum();
        weights.iter().map(|w| 100 * w / total).collect()
    };
    let short = 100 - shares.iter().sum::<i64>();
    shares[n - 1] += short;
    shares
}

impl Capacity {
    /// The whole capacity-scheduler.xml. `invalid` breaks the 100% rule under one parent
    /// (a refresh YARN refuses).
    fn settings(&self, rng: &mut Rng, stopped: Option<usize>, invalid: bool) -> Value {
        let mut m = Map::new();
        let key = |path: &str, k: &str| format!("{PREFIX}{path}.{k}");
        let reachable = self.tree.reachable();
        let mut capacity = vec![100; self.tree.queues.len()];
        let parents: Vec<usize> = reachable.iter().copied().filter(|&i| !self.tree.queues[i].is_leaf()).collect();
        for &p in &parents {
            let q = &self.tree.queues[p];
            let names: Vec<&str> = q.children.iter().map(|&c| self.tree.queues[c].name.as_str()).collect();
            m.insert(key(&q.path, "queues"), json!(names.join(",")));
            let mut shares = split(rng, q.children.len());
            self.maybe_zero(rng, &q.children, &mut shares);
            for (&c, share) in q.children.iter().zip(shares) {
                capacity[c] = share;
            }
        }
        if invalid {
            let p = *pick(rng, &parents);
            capacity[self.tree.queues[p].children[0]] += 10;
        }
        for &i in reachable.iter().skip(1) {
            let path = &self.tree.queues[i].path;
            m.insert(key(path, "capacity"), json!(capacity[i].to_string()));
            for (k, v) in self.queue_limits(rng, i, capacity[i], stopped) {
                m.insert(key(path, k), json!(v));
            }
        }
        if self.profile.starve {
            // One user of the greedy leaf may take the whole cluster.
            let factor = (100.0 / self.absolute_capacity(&capacity, self.greedy)).ceil().max(1.0);
            m.insert(key(&self.tree.queues[self.greedy].path, "user-limit-factor"), json!(format!("{factor}")));
        }
        for (k, v) in &self.globals {
            m.insert(k.clone(), json!(v));
        }
        Value::Object(m)
    }

    /// Rarely a leaf with no guarantee (capacity 0), its share given to its first sibling.
    /// Never the greedy leaf: its user limit needs a guarantee to scale.
    fn maybe_zero(&self, rng: &mut Rng, children: &[usize], shares: &mut [i64]) {
        if children.len() < 3 || !chance(rng, 0.05) {
            return;
        }
        let last = children.len() - 1;
        if self.tree.queues[children[last]].is_leaf() && children[last] != self.greedy {
            shares[0] += shares[last];
            shares[last] = 0;
        }
    }

    /// A queue's percentage of the cluster, as a percentage (0–100).
    fn absolute_capacity(&self, capacity: &[i64], i: usize) -> f64 {
        let mut fraction = 1.0;
        for &q in &self.tree.reachable() {
            if q != 0 && self.tree.is_within(i, q) {
                fraction *= capacity[q] as f64 / 100.0;
            }
        }
        (fraction * 100.0).max(1.0)
    }

    /// maximum-capacity for any queue; user, AM and application limits, ordering and state
    /// for leaves.
    fn queue_limits(&self, rng: &mut Rng, i: usize, capacity: i64, stopped: Option<usize>) -> Vec<(&str, String)> {
        let tight = self.profile.tight;
        let mut out = Vec::new();
        let greedy_path = self.profile.starve && self.tree.is_within(self.greedy, i);
        if !greedy_path && chance(rng, if tight { 0.6 } else { 0.3 }) {
            out.push(("maximum-capacity", between(rng, capacity.clamp(1, 100), 100).to_string()));
        }
        if !self.tree.queues[i].is_leaf() {
            return out;
        }
        if chance(rng, 0.35) {
            out.push(("user-limit-factor", between(rng, 1, 4).to_string()));
        }
        if chance(rng, 0.3) {
            out.push(("minimum-user-limit-percent", between(rng, 25, 100).to_string()));
        }
        if chance(rng, if tight { 0.5 } else { 0.25 }) {
            out.push(("maximum-am-resource-percent", tenths(rng, 1, 10)));
        }
        if chance(rng, if tight { 0.25 } else { 0.08 }) {
            out.push(("maximum-applications", between(rng, 2, 5).to_string()));
        }
        if chance(rng, 0.3) {
            out.push(("ordering-policy", pick(rng, &["fifo", "fair"]).to_string()));
        }
        if stopped == Some(i) {
            out.push(("state", "STOPPED".to_string()));
        }
        out
    }

    /// Leaves that accept applications.
    fn running_leaves(&self) -> Vec<usize> {
        self.tree.leaf_indices().into_iter().filter(|&i| Some(i) != self.stopped).collect()
    }

    /// A leaf's short name or full path.
    fn leaf_name(&self, rng: &mut Rng, i: usize) -> String {
        let q = &self.tree.queues[i];
        if chance(rng, 0.55) {
            q.name.clone()
        } else {
            q.path.clone()
        }
    }
}

impl Flavor for Capacity {
    /// Mostly a running leaf; sometimes `default`, a missing queue, a parent or the stopped
    /// leaf, all certainly rejected (unless a leaf is named `default`).
    fn submit_queue(&self, rng: &mut Rng) -> (String, bool) {
        let running = self.running_leaves();
        match rng.below(100) {
            0..=79 => {
                let leaf = *pick(rng, &running);
                (self.leaf_name(rng, leaf), false)
            }
            80..=85 => {
                let exists = running.iter().any(|&i| self.tree.queues[i].name == "default");
                ("default".to_string(), !exists)
            }
            86..=91 => ("nowhere".to_string(), true),
            92..=96 => (self.tree.pick_parent(rng), true),
            _ => match self.stopped {
                Some(s) => (self.leaf_name(rng, s), true),
                None => ("nowhere".to_string(), true),
            },
        }
    }

    fn move_queue(&self, rng: &mut Rng) -> String {
        let leaves = self.tree.leaf_indices();
        match rng.below(100) {
            0..=84 => {
                let leaf = *pick(rng, &leaves);
                self.leaf_name(rng, leaf)
            }
            85..=89 => self.tree.pick_parent(rng),
            90..=94 => "nowhere".to_string(),
            _ => "default".to_string(),
        }
    }

    fn starvation_queues(&self) -> Vec<String> {
        self.running_leaves().iter().take(4).map(|&i| self.tree.queues[i].name.clone()).collect()
    }

    /// New percentages and limits on the same tree; rarely a leaf stopped or started again;
    /// sometimes new preemption properties; sometimes a configuration YARN refuses.
    fn reload(&mut self, rng: &mut Rng) -> Value {
        let invalid = chance(rng, 0.15);
        let mut stopped = self.stopped;
        if !invalid && chance(rng, 0.1) {
            let leaves = self.tree.leaf_indices();
            stopped = match stopped {
                Some(_) => None,
                None if leaves.len() >= 3 => Some(*pick(rng, &leaves[1..])),
                None => None,
            };
        }
        let mut body = json!({"capacity": self.settings(rng, stopped, invalid)});
        if !invalid {
            self.stopped = stopped;
        }
        if chance(rng, 0.2) {
            let preemption = chance(rng, 0.5);
            body["properties"] = properties(rng, self.min_allocation_mb, preemption).0;
        }
        json!({"reload": body})
    }

    fn patience_ms(&self) -> i64 {
        self.wait_before_kill_ms
    }
}
