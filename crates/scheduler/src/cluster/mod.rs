//! What both schedulers share: the nodes and their partitions, the containers, and the
//! interned host and rack names. A scheduler owns one [`Cluster`] and keeps its own queues
//! and applications beside it; the cluster never decides anything.

pub(crate) mod app_table;
pub mod hash_order;
pub mod ids;
pub mod live;
pub mod usage;

use std::collections::{BTreeMap, HashMap};

use fairloom_model::{Resource, DEFAULT_RACK};

use ids::{AppId, ContainerId, IdVec, LocationId, NodeId, PartitionId};
use live::LiveList;

/// Why a cluster change could not be applied. The cluster is unchanged when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    #[error("node '{0}' is already registered")]
    DuplicateNode(String),
    #[error("node label '{0}' is not a label of the cluster")]
    UnknownLabel(String),
    #[error("node label '{0}' is declared twice")]
    DuplicateLabel(String),
}

/// Interning of host and rack names so requests are keyed by small integers. Each name is
/// held by what uses it (a node its host and rack, a request entry its location) and let go
/// when the last user goes: an AM may name any host, and every name ever asked for was kept
/// for the RM's life. A name held by a live node keeps its id while the node lives.
#[derive(Debug, Clone, Default)]
pub struct Locations {
    ids: HashMap<String, LocationId>,
    /// Each held name and how many hold it.
    names: HashMap<LocationId, (String, u32)>,
    next: u64,
}

impl Locations {
    /// `name`'s id, held once more (let go with [`Locations::release`]).
    pub fn hold(&mut self, name: &str) -> LocationId {
        let id = match self.ids.get(name) {
            Some(&id) => id,
            None => {
                let id = LocationId(self.next);
                self.next += 1;
                self.ids.insert(name.to_string(), id);
                self.names.insert(id, (name.to_string(), 0));
                id
            }
        };
        if let Some((_, refs)) = self.names.get_mut(&id) {
            *refs += 1;
        }
        id
    }

    /// The id of `name` for a request entry whose locations are `held`: the one it holds
    /// already, or `name` held once more for it. An entry holds each of its names once and
    /// lets go of it when that location's ask goes.
    pub fn hold_for<V>(&mut self, held: &BTreeMap<LocationId, V>, name: &str) -> LocationId {
        match self.get(name).filter(|l| held.contains_key(l)) {
            Some(l) => l,
            None => self.hold(name),
        }
    }

    /// Let go of each of `ids` once (a request entry's names, when it goes).
    pub fn release_all(&mut self, ids: impl IntoIterator<Item = LocationId>) {
        for id in ids {
            self.release(id);
        }
    }

    /// One holder of `id` let it go; the name is forgotten with its last holder.
    pub fn release(&mut self, id: LocationId) {
        let Some((name, refs)) = self.names.get_mut(&id) else { return };
        *refs -= 1;
        if *refs == 0 {
            self.ids.remove(name.as_str());
            self.names.remove(&id);
        }
    }

    pub fn get(&self, name: &str) -> Option<LocationId> {
        self.ids.get(name).copied()
    }

    pub fn name(&self, id: LocationId) -> &str {
        self.names.get(&id).map_or("", |(n, _)| n.as_str())
    }

    /// Names held now.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The slot for a new entry of an arena whose freed slots are `free`: a freed one if there
/// is one, else the next at the end.
pub(crate) fn take_slot(free: &mut Vec<u32>, arena_len: usize) -> u32 {
    free.pop().unwrap_or(arena_len as u32)
}

/// `item` into `slot` of `arena`: a freed slot is overwritten, the next at the end pushed.
pub(crate) fn put_in_slot<T>(arena: &mut Vec<T>, slot: u32, item: T) {
    match arena.get_mut(slot as usize) {
        Some(freed) => *freed = item,
        None => {
            debug_assert_eq!(slot as usize, arena.len(), "a new slot is the next at the end");
            arena.push(item);
        }
    }
}

/// A node partition (YARN's node label). Partition 0 is the default partition `""`.
#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    pub name: String,
    /// An exclusive partition serves only requests that ask for its label; a non-exclusive
    /// one also lends idle room to requests of the default partition.
    pub exclusive: bool,
    /// Σ of its live nodes' resources.
    pub total: Resource,
    pub nodes: u32,
}

/// A node's reservation: one container's worth for one app at one request key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    pub app: AppId,
    pub priority: i32,
    pub resource: Resource,
    /// The container number the reservation took: `APP/N` under capacity, where reservations
    /// are numbered with containers; YARN's container id number under fair.
    pub seq: u32,
}

