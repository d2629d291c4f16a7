//! The live containers by id, with each application's listed beside them: per-application
//! questions (its containers for a view, its preemption marks on every allocate) cost what
//! the application has, not what the cluster runs. Every running container a node reports,
//! every heartbeat, is looked up here: by its id parsed to numbers (a few dozen cycles,
//! nothing allocated), hashed and compared in place, where a string key sent each compare
//! to the key's own allocation, usually a cache miss.

use std::collections::{BTreeMap, HashMap, HashSet};

use fairloom_model::{ApplicationId, ContainerId};
use fairloom_scheduler::NodeId;

use super::RmContainer;

#[derive(Debug, Default)]
pub struct LiveContainers {
    by_id: HashMap<ContainerId, RmContainer>,
    by_app: BTreeMap<ApplicationId, AppContainers>,
    /// How many hold a scheduler slot (live or not: the scheduler may have ended it).
    slotted: usize,
    /// Moves on at every change; an application's `changed` is its value at its last one.
    clock: u64,
}

#[derive(Debug, Default)]
struct AppContainers {
    /// Unordered: kept up at every allocation and completion, listed (sorted) only for a
    /// view or a sweep. A tree of ids sharing their first thirty-odd characters cost a
    /// string compare per level at every insert.
    ids: HashSet<ContainerId>,
    changed: u64,
    /// Σ resource and Σ resource × allocation time (ms) of its live containers, memory
    /// then vcores: what they have used by `now` is `now × Σ − Σ(× time)`, without a walk.
    resource: [i128; 2],
    resource_since: [i128; 2],
}

impl AppContainers {
    fn count(&mut self, c: &RmContainer, sign: i128) {
        for (i, r) in [c.resource.memory, c.resource.vcores].into_iter().enumerate() {
            self.resource[i] += sign * i128::from(r);
            self.resource_since[i] += sign * i128::from(r) * i128::from(c.allocated_at);
        }
    }
}

impl LiveContainers {
    pub fn insert(&mut self, c: RmContainer) {
        self.clock += 1;
        let entry = self.by_app.entry(c.app).or_default();
        entry.ids.insert(c.cid);
        entry.changed = self.clock;
        entry.count(&c, 1);
        self.slotted += usize::from(c.slot.is_some());
        // An id inserted again replaces its entry (the id names the app): it counts once.
        if let Some(old) = self.by_id.insert(c.cid, c) {
            entry.count(&old, -1);
            self.slotted -= usize::from(old.slot.is_some());
        }
    }

    pub fn remove(&mut self, id: &str) -> Option<RmContainer> {
        self.remove_id(&id.parse().ok()?)
    }

    /// Container `id` if it lives on `node`, removed: a node reports its own containers
    /// only, and what it says of others' is not taken.
    pub fn remove_on(&mut self, id: &str, node: NodeId) -> Option<RmContainer> {
        // One lookup: this runs for every end every node reports.
        let c = match self.by_id.entry(id.parse().ok()?) {
            std::collections::hash_map::Entry::Occupied(e) if e.get().node_sched == node => e.remove(),
            _ => return None,
        };
        Some(self.forget(c))
    }

    fn remove_id(&mut self, id: &ContainerId) -> Option<RmContainer> {
        let c = self.by_id.remove(id)?;
        Some(self.forget(c))
    }

    /// The bookkeeping of a container just taken out of `by_id`.
    fn forget(&mut self, c: RmContainer) -> RmContainer {
        self.clock += 1;
        self.slotted -= usize::from(c.slot.is_some());
        if let Some(entry) = self.by_app.get_mut(&c.app) {
            entry.ids.remove(&c.cid);
            entry.changed = self.clock;
            entry.count(&c, -1);
            if entry.ids.is_empty() {
                self.by_app.remove(&c.app);
            }
        }
        c
    }

    pub fn get(&self, id: &str) -> Option<&RmContainer> {
        self.get_id(&id.parse().ok()?)
    }

    /// By an id already parsed.
    pub fn get_id(&self, id: &ContainerId) -> Option<&RmContainer> {
        self.by_id.get(id)
    }

