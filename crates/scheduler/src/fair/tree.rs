//! The queue tree: built from the allocation file, grown by placement, reshaped by reloads.

use crate::driver::QueueAcl;
use fairloom_config::{trim_queue_name, Acl, AllocationFile, ConfigurableResource, PolicyKind, QueueType};
use fairloom_model::Resource;

use super::policy::{child_policy_allowed, policy_applicable};
use super::state::{Queue, QueueSettings};
use super::FairScheduler;
use crate::ids::QueueId;

pub const ROOT: QueueId = QueueId(0);

/// A path component is valid when it is non-empty and equal to its own trim (U+00A0 included).
pub fn valid_component(c: &str) -> bool {
    !c.is_empty() && trim_queue_name(c) == c && c.trim() == c
}

pub fn valid_queue_path(path: &str) -> bool {
    path.split('.').all(valid_component)
}

impl FairScheduler {
    pub fn queue_id(&self, name: &str) -> Option<QueueId> {
        self.queues.id(name)
    }

    pub(crate) fn q(&self, id: QueueId) -> &Queue {
        &self.queues[id]
    }

    pub(crate) fn q_mut(&mut self, id: QueueId) -> &mut Queue {
        &mut self.queues[id]
    }

    /// The queue and its ancestors up to root, leaf first.
    pub(crate) fn path_to_root(&self, id: QueueId) -> impl Iterator<Item = QueueId> + '_ {
        std::iter::successors(Some(id), move |q| self.q(*q).parent)
    }

    /// The policy a queue should have under `file`.
    fn configured_policy(file: &AllocationFile, name: &str) -> PolicyKind {
        file.queue(name).and_then(|c| c.scheduling_policy).unwrap_or(file.default_scheduling_policy)
    }

    /// Effective settings of queue `name` under the current allocation file.
    pub(crate) fn resolve_settings(&self, name: &str, parent: Option<QueueId>, dynamic: bool) -> QueueSettings {
        let file = &self.alloc;
        let conf = file.queue(name);
        let parent_settings = parent.map(|p| &self.q(p).settings);
        let unbounded = ConfigurableResource::Absolute(self.props.resource_types.unbounded());
        let max_resources = conf
            .and_then(|c| c.max_resources)
            .or_else(|| if dynamic { parent_settings.and_then(|p| p.max_child_resources) } else { None })
            .or(file.queue_max_resources_default)
            .unwrap_or(unbounded);
        let is_root = parent.is_none();
        let inherit_timeout =
            |own: Option<i64>, default: Option<i64>, from_parent: fn(&QueueSettings) -> Option<i64>| {
                own.or(if is_root { default } else { parent_settings.and_then(from_parent) })
            };
        let fair_timeout = inherit_timeout(
            conf.and_then(|c| c.fair_share_preemption_timeout_ms),
            file.default_fair_share_preemption_timeout_ms,
            |p| p.fair_share_preemption_timeout_ms,
        );
        let min_timeout = inherit_timeout(
            conf.and_then(|c| c.min_share_preemption_timeout_ms),
            file.default_min_share_preemption_timeout_ms,
            |p| p.min_share_preemption_timeout_ms,
        );
        let threshold = conf.and_then(|c| c.fair_share_preemption_threshold).unwrap_or_else(|| match parent_settings {
            None => file.default_fair_share_preemption_threshold.unwrap_or(0.5),
            Some(p) => p.fair_share_preemption_threshold,
        });
        let default_acl = if is_root { Acl::everyone() } else { Acl::nobody() };
        QueueSettings {
            weight: conf.and_then(|c| c.weight).unwrap_or(1.0),
            min_share: conf.and_then(|c| c.min_resources).unwrap_or_default(),
            max_resources,
            max_child_resources: conf.and_then(|c| c.max_child_resources),
            max_running_apps: conf.and_then(|c| c.max_running_apps).unwrap_or(file.queue_max_apps_default),
            max_am_share: conf.and_then(|c| c.max_am_share).unwrap_or(file.queue_max_am_share_default),
            max_container_allocation: conf.and_then(|c| c.max_container_allocation),
            fair_share_preemption_timeout_ms: fair_timeout,
            min_share_preemption_timeout_ms: min_timeout,
            fair_share_preemption_threshold: threshold,
            allow_preemption_from: conf.and_then(|c| c.allow_preemption_from).unwrap_or(true)
                && parent_settings.is_none_or(|p| p.allow_preemption_from),
            acl_submit_apps: conf.and_then(|c| c.acl_submit_apps.clone()).unwrap_or_else(|| default_acl.clone()),
            acl_administer_apps: conf.and_then(|c| c.acl_administer_apps.clone()).unwrap_or(default_acl),
        }
    }

    pub(crate) fn add_queue(
        &mut self,
        name: &str,
        parent: Option<QueueId>,
        leaf: bool,
        dynamic: bool,
        policy: PolicyKind,
    ) -> QueueId {
        let settings = self.resolve_settings(name, parent, dynamic);
        let queue = Queue {
            // Stamped by the tree.
            created: 0,
            yarn_children: Vec::new(),
            app_refs: 0,
            name: name.to_string(),
            parent,
            children: Vec::new(),
            leaf,
            dynamic,
            reservable: self.alloc.queue(name).is_some_and(|c| c.reservable),
            removed: false,
            pending_conversion: None,
            settings,
            policy,
            runnable_apps: Vec::new(),
            non_runnable_apps: Vec::new(),
            runnable_count: 0,
            usage: Default::default(),
            demand: Resource::none(),
            am_usage: Resource::none(),
            am_drift: Resource::none(),
            fair_share: Resource::none(),
            steady_fair_share: Resource::none(),
            members: Default::default(),
            order_key: None,
            order_rank: 0,
            max_share: Resource::none(),
            max_share_bounded: true,
            path_bounded: true,
            last_time_at_min_share: 0,
            share_signature: Vec::new(),
            demand_sum: Resource::none(),
        };
        let id = self.queues.insert(queue);
        let m = self.resolve_max_share(id);
        self.set_max_share(id, m);
        id
    }

    /// The live leaves in the order of YARN's `QueueManager.leafQueues`: the order in which
    /// YARN's update looks for starved applications.
    pub(crate) fn leaves_in_yarn_order(&self) -> Vec<QueueId> {
        let mut leaves: Vec<QueueId> = self.queues().filter(|(_, q)| q.leaf).map(|(id, _)| id).collect();
        leaves.sort_by_key(|id| self.q(*id).created);
        leaves
    }

    /// A parent's children in YARN's order (`FSParentQueue.childQueues`, creation order).
    pub(crate) fn children_in_yarn_order(&self, parent: QueueId) -> &[QueueId] {
        &self.q(parent).yarn_children
    }

    /// Restamp the queues a file created (or converted), stamped `from` on, in the order
    /// YARN creates them: `QueueManager.updateAllocationConfiguration` walks the file's set
    /// of leaf names, then its set of parent names (`HashSet<String>`s, in their iteration
    /// order), creating each missing queue with its missing ancestors, top down.
    fn stamp_in_yarn_order(&mut self, from: u64, leaf_names: &[&str], parent_names: &[&str]) {
        let fresh: Vec<QueueId> = {
            let mut fresh: Vec<QueueId> = self.queues().filter(|(_, q)| q.created >= from).map(|(id, _)| id).collect();
            fresh.sort_by_key(|id| self.q(*id).created);
            fresh
        };
        if fresh.is_empty() {
            return;
        }
        let mut order: Vec<QueueId> = Vec::with_capacity(fresh.len());
        for names in [leaf_names, parent_names] {
            let mut distinct: Vec<&str> = Vec::new();
            for &name in names {
                if !distinct.contains(&name) {
                    distinct.push(name);
                }
            }
            for i in crate::cluster::hash_order::string_map_order(&distinct) {
                let parts: Vec<&str> = distinct[i].split('.').collect();
                for depth in 2..=parts.len() {
                    if let Some(id) = self.queue_id(&parts[..depth].join(".")) {
                        if fresh.contains(&id) && !order.contains(&id) {
                            order.push(id);
                        }
                    }
                }
            }
        }
        for id in fresh {
            if !order.contains(&id) {
                order.push(id);
            }
        }
        self.queues.restamp(from, &order);
    }

    /// YARN's `verifyAndSetPolicyFromConf`, from `id` down: each queue's configured policy,
    /// children first in YARN's order, stopping at the first child whose policy its parent
    /// does not allow. What was set before that stop stays set (YARN's partial application);
    /// the violation, if it stopped.
    fn verify_and_set_policy(&mut self, id: QueueId) -> Result<(), String> {
        let policy = Self::configured_policy(&self.alloc, &self.q(id).name);
        for child in self.children_in_yarn_order(id).to_vec() {
            let child_policy = Self::configured_policy(&self.alloc, &self.q(child).name);
            if !child_policy_allowed(policy, child_policy) {
                return Err(format!(
                    "{} cannot be {} under {}, which is {}",
                    self.q(child).name,
                    child_policy.name(),
                    self.q(id).name,
                    policy.name()
                ));
            }
            self.verify_and_set_policy(child)?;
        }
        self.q_mut(id).policy = policy;
        Ok(())
    }

    fn subtree_has_apps(&self, id: QueueId) -> bool {
        let q = self.q(id);
        q.app_count() > 0 || q.children.iter().any(|&c| self.subtree_has_apps(c))
    }

    fn convert(&mut self, id: QueueId, to_leaf: bool) {
        if to_leaf {
            for c in std::mem::take(&mut self.q_mut(id).children) {
                self.queues.remove_subtree(c);
            }
        }
        let q = self.q_mut(id);
        q.leaf = to_leaf;
        q.pending_conversion = None;
        // YARN replaces the queue with a new one of the other type, created now.
        self.queues.stamp_now(id);
    }

    /// Apply conversions deferred by a reload once their queue has emptied, and remove
    /// empty dynamic queues (YARN-8191), as YARN's update does.
    pub(crate) fn tidy_queues(&mut self) {
        let mut changed = false;
        for i in 0..self.queues.len() {
            let id = QueueId(i as u32);
            if self.q(id).removed {
                continue;
            }
            if let Some(to_leaf) = self.q(id).pending_conversion {
                if !self.subtree_has_apps(id) {
                    self.convert(id, to_leaf);
                    changed = true;
                }
            }
        }
        // Children before parents, so an emptied dynamic parent goes in the same pass.
        for i in (1..self.queues.len()).rev() {
            let id = QueueId(i as u32);
            let q = self.q(id);
            if q.removed || !q.dynamic {
                continue;
            }
            let empty = if q.leaf { q.app_count() == 0 } else { q.children.is_empty() };
            if empty {
                self.queues.remove_subtree(id);
                changed = true;
            }
        }
        // Steady shares stay as they were: YARN's removeEmptyDynamicQueues does not recompute
        // them (the next node change or reload does).
        if changed {
            self.rebuild_order();
        }
    }

    /// Create a leaf (and any missing parents) for an application, as placement does.
    pub(crate) fn get_or_create_leaf(&mut self, name: &str) -> Result<QueueId, String> {
        if let Some(id) = self.queue_id(name) {
            return if self.q(id).leaf { Ok(id) } else { Err(format!("{name} is not a leaf queue")) };
        }
        if !name.starts_with("root.") || !valid_queue_path(name) {
            return Err(format!("invalid queue name '{name}'"));
        }
        if name.starts_with("root.default.") {
            return Err(format!("cannot create {name}: root.default is a leaf queue"));
        }
        // Find the deepest existing ancestor and check the whole chain before creating anything.
        let parts: Vec<&str> = name.split('.').collect();
        let mut existing = ROOT;
        let mut first_missing = 1;
        for i in 1..parts.len() {
            match self.queue_id(&parts[..=i].join(".")) {
                Some(id) => {
                    existing = id;
                    first_missing = i + 1;
                }
                None => break,
            }
        }
        if self.q(existing).leaf {
            return Err(format!("cannot create {name}: {} is a leaf queue", self.q(existing).name));
        }
        // A queue the file configures keeps its configured policy; others get the default.
        let mut parent_policy = self.q(existing).policy;
        for i in first_missing..parts.len() {
            let leaf = i + 1 == parts.len();
            let p = Self::configured_policy(&self.alloc, &parts[..=i].join("."));
            if !policy_applicable(p, leaf) || !child_policy_allowed(parent_policy, p) {
                return Err(format!(
                    "cannot create {}: policy {} is not allowed under a {} parent",
                    parts[..=i].join("."),
                    p.name(),
                    parent_policy.name()
                ));
            }
            parent_policy = p;
        }
        let mut parent = existing;
        for i in first_missing..parts.len() {
            let path = parts[..=i].join(".");
            let leaf = i + 1 == parts.len();
            let p = Self::configured_policy(&self.alloc, &path);
            parent = self.add_queue(&path, Some(parent), leaf, true, p);
        }
        self.recompute_steady_shares();
        self.rebuild_order();
        Ok(parent)
    }

    /// Build or reshape the tree for a new allocation file (initial load and reloads).
    pub(crate) fn apply_allocation(&mut self, file: AllocationFile) {
        // The warnings are this file's (they were every reload's, for the RM's life).
        self.warnings.clear();
        self.alloc = file;
        // Policies of existing queues, as YARN sets them before creating any queue.
        if let Err(violation) = self.verify_and_set_policy(ROOT) {
            self.warnings.push(format!(
                "scheduling policy violation in the allocation file ({violation}): the queues YARN checks after it keep their old policy"
            ));
        }

        // Create, convert, mark static.
        let configured: Vec<(String, bool)> = self
            .alloc
            .queues
            .iter()
            .skip(1)
            .map(|c| (c.path.clone(), c.queue_type == QueueType::Leaf && !c.reservable))
            .collect();
        let mut failed: Vec<String> = Vec::new();
        let stamp_before = self.queues.next_stamp_value();
        for (path, leaf) in &configured {
            if failed.iter().any(|f| path.starts_with(&format!("{f}."))) {
                continue;
            }
            match self.queue_id(path) {
                Some(id) => {
                    self.q_mut(id).dynamic = false;
                    if self.q(id).leaf != *leaf {
                        if self.subtree_has_apps(id) {
                            self.q_mut(id).pending_conversion = Some(*leaf);
                        } else {
                            self.convert(id, *leaf);
                        }
                    } else {
                        self.q_mut(id).pending_conversion = None;
                    }
                }
                None => {
                    let parent_path = path.rsplit_once('.').map(|(p, _)| p).unwrap_or("root");
                    let Some(parent) = self.queue_id(parent_path).filter(|&p| !self.q(p).leaf) else {
                        failed.push(path.clone());
                        continue;
                    };
                    let p = Self::configured_policy(&self.alloc, path);
                    if !policy_applicable(p, *leaf) || !child_policy_allowed(self.q(parent).policy, p) {
                        self.warnings.push(format!(
                            "queue {path} is not created: policy {} is not allowed under {} ({})",
                            p.name(),
                            self.q(parent).name,
                            self.q(parent).policy.name()
                        ));
                        failed.push(path.clone());
                        continue;
                    }
                    self.add_queue(path, Some(parent), *leaf, false, p);
                }
            }
        }
        let names = |leaf: bool| configured.iter().filter(|c| c.1 == leaf).map(|(p, _)| p.as_str()).collect::<Vec<_>>();
        self.stamp_in_yarn_order(stamp_before, &names(true), &names(false));
        // Queues no longer configured become dynamic: removed once empty (YARN-8191).
        for i in 1..self.queues.len() {
            let id = QueueId(i as u32);
            let name = self.q(id).name.clone();
            if !self.q(id).removed && self.alloc.queue(&name).is_none() {
                self.q_mut(id).dynamic = true;
            }
        }
        // YARN's onReload reinitialises every queue from the new file, where an ad hoc queue
        // has no maximum of its own (the file's default), recomputes the steady shares, and
        // only then gives ad hoc queues their parent's maxChildResources (applyChildDefaults):
        // their steady shares ignore that cap until the next recompute.
        self.reinit_settings(ROOT, false);
        self.refresh_max_shares();
        self.recompute_steady_shares();
        self.reinit_settings(ROOT, true);
        self.refresh_max_shares();
        self.rebuild_order();
    }

    /// Re-resolve every queue's settings top-down (parents first, for inheritance);
    /// `child_defaults`: ad hoc queues take their parent's `maxChildResources`.
    fn reinit_settings(&mut self, id: QueueId, child_defaults: bool) {
        let (name, parent, dynamic) = {
            let q = self.q(id);
            (q.name.clone(), q.parent, q.dynamic)
        };
        let settings = self.resolve_settings(&name, parent, dynamic && child_defaults);
        let reservable = self.alloc.queue(&name).is_some_and(|c| c.reservable);
        let q = self.q_mut(id);
        q.settings = settings;
        q.reservable = reservable;
        for c in self.q(id).children.clone() {
            self.reinit_settings(c, child_defaults);
        }
    }

    /// The queue's maximum share: configured maximum resolved against the current cluster,
    /// never below its minimum (cached; see `refresh_max_shares`).
    #[inline]
    pub fn max_share(&self, id: QueueId) -> Resource {
        self.q(id).max_share
    }

    fn resolve_max_share(&self, id: QueueId) -> Resource {
        let s = &self.q(id).settings;
        s.max_resources.resolve(self.cluster.total, self.types).componentwise_max(s.min_share)
    }

    /// Resolve every queue's max share again (the cluster or the configuration changed).
    pub(crate) fn refresh_max_shares(&mut self) {
        // Demands are capped by max shares, and shares are split within them.
        self.demand_full = true;
        self.shares_stale = true;
        // A parent's id is below its children's, so its path flag is set first.
        for i in 0..self.queues.len() {
            let m = self.resolve_max_share(QueueId(i as u32));
            self.set_max_share(QueueId(i as u32), m);
        }
    }

    /// A max share below unbounded in some type: only such a one can refuse usage.
    pub(crate) fn is_bounded(&self, max_share: &Resource) -> bool {
        *max_share != self.props.resource_types.unbounded()
    }

    /// Set a queue's max share and the flags that let allocations skip checking it.
    fn set_max_share(&mut self, id: QueueId, m: Resource) {
        let bounded = self.is_bounded(&m);
        let parent_bounded = self.q(id).parent.is_some_and(|p| self.q(p).path_bounded);
        let q = self.q_mut(id);
        q.max_share = m;
        q.max_share_bounded = bounded;
        q.path_bounded = bounded || parent_bounded;
    }

    /// The configured maximum (no min floor), resolved against the current cluster.
    pub fn configured_max_resources(&self, id: QueueId) -> Resource {
        self.q(id).settings.max_resources.resolve(self.cluster.total, self.types)
    }

    /// Own or inherited `maxContainerAllocation`; unbounded when nowhere set.
    pub fn max_container_allocation(&self, id: QueueId) -> Resource {
        self.path_to_root(id)
            .find_map(|q| self.q(q).settings.max_container_allocation)
            .unwrap_or_else(|| self.props.resource_types.unbounded())
    }

    /// The queue's ACL or an ancestor's grants `user` the `acl` (administer implies submit).
    pub(crate) fn holds_acl(&self, id: QueueId, user: &str, groups: &[String], acl: QueueAcl) -> bool {
        self.path_to_root(id).any(|q| {
            let s = &self.q(q).settings;
            s.acl_administer_apps.allows(user, groups)
                || (acl == QueueAcl::SubmitApplications && s.acl_submit_apps.allows(user, groups))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_validity() {
        for bad in ["", "  ", " a", "a ", " a ", "\u{a0}", "a\u{a0}", "\u{a0}a\u{a0}"] {
            assert!(!valid_component(bad), "{bad:?}");
        }
        assert!(valid_component("a b"));
        assert!(valid_component("a"));
        assert!(!valid_queue_path("root..a"));
    }
}
