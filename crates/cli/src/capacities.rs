//! `fairloom shares` on a capacity-scheduler.xml: each queue's effective guarantee and
//! maximum per partition against a cluster of the given size, what a lone user and the AMs
//! may take, and for each number how YARN arrives at it.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Result};
use fairloom_config::capacity::{CapacityValue, MaxCapacityValue};
use fairloom_config::load_capacity_file;
use fairloom_model::{Resource, ResourceTypes};
use fairloom_scheduler::capacity::CapacityScheduler;
use fairloom_scheduler::driver::{NodeSpec, Scheduler};
use fairloom_scheduler::{PartitionId, QueueId};
use fairloom_scheduler::{SchedulerConfig, SchedulerFile, SchedulerKind};
use serde_json::{json, Value};

use crate::shares::{json_resource, node_resource, show, site_properties, table, SharesArgs};

/// The example capacity-scheduler.xml shipped in the repository.
const EXAMPLE: &str = include_str!("../../../examples/capacity-scheduler.xml");
/// The partitions the example is shown with when none are given.
const EXAMPLE_PARTITIONS: &str = "gpu=2";

/// Whether `text` is a capacity-scheduler.xml rather than an allocation file.
pub fn is_capacity_file(text: &str) -> bool {
    text.contains("<configuration") && text.contains("yarn.scheduler.capacity.")
}

/// `--partition LABEL=NODES[:non-exclusive]`.
struct PartitionArg {
    label: String,
    nodes: u32,
    exclusive: bool,
}

fn partition_arg(text: &str) -> Result<PartitionArg> {
    let bad = || anyhow!("--partition '{text}': expected LABEL=NODES or LABEL=NODES:non-exclusive");
    let (label, rest) = text.split_once('=').ok_or_else(bad)?;
    let (count, exclusive) = match rest.split_once(':') {
        Some((n, "non-exclusive")) => (n, false),
        Some((n, "exclusive")) => (n, true),
        Some(_) => return Err(bad()),
        None => (rest, true),
    };
    let label = label.trim();
    if label.is_empty() {
        return Err(bad());
    }
    Ok(PartitionArg { label: label.to_string(), nodes: count.trim().parse().map_err(|_| bad())?, exclusive })
}

/// `file` with its text (already read), or the built-in example.
fn build(args: &SharesArgs, file: Option<(&Path, &str)>) -> Result<(CapacityScheduler, String)> {
    let site = site_properties(args)?;
    let (text, source) = match file {
        Some((p, text)) => (text, p.display().to_string()),
        None => (EXAMPLE, "built-in example (examples/capacity-scheduler.xml)".to_string()),
    };
    // Read first for the labels it declares (and its errors with their lines).
    let (_, conf) = load_capacity_file(text, &source, &site)?;
    let given = if args.partition.is_empty() && file.is_none() {
        vec![EXAMPLE_PARTITIONS.to_string()]
    } else {
        args.partition.clone()
    };
    let mut partitions = given.iter().map(|t| partition_arg(t)).collect::<Result<Vec<_>>>()?;
    for label in &conf.labels {
        if !partitions.iter().any(|p| &p.label == label) {
            partitions.push(PartitionArg { label: label.clone(), nodes: 0, exclusive: true });
        }
    }
    let labels: Vec<(String, bool)> = partitions.iter().map(|p| (p.label.clone(), p.exclusive)).collect();
    let mut conf = SchedulerConfig::new(SchedulerKind::Capacity, site)
        .with_file(source.clone(), SchedulerFile::CapacityXml(text.to_string()));
    conf.labels = labels;
    let mut s = fairloom_scheduler::factory::build_capacity(&conf).map_err(|e| anyhow!("{e}"))?;
    let node = node_resource(&args.node_resource, s.resource_types())?;
    let mut names = Vec::new();
    for i in 0..args.nodes {
        names.push((format!("node{:05}", i + 1), None));
    }
    for p in &partitions {
        for i in 0..p.nodes {
            names.push((format!("{}-node{:05}", p.label, i + 1), Some(p.label.as_str())));
        }
    }
    let specs: Vec<NodeSpec<'_>> =
        names.iter().map(|(n, label)| NodeSpec { name: n, rack: None, resource: node, label: *label }).collect();
    s.add_nodes(&specs).map_err(|e| anyhow!("{e}"))?;
    Ok((s, source))
}

fn percent(x: f32) -> String {
    let v = x * 100.0;
    if (v - v.round()).abs() < 1e-4 {
        format!("{}%", v.round())
    } else {
        format!("{v:.3}%")
    }
}