    /// Mark a container running (what its node, `node`, reported). `None` when it is not
    /// live there; otherwise the container, if this report is the first to say it runs.
    pub fn set_running(&mut self, id: &str, node: NodeId) -> Option<Option<&RmContainer>> {
        let c = self.by_id.get_mut(&id.parse().ok()?)?;
        if c.node_sched != node {
            return None;
        }
        if c.running {
            return Some(None);
        }
        c.running = true;
        self.clock += 1;
        if let Some(entry) = self.by_app.get_mut(&c.app) {
            entry.changed = self.clock;
        }
        Some(Some(&*c))
    }

    /// Live containers, and applications holding any.
    pub fn counts(&self) -> (usize, usize) {
        (self.by_id.len(), self.by_app.len())
    }

    /// Every live container, by application and then id (a stable order, for the messages
    /// built from it).
    pub fn values(&self) -> impl Iterator<Item = &RmContainer> {
        self.by_app.keys().flat_map(|app| self.of_app(*app))
    }

    /// `app`'s live containers, every attempt, in the order of their id strings.
    pub fn of_app(&self, app: ApplicationId) -> impl Iterator<Item = &RmContainer> {
        let mut all: Vec<&RmContainer> =
            self.by_app.get(&app).into_iter().flat_map(|e| &e.ids).filter_map(|id| self.by_id.get(id)).collect();
        all.sort_unstable_by(|a, b| a.id.cmp(&b.id));
        all.into_iter()
    }

    /// MB-seconds and vcore-seconds `app`'s live containers have used from their allocation
    /// to `now` (YARN adds these to a running app's aggregate usage). One division over the
    /// sums, where YARN divides per container: it may count up to one unit per container
    /// more.
    pub fn running_seconds(&self, app: ApplicationId, now: i64) -> (i64, i64) {
        let Some(e) = self.by_app.get(&app) else { return (0, 0) };
        let used = |i: usize| {
            let ms = i128::from(now) * e.resource[i] - e.resource_since[i];
            i64::try_from((ms / 1000).max(0)).unwrap_or(i64::MAX)
        };
        (used(0), used(1))
    }

    /// How many of these containers hold a scheduler slot. Every container the scheduler
    /// runs has exactly one of ours pointing at it, so when this equals the scheduler's
    /// live count, no slot of ours is dead.
    pub fn slotted(&self) -> usize {
        self.slotted
    }

    /// How many live containers `app` has.
    pub fn count_of(&self, app: ApplicationId) -> usize {
        self.by_app.get(&app).map_or(0, |e| e.ids.len())
    }

    /// When `app`'s containers last changed (added, removed, started), as a value that
    /// differs after every change, also across an application having none in between;
    /// `None` while it has none. Views rebuild an application's list only when it moved.
    pub fn changed(&self, app: ApplicationId) -> Option<u64> {
        self.by_app.get(&app).map(|e| e.changed)
    }

