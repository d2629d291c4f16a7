//! Running a workload on the Capacity Scheduler: its capacity-scheduler.xml, either given or
//! derived from a fair-scheduler.xml's tree (each queue's weight becomes its share of its
//! parent's capacity), and the one place that builds the scheduler a workload asks for.

use fairloom_config::capacity::PREFIX;
use fairloom_config::{parse_allocation_file, PolicyKind, Properties, SchedulerProperties};
use fairloom_scheduler::driver::{AnyScheduler, NodeSpec};
use fairloom_scheduler::{NodeId, SchedulerConfig, SchedulerFile, SchedulerKind};

use super::engine::SimError;
use super::workload::NodeDef;

/// capacity-scheduler.xml properties with the same tree as `allocations`, converted as
/// YARN's fs2cs converts (weight mode off): children's capacities are their weights' shares
/// of 100 (percent, 5 decimals, the last child taking what rounding left so that siblings
/// sum to 100), maximum capacity 100; leaves get `user-limit-factor` -1 (the Fair Scheduler
/// has no user limit), their policy as `ordering-policy` (fair and drf → fair), their
/// `maxAMShare` as `maximum-am-resource-percent` (the file's default globally, -1 → 1.0);
/// drf anywhere selects the DominantResourceCalculator.
pub fn from_fair(allocations: &str, properties: &Properties) -> Result<Properties, SimError> {
    let props = SchedulerProperties::from_properties(properties, &[]).map_err(|e| SimError::Config(e.to_string()))?;
    let alloc = parse_allocation_file(allocations, &props.resource_types)
        .map_err(|e| SimError::Config(e.in_file("allocations").to_string()))?;
    let mut out = Properties::new();
    let am_share = |share: f32| if share == -1.0 { 1.0 } else { share };
    out.insert(format!("{PREFIX}maximum-am-resource-percent"), am_share(alloc.queue_max_am_share_default).to_string());
    let mut drf = alloc.default_scheduling_policy == PolicyKind::Drf;
    for q in &alloc.queues {
        let policy = q.scheduling_policy.unwrap_or(alloc.default_scheduling_policy);
        drf |= policy == PolicyKind::Drf;
        let leaf = !alloc.queues.iter().any(|c| c.parent_path() == Some(q.path.as_str()));
        if !leaf {
            continue;
        }
        out.insert(format!("{PREFIX}{}.user-limit-factor", q.path), "-1".into());
        let ordering = if policy == PolicyKind::Fifo { "fifo" } else { "fair" };
        out.insert(format!("{PREFIX}{}.ordering-policy", q.path), ordering.into());
        if let Some(share) = q.max_am_share.filter(|&s| s != 0.0 && s != alloc.queue_max_am_share_default) {
            out.insert(format!("{PREFIX}{}.maximum-am-resource-percent", q.path), am_share(share).to_string());
        }
    }
    if drf {
        out.insert(
            format!("{PREFIX}resource-calculator"),
            "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator".into(),
        );
    }
    for parent in &alloc.queues {
        let children: Vec<_> =
            alloc.queues.iter().filter(|q| q.path.rsplit_once('.').is_some_and(|(p, _)| p == parent.path)).collect();
        if children.is_empty() {
            continue;
        }
        let names: Vec<&str> = children.iter().map(|c| c.path.rsplit('.').next().unwrap_or(&c.path)).collect();
        out.insert(format!("{PREFIX}{}.queues", parent.path), names.join(","));
        let weights: Vec<f64> = children.iter().map(|c| c.weight.unwrap_or(1.0).max(0.0) as f64).collect();
        let total: f64 = weights.iter().sum();
        let mut given = 0.0;
        for (i, c) in children.iter().enumerate() {
            let percent = if total <= 0.0 {
                if i == 0 {
                    100.0
                } else {
                    0.0
                }
            } else if i + 1 == children.len() {
                100.0 - given
            } else {
                (weights[i] / total * 100.0 * 1e5).round() / 1e5
            };
            given += percent;
            out.insert(format!("{PREFIX}{}.capacity", c.path), format!("{percent:.5}"));
        }
    }
    Ok(out)
}

