//! The Fair Scheduler's side: yarn-site properties, a fair-scheduler.xml with nested queues,
//! limits, preemption settings and sometimes placement rules, and its reloads.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use super::script::{Cluster, Flavor, USERS};
use super::tree::Tree;
use super::{between, chance, pick, share_of, tenths, Profile};
use crate::load::rng::Rng;

/// The configuration drawn for a file, kept to draw submissions, moves and reloads.
struct Fair {
    tree: Tree,
    profile: Profile,
    cluster_memory: i64,
    cluster_vcores: i64,
    /// The greedy application's leaf (starvation episode), first in pre-order. Neither it
    /// nor its ancestors get a maxResources, so the greedy application can fill the cluster.
    greedy: usize,
    /// yarn.scheduler.fair.waitTimeBeforeKill of the initial properties (ms).
    wait_before_kill_ms: i64,
    /// The longest preemption timeout of the initial allocations (ms).
    longest_timeout_ms: i64,
}

/// One drawn fair-scheduler.xml.
struct Allocations {
    xml: String,
    longest_timeout_s: i64,
    uses_primary_group: bool,
}

/// The document's `properties`, `allocations` and (for primaryGroup placement) `groups`.
pub(super) fn configure(
    rng: &mut Rng,
    cluster: &Cluster,
    profile: Profile,
) -> (Vec<(&'static str, Value)>, Box<dyn Flavor>) {
    let tree = Tree::random(rng, None);
    let greedy = tree.leaf_indices()[0];
    let (properties, wait_before_kill_ms) = properties(rng, profile.preemption);
    let mut fair = Fair {
        tree,
        profile,
        cluster_memory: cluster.memory(),
        cluster_vcores: cluster.vcores(),
        greedy,
        wait_before_kill_ms,
        longest_timeout_ms: 0,
    };
    let allocations = fair.allocations(rng);
    fair.longest_timeout_ms = allocations.longest_timeout_s * 1000;
    let mut header = vec![("properties", properties), ("allocations", Value::from(allocations.xml))];
    if allocations.uses_primary_group {
        header.push(("groups", groups(rng)));
    }
    (header, Box::new(fair))
}

/// Hadoop's test defaults for sizes (512 MB minimum and increment, 8192 MB maximum) and a
/// draw of assignment, preemption and locality settings. Also the wait before kill (ms).
fn properties(rng: &mut Rng, preemption: bool) -> (Value, i64) {
    let mut p = Map::new();
    let mut set = |k: &str, v: &str| {
        p.insert(format!("yarn.scheduler.{k}"), json!(v));
    };
    set("minimum-allocation-mb", "512");
    set("increment-allocation-mb", "512");
    set("maximum-allocation-mb", "8192");
    let assign_multiple = chance(rng, 0.5);
    set("fair.assignmultiple", if assign_multiple { "true" } else { "false" });
    set("fair.max.assign", pick::<&str>(rng, &["-1", "2"]));
    if assign_multiple && chance(rng, 0.5) {
        // Without this YARN's default (dynamic) ignores max.assign.
        set("fair.dynamic.max.assign", "false");
    }
    set("fair.preemption", if preemption { "true" } else { "false" });
    set("fair.preemption.cluster-utilization-threshold", pick::<&str>(rng, &["0", "0.8"]));
    let wait = *pick(rng, &[0, 1000]);
    set("fair.waitTimeBeforeKill", &wait.to_string());
    if chance(rng, 0.3) {
        set("fair.locality.threshold.node", "0.5");
    }
    if chance(rng, 0.3) {
        set("fair.locality.threshold.rack", "0.5");
    }
    if chance(rng, 0.07) {
        set("fair.sizebasedweight", "true");
    }
    (Value::Object(p), wait)
}

/// Each user's groups, the first being the primary one: g1–g3, sometimes a second.
fn groups(rng: &mut Rng) -> Value {
    let mut m = Map::new();
    for user in USERS {
        let primary = between(rng, 1, 3);
        let mut list = vec![format!("g{primary}")];
        if chance(rng, 0.3) {
            list.push(format!("g{}", primary % 3 + 1));
        }
        m.insert(user.to_string(), json!(list));
    }
    Value::Object(m)
}

impl Fair {
    /// The whole fair-scheduler.xml, on one line.
    fn allocations(&self, rng: &mut Rng) -> Allocations {
        // The default policy also applies to root and to every queue that names none.
        let default_policy = match rng.below(10) {
            0..=6 => None,
            7 => Some("fair"),
            _ => Some("drf"),
        };
        let mut out = Allocations { xml: "<allocations>".to_string(), longest_timeout_s: 0, uses_primary_group: false };
        let root_policy = default_policy.unwrap_or("fair");
        for &child in &self.tree.queues[0].children {
            self.queue(rng, child, root_policy, root_policy, &mut out);
        }
        self.top_level(rng, default_policy, &mut out);
        if chance(rng, 0.35) {
            self.placement(rng, &mut out);
        }
        out.xml.push_str("</allocations>");
        out
    }

    /// A `<queue>` element and its children. `parent_policy` is the parent's effective
    /// policy.
    fn queue(&self, rng: &mut Rng, i: usize, parent_policy: &str, default: &str, out: &mut Allocations) {
        let q = &self.tree.queues[i];
        let _ = write!(out.xml, "<queue name=\"{}\">", q.name);
        let explicit = policy(rng, parent_policy, default, q.is_leaf());
        if let Some(policy) = explicit {
            let _ = write!(out.xml, "<schedulingPolicy>{policy}</schedulingPolicy>");
        }
        self.shares_and_limits(rng, i, out);
        self.preemption_settings(rng, out);
        let policy = explicit.unwrap_or(default);
        for &child in &q.children {
            self.queue(rng, child, policy, default, out);
        }
        out.xml.push_str("</queue>");
    }

    /// Weight, min and max resources, maxRunningApps and (leaves) maxAMShare.
    fn shares_and_limits(&self, rng: &mut Rng, i: usize, out: &mut Allocations) {
        let leaf = self.tree.queues[i].is_leaf();
        let tight = self.profile.tight;
        if chance(rng, 0.4) {
            let _ = write!(out.xml, "<weight>{}</weight>", tenths(rng, 5, 40));
        }
        // Starvation needs guarantees: most leaves get a min share then.
        let min_chance = if self.profile.starve && leaf { 0.6 } else { 0.25 };
        if chance(rng, min_chance) {
            let r = self.absolute(rng, 0.1, 0.6);
            let _ = write!(out.xml, "<minResources>{r}</minResources>");
        }
        let on_greedy_path = self.profile.starve && self.tree.is_within(self.greedy, i);
        if !on_greedy_path && chance(rng, if tight { 0.5 } else { 0.2 }) {
            let r = if chance(rng, 0.8) { self.absolute(rng, 0.1, 0.7) } else { percentage(rng) };
            let _ = write!(out.xml, "<maxResources>{r}</maxResources>");
        }
        if chance(rng, if tight { 0.3 } else { 0.1 }) {
            let _ = write!(out.xml, "<maxRunningApps>{}</maxRunningApps>", between(rng, 1, if tight { 2 } else { 3 }));
        }
        // YARN refuses maxAMShare on a parent.
        if leaf && chance(rng, if tight { 0.4 } else { 0.2 }) {
            let share = if chance(rng, 0.15) { "-1".to_string() } else { tenths(rng, 1, 10) };
            let _ = write!(out.xml, "<maxAMShare>{share}</maxAMShare>");
        }
    }

    /// Timeouts (more often with preemption on), threshold, allowPreemptionFrom.
    fn preemption_settings(&self, rng: &mut Rng, out: &mut Allocations) {
        let timeout_chance = if self.profile.preemption { 0.3 } else { 0.1 };
        for element in ["minSharePreemptionTimeout", "fairSharePreemptionTimeout"] {
            if chance(rng, timeout_chance) {
                let s = between(rng, 1, 10);
                out.longest_timeout_s = out.longest_timeout_s.max(s);
                let _ = write!(out.xml, "<{element}>{s}</{element}>");
            }
        }
        if chance(rng, 0.2) {
            let t = tenths(rng, 5, 10);
            let _ = write!(out.xml, "<fairSharePreemptionThreshold>{t}</fairSharePreemptionThreshold>");
        }
        if chance(rng, 0.1) {
            out.xml.push_str("<allowPreemptionFrom>false</allowPreemptionFrom>");
        }
    }

    /// User limits, defaults for all queues, and (with preemption) at least one timeout.
    fn top_level(&self, rng: &mut Rng, default_policy: Option<&str>, out: &mut Allocations) {
        for user in USERS {
            if chance(rng, if self.profile.tight { 0.3 } else { 0.15 }) {
                let n = between(rng, 1, 2);
                let _ = write!(out.xml, "<user name=\"{user}\"><maxRunningApps>{n}</maxRunningApps></user>");
            }
        }
        if chance(rng, 0.08) {
            let _ = write!(out.xml, "<userMaxAppsDefault>{}</userMaxAppsDefault>", between(rng, 2, 3));
        }
        if chance(rng, 0.2) {
            let _ = write!(out.xml, "<queueMaxAMShareDefault>{}</queueMaxAMShareDefault>", tenths(rng, 1, 10));
        }
        if let Some(policy) = default_policy {
            let _ = write!(out.xml, "<defaultQueueSchedulingPolicy>{policy}</defaultQueueSchedulingPolicy>");
        }
        let preemption = self.profile.preemption;
        let timeout = |rng: &mut Rng, element: &str, p: f64, out: &mut Allocations| {
            if chance(rng, p) {
                let s = between(rng, 1, 10);
                out.longest_timeout_s = out.longest_timeout_s.max(s);
                let _ = write!(out.xml, "<{element}>{s}</{element}>");
            }
        };
        timeout(rng, "defaultMinSharePreemptionTimeout", if preemption { 0.4 } else { 0.1 }, out);
        // Without any timeout nothing is ever starved: make sure preemption has one.
        let none_yet = out.longest_timeout_s == 0;
        timeout(rng, "defaultFairSharePreemptionTimeout", if preemption && none_yet { 1.0 } else { 0.3 }, out);
        if chance(rng, 0.2) {
            let t = tenths(rng, 5, 10);
            let _ = write!(out.xml, "<defaultFairSharePreemptionThreshold>{t}</defaultFairSharePreemptionThreshold>");
        }
    }

    /// `<queuePlacementPolicy>`: non-terminal rules, then one terminal rule (YARN refuses a
    /// policy whose last rule is not terminal or with a terminal rule before the last).
    fn placement(&self, rng: &mut Rng, out: &mut Allocations) {
        out.xml.push_str("<queuePlacementPolicy>");
        if chance(rng, 0.7) {
            let create = pick(rng, &["", " create=\"false\"", " create=\"false\"", " create=\"true\""]);
            let _ = write!(out.xml, "<rule name=\"specified\"{create}/>");
        }
        if chance(rng, 0.3) {
            out.xml.push_str("<rule name=\"user\" create=\"false\"/>");
        }
        if chance(rng, 0.2) {
            out.xml.push_str("<rule name=\"primaryGroup\" create=\"false\"/>");
            out.uses_primary_group = true;
        }
        match rng.below(100) {
            0..=24 => out.xml.push_str("<rule name=\"default\"/>"),
            25..=49 => {
                let leaf = pick(rng, &self.tree.leaves()).path.clone();
                let _ = write!(out.xml, "<rule name=\"default\" queue=\"{leaf}\"/>");
            }
            50..=64 => out.xml.push_str("<rule name=\"reject\"/>"),
            65..=84 => out.xml.push_str("<rule name=\"user\"/>"),
            _ => {
                out.xml.push_str("<rule name=\"primaryGroup\"/>");
                out.uses_primary_group = true;
            }
        }
        out.xml.push_str("</queuePlacementPolicy>");
    }

    /// An absolute resource, `fraction` of the cluster, in one of YARN's spellings.
    fn absolute(&self, rng: &mut Rng, lo: f64, hi: f64) -> String {
        let f = lo + (hi - lo) * rng.unit();
        let mb = share_of(self.cluster_memory, f, 512);
        let vcores = share_of(self.cluster_vcores, f, 1);
        match rng.below(3) {
            0 => format!("{mb} mb, {vcores} vcores"),
            1 => format!("{mb}mb,{vcores}vcores"),
            _ => format!("memory-mb={mb}, vcores={vcores}"),
        }
    }

    /// A changed allocation file: the tree sometimes grows or loses a leaf under root, every
    /// setting is drawn again; sometimes also new properties; sometimes a file YARN refuses.
    fn reload_body(&mut self, rng: &mut Rng) -> Value {
        if chance(rng, 0.15) {
            let valid = self.allocations(rng).xml;
            return json!({"allocations": invalid(rng, &valid)});
        }
        match rng.below(100) {
            0..=19 => self.tree.add_root_leaf(),
            20..=27 => self.tree.remove_root_leaf(),
            _ => {}
        }
        let mut body = json!({"allocations": self.allocations(rng).xml});
        if chance(rng, 0.15) {
            let preemption = chance(rng, 0.5);
            body["properties"] = properties(rng, preemption).0;
        }
        body
    }
}

/// A queue's explicit scheduling policy, or `None` to take `default`. A fair parent may not
/// have a drf child (YARN then refuses the queue) and fifo is for leaves only, so a child
/// whose parent does not allow the default names an allowed policy.
fn policy(rng: &mut Rng, parent_policy: &str, default: &str, leaf: bool) -> Option<&'static str> {
    let allowed: &[&'static str] = match (parent_policy, leaf) {
        ("drf", true) => &["drf", "fair", "fifo"],
        ("drf", false) => &["drf", "fair"],
        (_, true) => &["fair", "fifo"],
        (_, false) => &["fair"],
    };
    if chance(rng, 0.3) || !allowed.contains(&default) {
        Some(*pick(rng, allowed))
    } else {
        None
    }
}

