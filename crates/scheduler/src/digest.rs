//! The decisions digest: one number that changes when any scheduling decision changes. Every
//! allocation (app, node, size), reservation, unreservation and preemption kill is folded in,
//! in the order the scheduler made them; container slots are not, being bookkeeping an
//! optimisation may change without changing a decision. Two runs of one workload with equal
//! digests made the same decisions (up to a 64-bit collision), so a faster core can prove it
//! decides as the one before it did.

use fairloom_model::Resource;

use crate::cluster::Cluster;
use crate::driver::Decision;
use crate::ids::AppId;

/// The fold so far. Word-at-a-time mixing (FxHash's constant): a few cycles per decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecisionDigest(u64);

impl Default for DecisionDigest {
    fn default() -> Self {
        // FNV's offset basis: any fixed non-zero start.
        Self(0xcbf2_9ce4_8422_2325)
    }
}

#[derive(Clone, Copy)]
#[repr(u64)]
enum Kind {
    Allocated = 1,
    Reserved = 2,
    Unreserved = 3,
    Killed = 4,
}

impl DecisionDigest {
    /// As `sim --json` prints it: 16 hex digits.
    pub fn hex(self) -> String {
        format!("{:016x}", self.0)
    }

    /// Applications and nodes go in by their numbers in submission and registration order,
    /// not by their slots (which are reused): the same decisions give the same digest.
    fn fold(&mut self, kind: Kind, app: AppId, node_seq: u32, size: Resource) {
        for word in [kind as u64, u64::from(app.seq), u64::from(node_seq), size.memory() as u64, size.vcores() as u64] {
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }

    /// A heartbeat's decisions, in the order made; sizes are read off the cluster's containers.
    pub(crate) fn decisions(&mut self, made: &[Decision], cluster: &Cluster) {
        for d in made {
            match *d {
                Decision::Allocated { app, container, node } => {
                    let size = cluster.containers[container].resource;
                    self.fold(Kind::Allocated, app, cluster.node(node).seq, size)
                }
                Decision::Reserved { app, node } => {
                    self.fold(Kind::Reserved, app, cluster.node(node).seq, Resource::none())
                }
                Decision::Unreserved { app, node } => {
                    self.fold(Kind::Unreserved, app, cluster.node(node).seq, Resource::none())
                }
            }
        }
    }

    /// Preemption killed a container of `app` on the node registered `node_seq`th.
    pub(crate) fn killed(&mut self, app: AppId, node_seq: u32, size: Resource) {
        self.fold(Kind::Killed, app, node_seq, size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_and_the_order_move_the_digest() {
        let size = Resource::new(1024, 1);
        let one = |app: u32, node: u32, size: Resource| {
            let mut d = DecisionDigest::default();
            d.killed(AppId::nth(app), node, size);
            d
        };
        let base = one(1, 2, size);
        assert_eq!(base, one(1, 2, size), "deterministic");
        assert_ne!(base, one(2, 2, size));
        assert_ne!(base, one(1, 3, size));
        assert_ne!(base, one(1, 2, Resource::new(2048, 1)));
        assert_ne!(base, one(1, 2, Resource::new(1024, 2)));
        let mut ab = DecisionDigest::default();
        ab.killed(AppId::nth(1), 1, size);
        ab.killed(AppId::nth(2), 1, size);
        let mut ba = DecisionDigest::default();
        ba.killed(AppId::nth(2), 1, size);
        ba.killed(AppId::nth(1), 1, size);
        assert_ne!(ab, ba, "the order of decisions is part of them");
        assert_eq!(base.hex().len(), 16);
    }
}
