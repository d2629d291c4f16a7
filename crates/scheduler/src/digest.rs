//! The decisions digest: one number that changes when any scheduling decision changes. Every
//! allocation (app, node, size), reservation, unreservation and preemption kill is folded in,
//! in the order the scheduler made them; container slots are not, being bookkeeping an
//! optimisation may change without changing a decision. Two runs of one workload with equal
//! digests made the same decisions (up to a 64-bit collision), so a faster core can prove it
//! decides as the one before it did.

use fairloom_model::Resource;

use crate::cluster::Cluster;
use crate::driver::Decision;
use crate::ids::{AppId, NodeId};

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

    fn fold(&mut self, kind: Kind, app: AppId, node: NodeId, size: Resource) {
        for word in [kind as u64, u64::from(app.0), u64::from(node.0), size.memory() as u64, size.vcores() as u64] {
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }

    /// A heartbeat's decisions, in the order made; sizes are read off the cluster's containers.
    pub(crate) fn decisions(&mut self, made: &[Decision], cluster: &Cluster) {
        for d in made {
            match *d {
                Decision::Allocated { app, container, node } => {
                    self.fold(Kind::Allocated, app, node, cluster.containers[container.index()].resource)
                }
                Decision::Reserved { app, node } => self.fold(Kind::Reserved, app, node, Resource::none()),
                Decision::Unreserved { app, node } => self.fold(Kind::Unreserved, app, node, Resource::none()),
            }
        }
    }

    /// Preemption killed a container of `app` on `node`.
    pub(crate) fn killed(&mut self, app: AppId, node: NodeId, size: Resource) {
        self.fold(Kind::Killed, app, node, size);
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
            d.killed(AppId(app), NodeId(node), size);
            d
        };
        let base = one(1, 2, size);
        assert_eq!(base, one(1, 2, size), "deterministic");
        assert_ne!(base, one(2, 2, size));
        assert_ne!(base, one(1, 3, size));
        assert_ne!(base, one(1, 2, Resource::new(2048, 1)));
        assert_ne!(base, one(1, 2, Resource::new(1024, 2)));
        let mut ab = DecisionDigest::default();
        ab.killed(AppId(1), NodeId(1), size);
        ab.killed(AppId(2), NodeId(1), size);
        let mut ba = DecisionDigest::default();
        ba.killed(AppId(2), NodeId(1), size);
        ba.killed(AppId(1), NodeId(1), size);
        assert_ne!(ab, ba, "the order of decisions is part of them");
        assert_eq!(base.hex().len(), 16);
    }
}