#[derive(Debug, Clone)]
pub struct Node {
    /// Its number in registration order (slots are reused; this never is).
    pub seq: u32,
    pub name: String,
    pub location: LocationId,
    pub rack: LocationId,
    pub rack_name: String,
    pub partition: PartitionId,
    pub total: Resource,
    pub allocated: Resource,
    pub containers: LiveList,
    pub reservation: Option<Reservation>,
    pub removed: bool,
    /// How many of its containers are marked for preemption.
    pub marked: u32,
    /// YARN's `NodeId.hashCode` for it (see [`hash_order`]): where it falls in YARN's hash
    /// maps keyed by node.
    pub yarn_hash: i32,
}

impl Node {
    pub fn unallocated(&self) -> Resource {
        self.total.saturating_sub(self.allocated)
    }
}

#[derive(Debug, Clone)]
pub struct Container {
    pub app: AppId,
    pub node: NodeId,
    pub resource: Resource,
    pub priority: i32,
    pub is_am: bool,
    /// N in the container's name `APP/N`: allocation order within the app, from 1.
    pub seq: u32,
    pub alive: bool,
    pub exit_status: Option<i32>,
    /// Selected for preemption, waiting to be killed.
    pub marked_for: bool,
    /// The partition its request asked for (its node-label expression). A container whose
    /// label differs from its node's partition runs there by non-exclusive sharing.
    pub label: PartitionId,
    /// Its place in the order containers were created, cluster-wide (YARN's creation time,
    /// with ties in a millisecond kept in creation order).
    pub born: u64,
    /// YARN's `ContainerId.hashCode` for it: where it falls in its node's container map.
    pub yarn_hash: i32,
}

/// The nodes, partitions and containers of the cluster, in arenas indexed by dense ids.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// By slot: a removed node's slot waits in `free_nodes` for the next registration (an RM
    /// sees nodes come and go for months).
    pub nodes: IdVec<NodeId, Node>,
    pub(crate) free_nodes: Vec<u32>,
    /// The live nodes in registration order: what every walk over the nodes follows.
    pub(crate) node_order: Vec<NodeId>,
    /// The live nodes in the order YARN's node tracker iterates them (its `HashMap`'s).
    pub(crate) yarn_order: hash_order::HashOrder,
    /// By node slot: the table of YARN's map of the node's containers (see
    /// [`Cluster::node_containers_in_yarn_order`]).
    pub(crate) container_tables: Vec<hash_order::ContainerTable>,
    pub(crate) nodes_registered: u32,
    pub(crate) node_index: HashMap<String, NodeId>,
    pub containers: IdVec<ContainerId, Container>,
    /// Slots of finished containers, reused so the arena stays as large as the live set.
    pub(crate) free_containers: Vec<ContainerId>,
    /// Per slot: moves on when its container ends (see `live`).
    pub container_gen: Vec<u32>,
    pub(crate) locations: Locations,
    /// Live nodes per rack (a rack goes with its last node).
    pub(crate) rack_sizes: HashMap<LocationId, u32>,
    /// Σ of the live nodes' resources, all partitions.
    pub total: Resource,
    pub live_nodes: u32,
    pub partitions: Vec<Partition>,
    /// Containers created so far (the next one's `born`).
    pub(crate) containers_born: u64,
}

impl Default for Cluster {
    fn default() -> Self {
        Self {
            nodes: IdVec::new(),
            free_nodes: Vec::new(),
            node_order: Vec::new(),
            yarn_order: hash_order::HashOrder::default(),
            container_tables: Vec::new(),
            nodes_registered: 0,
            node_index: HashMap::new(),
            containers: IdVec::new(),
            free_containers: Vec::new(),
            container_gen: Vec::new(),
            containers_born: 0,
            locations: Locations::default(),
            rack_sizes: HashMap::new(),
            total: Resource::none(),
            live_nodes: 0,
            partitions: vec![Partition { name: String::new(), exclusive: true, total: Resource::none(), nodes: 0 }],
        }
    }
}

impl Cluster {
    /// Declare a node label (partition).
    pub fn add_partition(&mut self, name: &str, exclusive: bool) -> Result<PartitionId, ClusterError> {
        if self.partition_id(name).is_some() {
            return Err(ClusterError::DuplicateLabel(name.to_string()));
        }
        self.partitions.push(Partition { name: name.to_string(), exclusive, total: Resource::none(), nodes: 0 });
        Ok(PartitionId(self.partitions.len() as u32 - 1))
    }

    pub fn partition_id(&self, name: &str) -> Option<PartitionId> {
        self.partitions.iter().position(|p| p.name == name).map(|i| PartitionId(i as u32))
    }

    pub fn partition(&self, id: PartitionId) -> &Partition {
        &self.partitions[id.index()]
    }

