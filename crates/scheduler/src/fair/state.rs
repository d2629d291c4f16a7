//! The scheduler's objects: queues, applications with their requests, nodes, containers.
//! Plain data in arenas, indexed by the dense ids of [`crate::ids`].

use std::collections::BTreeMap;

use fairloom_config::{Acl, ConfigurableResource, PolicyKind};
use fairloom_model::{ApplicationId, Millis, NodeType, Resource};

use super::order::OrderKey;
pub use crate::cluster::{Container, Node, Reservation};
pub use crate::driver::AppState;
use crate::ids::{AppId, LocationId, NodeId, QueueId};
use crate::reason::WaitReason;

/// A queue's effective settings, after defaults and inheritance. In C order: the two a
/// re-keying reads (weight, min share) first, next to the queue's hot fields.
#[derive(Debug, Clone, PartialEq)]
#[repr(C)]
pub struct QueueSettings {
    pub weight: f32,
    pub min_share: Resource,
    /// Configured maximum (own, `maxChildResources` of the parent for a dynamic queue,
    /// or `queueMaxResourcesDefault`); percentages are resolved against the current cluster.
    pub max_resources: ConfigurableResource,
    pub max_child_resources: Option<ConfigurableResource>,
    pub max_running_apps: i32,
    pub max_am_share: f32,
    /// Own `maxContainerAllocation`; unset means inherited from the parent.
    pub max_container_allocation: Option<Resource>,
    pub fair_share_preemption_timeout_ms: Option<i64>,
    pub min_share_preemption_timeout_ms: Option<i64>,
    pub fair_share_preemption_threshold: f32,
    pub allow_preemption_from: bool,
    pub acl_submit_apps: Acl,
    pub acl_administer_apps: Acl,
}

/// A queue. In C order: first what the heartbeat walk and every re-keying read (the ordered
/// members, the queue's own key and the values it is computed from, the max-share flags),
/// then the settings, whose weight and min share come first; the rest (names, app lists,
/// shares) is read by updates, submissions and reports. See [`App`] for why.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct Queue {
    /// Its creation stamp: YARN keeps queues in creation order (children, leaves).
    pub created: u64,
    /// `children` in YARN's order (by creation stamp), for the walks YARN does without
    /// sorting: kept here, not sorted at each walk, as waiting applications are released on
    /// every application's end.
    pub yarn_children: Vec<QueueId>,
    /// Applications held (not forgotten) that name this queue as theirs: a removed queue's
    /// slot is reused only once none does (finished ones read their queue's name through it).
    pub app_refs: u32,
    /// Children (or, in a leaf, apps) with pending demand, in the policy's order.
    pub members: super::members::Members,
    /// This queue's key in its parent's `members`, while it is one.
    pub order_key: Option<OrderKey>,
    /// Changed only by `charge` (see [`super::charge`]).
    pub usage: super::charge::Usage,
    pub demand: Resource,
    pub parent: Option<QueueId>,
    /// Rank of the name among all queue names (the tie-break).
    pub order_rank: u32,
    pub leaf: bool,
    /// `max_share` is finite in some type (otherwise no usage can exceed it).
    pub max_share_bounded: bool,
    /// This queue or an ancestor has a bounded max share: the max-share checks of an
    /// allocation below it must run.
    pub path_bounded: bool,
    pub policy: PolicyKind,
    pub settings: QueueSettings,
    /// Full path: `root.a.b`.
    pub name: String,
    pub children: Vec<QueueId>,
    /// Created at run time by placement rather than configured.
    pub dynamic: bool,
    pub reservable: bool,
    /// The slot is no longer part of the tree (removed by a reload or as an empty dynamic queue).
    pub removed: bool,
    /// A leaf/parent conversion the configuration asks for, deferred while the queue has apps.
    pub pending_conversion: Option<bool>,
    /// Leaves: runnable and waiting applications, in arrival order.
    pub runnable_apps: Vec<AppId>,
    pub non_runnable_apps: Vec<AppId>,
    /// Runnable applications in this subtree (maxRunningApps and "active").
    pub runnable_count: u32,
    /// Σ of the children's (or apps') demands before the max-share cap, kept between
    /// updates so a changed app moves only its own path.
    pub demand_sum: Resource,
    /// YARN's AM usage of the leaf: its runnable apps' running AMs plus `am_drift`.
    pub am_usage: Resource,
    /// What YARN's AM usage lacks for the apps moved in with their AM running (its
    /// `executeMove` never adds their AM; their end still subtracts it): 0 or negative, kept
    /// for the queue's life, so that AM limits admit what YARN's admit.
    pub am_drift: Resource,
    pub fair_share: Resource,
    pub steady_fair_share: Resource,
    /// The effective max share, resolved against the current cluster.
    pub max_share: Resource,
    /// Last time the leaf was not starved for its min share.
    pub last_time_at_min_share: Millis,
    /// What the last instantaneous split of this queue's share read (see `update`).
    pub share_signature: Vec<u64>,
}

