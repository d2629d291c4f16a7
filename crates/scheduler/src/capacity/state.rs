//! The Capacity Scheduler's objects: queues with their per-partition capacities and usage,
//! users of a leaf, applications with their requests. Plain data in arenas.

use std::collections::BTreeMap;

use fairloom_config::CapacityQueueConfig;
use fairloom_model::{ApplicationId, Millis, Resource};

use crate::driver::AppState;
use crate::ids::{AppId, LocationId, NodeId, PartitionId, QueueId};
use crate::live::LiveList;
use crate::reason::WaitReason;

/// A queue's capacities and usage in one partition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueuePart {
    /// The queue may use the partition (its accessible node labels; always for the default).
    pub accessible: bool,
    /// Fraction of the parent's guarantee (float32, as YARN keeps it).
    pub capacity: f32,
    /// Fraction of the parent's maximum.
    pub max_capacity: f32,
    pub abs_capacity: f32,
    pub abs_max_capacity: f32,
    /// Configured absolute guarantee / maximum, when given as resources.
    pub min_absolute: Option<Resource>,
    pub max_absolute: Option<Resource>,
    pub max_am_percent: f32,
    /// The guarantee and maximum as resources, resolved against the partition's resource
    /// (YARN's effective minimum and maximum resource).
    pub guaranteed: Resource,
    pub maximum: Resource,
    /// Containers and reservations of the subtree in this partition (changed only by
    /// `charge`, see [`super::charge`]).
    pub used: super::charge::Usage,
    /// Reservations of the subtree (what YARN's QueueMetrics count, which the walk reads).
    pub reserved: Resource,
    /// How far YARN's other count of reservations, the queue's `ResourceUsage` (which the
    /// preemption policy and the queue's report read), is off from `reserved`: a move with
    /// reservations (`moveApplication`'s detach and attach move them as used) leaves them
    /// counted on the old path for good and makes the new path's count go below zero when
    /// they end. Kept for the queue's life, across refreshes.
    pub reserved_drift: Resource,
    /// Leaves: the shares users took with them when YARN dropped them holding something
    /// (after a move to the application's own queue): `UsersManager.removeUser` leaves a
    /// user's share in the queue's sum, which later deltas of the user made afresh bring back
    /// down. Part of `usage_ratio`, kept across refreshes.
    pub usage_ratio_drift: f32,
    /// Leaves: outstanding asks of its activated applications in this partition.
    pub pending: Resource,
    /// Leaves: AM resources of its activated applications whose AM is in this partition.
    pub am_used: Resource,
    /// Leaves: Σ of its users' shares of the partition (`UsersManager`'s usage ratio, a float
    /// kept by deltas as YARN keeps it).
    pub usage_ratio: f32,
    /// Leaves: what its active users use here.
    pub active_used: Resource,
    /// This queue's key in its parent's `members` for this partition, while it is one.
    pub key: Option<super::order::ChildKey>,
    /// Parents: the children with pending demand here, in the ordering policy's order.
    pub members: std::collections::BTreeSet<super::order::ChildKey>,
    /// Parents: those of `members` holding a default-partition reservation, the only ones
    /// a parent over its limit can let through (continue-looking).
    pub reserving: std::collections::BTreeSet<super::order::ChildKey>,
    /// Leaves: the activated applications with pending demand here, in the ordering policy's order.
    pub apps: std::collections::BTreeSet<super::order::AppKey>,
    /// Leaves: the user limit last computed here, per scheduling mode (`[ignore, respect]`
    /// partition exclusivity); cleared whenever what it depends on changes (YARN's
    /// `userLimitNeedsRecompute`).
    pub user_limit_cache: [Option<Resource>; 2],
    /// The last time (a number from the scheduler's wait sequence) this queue was found at
    /// its limit by a walk in this partition, and that limit: every application under it
    /// that recorded nothing newer waits for it.
    pub limit_note: Option<(u64, Resource)>,
    /// Leaves: the last RESPECT walk found every application here held by the cached user
    /// limit. Nothing that could free one has happened since while the cache stands and no
    /// app joined the order, so the kept walk passes its applications by (it still visits
    /// the leaf: the visit publishes the leaf's limit).
    pub all_users_held: bool,
}

