//! What one policy round reads: the queue tree cloned per partition (YARN's
//! `TempQueuePerPartition`) and, per leaf, its activated applications and their containers.
//! The round never consults the scheduler again once this is taken.

use fairloom_model::{Resource, MAX_RESOURCE_TYPES};

use super::super::CapacityScheduler;
use crate::cluster::hash_order;
use crate::ids::{AppId, ContainerId, IdVec, NodeId, PartitionId, QueueId};

/// One queue in one partition.
#[derive(Debug, Clone, Default)]
pub struct TempQueue {
    pub queue: QueueId,
    pub partition: PartitionId,
    pub parent: Option<QueueId>,
    pub children: Vec<QueueId>,
    pub leaf: bool,
    /// G, M, U, R: guaranteed, maximum, used, reserved.
    pub guaranteed: Resource,
    pub max: Resource,
    pub used: Resource,
    pub reserved: Resource,
    /// P: pending considering user limits (leaves; Σ of the children for parents).
    pub pending: Resource,
    /// PR: pending less reserved (leaves: each app's pending less its reservations, then the user
    /// limit, as P; Σ for parents).
    pub pending_less_reserved: Resource,
    pub killable: Resource,
    pub disabled: bool,
    pub intra_disabled: bool,
    /// The queue's priority when its parent orders by priority-utilization, else 0.
    pub relative_priority: i32,
    pub total_partition: Resource,
    /// The configured absolute capacity (fraction of the partition).
    pub abs_capacity: f32,
    /// The scheduler's used capacity (used over the guarantee).
    pub used_capacity: f32,
    pub max_am_percent: f32,
    /// I, T, A: ideal assignment, to be preempted, actually to be preempted.
    pub ideal: Resource,
    pub to_preempt: Resource,
    pub actually: Resource,
    pub untouchable: Resource,
    pub preemptable: Resource,
    pub normalized: [f64; MAX_RESOURCE_TYPES],
}

/// A container as the selectors see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// `None` for a reservation.
    pub container: Option<ContainerId>,
    pub app: AppId,
    pub seq: u32,
    pub node: NodeId,
    /// The node's partition.
    pub partition: PartitionId,
    /// Its request's partition (differs on a non-exclusive node lent to default asks).
    pub label: PartitionId,
    pub resource: Resource,
    pub priority: i32,
    pub is_am: bool,
    /// Creation order of a running container (0 for a reservation).
    pub born: u64,
}

impl Candidate {
    /// The selection key: the app and the container number (ids are slots, reused).
    pub fn key(&self) -> (AppId, u32) {
        (self.app, self.seq)
    }
}

/// An application of a leaf.
#[derive(Debug, Clone)]
pub struct TempApp {
    pub app: AppId,
    /// In the leaf's ordering policy (else waiting for activation).
    pub activated: bool,
    pub name: String,
    pub user: String,
    pub priority: i32,
    pub id: u32,
    /// Its live containers and its reservations.
    pub containers: Vec<Candidate>,
    pub reservations: Vec<Candidate>,
    /// By partition.
    pub pending: Vec<Resource>,
    pub used: Vec<Resource>,
}

/// A leaf's applications: the activated ones in its ordering policy's order (most
/// deserving first), then those waiting for activation.
#[derive(Debug, Clone, Default)]
pub struct TempLeaf {
    pub apps: Vec<TempApp>,
    /// Per user and partition: the scheduler's user limit over all users (intra-queue
    /// preemption) and the user's usage.
    pub users: Vec<TempUser>,
}

#[derive(Debug, Clone)]
pub struct TempUser {
    pub name: String,
    pub limit: Vec<Resource>,
    pub used: Vec<Resource>,
}

impl TempLeaf {
    pub fn activated(&self) -> impl DoubleEndedIterator<Item = &TempApp> {
        self.apps.iter().filter(|a| a.activated)
    }

    pub fn user(&self, name: &str) -> Option<&TempUser> {
        self.users.iter().find(|u| u.name == name)
    }
}

/// The whole round's input.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// By partition, then by queue id.
    pub queues: IdVec<PartitionId, Vec<TempQueue>>,
    /// Leaves, in tree order.
    pub leaves: Vec<QueueId>,
    /// By queue id: leaves only.
    pub apps: IdVec<QueueId, TempLeaf>,
    pub cluster: Resource,
    pub minimum_allocation: Resource,
    /// Queues that asked for more in some ideal computation, in discovery order.
    pub under_served: Vec<(QueueId, PartitionId)>,
}

impl Snapshot {
    pub fn q(&self, p: PartitionId, q: QueueId) -> &TempQueue {
        &self.queues[p][q.index()]
    }

    pub fn q_mut(&mut self, p: PartitionId, q: QueueId) -> &mut TempQueue {
        &mut self.queues[p][q.index()]
    }

    pub fn partitions(&self) -> impl Iterator<Item = PartitionId> {
        (0..self.queues.len() as u32).map(PartitionId)
    }

    pub fn note_under_served(&mut self, q: QueueId, p: PartitionId) {
        if !self.under_served.contains(&(q, p)) {
            self.under_served.push((q, p));
        }
    }
}