    /// The scheduler let `app`'s containers go; their processes may still be exiting.
    pub fn detach_app(&mut self, app: ApplicationId) {
        for id in self.by_app.get(&app).into_iter().flat_map(|e| &e.ids) {
            if self.by_id.get_mut(id).and_then(|c| c.slot.take()).is_some() {
                self.slotted -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairloom_protocol::Res;

    fn container(app: u32, seq: u32) -> RmContainer {
        let id = format!("container_1_{app:04}_01_{seq:06}");
        RmContainer {
            cid: id.parse().expect("a container id"),
            id,
            app: ApplicationId { cluster_timestamp: 1, id: app },
            attempt: 1,
            slot: None,
            node: "n1:8041".into(),
            node_sched: NodeId(1),
            resource: Res::default(),
            priority: 1,
            is_am: false,
            allocated_at: 0,
            running: false,
        }
    }

    #[test]
    fn running_seconds_follow_the_live_containers() {
        let mut live = LiveContainers::default();
        let app = ApplicationId { cluster_timestamp: 1, id: 1 };
        live.insert(RmContainer { resource: Res::new(1024, 1), allocated_at: 1_000, ..container(1, 1) });
        live.insert(RmContainer { resource: Res::new(2048, 2), allocated_at: 3_000, ..container(1, 2) });
        // 1024 MB for 4 s and 2048 MB for 2 s.
        assert_eq!(live.running_seconds(app, 5_000), (8192, 8));
        live.insert(RmContainer { resource: Res::new(1024, 1), allocated_at: 1_000, ..container(1, 1) });
        assert_eq!(live.running_seconds(app, 5_000), (8192, 8), "an id inserted again counts once");
        live.remove("container_1_0001_01_000001");
        assert_eq!(live.running_seconds(app, 5_000), (4096, 4), "a finished container counts no more here");
        live.remove("container_1_0001_01_000002");
        assert_eq!(live.running_seconds(app, 5_000), (0, 0));
    }

    #[test]
    fn an_apps_containers_list_in_id_order_whatever_the_insertion_order() {
        let mut live = LiveContainers::default();
        for (app, seq) in [(2, 1), (1, 3), (1, 1), (1, 2)] {
            live.insert(container(app, seq));
        }
        let all: Vec<&str> = live.values().map(|c| c.id.as_str()).collect();
        assert_eq!(
            all,
            [
                "container_1_0001_01_000001",
                "container_1_0001_01_000002",
                "container_1_0001_01_000003",
                "container_1_0002_01_000001"
            ]
        );
    }

    #[test]
    fn slotted_counts_the_containers_holding_a_scheduler_slot() {
        use crate::core::Slot;
        use fairloom_scheduler::{AppId, ContainerId};
        let slot = |n| Some(Slot { id: ContainerId(n), seq: n, app: AppId::nth(0) });
        let mut live = LiveContainers::default();
        live.insert(RmContainer { slot: slot(1), ..container(1, 1) });
        live.insert(RmContainer { slot: slot(2), ..container(1, 2) });
        live.insert(container(2, 1));
        assert_eq!(live.slotted(), 2, "a recovered-and-detached container holds none");
        live.insert(RmContainer { slot: slot(3), ..container(1, 2) });
        assert_eq!(live.slotted(), 2, "a replaced entry counts once");
        live.remove("container_1_0001_01_000001");
        assert_eq!(live.slotted(), 1);
        live.remove("container_1_0002_01_000001");
        assert_eq!(live.slotted(), 1);
        live.detach_app(ApplicationId { cluster_timestamp: 1, id: 1 });
        assert_eq!(live.slotted(), 0);
        live.remove("container_1_0001_01_000002");
        assert_eq!(live.slotted(), 0, "a detached container leaves without a slot to count");
    }

    #[test]
    fn the_per_app_index_follows_inserts_and_removals() {
        let mut live = LiveContainers::default();
        for (app, seq) in [(1, 1), (1, 2), (2, 1)] {
            live.insert(container(app, seq));
        }
        let app1 = ApplicationId { cluster_timestamp: 1, id: 1 };
        let ids = |live: &LiveContainers| live.of_app(app1).map(|c| c.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&live), ["container_1_0001_01_000001", "container_1_0001_01_000002"]);
        assert!(live.remove("container_1_0001_01_000001").is_some());
        assert!(live.remove("container_1_0001_01_000001").is_none());
        assert_eq!(ids(&live), ["container_1_0001_01_000002"]);
        let before = live.changed(app1);
        assert!(before.is_some());
        live.remove("container_1_0001_01_000002");
        assert!(ids(&live).is_empty());
        assert_eq!(live.changed(app1), None);
        live.insert(container(1, 3));
        assert!(live.changed(app1) > before, "a new list never looks like an old one");
        live.remove("container_1_0001_01_000003");
        assert!(!live.by_app.contains_key(&app1), "an application without containers leaves no entry");
        assert_eq!(live.values().count(), 1);
        let app2 = ApplicationId { cluster_timestamp: 1, id: 2 };
        let before = live.changed(app2);
        assert!(live.set_running("container_1_0002_01_000001", NodeId(2)).is_none(), "only its own node says so");
        assert_eq!(live.changed(app2), before);
        assert!(live.set_running("container_1_0002_01_000001", NodeId(1)).is_some_and(|first| first.is_some()));
        assert!(live.changed(app2) > before, "starting is a change the views show");
        assert!(live.set_running("container_1_0002_01_000001", NodeId(1)).is_some_and(|first| first.is_none()), "once");
        assert!(live.set_running("container_1_0001_01_000001", NodeId(1)).is_none());
        assert!(live.remove_on("container_1_0002_01_000001", NodeId(2)).is_none(), "another node's report");
        assert!(live.get("container_1_0002_01_000001").is_some(), "is not taken");
        // Looked up by the id's numbers, as YARN's ContainerId.fromString compares them.
        assert!(live.get("container_1_2_1_1").is_some_and(|c| c.id == "container_1_0002_01_000001"));
        assert!(live.get("container_1_0002_01").is_none() && live.remove("not a container").is_none());
    }
}