fn absolute(r: &Resource, types: &ResourceTypes) -> String {
    let parts: Vec<String> = types.names().iter().enumerate().map(|(i, n)| format!("{n}={}", r.get(i))).collect();
    format!("[{}]", parts.join(","))
}

/// One queue in one partition, with the reason for each number.
struct Row {
    queue: QueueId,
    partition: PartitionId,
    guarantee: (f32, Resource, String),
    maximum: (f32, Resource, String),
    /// Leaves: what one user alone may reach, and what the AMs may hold.
    user: Option<(Resource, String)>,
    am: Option<(Resource, String)>,
}

fn row(s: &CapacityScheduler, q: QueueId, p: PartitionId) -> Row {
    let types = s.resource_types();
    let queue = s.queue(q);
    let label = s.cluster().partitions[p.index()].name.clone();
    let part = &queue.parts[p.index()];
    let conf = queue.settings.partition(&label);
    let parent = queue.parent.map(|id| s.queue(id));
    let parent_name = parent.map_or("", |x| x.name.as_str());
    let (pabs, pmax) =
        parent.map_or((1.0, 1.0), |x| (x.parts[p.index()].abs_capacity, x.parts[p.index()].abs_max_capacity));
    let why_guarantee = match (parent, conf.map(|c| c.capacity)) {
        (None, _) => "root holds the whole partition".to_string(),
        _ if !part.accessible => format!("{} cannot use partition {label}", queue.name),
        (Some(_), None) => "no capacity is set for this partition: 0".to_string(),
        (Some(_), Some(CapacityValue::Percent(x))) => {
            format!(
                "capacity {x} (% of {parent_name}'s {}) = {} of the partition",
                percent(pabs),
                percent(part.abs_capacity)
            )
        }
        (Some(px), Some(CapacityValue::Weight(w))) => {
            let total: f32 = px
                .children
                .iter()
                .filter_map(|&c| match s.queue(c).settings.partition(&label).map(|x| x.capacity) {
                    Some(CapacityValue::Weight(w)) => Some(w),
                    _ => None,
                })
                .sum();
            format!(
                "weight {w} of {total} among {parent_name}'s children = {} of its {} = {} of the partition",
                percent(part.capacity),
                percent(pabs),
                percent(part.abs_capacity)
            )
        }
        (Some(_), Some(CapacityValue::Absolute(r))) => {
            let scaled = if part.guaranteed == r {
                String::new()
            } else {
                format!(
                    ", scaled down to {} as {parent_name}'s children ask for more than it has",
                    show(&part.guaranteed, types)
                )
            };
            format!("absolute {}{scaled}", absolute(&r, types))
        }
    };
    let why_maximum = match (parent, conf.map(|c| c.maximum)) {
        (None, _) => "root may use the whole partition".to_string(),
        _ if !part.accessible => format!("{} cannot use partition {label}", queue.name),
        (Some(_), None) => format!("maximum-capacity unset: 100% of {parent_name}'s maximum ({})", percent(pmax)),
        (Some(_), Some(MaxCapacityValue::Percent(m))) => format!(
            "maximum-capacity {m} (% of {parent_name}'s maximum {}) = {} of the partition",
            percent(pmax),
            percent(part.abs_max_capacity)
        ),
        (Some(_), Some(MaxCapacityValue::Absolute(r))) => {
            format!("absolute {}, within {parent_name}'s maximum", absolute(&r, types))
        }
    };
    let (user, am) = if queue.leaf && part.accessible {
        let st = &queue.settings;
        let factor = st.user_limit_factor;
        let (cap, why) = if factor == -1.0 {
            (part.maximum, "user-limit-factor -1: a lone user may take the queue's maximum".to_string())
        } else {
            let by_factor = part.guaranteed.multiply_truncate(factor as f64);
            let cap = by_factor.componentwise_min(part.maximum);
            (cap, format!("user-limit-factor {factor} × guarantee, within the maximum"))
        };
        let shared = format!(
            " (one container past it, as YARN checks before allocating); minimum-user-limit-percent {}: among active users each is owed at least that share of the queue's current capacity",
            st.min_user_limit_percent
        );
        let am_limit = s.am_limit(q, p);
        let am_percent = part.max_am_percent;
        let basis = if p == PartitionId::DEFAULT {
            "what the queue may use now (its maximum, less what its ancestors' other children use), at least its guarantee"
        } else {
            "its guarantee in this partition"
        };
        (
            Some((cap, format!("{why}{shared}"))),
            Some((am_limit, format!("maximum-am-resource-percent {am_percent} × {basis}"))),
        )
    } else {
        (None, None)
    };
    Row {
        queue: q,
        partition: p,
        guarantee: (part.abs_capacity, part.guaranteed, why_guarantee),
        maximum: (part.abs_max_capacity, part.maximum, why_maximum),
        user,
        am,
    }
}