    pub fn register_node(
        &mut self,
        name: &str,
        rack: Option<&str>,
        total: Resource,
        partition: PartitionId,
    ) -> Result<NodeId, ClusterError> {
        if self.node_index.contains_key(name) {
            return Err(ClusterError::DuplicateNode(name.to_string()));
        }
        let rack_name = rack.unwrap_or(DEFAULT_RACK).to_string();
        let location = self.locations.hold(name);
        let rack = self.locations.hold(&rack_name);
        let id = NodeId(take_slot(&mut self.free_nodes, self.nodes.len()));
        let seq = self.nodes_registered;
        self.nodes_registered += 1;
        let (host, port) = hash_order::yarn_node_id(name, seq);
        let yarn_hash = hash_order::node_id_hash(host, port);
        let node = Node {
            seq,
            name: name.to_string(),
            location,
            rack,
            rack_name,
            partition,
            total,
            allocated: Resource::none(),
            containers: LiveList::default(),
            reservation: None,
            removed: false,
            marked: 0,
            yarn_hash,
        };
        put_in_slot(&mut self.nodes, id.0, node);
        put_in_slot(&mut self.container_tables, id.0, hash_order::ContainerTable::default());
        self.node_order.push(id);
        self.yarn_order.insert(id, yarn_hash, u64::from(seq));
        self.node_index.insert(name.to_string(), id);
        *self.rack_sizes.entry(rack).or_default() += 1;
        self.live_nodes += 1;
        self.total.add_assign(total);
        let p = &mut self.partitions[partition.index()];
        p.total.add_assign(total);
        p.nodes += 1;
        Ok(id)
    }