/// maxResources as a percentage of the cluster, in one of YARN's spellings.
fn percentage(rng: &mut Rng) -> String {
    let (m, c) = (between(rng, 2, 9) * 10, between(rng, 2, 9) * 10);
    match rng.below(3) {
        0 => format!("{m}% memory, {c}% cpu"),
        1 => format!("{m}%"),
        _ => format!("memory-mb={m}%, vcores={c}%"),
    }
}

/// A fair-scheduler.xml YARN refuses to load, made from a valid one.
fn invalid(rng: &mut Rng, valid: &str) -> String {
    let inner = valid.strip_prefix("<allocations>").and_then(|s| s.strip_suffix("</allocations>")).unwrap_or("");
    match rng.below(5) {
        // fifo may not be the default: it would apply to root and parents.
        0 => format!("<allocations>{inner}<defaultQueueSchedulingPolicy>fifo</defaultQueueSchedulingPolicy></allocations>"),
        // Not a number.
        1 => format!("<allocations><queueMaxAMShareDefault>half</queueMaxAMShareDefault>{inner}</allocations>"),
        // The root element must be <allocations>.
        2 => format!("<allocation>{inner}</allocation>"),
        // The last placement rule is not terminal.
        3 if !inner.contains("<queuePlacementPolicy>") => format!(
            "<allocations>{inner}<queuePlacementPolicy><rule name=\"specified\"/><rule name=\"user\" create=\"false\"/></queuePlacementPolicy></allocations>"
        ),
        // Not well-formed XML.
        _ => format!("<allocations>{inner}"),
    }
}

