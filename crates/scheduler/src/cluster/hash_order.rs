//! Java's hash-map iteration orders, where YARN's decisions follow them. First of all the
//! order in which YARN's schedulers see "all nodes": the iteration order of the
//! `java.util.HashMap<NodeId, SchedulerNode>` in Hadoop's `ClusterNodeTracker`.
//!
//! YARN's Fair Scheduler searches for preemption victims node by node in that order and stops
//! at the first node that needs no AM container, so which node's containers die depends on it.
//! Registration order (what every other walk here follows) picks other victims. The order is
//! a pure function of the node ids and their history, so it is reproduced here exactly:
//!
//! - a node's id is its host and port; `NodeId.hashCode` is `493217 * (493217 * 8501 +
//!   host.hashCode()) + port` in 32-bit wrapping arithmetic, with `String.hashCode` over UTF-16;
//! - `HashMap` spreads a hash as `h ^ (h >>> 16)` and keeps bucket `spread & (capacity - 1)`;
//!   the table starts at 16 buckets and doubles when the size passes three quarters of it (it
//!   never shrinks), or when one bucket grows past 8 entries in a table under 64 buckets;
//! - iteration goes bucket by bucket, and within a bucket in insertion order (a resize splits a
//!   bucket without reordering it; a removal keeps the others' order).
//!
//! A bucket past 8 entries in a table of 64 or more becomes a red-black tree whose iteration
//! order this does not follow; with NodeId's hash that takes thousands of nodes sharing a bucket
//! and does not arise for real host names.

use fairloom_model::ApplicationId;

use super::ids::NodeId;

/// `java.lang.String.hashCode`.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// `org.apache.hadoop.yarn.api.records.NodeId.hashCode`.
pub fn node_id_hash(host: &str, port: i32) -> i32 {
    const PRIME: i32 = 493_217;
    let result = PRIME.wrapping_mul(8501).wrapping_add(java_string_hash(host));
    PRIME.wrapping_mul(result).wrapping_add(port)
}

/// A node's YARN id from its name: `host:port` as NMs register with the RM, or a bare host
/// (scenario files, the simulator), which gets its registration number from 1 as its port, as
/// the YARN oracle registers scenario nodes.
pub fn yarn_node_id(name: &str, registration: u32) -> (&str, i32) {
    match name.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() => match port.parse::<u16>() {
            Ok(port) => (host, i32::from(port)),
            Err(_) => (name, registration as i32 + 1),
        },
        _ => (name, registration as i32 + 1),
    }
}

/// `org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey.hashCode` of a key with
/// allocation request id 0 and no container to update (what plain asks make).
pub fn request_key_hash(priority: i32) -> i32 {
    // Priority.hashCode, then `31 * r + allocationRequestId`, then `31 * r + 0`.
    let priority_hash = 517_861i32.wrapping_mul(9511).wrapping_add(priority);
    priority_hash.wrapping_mul(31).wrapping_mul(31)
}

/// `org.apache.hadoop.yarn.api.records.ContainerId.hashCode` of container `number` (its
/// long id: epoch 0, so the number itself) of attempt `attempt` of application `app`,
/// through `ApplicationAttemptId.hashCode` and `ApplicationId.hashCode`.
pub fn container_id_hash(app: ApplicationId, attempt: u32, number: u64) -> i32 {
    let ts = app.cluster_timestamp;
    let app_hash = 371_237i32
        .wrapping_mul(371_237i32.wrapping_mul(6521).wrapping_add((ts ^ (ts >> 32)) as i32))
        .wrapping_add(app.id as i32);
    let attempt_hash =
        347_671i32.wrapping_mul(347_671i32.wrapping_mul(5501).wrapping_add(app_hash)).wrapping_add(attempt as i32);
    let n = number as i64;
    ((n ^ (n >> 32)) as i32).wrapping_mul(31).wrapping_add(attempt_hash)
}

/// `HashMap.hash` / `ConcurrentHashMap.spread`: the high half folded into the low one (the
/// sign bit `ConcurrentHashMap` clears never reaches a bucket index).
pub fn spread(hash: i32) -> u32 {
    let h = hash as u32;
    h ^ (h >> 16)
}