/// YARN's `UsersManager.getNumActiveUsers`, which the user AM limit divides by, is the active
/// users plus `activeUsersWithOnlyPendingApps`, and the second is a count taken only when a
/// user limit is computed afresh: a computation for a (partition, mode, active-or-all) whose
/// last one saw an older version of the users' state (a user's usage changed, a user became
/// active or inactive, the cluster or the configuration changed). A user whose first
/// application was just submitted is not counted until then.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsersCount {
    /// `latestVersionOfUsersState`.
    pub version: u64,
    /// By (partition, mode, active or all): the version its last computation saw.
    pub seen: Vec<Option<u64>>,
    /// `activeUsersWithOnlyPendingApps` as last counted.
    pub waiting_only: u32,
}

/// One user of a leaf queue.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CsUser {
    pub name: String,
    /// By partition: containers and reservations of the user's applications.
    pub used: Vec<Resource>,
    pub am_used: Vec<Resource>,
    /// Activated applications.
    pub active_apps: u32,
    /// Applications waiting for activation.
    pub pending_apps: u32,
    /// Applications that make the user active (`CsApp::users_active`): it is active while it
    /// has one.
    pub asking_apps: u32,
    /// By partition: its share of the partition (`used / partition`), as last charged.
    pub ratio: Vec<f32>,
    /// By partition: how far `used` is off from its applications' containers and
    /// reservations, as YARN's count is after a move to the application's own queue
    /// dropped the user with its usage while the containers ran on (0 or negative; it goes
    /// with the user).
    pub used_drift: Vec<Resource>,
}

impl CsUser {
    pub fn new(name: &str, partitions: usize) -> Self {
        Self {
            name: name.to_string(),
            used: vec![Resource::none(); partitions],
            am_used: vec![Resource::none(); partitions],
            ratio: vec![0.0; partitions],
            used_drift: vec![Resource::none(); partitions],
            ..Default::default()
        }
    }

    pub fn is_active(&self) -> bool {
        self.asking_apps > 0
    }

    /// A freed slot holds nothing (a user dropped with a drift leaves no count behind).
    fn clear(&mut self) {
        for r in self.used.iter_mut().chain(&mut self.am_used).chain(&mut self.used_drift) {
            *r = Resource::none();
        }
        self.ratio.iter_mut().for_each(|x| *x = 0.0);
    }

    pub fn total_apps(&self) -> u32 {
        self.active_apps + self.pending_apps
    }

    /// YARN drops a user from a queue when its last application leaves.
    pub fn present(&self) -> bool {
        self.total_apps() > 0
    }
}

/// The users of a leaf, in slots an application keeps (no name lookup on the hot path). A
/// user whose last application left gives its slot up for the next new user (a leaf kept
/// every user that ever submitted to it, for the RM's life).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Users {
    list: Vec<CsUser>,
    slots: std::collections::HashMap<String, u32>,
    free: Vec<u32>,
}

impl Users {
    pub fn slot(&self, name: &str) -> Option<u32> {
        self.slots.get(name).copied()
    }

    pub fn get(&self, name: &str) -> Option<&CsUser> {
        self.slot(name).map(|s| &self.list[s as usize]).filter(|u| u.present())
    }

    pub fn at(&self, slot: u32) -> &CsUser {
        &self.list[slot as usize]
    }

    pub fn at_mut(&mut self, slot: u32) -> &mut CsUser {
        &mut self.list[slot as usize]
    }