impl Queue {
    pub fn is_active(&self) -> bool {
        self.runnable_count > 0
    }

    pub fn app_count(&self) -> usize {
        self.runnable_apps.len() + self.non_runnable_apps.len()
    }
}

/// The outstanding count at one resource name, and whether locality may relax past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalityAsk {
    /// What one container of this ask is: asks at one priority may differ by name (YARN keys
    /// them by priority and name; the locality an allocation takes decides its size).
    pub capability: Resource,
    pub count: i32,
    pub relax: bool,
    /// When its name entered YARN's map of the key's asks (see `ask_order`).
    pub stamp: u32,
}

/// All asks of one application at one priority: YARN's scheduler key, with its asks by
/// resource name, each of its own capability.
#[derive(Debug, Clone)]
pub struct RequestEntry {
    pub priority: i32,
    /// The `*` ask's capability (YARN's `getPendingAsk(key, ANY)`), which demand, the fit
    /// checks of `hasContainerForNode` and off-switch allocations read; the last one set once
    /// the `*` ask is gone (nothing reads it then).
    pub capability: Resource,
    pub any: Option<LocalityAsk>,
    /// Racks and hosts (YARN keeps them in one map by name).
    pub locations: BTreeMap<LocationId, LocalityAsk>,
    /// When YARN's placement allocator for this priority was created (shared by the entries
    /// of one priority; see `ask_order`).
    pub key_stamp: u32,
    pub scheduling_opportunities: u32,
    pub allowed_locality: Option<NodeType>,
    pub last_scheduled: Option<Millis>,
}

impl RequestEntry {
    pub fn any_count(&self) -> i32 {
        self.any.map_or(0, |a| a.count.max(0))
    }

    /// Whether YARN's map of this key's asks holds a name of this entry: a `*` not allocated
    /// down to nothing, or any rack or host (one the AM set to 0 too).
    pub fn holds_names(&self) -> bool {
        self.any_count() > 0 || !self.locations.is_empty()
    }

    pub fn count_at(&self, location: LocationId) -> i32 {
        self.locations.get(&location).map_or(0, |a| a.count.max(0))
    }

    /// The capability an allocation at `kind` takes: the host's ask, the rack's or `*`'s.
    pub fn capability_at(&self, kind: NodeType, node: LocationId, rack: LocationId) -> Resource {
        let at = |l: LocationId| self.locations.get(&l).map_or(self.capability, |a| a.capability);
        match kind {
            NodeType::NodeLocal => at(node),
            NodeType::RackLocal => at(rack),
            NodeType::OffSwitch => self.capability,
        }
    }

    /// YARN's `canDelayTo`: no request at that name, or one that relaxes locality.
    pub fn can_delay_to(&self, location: Option<LocationId>) -> bool {
        match location {
            None => self.any.is_none_or(|a| a.relax),
            Some(l) => self.locations.get(&l).is_none_or(|a| a.relax),
        }
    }

    /// YARN's `getUniqueLocationAsks`: how many resource names carry a request.
    pub fn unique_location_asks(&self) -> usize {
        self.locations.len() + usize::from(self.any.is_some())
    }
}

