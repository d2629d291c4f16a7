//! `fairloom shares`: the queue tree with weights, limits and both kinds of fair share; on a
//! capacity-scheduler.xml, the effective capacities (`crate::capacities`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use fairloom_config::{parse_resource, parse_site_xml, ConfigurableResource, Properties};
use fairloom_model::{Resource, ResourceTypes, UNBOUNDED};
use fairloom_scheduler::{FairScheduler, QueueId, Scheduler, SchedulerConfig, SchedulerFile, SchedulerKind, ROOT};
use serde_json::{json, Value};

/// The example allocation file shipped in the repository, used when no file is given.
const EXAMPLE: &str = include_str!("../../../examples/fair-scheduler.xml");

#[derive(clap::Args)]
pub struct SharesArgs {
    /// fair-scheduler.xml or capacity-scheduler.xml (default: the built-in example of the
    /// scheduler, examples/fair-scheduler.xml or examples/capacity-scheduler.xml)
    file: Option<PathBuf>,
    /// The scheduler, when no file is given: fair (default) or capacity
    #[arg(long, value_enum)]
    scheduler: Option<SchedulerArg>,
    /// yarn-site.xml with the scheduler's properties
    #[arg(long)]
    pub(crate) properties: Option<PathBuf>,
    /// Number of nodes in the cluster (default partition)
    #[arg(long, default_value_t = 100)]
    pub(crate) nodes: u32,
    /// Resources of each node, in allocation-file form
    #[arg(long, default_value = "65536 mb, 32 vcores")]
    pub(crate) node_resource: String,
    /// Capacity Scheduler: nodes of a labelled partition, LABEL=NODES or
    /// LABEL=NODES:non-exclusive (repeatable; labels the file names get 0 nodes otherwise)
    #[arg(long)]
    pub(crate) partition: Vec<String>,
    /// Fair Scheduler: active leaf queues (with a runnable app), comma-separated; default:
    /// every leaf
    #[arg(long, value_delimiter = ',')]
    pub(crate) active: Option<Vec<String>>,
    /// Print JSON instead of a table
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SchedulerArg {
    Fair,
    Capacity,
}

/// yarn-site.xml of `--properties`, or none.
pub(crate) fn site_properties(args: &SharesArgs) -> Result<Properties> {
    match &args.properties {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
            Ok(parse_site_xml(&text).map_err(|e| e.in_file(p.display().to_string()))?)
        }
        None => Ok(Properties::new()),
    }
}

pub(crate) fn node_resource(text: &str, types: &ResourceTypes) -> Result<Resource> {
    match parse_resource(text, types, 0).map_err(|m| anyhow!("--node-resource '{text}': {m}"))? {
        ConfigurableResource::Absolute(r) => Ok(r),
        ConfigurableResource::Percentage(_) => bail!("--node-resource '{text}': a percentage is not a node size"),
    }
}

fn build(args: &SharesArgs, text: Option<String>) -> Result<(FairScheduler, String)> {
    let properties = site_properties(args)?;
    let (text, source) = match (text, &args.file) {
        (Some(text), Some(p)) => (text, p.display().to_string()),
        _ => (EXAMPLE.to_string(), "built-in example (examples/fair-scheduler.xml)".to_string()),
    };
    let mut conf =
        SchedulerConfig::new(SchedulerKind::Fair, properties).with_file(source.clone(), SchedulerFile::FairXml(text));
    conf.site_name = args.properties.as_ref().map_or("properties".into(), |p| p.display().to_string());
    let mut s = fairloom_scheduler::factory::build_fair(&conf)?;
    let node = node_resource(&args.node_resource, &s.properties().resource_types)?;
    for i in 0..args.nodes {
        s.add_node(&format!("node{:05}", i + 1), None, node)?;
    }
    let leaves: Vec<(QueueId, String)> =
        s.queues().filter(|(_, q)| q.leaf).map(|(id, q)| (id, q.name.clone())).collect();
    let active: Vec<QueueId> = match &args.active {
        None => leaves.iter().map(|(id, _)| *id).collect(),
        Some(names) => names
            .iter()
            .map(|n| {
                let full = if n == "root" || n.starts_with("root.") { n.clone() } else { format!("root.{n}") };
                leaves
                    .iter()
                    .find(|(_, name)| *name == full)
                    .map(|(id, _)| *id)
                    .ok_or_else(|| anyhow!("--active: {full} is not a leaf queue of this configuration"))
            })
            .collect::<Result<_>>()?,
    };
    for (i, leaf) in active.into_iter().enumerate() {
        s.submit_to_leaf(&format!("probe{i}"), leaf, "fairloom", None, 0)?;
    }
    s.update(0);
    Ok((s, source))
}