    /// The user's slot, made when it is new.
    pub fn enter(&mut self, name: &str, partitions: usize) -> u32 {
        if let Some(s) = self.slot(name) {
            return s;
        }
        let s = crate::cluster::take_slot(&mut self.free, self.list.len());
        crate::cluster::put_in_slot(&mut self.list, s, CsUser::new(name, partitions));
        self.slots.insert(name.to_string(), s);
        s
    }

    /// Give up `slot` if its user has no application left and holds nothing. True if it went.
    pub fn release_if_idle(&mut self, slot: u32) -> bool {
        let u = &self.list[slot as usize];
        let held = u.used.iter().zip(&u.used_drift).map(|(used, drift)| used.saturating_sub(*drift));
        let holds = held.chain(u.am_used.iter().copied()).any(|r| !r.is_none());
        if u.present() || holds || u.asking_apps > 0 {
            return false;
        }
        if self.slots.get(&u.name) == Some(&slot) {
            self.slots.remove(&u.name);
            self.free.push(slot);
            self.list[slot as usize].clear();
            return true;
        }
        false
    }

    /// Give up `slot` now, whatever its user still holds (YARN's `removeUser`).
    pub fn remove(&mut self, slot: u32) {
        let name = self.list[slot as usize].name.clone();
        if self.slots.get(&name) == Some(&slot) {
            self.slots.remove(&name);
            self.free.push(slot);
            self.list[slot as usize].clear();
        }
    }

    /// Slots held by a name (what a leaf keeps: its users with applications).
    pub fn held(&self) -> usize {
        self.slots.len()
    }

    /// Slots, held or free (at most the most users the leaf had at once).
    pub fn slots(&self) -> usize {
        self.list.len()
    }

    /// The users with applications in the queue.
    pub fn iter(&self) -> impl Iterator<Item = &CsUser> {
        self.list.iter().filter(|u| u.present())
    }

    /// Every slot, present or not (usage can only be non-zero for present users).
    pub fn slots_mut(&mut self) -> impl Iterator<Item = &mut CsUser> {
        self.list.iter_mut()
    }

    pub fn present(&self) -> usize {
        self.iter().count()
    }

    /// The present users by name (what the auditor compares).
    pub fn to_map(&self) -> BTreeMap<String, CsUser> {
        self.iter().map(|u| (u.name.clone(), u.clone())).collect()
    }

    pub fn from_map(map: BTreeMap<String, CsUser>) -> Self {
        let mut users = Self::default();
        for (name, u) in map {
            users.slots.insert(name, users.list.len() as u32);
            users.list.push(u);
        }
        users
    }
}

#[derive(Debug, Clone)]
pub struct CsQueue {
    /// Full path: `root.a.b`.
    pub name: String,
    pub parent: Option<QueueId>,
    /// In configuration order.
    pub children: Vec<QueueId>,
    pub leaf: bool,
    /// Depth below root.
    pub depth: usize,
    /// Position among its parent's children (the ordering's last tie-break).
    pub index_in_parent: u32,
    pub settings: CapacityQueueConfig,
    /// By partition id.
    pub parts: Vec<QueuePart>,
    /// Leaves: activated applications, and applications waiting for activation.
    pub active: Vec<AppId>,
    pub waiting: Vec<AppId>,
    /// Leaves with fair ordering: applications whose re-sort is due (see [`OrderedBy`]).
    pub reorder: Vec<AppId>,
    pub users: Users,
    /// Leaves: active users (see `CsUser::asking_apps`).
    pub active_users: u32,
    /// Leaves: YARN's `UsersManager` state version and what was counted at its last user-limit
    /// computation (see [`UsersCount`]).
    pub users_count: UsersCount,
    /// The slot no longer belongs to the tree (a reload removed it).
    pub removed: bool,
    /// Leaves: the limit the queue last worked under in the default partition, as YARN
    /// publishes it (`queueResourceLimitsInfo`): set when the cluster or the configuration
    /// changes and whenever an allocation walk examines one of its applications, and read by
    /// the AM limit in between. A cache in YARN, so a value of the past, not the limit now.
    pub published_limit: Resource,
}