impl CapacityScheduler {
    /// Clone the tree per partition, with what the policy reads of each queue.
    pub(crate) fn snapshot(&self) -> Snapshot {
        let nparts = self.nparts();
        let mut queues = Vec::with_capacity(nparts);
        for p in 0..nparts {
            let pid = PartitionId(p as u32);
            let total = self.cluster.partitions[p].total;
            let exclusive = self.cluster.partitions[p].exclusive;
            let mut tqs: Vec<TempQueue> = Vec::with_capacity(self.queues.len());
            for (i, q) in self.queues.iter().enumerate() {
                let id = QueueId(i as u32);
                let part = &q.parts[p];
                let relative_priority = match q.parent {
                    Some(parent)
                        if self.queues[parent].settings.queue_ordering
                            == fairloom_config::capacity::QueueOrdering::PriorityUtilization =>
                    {
                        q.settings.priority
                    }
                    _ => 0,
                };
                // A non-exclusive partition lends idle room beyond any queue's maximum.
                let max = if exclusive { part.maximum } else { total };
                let (pending, pending_less_reserved) = if q.leaf && !q.removed {
                    self.pending_considering_user_limit(id, pid)
                } else {
                    (Resource::none(), Resource::none())
                };
                tqs.push(TempQueue {
                    queue: id,
                    partition: pid,
                    parent: q.parent,
                    children: q.children.clone(),
                    leaf: q.leaf,
                    guaranteed: part.guaranteed,
                    max,
                    used: part.used.get(),
                    reserved: part.usage_reserved(),
                    pending,
                    pending_less_reserved,
                    killable: Resource::none(),
                    disabled: q.settings.preemption_disabled,
                    intra_disabled: q.settings.intra_disabled(),
                    relative_priority,
                    total_partition: total,
                    abs_capacity: part.abs_capacity,
                    used_capacity: if q.removed { 0.0 } else { self.used_capacity(id, pid) },
                    max_am_percent: part.max_am_percent,
                    ..Default::default()
                });
            }
            // Parents' pending is the sum of their children's (post-order).
            for i in (0..tqs.len()).rev() {
                if tqs[i].leaf || self.queues[i].removed {
                    continue;
                }
                let (mut pend, mut pr) = (Resource::none(), Resource::none());
                for c in tqs[i].children.clone() {
                    pend.add_assign(tqs[c.index()].pending);
                    pr.add_assign(tqs[c.index()].pending_less_reserved);
                }
                tqs[i].pending = pend;
                tqs[i].pending_less_reserved = pr;
            }
            queues.push(tqs);
        }
        let leaves = self.policy_leaf_order(super::super::ROOT);
        let mut apps: IdVec<QueueId, TempLeaf> = vec![TempLeaf::default(); self.queues.len()].into();
        for &leaf in &leaves {
            apps[leaf] = self.temp_leaf(leaf);
        }
        Snapshot {
            queues: queues.into(),
            leaves,
            apps,
            cluster: self.cluster.total,
            minimum_allocation: self.props.minimum_allocation,
            under_served: Vec::new(),
        }
    }

    /// The leaves under `q` in the order the policy walks them (`getLeafQueueNames`): each
    /// parent gathers its children's leaf paths, child by child, into a `HashSet` of its own,
    /// and the root's set is copied as it iterates. The order decides which queue spends the
    /// round's budget first.
    fn policy_leaf_order(&self, q: QueueId) -> Vec<QueueId> {
        let queue = self.q(q);
        if queue.leaf || queue.children.is_empty() {
            return vec![q];
        }
        let gathered: Vec<QueueId> = queue.children.iter().flat_map(|&c| self.policy_leaf_order(c)).collect();
        let names: Vec<&str> = gathered.iter().map(|&l| self.q(l).name.as_str()).collect();
        hash_order::string_map_order(&names).into_iter().map(|i| gathered[i]).collect()
    }

    fn temp_leaf(&self, leaf: QueueId) -> TempLeaf {
        let q = self.q(leaf);
        let mut order = q.active.clone();
        if let fairloom_config::capacity::AppOrdering::Fair { .. } = q.settings.app_ordering {
            // The FIFO selector's pass re-sorts first (`getPreemptionIterator`).
            order.sort_by_cached_key(|&a| self.app_key_resorted(a));
        }
        order.extend(q.waiting.iter().copied());
        let apps = order
            .iter()
            .map(|&app| {
                let a = &self.apps[app];
                let containers = self
                    .cluster
                    .live(&a.live)
                    .map(|c| {
                        let x = self.cluster.container(c);
                        Candidate {
                            container: Some(c),
                            app,
                            seq: x.seq,
                            node: x.node,
                            partition: self.cluster.node(x.node).partition,
                            label: x.label,
                            resource: x.resource,
                            priority: x.priority,
                            is_am: x.is_am,
                            born: x.born,
                        }
                    })
                    .collect();
                let reservations = self
                    .reservations_in_yarn_order(app)
                    .into_iter()
                    .map(|i| &a.reservations[i])
                    .map(|h| Candidate {
                        container: None,
                        app,
                        seq: self.cluster.node(h.node).reservation.map_or(0, |r| r.seq),
                        node: h.node,
                        partition: h.partition,
                        label: h.partition,
                        resource: h.resource,
                        priority: h.priority,
                        is_am: false,
                        born: 0,
                    })
                    .collect();
                TempApp {
                    app,
                    activated: a.activated,
                    name: a.name.clone(),
                    user: a.user.clone(),
                    priority: a.priority,
                    id: a.yarn_id.id,
                    containers,
                    reservations,
                    pending: a.pending.clone(),
                    used: a.used.iter().map(|u| u.get()).collect(),
                }
            })
            .collect();
        let users = q
            .users
            .iter()
            .map(|u| TempUser {
                name: u.name.clone(),
                limit: self.partitions().map(|p| self.user_limit_all_users(leaf, p)).collect(),
                used: u.used.clone(),
            })
            .collect();
        TempLeaf { apps, users }
    }
}