    /// Take a node out of the cluster; its containers and reservation must be gone already.
    pub fn deregister_node(&mut self, node: NodeId) {
        let n = &mut self.nodes[node];
        if n.removed {
            return;
        }
        n.removed = true;
        n.containers = LiveList::default();
        let (rack, total, partition) = (n.rack, n.total, n.partition);
        let name = n.name.clone();
        self.node_index.remove(&name);
        if let Some(size) = self.rack_sizes.get_mut(&rack) {
            *size -= 1;
            if *size == 0 {
                self.rack_sizes.remove(&rack);
            }
        }
        self.node_order.retain(|&id| id != node);
        self.yarn_order.remove(node);
        self.free_nodes.push(node.0);
        self.locations.release(self.nodes[node].location);
        self.locations.release(rack);
        self.live_nodes -= 1;
        self.total.sub_assign(total);
        let p = &mut self.partitions[partition.index()];
        p.total.sub_assign(total);
        p.nodes -= 1;
    }

    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.node_index.get(name).copied()
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    /// The live nodes, in registration order.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.node_order.iter().map(|&id| (id, &self.nodes[id]))
    }

    /// The live nodes in the order YARN's `ClusterNodeTracker.getAllNodes` lists them: the
    /// iteration order of its `HashMap<NodeId, _>` (see [`hash_order`]).
    pub fn nodes_in_yarn_order(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.yarn_order.nodes().map(|id| (id, &self.nodes[id]))
    }

    /// Node slots, live or free (what the arena holds: at most the most nodes ever live at once).
    pub fn node_slots(&self) -> usize {
        self.nodes.len()
    }

    pub fn rack_size(&self, rack: LocationId) -> u32 {
        self.rack_sizes.get(&rack).copied().unwrap_or(0)
    }

    /// Host and rack names held now.
    pub fn locations_held(&self) -> usize {
        self.locations.len()
    }

    /// The cluster's arenas and tables, by name (see `Scheduler::footprint`).
    pub fn footprint(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("node_slots", self.nodes.len()),
            ("container_slots", self.containers.len()),
            ("locations", self.locations.len()),
            ("racks", self.rack_sizes.len()),
        ]
    }

    pub fn location(&self, name: &str) -> Option<LocationId> {
        self.locations.get(name)
    }

    pub fn location_name(&self, id: LocationId) -> &str {
        self.locations.name(id)
    }

    /// A new running container on `node`, charged to the node. Returns its id and the
    /// generation its app's live list records.
    #[allow(clippy::too_many_arguments)]
    pub fn add_container(
        &mut self,
        app: AppId,
        node: NodeId,
        resource: Resource,
        priority: i32,
        is_am: bool,
        seq: u32,
        label: PartitionId,
        yarn_hash: i32,
    ) -> (ContainerId, u32) {
        let id = self.free_containers.pop().unwrap_or_else(|| {
            self.container_gen.push(0);
            ContainerId(self.containers.len() as u32)
        });
        let generation = self.container_gen[id.index()];
        let n = &mut self.nodes[node];
        n.allocated.add_assign(resource);
        n.containers.push(id, generation);
        self.container_tables[node.index()].insert(yarn_hash, n.containers.len());
        let container = Container {
            app,
            node,
            resource,
            priority,
            is_am,
            seq,
            alive: true,
            exit_status: None,
            marked_for: false,
            label,
            born: self.containers_born,
            yarn_hash,
        };
        self.containers_born += 1;
        put_in_slot(&mut self.containers, id.0, container);
        (id, generation)
    }

    /// The container ends: its node is discharged and its slot freed. Returns the ended
    /// container (still readable until the slot is reused). The caller unmarks it first.
    pub fn end_container(&mut self, id: ContainerId, exit_status: i32) -> &Container {
        let c = &mut self.containers[id];
        c.alive = false;
        c.exit_status = Some(exit_status);
        let (node, resource, yarn_hash) = (c.node, c.resource, c.yarn_hash);
        self.container_gen[id.index()] += 1;
        let n = &mut self.nodes[node];
        n.allocated.sub_assign(resource);
        if !n.removed {
            self.container_tables[node.index()].remove(yarn_hash);
        }
        n.containers.note_ended(&self.container_gen);
        self.free_containers.push(id);
        &self.containers[id]
    }

    /// A container by id. Ids are arena slots: valid while the container lives, reused after
    /// it finishes.
    pub fn container(&self, id: ContainerId) -> &Container {
        &self.containers[id]
    }

    /// How many containers are running now.
    pub fn live_count(&self) -> usize {
        self.containers.len() - self.free_containers.len()
    }

    pub fn is_live(&self, id: ContainerId) -> bool {
        self.containers.get(id.index()).is_some_and(|c| c.alive)
    }

    /// The live containers of a list (an app's or a node's).
    pub fn live<'a>(&'a self, list: &'a LiveList) -> live::LiveIter<'a> {
        list.iter(&self.container_gen)
    }

    /// The node's live containers.
    pub fn node_containers(&self, node: NodeId) -> live::LiveIter<'_> {
        self.nodes[node].containers.iter(&self.container_gen)
    }

    /// The node's live containers in the iteration order of YARN's map of them
    /// (`SchedulerNode.launchedContainers`, a `HashMap<ContainerId, _>`): by bucket, then in
    /// the order they were put (the live list's).
    pub fn node_containers_in_yarn_order(&self, node: NodeId) -> Vec<ContainerId> {
        let table = &self.container_tables[node.index()];
        let mut order: Vec<ContainerId> = self.node_containers(node).collect();
        order.sort_by_key(|c| table.bucket(self.containers[c].yarn_hash));
        order
    }

    /// Recompute node aggregates and the totals from the containers, and who holds each
    /// name (the live nodes, and `asks`: every location of every request entry); one line per
    /// mismatch.
    pub fn audit(&self, out: &mut Vec<crate::audit::Mismatch>, asks: impl Iterator<Item = LocationId>) {
        use crate::audit::check;
        let mut holders: HashMap<LocationId, u32> = HashMap::with_capacity(self.locations.names.len());
        for (_, n) in self.nodes() {
            *holders.entry(n.location).or_default() += 1;
            *holders.entry(n.rack).or_default() += 1;
        }
        for l in asks {
            *holders.entry(l).or_default() += 1;
        }
        // Compared without sorting: the auditor runs often in the simulator.
        let agree = holders.len() == self.locations.names.len()
            && holders.iter().all(|(id, n)| self.locations.names.get(id).is_some_and(|(_, refs)| refs == n));
        check(out, || "names held, and by how many, as their holders count them".to_string(), agree, true);
        let mut node_alloc = vec![Resource::none(); self.nodes.len()];
        let mut node_count = vec![0usize; self.nodes.len()];
        for c in self.containers.iter().filter(|c| c.alive) {
            node_alloc[c.node.index()].add_assign(c.resource);
            node_count[c.node.index()] += 1;
        }
        let mut total = Resource::none();
        let mut per_partition = vec![Resource::none(); self.partitions.len()];
        for (i, n) in self.nodes.iter().enumerate().filter(|(_, n)| !n.removed) {
            total.add_assign(n.total);
            per_partition[n.partition.index()].add_assign(n.total);
            check(out, || format!("node {} allocated", n.name), n.allocated, node_alloc[i]);
            check(out, || format!("node {} containers", n.name), n.containers.len(), node_count[i]);
            let id = NodeId(i as u32);
            let listed = self.node_containers(id).filter(|c| self.containers[c].node == id).count();
            check(out, || format!("node {} container list", n.name), listed, node_count[i]);
        }
        check(out, || "cluster resource".to_string(), self.total, total);
        for (p, r) in self.partitions.iter().zip(per_partition) {
            check(out, || format!("partition '{}' resource", p.name), p.total, r);
        }
    }
}