pub(crate) fn show(r: &Resource, types: &ResourceTypes) -> String {
    let mut parts = Vec::new();
    for (i, name) in types.names().iter().enumerate() {
        let v = r.get(i);
        let label = match i {
            0 => "MB",
            1 => "vc",
            _ => name.as_str(),
        };
        parts.push(if v == UNBOUNDED { "∞".to_string() } else { format!("{v} {label}") });
    }
    if parts.iter().all(|p| p == "∞") {
        "unbounded".to_string()
    } else {
        parts.join(" ")
    }
}

pub(crate) fn json_resource(r: &Resource, types: &ResourceTypes) -> Value {
    Value::Object(types.names().iter().enumerate().map(|(i, n)| (n.clone(), json!(r.get(i)))).collect())
}

fn depth_first(s: &FairScheduler, id: QueueId, out: &mut Vec<QueueId>) {
    out.push(id);
    let mut children = s.queue(id).children.clone();
    children.sort_by(|a, b| s.queue(*a).name.cmp(&s.queue(*b).name));
    for c in children {
        depth_first(s, c, out);
    }
}

pub fn run(args: &SharesArgs) -> Result<ExitCode> {
    let text = match &args.file {
        Some(p) => Some(std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?),
        None => None,
    };
    let capacity = match (&text, args.scheduler) {
        (Some(t), kind) => {
            let is_capacity = crate::capacities::is_capacity_file(t);
            match kind {
                Some(SchedulerArg::Fair) if is_capacity => {
                    bail!("--scheduler fair, but the file is a capacity-scheduler.xml")
                }
                Some(SchedulerArg::Capacity) if !is_capacity => {
                    bail!("--scheduler capacity, but the file is not a capacity-scheduler.xml")
                }
                _ => is_capacity,
            }
        }
        (None, kind) => kind == Some(SchedulerArg::Capacity),
    };
    if capacity {
        return crate::capacities::run(args, args.file.as_deref().zip(text.as_deref()));
    }
    if !args.partition.is_empty() {
        bail!("--partition is for capacity-scheduler.xml (the Fair Scheduler has no node partitions)");
    }
    let (s, source) = build(args, text)?;
    let types = s.resource_types().clone();
    let mut order = Vec::new();
    depth_first(&s, ROOT, &mut order);
    if args.json {
        for w in s.warnings() {
            eprintln!("warning: {w}");
        }
        let queues: Vec<Value> = order
            .iter()
            .map(|&id| {
                let q = s.queue(id);
                json!({
                    "name": q.name,
                    "type": if q.leaf { "leaf" } else { "parent" },
                    "policy": q.policy.name(),
                    "weight": q.settings.weight,
                    "min_share": json_resource(&q.settings.min_share, &types),
                    "max_share": json_resource(&s.max_share(id), &types),
                    "steady_fair_share": json_resource(&q.steady_fair_share, &types),
                    "fair_share": json_resource(&q.fair_share, &types),
                    "am_limit": if q.leaf { json_resource(&s.am_limit(id), &types) } else { Value::Null },
                    "active": q.is_active(),
                })
            })
            .collect();
        let out = json!({"allocations": source, "cluster": json_resource(&s.cluster_resource(), &types), "nodes": args.nodes, "queues": queues});
        crate::outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    for w in s.warnings() {
        eprintln!("warning: {w}");
    }
    crate::outln!("allocations: {source}");
    crate::outln!("cluster: {} nodes, {}", args.nodes, show(&s.cluster_resource(), &types));
    let header = ["QUEUE", "POLICY", "WEIGHT", "MIN", "MAX", "STEADY FAIR SHARE", "FAIR SHARE (now)", "AM LIMIT"];
    let rows: Vec<[String; 8]> = order
        .iter()
        .map(|&id| {
            let q = s.queue(id);
            let depth = q.name.matches('.').count();
            let short = q.name.rsplit('.').next().unwrap_or(&q.name);
            let marker = if q.leaf && !q.is_active() { " (idle)" } else { "" };
            [
                format!("{}{short}{marker}", "  ".repeat(depth)),
                q.policy.name().to_string(),
                format!("{}", q.settings.weight),
                show(&q.settings.min_share, &types),
                show(&s.max_share(id), &types),
                show(&q.steady_fair_share, &types),
                show(&q.fair_share, &types),
                if q.leaf { show(&s.am_limit(id), &types) } else { "-".to_string() },
            ]
        })
        .collect();
    let (head, lines) = table(&header, &rows);
    crate::outln!("{head}");
    for l in lines {
        crate::outln!("{l}");
    }
    crate::outln!("fair share (now) is the instantaneous share among active queues; idle leaves get 0.");
    Ok(ExitCode::SUCCESS)
}

/// A table's header and rows as lines, each column as wide as its widest cell.
pub(crate) fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) -> (String, Vec<String>) {
    let widths: Vec<usize> = (0..N)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).chain([header[c].chars().count()]).max().unwrap_or(0))
        .collect();
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        cells.zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect::<Vec<_>>().join("  ").trim_end().to_string()
    };
    let head = line(&mut header.iter().copied());
    (head, rows.iter().map(|r| line(&mut r.iter().map(String::as_str))).collect())
}
