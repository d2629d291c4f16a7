//! The registered nodes by id. Every heartbeat looks its node up, and every allocation once
//! more: hashed, where a tree of 5,000 ids sharing their first characters cost a dozen or
//! more string compares per lookup, each a likely cache miss (bench rm: an eighth of the
//! event loop was `memcmp`). Views and the liveness monitor list them in id order.

use std::collections::HashMap;
use std::ops::Index;

use super::RmNode;

#[derive(Debug, Default)]
pub struct NodeTable {
    /// In no particular order; `by_id` and `order` hold positions in it.
    slots: Vec<RmNode>,
    by_id: HashMap<String, usize>,
    /// Positions in `slots`, in id order: a listing (every publish, the liveness monitor)
    /// reads the nodes without hashing. Changed only when a node registers or leaves.
    order: Vec<usize>,
}

impl NodeTable {
    pub fn get(&self, id: &str) -> Option<&RmNode> {
        self.by_id.get(id).map(|&i| &self.slots[i])
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut RmNode> {
        self.by_id.get(id).map(|&i| &mut self.slots[i])
    }

    /// Add `node`, or replace the one registered under its id.
    pub fn insert(&mut self, node: RmNode) {
        if let Some(&i) = self.by_id.get(node.names.id.as_str()) {
            self.slots[i] = node;
            return;
        }
        let i = self.slots.len();
        let at = self.order.partition_point(|&j| self.slots[j].names.id < node.names.id);
        self.order.insert(at, i);
        self.by_id.insert(node.names.id.clone(), i);
        self.slots.push(node);
    }

    pub fn remove(&mut self, id: &str) -> Option<RmNode> {
        let i = self.by_id.remove(id)?;
        self.order.retain(|&j| j != i);
        let last = self.slots.len() - 1;
        let node = self.slots.swap_remove(i);
        if i != last {
            // The last node moved into the freed position.
            self.by_id.insert(self.slots[i].names.id.clone(), i);
            for j in &mut self.order {
                if *j == last {
                    *j = i;
                }
            }
        }
        Some(node)
    }

    /// Nodes listed, running or not.
    pub fn count(&self) -> usize {
        self.slots.len()
    }

    /// Every node, in id order.
    pub fn values(&self) -> impl Iterator<Item = &RmNode> {
        self.order.iter().map(|&i| &self.slots[i])
    }
}

impl Index<&str> for NodeTable {
    type Output = RmNode;

    fn index(&self, id: &str) -> &RmNode {
        self.get(id).unwrap_or_else(|| panic!("node {id} is registered"))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::core::{NodeNames, NodeState};
    use fairloom_protocol::Res;
    use fairloom_scheduler::NodeId;

    fn node(id: &str, sched: u32) -> RmNode {
        RmNode {
            names: Arc::new(NodeNames {
                id: id.to_string(),
                http: String::new(),
                rack: String::new(),
                version: String::new(),
            }),
            resource: Res::new(1024, 1),
            sched: NodeId(sched),
            state: NodeState::Running,
            last_heartbeat: 0,
            response_id: 0,
            to_start: Vec::new(),
            to_kill: Vec::new(),
            health_report: String::new(),
            session: String::new(),
            to_ack: Vec::new(),
            ip: None,
            peer: None,
            instance: String::new(),
        }
    }

    #[test]
    fn lists_in_id_order_and_replaces_by_id() {
        let mut t = NodeTable::default();
        for (id, s) in [("n10:1", 0), ("n2:1", 1), ("n1:1", 2)] {
            t.insert(node(id, s));
        }
        let ids = |t: &NodeTable| t.values().map(|n| n.names.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&t), ["n10:1", "n1:1", "n2:1"].map(String::from), "string order, as the tree gave");
        t.insert(node("n2:1", 7));
        assert_eq!(t.values().count(), 3, "registering again replaces");
        assert_eq!(t["n2:1"].sched, NodeId(7));
        assert_eq!(t.remove("n10:1").map(|n| n.sched), Some(NodeId(0)));
        assert!(t.remove("n10:1").is_none());
        assert!(t.get("n10:1").is_none());
        assert_eq!(ids(&t), ["n1:1", "n2:1"].map(String::from));
        assert_eq!(t["n2:1"].sched, NodeId(7), "the node moved into the freed place is still found");
        t.insert(node("n0:1", 8));
        assert_eq!(ids(&t), ["n0:1", "n1:1", "n2:1"].map(String::from));
        assert_eq!(t.remove("n2:1").map(|n| n.sched), Some(NodeId(7)));
        assert_eq!(ids(&t), ["n0:1", "n1:1"].map(String::from));
        t.get_mut("n1:1").expect("present").state = NodeState::Lost;
        assert_eq!(t.values().filter(|n| n.state == NodeState::Lost).count(), 1);
    }
}