/// Buckets of a `java.util.HashMap` into which `n` keys were put (none removed): 16, doubled
/// each time the size passes three quarters.
pub fn hash_map_capacity(n: usize) -> u32 {
    let mut capacity = 16u32;
    while n as u64 > u64::from(capacity) * 3 / 4 {
        capacity *= 2;
    }
    capacity
}

/// Buckets of a `java.util.concurrent.ConcurrentHashMap` holding `n` keys: 16, doubled each
/// time the size reaches three quarters. Exact while the map never held more than it holds
/// now; `ConcurrentHashMap` never shrinks, and its resize reverses part of a bucket, which
/// this does not follow (YARN's maps of asks rarely reach 12 names).
pub fn concurrent_map_capacity(n: usize) -> u32 {
    let mut capacity = 16u32;
    while n as u64 >= u64::from(capacity) - u64::from(capacity / 4) {
        capacity *= 2;
    }
    capacity
}

/// The bucket a key of this hash falls in, in a table of `capacity` buckets.
pub fn bucket(hash: i32, capacity: u32) -> u32 {
    spread(hash) & (capacity - 1)
}

/// The iteration order of a `java.util.HashMap<String, _>` into which `keys` were put in this
/// order (the table sized for all of them; keys removed afterwards keep the others' order):
/// indices into `keys`, by bucket and then by insertion (a bucket past 8 keys, which a string
/// map of queue names does not reach, would resize or become a tree).
pub fn string_map_order(keys: &[&str]) -> Vec<usize> {
    let capacity = hash_map_capacity(keys.len());
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| (bucket(java_string_hash(keys[i]), capacity), i));
    order
}

/// The live nodes in `HashMap<NodeId, _>` iteration order, kept up to date on every
/// registration and removal (nodes come and go rarely; preemption reads the order often).
#[derive(Debug, Clone, Default)]
pub struct HashOrder {
    /// Buckets in the table; 0 before the first node (Java allocates the table lazily).
    capacity: u32,
    /// Per live node, in iteration order.
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    node: NodeId,
    hash: i32,
    inserted: u64,
}

const TREEIFY_THRESHOLD: usize = 8;
const MIN_TREEIFY_CAPACITY: u32 = 64;

impl HashOrder {
    /// The live nodes in Java's iteration order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.entries.iter().map(|e| e.node)
    }

    /// `put` of a new key; `inserted` grows with every registration.
    pub fn insert(&mut self, node: NodeId, hash: i32, inserted: u64) {
        if self.capacity == 0 {
            self.capacity = 16;
        }
        let entry = Entry { node, hash, inserted };
        let pos = self.entries.partition_point(|e| self.key(e) <= self.key(&entry));
        self.entries.insert(pos, entry);
        // HashMap.putVal: a bin that had TREEIFY_THRESHOLD entries before this one calls
        // treeifyBin, which in a small table resizes instead; then the size check.
        let in_bin = self.entries.iter().filter(|e| self.key(e).0 == self.key(&entry).0).count();
        let mut capacity = self.capacity;
        if in_bin > TREEIFY_THRESHOLD && capacity < MIN_TREEIFY_CAPACITY {
            capacity *= 2;
        }
        if self.entries.len() as u64 > u64::from(capacity) * 3 / 4 {
            capacity *= 2;
        }
        if capacity != self.capacity {
            self.capacity = capacity;
            let mut entries = std::mem::take(&mut self.entries);
            entries.sort_by_key(|e| self.key(e));
            self.entries = entries;
        }
    }

    pub fn remove(&mut self, node: NodeId) {
        self.entries.retain(|e| e.node != node);
    }

    fn key(&self, e: &Entry) -> (u32, u64) {
        (bucket(e.hash, self.capacity), e.inserted)
    }
}