fn rows(s: &CapacityScheduler) -> Vec<Row> {
    let mut out = Vec::new();
    // Queue ids follow the configuration's pre-order: parents before their children.
    for (id, q) in s.queues() {
        for p in s.partitions() {
            if p == PartitionId::DEFAULT || q.parts[p.index()].accessible {
                out.push(row(s, id, p));
            }
        }
    }
    out
}

fn partition_name(s: &CapacityScheduler, p: PartitionId) -> String {
    let name = &s.cluster().partitions[p.index()].name;
    if name.is_empty() {
        "default".to_string()
    } else {
        name.clone()
    }
}

pub fn run(args: &SharesArgs, file: Option<(&Path, &str)>) -> Result<ExitCode> {
    if args.active.is_some() {
        bail!("--active is for the Fair Scheduler's instantaneous shares; capacities do not depend on who is active");
    }
    let (s, source) = build(args, file)?;
    let types = s.resource_types().clone();
    let rows = rows(&s);
    let cluster: Vec<Value> = s
        .partitions()
        .map(|p| {
            let part = &s.cluster().partitions[p.index()];
            json!({"partition": partition_name(&s, p), "nodes": part.nodes, "exclusive": part.exclusive, "resource": json_resource(&part.total, &types)})
        })
        .collect();
    if args.json {
        let item =
            |x: &(f32, Resource, String)| json!({"absolute": x.0, "resource": json_resource(&x.1, &types), "why": x.2});
        let opt = |x: &Option<(Resource, String)>| {
            x.as_ref().map_or(Value::Null, |(r, why)| json!({"resource": json_resource(r, &types), "why": why}))
        };
        let queues: Vec<Value> = rows
            .iter()
            .map(|r| {
                json!({
                    "name": s.queue(r.queue).name,
                    "partition": partition_name(&s, r.partition),
                    "type": if s.queue(r.queue).leaf { "leaf" } else { "parent" },
                    "guarantee": item(&r.guarantee),
                    "maximum": item(&r.maximum),
                    "user_limit": opt(&r.user),
                    "am_limit": opt(&r.am),
                })
            })
            .collect();
        let out = json!({"capacity": source, "cluster": cluster, "queues": queues});
        crate::outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    crate::outln!("capacity: {source}");
    for p in s.partitions() {
        let part = &s.cluster().partitions[p.index()];
        let kind = if p == PartitionId::DEFAULT {
            ""
        } else if part.exclusive {
            " (exclusive)"
        } else {
            " (non-exclusive)"
        };
        crate::outln!("partition {}{kind}: {} nodes, {}", partition_name(&s, p), part.nodes, show(&part.total, &types));
    }
    let header = ["QUEUE", "PARTITION", "GUARANTEE", "MAXIMUM", "LONE USER UP TO", "AM LIMIT"];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            let q = s.queue(r.queue);
            let depth = q.name.matches('.').count();
            let short = q.name.rsplit('.').next().unwrap_or(&q.name);
            [
                format!("{}{short}", "  ".repeat(depth)),
                partition_name(&s, r.partition),
                format!("{} {}", percent(r.guarantee.0), show(&r.guarantee.1, &types)),
                format!("{} {}", percent(r.maximum.0), show(&r.maximum.1, &types)),
                r.user.as_ref().map_or("-".into(), |(x, _)| show(x, &types)),
                r.am.as_ref().map_or("-".into(), |(x, _)| show(x, &types)),
            ]
        })
        .collect();
    let (head, lines) = table(&header, &cells);
    crate::outln!("{head}");
    for (r, l) in rows.iter().zip(lines) {
        crate::outln!("{l}");
        let indent = " ".repeat(s.queue(r.queue).name.matches('.').count() * 2 + 4);
        crate::outln!("{indent}guarantee: {}", r.guarantee.2);
        crate::outln!("{indent}maximum: {}", r.maximum.2);
        if let Some((_, why)) = &r.user {
            crate::outln!("{indent}user: {why}");
        }
        if let Some((_, why)) = &r.am {
            crate::outln!("{indent}AM: {why}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