/// An application. Declared in C order, the fields every heartbeat, allocation and
/// completion reads first, so they share four cache lines (the rest of the record, about
/// twice that, is read on submission, preemption and reporting): on a cluster with 100,000
/// apps each visit to an app is a cache miss, and one wave of adjacent lines costs little
/// more than one line.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct App {
    pub id: AppId,
    /// Forgotten by its owner: the slot is free (see [`FairScheduler::forget_app`]).
    pub forgotten: bool,
    /// This app's key in its leaf's `members`, while it is one.
    pub order_key: Option<OrderKey>,
    /// Changed only by `charge` (see [`super::charge`]).
    pub usage: super::charge::Usage,
    /// Usage plus pending at the last update (YARN caches demand between updates).
    pub demand: Resource,
    /// Outstanding asks at `*`: Σ count × capability (kept incrementally).
    pub pending: Resource,
    /// Sorted by priority, then arrival of the capability.
    pub requests: Vec<RequestEntry>,
    pub queue: Option<QueueId>,
    /// Live containers (each container's `seq` gives allocation order).
    pub live: crate::live::LiveList,
    pub start_time: Millis,
    /// Rank of the tie-breaks (start time, then YARN's id string) among live apps.
    pub tie_rank: u32,
    pub next_container_seq: u32,
    /// The number YARN's next container of the app takes (`AppSchedulingInfo`'s counter):
    /// unlike `seq`, a new reservation takes one too, and the container allocated from it
    /// keeps the reservation's.
    pub next_yarn_number: u32,
    pub state: AppState,
    pub runnable: bool,
    pub unmanaged_am: bool,
    pub am_running: bool,
    /// Usage or pending changed since the last update (the app is in the dirty list).
    pub demand_dirty: bool,
    /// Why the app got nothing the last time it was offered a node (or why it waits).
    pub wait: Option<WaitReason>,
    /// The caller's name for the application (the scenario's `app`).
    pub name: String,
    pub yarn_id: ApplicationId,
    /// `application_<ts>_<seq>`: YARN's tie-break compares this string.
    pub id_string: String,
    pub user: String,
    pub rejection: Option<String>,
    pub am_resource: Resource,
    /// The demand this app contributes to `demand_counted_in`'s `demand_sum`.
    pub demand_counted: Resource,
    pub demand_counted_in: Option<QueueId>,
    pub fair_share: Resource,
    /// Nodes on which this app holds a reservation.
    pub reserved_nodes: Vec<NodeId>,
    pub preempted: u32,
    pub fairshare_starvation: Resource,
    pub minshare_starvation: Resource,
    pub last_time_at_fair_share: Millis,
    /// Post-preemption back-off: not checked for starvation before this time.
    pub next_starvation_check: Millis,
    /// Containers marked for preemption and not yet killed, and their total.
    pub marked: u32,
    pub marked_resource: Resource,
    /// Stamps handed to asks' names and keys so far (see `ask_order`).
    pub ask_stamps: u32,
}

impl crate::cluster::app_table::AppRecord for App {
    fn forgotten(&self) -> bool {
        self.forgotten
    }
}

impl App {
    pub fn is_alive(&self) -> bool {
        matches!(self.state, AppState::Accepted | AppState::Running)
    }

    /// What YARN's `updateDemand` takes as the app's demand now: usage plus pending.
    pub fn current_demand(&self) -> Resource {
        self.usage.saturating_add(self.pending)
    }

    /// YARN's `getPendingDemand() = demand − usage`, non-zero in any component.
    pub fn has_pending_demand(&self) -> bool {
        !self.demand.saturating_sub(self.usage.get()).is_none()
    }

    /// The entry at `priority`: `requests` is kept sorted by priority, one entry each
    /// (`set_asks` inserts in order), so an app with many priorities costs a binary search.
    pub fn request_index(&self, priority: i32) -> Option<usize> {
        let i = self.requests.partition_point(|r| r.priority < priority);
        (self.requests.get(i)?.priority == priority).then_some(i)
    }
}