impl Flavor for Fair {
    /// Existing leaves (short or full path), `default`, a missing queue (created by the
    /// default rules, or not), sometimes a parent. Placement decides; nothing is certain.
    fn submit_queue(&self, rng: &mut Rng) -> (String, bool) {
        let leaves = self.tree.leaves();
        let leaf = pick(rng, &leaves);
        let queue = match rng.below(100) {
            0..=39 => leaf.short_path().to_string(),
            40..=74 => leaf.path.clone(),
            75..=84 => "default".to_string(),
            85..=92 => self.missing_queue(rng),
            _ => self.tree.pick_parent(rng),
        };
        (queue, false)
    }

    fn move_queue(&self, rng: &mut Rng) -> String {
        let leaves = self.tree.leaves();
        let leaf = pick(rng, &leaves);
        match rng.below(100) {
            0..=49 => leaf.path.clone(),
            50..=69 => leaf.short_path().to_string(),
            70..=79 => "root.default".to_string(),
            80..=89 => self.missing_queue(rng),
            _ => self.tree.pick_parent(rng),
        }
    }

    fn starvation_queues(&self) -> Vec<String> {
        self.tree.leaves().iter().take(4).map(|q| q.path.clone()).collect()
    }

    fn reload(&mut self, rng: &mut Rng) -> Value {
        json!({"reload": self.reload_body(rng)})
    }

    fn patience_ms(&self) -> i64 {
        self.longest_timeout_ms + self.wait_before_kill_ms
    }
}

impl Fair {
    /// A queue the allocation file does not have: under root, or under a configured parent.
    fn missing_queue(&self, rng: &mut Rng) -> String {
        let parents = self.tree.inner_parents();
        if !parents.is_empty() && chance(rng, 0.4) {
            return format!("{}.dyn", pick(rng, &parents).path);
        }
        pick(rng, &["nowhere", "root.extra"]).to_string()
    }
}