/// The table of one node's `HashMap<ContainerId, ContainerInfo>` (`SchedulerNode`'s launched
/// containers), whose iteration order is the order YARN's Fair Scheduler looks for preemption
/// victims on the node. Its entries are the node's live list (insertion order); this keeps the
/// table's size, which depends on the map's history: it doubles when the size passes three
/// quarters, or when a bucket gets a ninth entry while under 64 buckets, and never shrinks.
/// For that second rule it counts entries per bucket of a 64-bucket table (a small table's
/// bucket is the sum of its 64-bucket ones); from 64 buckets on a crowded bucket becomes a
/// tree instead, whose order this does not follow (it takes nine of a node's containers
/// whose hashes agree in their low six bits after spreading).
#[derive(Debug, Clone, Copy)]
pub struct ContainerTable {
    /// Buckets; 0 before the first container (Java allocates the table lazily).
    capacity: u32,
    /// Entries per bucket of a 64-bucket table (wrapping: only compared while under 64).
    fine: [u8; MIN_TREEIFY_CAPACITY as usize],
}

impl Default for ContainerTable {
    fn default() -> Self {
        Self { capacity: 0, fine: [0; MIN_TREEIFY_CAPACITY as usize] }
    }
}

impl ContainerTable {
    /// `put` of a new key of this hash; `size` is the map's size after it.
    pub fn insert(&mut self, hash: i32, size: usize) {
        if self.capacity == 0 {
            self.capacity = 16;
        }
        let fine = bucket(hash, MIN_TREEIFY_CAPACITY) as usize;
        self.fine[fine] = self.fine[fine].wrapping_add(1);
        // HashMap.putVal: a bin that had TREEIFY_THRESHOLD entries before this one calls
        // treeifyBin, which in a small table resizes instead; then the size check.
        if self.capacity < MIN_TREEIFY_CAPACITY && size > TREEIFY_THRESHOLD {
            let step = self.capacity as usize;
            let in_bin: usize = self.fine.iter().skip(fine % step).step_by(step).map(|&n| usize::from(n)).sum();
            if in_bin > TREEIFY_THRESHOLD {
                self.capacity *= 2;
            }
        }
        if size as u64 > u64::from(self.capacity) * 3 / 4 {
            self.capacity *= 2;
        }
    }

    pub fn remove(&mut self, hash: i32) {
        let fine = bucket(hash, MIN_TREEIFY_CAPACITY) as usize;
        self.fine[fine] = self.fine[fine].wrapping_sub(1);
    }

