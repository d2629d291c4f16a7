//! Running a workload on the Capacity Scheduler: its capacity-scheduler.xml, either given or
//! derived from a fair-scheduler.xml's tree (each queue's weight becomes its share of its
//! parent's capacity), and the one place that builds the scheduler a workload asks for.

use fairloom_config::capacity::PREFIX;
use fairloom_config::{parse_allocation_file, Properties, SchedulerProperties};
use fairloom_scheduler::capacity::{CapacityScheduler, CapacitySetup};
use fairloom_scheduler::driver::AnyScheduler;
use fairloom_scheduler::FairScheduler;

use super::engine::SimError;

/// capacity-scheduler.xml properties with the same tree as `allocations`: children's
/// capacities are their weights' shares of 100 (percent, 5 decimals, the last child taking
/// what rounding left so that siblings sum to 100), maximum capacity 100.
pub fn from_fair(allocations: &str, properties: &Properties) -> Result<Properties, SimError> {
    let props = SchedulerProperties::from_properties(properties, &[]).map_err(|e| SimError::Config(e.to_string()))?;
    let alloc = parse_allocation_file(allocations, &props.resource_types)
        .map_err(|e| SimError::Config(e.in_file("allocations").to_string()))?;
    let mut out = Properties::new();
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

/// The scheduler `allocations` or `capacity` configures, over `properties` (yarn-site).
pub fn build(
    allocations: &str,
    capacity: Option<&Properties>,
    properties: &Properties,
) -> Result<AnyScheduler, SimError> {
    match capacity {
        Some(capacity) => {
            let setup = CapacitySetup {
                site: properties.clone(),
                capacity: capacity.clone(),
                lines: None,
                extra_types: Vec::new(),
            };
            let s = CapacityScheduler::new(setup, &[]).map_err(|e| SimError::Config(e.to_string()))?;
            Ok(s.into())
        }
        None => {
            let props =
                SchedulerProperties::from_properties(properties, &[]).map_err(|e| SimError::Config(e.to_string()))?;
            let alloc = parse_allocation_file(allocations, &props.resource_types)
                .map_err(|e| SimError::Config(e.in_file("allocations").to_string()))?;
            Ok(FairScheduler::new(props, alloc).map_err(|e| SimError::Config(e.to_string()))?.into())
        }
    }
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
        let s = build("", Some(&c), &Properties::new()).unwrap();
        assert_eq!(s.as_capacity().unwrap().queues().count(), 5);
    }
}