impl QueuePart {
    /// The queue's reservations as its `ResourceUsage` has them (see `reserved_drift`).
    pub fn usage_reserved(&self) -> Resource {
        self.reserved.saturating_add(self.reserved_drift)
    }

    /// Every app here was held by the user limit still cached for this mode.
    pub fn held(&self) -> bool {
        self.all_users_held && self.user_limit_cache[1].is_some()
    }

    /// Forget the user limits (what they depend on changed) and with them the hold.
    pub fn forget_user_limit(&mut self) {
        self.user_limit_cache = [None; 2];
        self.all_users_held = false;
    }
}

impl CsQueue {
    pub fn part(&self, p: PartitionId) -> &QueuePart {
        &self.parts[p.index()]
    }

    pub fn app_count(&self) -> usize {
        self.active.len() + self.waiting.len()
    }
}

/// The asks of one application at one resource name (`*`, a rack or a host).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalityAsk {
    pub capability: Resource,
    pub count: i32,
    pub relax: bool,
}

/// All asks of one application at one priority (YARN's scheduler key), keyed by resource
/// name; the `*` ask carries the priority's node-label expression.
#[derive(Debug, Clone)]
pub struct CsRequest {
    pub priority: i32,
    pub any: Option<LocalityAsk>,
    /// The partition the `*` ask asks for.
    pub label: PartitionId,
    pub locations: BTreeMap<LocationId, LocalityAsk>,
    /// Node heartbeats that offered this key (delay scheduling).
    pub scheduling_opportunities: u32,
    /// Offers of labelled nodes to a default-partition ask (non-exclusive sharing waits for
    /// as many as the cluster has nodes).
    pub missed_non_partitioned: u32,
    /// Times a reserved node was re-reserved for this key.
    pub re_reservations: u32,
}

impl CsRequest {
    pub fn any_count(&self) -> i32 {
        self.any.map_or(0, |a| a.count.max(0))
    }

    pub fn at(&self, location: LocationId) -> Option<&LocalityAsk> {
        self.locations.get(&location).filter(|a| a.count > 0)
    }

    /// YARN's `canDelayTo`: no ask at that name, or one that relaxes locality.
    pub fn can_delay_to(&self, location: Option<LocationId>) -> bool {
        match location {
            None => self.any.is_none_or(|a| a.relax),
            Some(l) => self.locations.get(&l).is_none_or(|a| a.relax),
        }
    }

    /// YARN's `getUniqueLocationAsks`.
    pub fn unique_location_asks(&self) -> usize {
        self.locations.len() + usize::from(self.any.is_some())
    }
}

/// A reservation the application holds: the node and the request key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldReservation {
    pub node: NodeId,
    pub priority: i32,
    pub resource: Resource,
    pub partition: PartitionId,
    /// When it was made (re-reservations keep it, as YARN keeps the reserved container).
    pub since: Millis,
}

/// YARN's FairOrderingPolicy sorts applications by a copy of their usage and pending
/// (`ResourceUsage`'s cached used and pending, memory), taken when the application is
/// re-sorted: at the leaf's next assignment or preemption pass after one of its containers
/// was allocated, reserved or released (`entitiesToReorder`). Between re-sorts the
/// application keeps its old place, whatever its usage does meanwhile: a served reservation,
/// a recovered container or a move re-sort nothing, and a reload's new policy object forgets
/// the re-sorts still due.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrderedBy {
    pub used_mb: i64,
    pub pending_mb: i64,
    /// A re-sort is due (the leaf lists it in its `reorder`).
    pub due: bool,
}

impl OrderedBy {
    /// `getCachedDemand`: cached used plus cached pending.
    pub fn demand_mb(&self) -> i64 {
        self.used_mb + self.pending_mb
    }
}

