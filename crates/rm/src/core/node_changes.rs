//! What AMs are told as `updated_nodes`: the nodes whose state changed since their previous
//! allocate, each once, in its latest state (YARN keeps a set of changed nodes per
//! application and empties it at each allocate). Here one record per node, numbered by when
//! it last changed, serves every application: an attempt remembers the number it was last
//! told up to. Bounded by the nodes the RM knows: a node's change replaces its previous one,
//! and a node the RM forgets takes its record along. (A log of every change grew with every
//! registration, loss and decommission in the RM's life.)

use std::collections::{BTreeMap, HashMap};

use fairloom_protocol::am::NodeReport;

#[derive(Debug, Default)]
pub struct NodeChanges {
    /// The number of the latest change (0: none yet).
    latest: u64,
    by_seq: BTreeMap<u64, NodeReport>,
    by_node: HashMap<String, u64>,
}

impl NodeChanges {
    /// The number an attempt that has been told everything so far remembers.
    pub fn latest(&self) -> u64 {
        self.latest
    }

    /// `report` is its node's state now.
    pub fn record(&mut self, report: NodeReport) {
        self.latest += 1;
        if let Some(old) = self.by_node.insert(report.node_id.clone(), self.latest) {
            self.by_seq.remove(&old);
        }
        self.by_seq.insert(self.latest, report);
    }

    /// The nodes that changed after change `seen`, in the order of their latest change.
    pub fn since(&self, seen: u64) -> impl Iterator<Item = &NodeReport> {
        self.by_seq.range(seen.saturating_add(1)..).map(|(_, r)| r)
    }

    /// The RM forgot `node`.
    pub fn forget(&mut self, node: &str) {
        if let Some(seq) = self.by_node.remove(node) {
            self.by_seq.remove(&seq);
        }
    }

    /// How many nodes have a record.
    pub fn records(&self) -> usize {
        self.by_seq.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(node: &str, state: &str) -> NodeReport {
        NodeReport { node_id: node.into(), http_address: String::new(), state: state.into() }
    }

    fn told(c: &NodeChanges, seen: u64) -> Vec<(String, String)> {
        c.since(seen).map(|r| (r.node_id.clone(), r.state.clone())).collect()
    }

    #[test]
    fn each_node_once_in_its_latest_state() {
        let mut c = NodeChanges::default();
        assert!(told(&c, c.latest()).is_empty());
        c.record(report("a:1", "RUNNING"));
        let seen = c.latest();
        c.record(report("b:1", "RUNNING"));
        c.record(report("a:1", "LOST"));
        c.record(report("a:1", "RUNNING"));
        let pair = |n: &str, s: &str| (n.to_string(), s.to_string());
        assert_eq!(told(&c, seen), [pair("b:1", "RUNNING"), pair("a:1", "RUNNING")]);
        assert_eq!(told(&c, 0), [pair("b:1", "RUNNING"), pair("a:1", "RUNNING")]);
        assert_eq!(told(&c, c.latest()), []);
        assert_eq!(c.records(), 2, "one record a node, however often it changed");
    }

    #[test]
    fn a_thousand_flaps_of_one_node_keep_one_record() {
        let mut c = NodeChanges::default();
        for i in 0..1000 {
            c.record(report("n:1", if i % 2 == 0 { "LOST" } else { "RUNNING" }));
        }
        assert_eq!(c.records(), 1);
        c.forget("n:1");
        assert_eq!(c.records(), 0);
        assert!(told(&c, 0).is_empty());
        c.forget("n:1");
    }
}