    /// The bucket of a key of this hash: iteration goes by bucket, then insertion order.
    pub fn bucket(&self, hash: i32) -> u32 {
        bucket(hash, self.capacity.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_is_javas() {
        // Values from java.lang.String.hashCode.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("n1"), 3459);
        assert_eq!(java_string_hash("hello"), 99_162_322);
        assert_eq!(java_string_hash("Aa"), java_string_hash("BB"));
        assert_eq!(java_string_hash("worker-0017.dc1.example.com"), -1_969_548_344);
    }

    /// Values from Hadoop 3.4.2's `ContainerId.hashCode`.
    #[test]
    fn container_hash_is_yarns() {
        let app = |ts, id| ApplicationId { cluster_timestamp: ts, id };
        assert_eq!(container_id_hash(app(0, 1), 1, 1), -1_438_958_325);
        assert_eq!(container_id_hash(app(0, 2), 1, 3), -1_438_610_592);
        assert_eq!(container_id_hash(app(0, 3), 1, 2), -1_438_262_952);
        assert_eq!(container_id_hash(app(1_700_000_000_123, 7), 2, 42), -624_328_867);
    }

    /// A `HashMap<ContainerId, _>` filled and iterated by Java printed this order.
    #[test]
    fn container_map_order_is_javas() {
        let mut table = ContainerTable::default();
        let mut entries = Vec::new();
        for c in 1..=10u64 {
            for (app, number) in [(1, c), (2, c * 3)] {
                let hash = container_id_hash(ApplicationId { cluster_timestamp: 0, id: app }, 1, number);
                entries.push((app, number, hash));
                table.insert(hash, entries.len());
            }
        }
        let gone = entries.iter().position(|e| (e.0, e.1) == (1, 4)).unwrap();
        table.remove(entries.remove(gone).2);
        entries.sort_by_key(|e| table.bucket(e.2));
        let order: Vec<String> = entries.iter().map(|e| format!("{}/{}", e.0, e.1)).collect();
        assert_eq!(
            order.join(" "),
            "2/3 2/30 2/27 2/24 2/21 1/1 1/2 2/18 1/3 2/15 2/12 1/9 1/10 2/9 1/5 2/6 1/6 1/7 1/8"
        );
    }

    /// Ten containers of one app numbered 16 apart share a bucket of the first table: the
    /// ninth doubles it (Java printed this order for the same puts).
    #[test]
    fn a_crowded_bucket_doubles_a_small_table() {
        let mut table = ContainerTable::default();
        let app = ApplicationId { cluster_timestamp: 0, id: 1 };
        let mut entries = Vec::new();
        for c in 0..10u64 {
            let hash = container_id_hash(app, 1, 1 + c * 16);
            entries.push((1 + c * 16, hash));
            table.insert(hash, entries.len());
        }
        assert_eq!(table.capacity, 32);
        entries.sort_by_key(|e| table.bucket(e.1));
        let order: Vec<String> = entries.iter().map(|e| e.0.to_string()).collect();
        assert_eq!(order.join(" "), "17 49 81 113 145 1 33 65 97 129");
    }

    #[test]
    fn ids_from_names() {
        assert_eq!(yarn_node_id("h1:45454", 0), ("h1", 45454));
        assert_eq!(yarn_node_id("n3", 2), ("n3", 3));
        assert_eq!(yarn_node_id(":80", 4), (":80", 5));
        assert_eq!(yarn_node_id("h:x", 0), ("h:x", 1));
    }

    fn hosts(order: &HashOrder, names: &[String]) -> Vec<String> {
        order.nodes().map(|n| names[n.index()].clone()).collect()
    }

    /// The orders are Java's: a `HashMap<NodeId, _>` filled the same way and iterated by Hadoop
    /// 3.4.2's `NodeId` printed them.
    #[test]
    fn order_is_javas_through_resizes_and_removals() {
        let mut order = HashOrder::default();
        let mut names = Vec::new();
        let mut add = |order: &mut HashOrder, host: &str, port: i32| {
            names.push(host.to_string());
            let i = names.len() as u32 - 1;
            order.insert(NodeId(i), node_id_hash(host, port), u64::from(i));
        };
        for i in 1..=30 {
            add(&mut order, &format!("n{i}"), i);
        }
        assert_eq!(order.capacity, 64);
        let java = "n6 n1 n10 n30 n12 n17 n28 n4 n24 n21 n8 n15 n18 n22 n5 n2 n20 n27 n25 n13 n16 n7 n9 n3 n14 n19 n29 n23 n11 n26";
        let mut names_now: Vec<String> = (1..=30).map(|i| format!("n{i}")).collect();
        assert_eq!(hosts(&order, &names_now).join(" "), java);
        order.remove(NodeId(4));
        order.remove(NodeId(16));
        add(&mut order, "n31", 31);
        add(&mut order, "n5", 32);
        names_now.extend(["n31".to_string(), "n5".to_string()]);
        let java = "n6 n1 n10 n30 n12 n5 n28 n4 n24 n21 n8 n15 n18 n22 n2 n31 n20 n27 n25 n13 n16 n7 n9 n3 n14 n19 n29 n23 n11 n26";
        assert_eq!(hosts(&order, &names_now).join(" "), java);
        assert_eq!(order.capacity, 64, "a HashMap never shrinks");
    }

    #[test]
    fn order_of_host_port_names_is_javas() {
        let mut order = HashOrder::default();
        let names: Vec<String> =
            ["h1.example.com:45454", "h2.example.com:45454", "h3.example.com:8041", "h1.example.com:45455"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        for (i, name) in names.iter().enumerate() {
            let (host, port) = yarn_node_id(name, i as u32);
            order.insert(NodeId(i as u32), node_id_hash(host, port), i as u64);
        }
        assert_eq!(
            hosts(&order, &names).join(" "),
            "h1.example.com:45454 h2.example.com:45454 h1.example.com:45455 h3.example.com:8041"
        );
    }
}
