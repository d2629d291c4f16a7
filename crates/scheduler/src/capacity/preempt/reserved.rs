//! The reserved-container selector (docs/capacity.md, "Proportional preemption"): for nodes holding a reservation that
//! preemption could make fit, take the node's newest non-AM containers within their
//! queues' to-obtain, cheapest nodes first (least taken per reserved resource).

use std::collections::BTreeMap;

use fairloom_model::Resource;

use super::fifo::{leaf_need, Taker};
use super::snapshot::{Candidate, Snapshot};
use crate::capacity::CapacityScheduler;
use crate::ids::{NodeId, PartitionId, QueueId};

type Quotas = BTreeMap<(QueueId, PartitionId), Resource>;

pub fn select(s: &CapacityScheduler, snap: &mut Snapshot, taker: &mut Taker<'_>, selector: usize) {
    let mut quotas: Quotas = BTreeMap::new();
    for &leaf in &snap.leaves {
        if snap.q(PartitionId::DEFAULT, leaf).disabled {
            continue;
        }
        for (p, need) in leaf_need(snap, taker.calc, leaf) {
            quotas.insert((leaf, p), need);
        }
    }
    let reserved: Vec<NodeId> = s.cluster.nodes().filter(|(_, n)| n.reservation.is_some()).map(|(id, _)| id).collect();
    // Evaluate every node read-only, then take from the cheapest first.
    let mut costs: Vec<(f32, usize, NodeId)> = reserved
        .iter()
        .enumerate()
        .filter_map(|(i, &node)| on_node(s, node, &mut quotas, taker, true).map(|(cost, _)| (cost, i, node)))
        .collect();
    costs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    for (_, _, node) in costs {
        if let Some((_, picked)) = on_node(s, node, &mut quotas, taker, false) {
            for (c, queue) in picked {
                taker.selection.add(c, queue, selector);
            }
        }
    }
}

/// Which containers on `node` would free room for its reservation within the queues'
/// quotas, and at what cost; `None` when it cannot be done. Unless `read_only`, quotas and
/// the budget are charged (and given back if the node cannot be satisfied).
fn on_node(
    s: &CapacityScheduler,
    node: NodeId,
    quotas: &mut Quotas,
    taker: &mut Taker<'_>,
    read_only: bool,
) -> Option<(f32, Vec<(Candidate, QueueId)>)> {
    let calc = taker.calc;
    let n = s.cluster.node(node);
    let reservation = n.reservation?;
    let partition = n.partition;
    let mut room = n.unallocated();
    if calc.fits_in(&reservation.resource, &room) {
        return None;
    }
    let mut running: Vec<_> = s.cluster.node_containers(node).map(|c| (c, s.cluster.container(c))).collect();
    running.sort_by(|a, b| b.1.app.cmp(&a.1.app).then(b.1.seq.cmp(&a.1.seq)));
    let mut picked: Vec<(Candidate, QueueId)> = Vec::new();
    let mut charged: Vec<(QueueId, Resource)> = Vec::new();
    let mut total = Resource::none();
    let mut satisfied = false;
    for (id, c) in running {
        if c.is_am {
            continue;
        }
        let Some(queue) = s.app_record(c.app).queue else { continue };
        let Some(quota) = quotas.get_mut(&(queue, partition)) else { continue };
        if !calc.fits_in(&c.resource, quota) || !calc.fits_in(&c.resource, taker.budget) {
            continue;
        }
        if !read_only {
            quota.sub_assign(c.resource);
            taker.budget.sub_assign(c.resource);
        }
        let candidate = Candidate {
            container: Some(id),
            app: c.app,
            seq: c.seq,
            node,
            partition,
            label: c.label,
            resource: c.resource,
            priority: c.priority,
            is_am: false,
            born: c.born,
        };
        if !taker.selection.contains(&candidate) {
            if !read_only {
                picked.push((candidate, queue));
                charged.push((queue, c.resource));
            }
            total.add_assign(c.resource);
        }
        room.add_assign(c.resource);
        if calc.fits_in(&reservation.resource, &room) {
            satisfied = true;
            break;
        }
    }
    if !satisfied {
        // Give back the quotas of what this node would have taken (YARN gives back only
        // the containers it newly picked).
        for (queue, r) in charged {
            if let Some(q) = quotas.get_mut(&(queue, partition)) {
                q.add_assign(r);
            }
        }
        return None;
    }
    Some((calc.ratio(&total, &reservation.resource), picked))
}

/// Unused: kept so the module reads like the others.
#[allow(dead_code)]
fn _quota_of(snap: &Snapshot, q: QueueId, p: PartitionId) -> Resource {
    snap.q(p, q).actually
}