#[derive(Debug, Clone)]
pub struct CsApp {
    pub id: AppId,
    /// Forgotten by its owner: the slot is free (see [`CapacityScheduler::forget_app`]).
    pub forgotten: bool,
    pub name: String,
    pub yarn_id: ApplicationId,
    pub user: String,
    pub queue: Option<QueueId>,
    /// The user's slot in its leaf's `users`.
    pub user_slot: u32,
    /// Application priority (higher runs first), capped at the cluster's maximum.
    pub priority: i32,
    pub start_time: Millis,
    pub state: AppState,
    pub rejection: Option<String>,
    /// In its leaf's ordering policy (YARN's "active" application).
    pub activated: bool,
    /// Among the applications that make its user active (YARN's `usersApplications` in the
    /// queue's `UsersManager`): added when one of its keys starts asking while its user has
    /// an activated application, taken out when it asks for nothing (see `key_starts_asking`).
    pub users_active: bool,
    pub unmanaged_am: bool,
    /// What activation charges against the AM limits, and in which partition.
    pub am_resource: Resource,
    pub am_partition: PartitionId,
    pub am_running: bool,
    pub default_label: PartitionId,
    /// By priority, lowest number (highest YARN priority) first.
    pub requests: Vec<CsRequest>,
    /// By partition: outstanding `*` asks.
    pub pending: Vec<Resource>,
    /// By partition: live containers (changed only by `charge`).
    pub used: Vec<super::charge::Usage>,
    /// By partition: what the application was charged beyond its live containers: a
    /// reservation served at another size charges the application the ask's size while the
    /// container, the node, the queues and the user hold the reserved one (YARN's commit
    /// leaves the queue's books alone for an allocation from a reservation), and the end gives
    /// back the reserved size everywhere, as in YARN. 0 unless that happened.
    pub used_drift: Vec<Resource>,
    /// By partition: held reservations.
    pub reserved: Vec<Resource>,
    /// Σ of live containers, all partitions (changed only by `charge`).
    pub usage: super::charge::Usage,
    pub live: LiveList,
    pub next_container_seq: u32,
    pub reservations: Vec<HeldReservation>,
    /// By priority with reservations: the most this app ever held at once since its first one
    /// there. YARN keeps them in a `HashMap<NodeId, RMContainer>` per key, which never shrinks
    /// until it empties, so its iteration order (continue-looking's pick) follows that peak.
    pub reservation_peaks: Vec<(i32, usize)>,
    /// By partition: its key in its leaf's order, while it is in it.
    pub keys: Vec<Option<super::order::AppKey>>,
    /// What a fair-ordered leaf sorts it by: usage and pending as of its last re-sort.
    pub ordered_by: OrderedBy,
    /// The leaf whose user limit the app's headroom is computed from (YARN's headroom
    /// provider, set when a user limit was computed for the app; an AM heartbeat asks it).
    pub headroom_leaf: Option<QueueId>,
    pub preempted: u32,
    pub marked: u32,
    /// Why the app waits, as last recorded, and when (the scheduler's wait sequence): read
    /// through `CapacityScheduler::wait_reason`, which also weighs newer queue notes.
    pub wait: Option<WaitReason>,
    pub wait_seq: u64,
}

impl crate::cluster::app_table::AppRecord for CsApp {
    fn forgotten(&self) -> bool {
        self.forgotten
    }
}

impl CsApp {
    pub fn is_alive(&self) -> bool {
        matches!(self.state, AppState::Accepted | AppState::Running)
    }

    /// Any outstanding ask, any partition.
    pub fn has_pending(&self) -> bool {
        self.pending.iter().any(|r| r.any_positive())
    }

    pub fn total_pending(&self) -> Resource {
        self.pending.iter().fold(Resource::none(), |acc, r| acc.saturating_add(*r))
    }

    /// `requests` is kept sorted by priority (`set_asks` inserts in order).
    pub fn request(&self, priority: i32) -> Option<usize> {
        self.requests.binary_search_by_key(&priority, |r| r.priority).ok()
    }
}