/// [`build`], with `nodes` registered (their ids in the same order).
pub fn build_on(
    allocations: &str,
    capacity: Option<&Properties>,
    properties: &Properties,
    nodes: &[NodeDef],
) -> Result<(AnyScheduler, Vec<NodeId>), SimError> {
    let mut s = build(allocations, capacity, properties)?;
    let specs: Vec<NodeSpec<'_>> = nodes
        .iter()
        .map(|n| NodeSpec { name: &n.name, rack: Some(&n.rack), resource: n.resource, label: None })
        .collect();
    let ids = s.add_nodes(&specs).map_err(|e| SimError::Workload(e.to_string()))?;
    Ok((s, ids))
}

/// The scheduler `allocations` or `capacity` configures, over `properties` (yarn-site).
pub fn build(
    allocations: &str,
    capacity: Option<&Properties>,
    properties: &Properties,
) -> Result<AnyScheduler, SimError> {
    let conf = match capacity {
        Some(capacity) => SchedulerConfig::new(SchedulerKind::Capacity, properties.clone())
            .with_file("capacity", SchedulerFile::CapacityProperties(capacity.clone())),
        None => SchedulerConfig::new(SchedulerKind::Fair, properties.clone())
            .with_file("allocations", SchedulerFile::FairXml(allocations.to_string())),
    };
    fairloom_scheduler::build(&conf).map_err(|e| SimError::Config(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_become_capacities_that_load() {
        let xml = "<allocations><queue name=\"a\"><weight>1</weight><queue name=\"x\"><weight>2</weight></queue><queue name=\"y\"/></queue><queue name=\"b\"><weight>2</weight></queue></allocations>";
        let c = from_fair(xml, &Properties::new()).unwrap();
        assert_eq!(c[&format!("{PREFIX}root.queues")], "a,b");
        assert_eq!(c[&format!("{PREFIX}root.a.capacity")], "33.33333");
        assert_eq!(c[&format!("{PREFIX}root.b.capacity")], "66.66667");
        assert_eq!(c[&format!("{PREFIX}root.a.queues")], "x,y");
        assert_eq!(c[&format!("{PREFIX}root.a.x.user-limit-factor")], "-1");
        assert_eq!(c[&format!("{PREFIX}root.b.ordering-policy")], "fair");
        assert!(!c.contains_key(&format!("{PREFIX}root.a.user-limit-factor")), "parents have no user limit");
        assert_eq!(c[&format!("{PREFIX}maximum-am-resource-percent")], "0.5");
        assert!(!c.contains_key(&format!("{PREFIX}resource-calculator")));
        let s = build("", Some(&c), &Properties::new()).unwrap();
        assert_eq!(s.queue_details().len(), 5);
    }

    #[test]
    fn policies_and_am_shares_convert() {
        let xml = "<allocations><defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>\
                   <queueMaxAMShareDefault>-1</queueMaxAMShareDefault>\
                   <queue name=\"a\"><schedulingPolicy>fifo</schedulingPolicy><maxAMShare>0.3</maxAMShare></queue>\
                   <queue name=\"b\"/></allocations>";
        let c = from_fair(xml, &Properties::new()).unwrap();
        assert_eq!(c[&format!("{PREFIX}root.a.ordering-policy")], "fifo");
        assert_eq!(c[&format!("{PREFIX}root.b.ordering-policy")], "fair");
        assert_eq!(c[&format!("{PREFIX}root.a.maximum-am-resource-percent")], "0.3");
        assert_eq!(c[&format!("{PREFIX}maximum-am-resource-percent")], "1");
        assert!(c[&format!("{PREFIX}resource-calculator")].ends_with("DominantResourceCalculator"));
        assert!(build("", Some(&c), &Properties::new()).is_ok());
    }
}
