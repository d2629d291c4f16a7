//! Built-in workloads, generated from a seed. Demand exceeds supply in each, so the
//! scheduler is the bottleneck.

use fairloom_config::Properties;
use fairloom_model::Resource;

use super::rng::Rng;
use super::workload::{AppDef, NodeDef, Stage, TaskGroup, Workload};

/// One preset's shape, documented in docs/simulator.md.
#[derive(Debug, Clone, Copy)]
pub struct PresetShape {
    pub name: &'static str,
    pub nodes: usize,
    pub racks: usize,
    pub node: (i64, i64),
    pub parents: usize,
    pub leaves_per_parent: usize,
    pub apps: usize,
    pub container: (i64, i64),
    pub container_ms: Option<i64>,
    pub outstanding: u64,
    pub tasks_per_app: u64,
    pub am: bool,
    pub default_duration_ms: i64,
}

pub const PRESETS: &[PresetShape] = &[
    PresetShape {
        name: "meituan-1k",
        nodes: 1_000,
        racks: 25,
        node: (65_536, 32),
        parents: 25,
        leaves_per_parent: 20,
        apps: 1_000,
        container: (2_048, 1),
        container_ms: Some(40_000),
        outstanding: 100,
        tasks_per_app: 1_000_000_000,
        am: true,
        default_duration_ms: 300_000,
    },
    PresetShape {
        name: "meituan-12k",
        nodes: 12_000,
        racks: 300,
        node: (65_536, 32),
        parents: 40,
        leaves_per_parent: 50,
        apps: 10_000,
        container: (2_048, 1),
        container_ms: Some(40_000),
        outstanding: 100,
        tasks_per_app: 1_000_000_000,
        am: true,
        default_duration_ms: 120_000,
    },
    PresetShape {
        name: "hyperscale-100k",
        nodes: 100_000,
        racks: 2_500,
        node: (65_536, 32),
        parents: 100,
        leaves_per_parent: 100,
        apps: 100_000,
        container: (2_048, 1),
        container_ms: Some(40_000),
        outstanding: 50,
        tasks_per_app: 1_000_000_000,
        am: true,
        default_duration_ms: 60_000,
    },
    PresetShape {
        name: "yunikorn-10k",
        nodes: 5_000,
        racks: 125,
        node: (16_384, 16),
        parents: 1,
        leaves_per_parent: 2,
        apps: 2,
        container: (1_024, 1),
        container_ms: None,
        outstanding: 5_000,
        tasks_per_app: 5_000,
        am: false,
        default_duration_ms: 10_000,
    },
];

pub fn shape(name: &str) -> Option<&'static PresetShape> {
    PRESETS.iter().find(|p| p.name == name)
}

/// The preset's workload for `seed`.
pub fn generate(shape: &PresetShape, seed: u64) -> Workload {
    let mut rng = Rng::new(seed);
    let nodes = (0..shape.nodes)
        .map(|i| NodeDef {
            name: format!("node{:06}", i + 1),
            rack: format!("/rack{:04}", i % shape.racks),
            resource: Resource::new(shape.node.0, shape.node.1),
        })
        .collect();
    // root → parents (weights 1–3) → leaves (weights 1–3): YARN's fair policy at every level.
    let mut xml = String::from("<allocations>\n");
    let mut leaves = Vec::new();
    for p in 0..shape.parents {
        xml.push_str(&format!("  <queue name=\"p{p:03}\"><weight>{}</weight>\n", 1 + rng.below(3)));
        for l in 0..shape.leaves_per_parent {
            xml.push_str(&format!("    <queue name=\"q{l:03}\"><weight>{}</weight></queue>\n", 1 + rng.below(3)));
            leaves.push(format!("root.p{p:03}.q{l:03}"));
        }
        xml.push_str("  </queue>\n");
    }
    xml.push_str("  <queuePlacementPolicy><rule name=\"specified\" create=\"false\"/><rule name=\"reject\"/></queuePlacementPolicy>\n</allocations>\n");
    let apps = (0..shape.apps)
        .map(|i| AppDef {
            name: format!("app{:06}", i + 1),
            queue: leaves[i % leaves.len()].clone(),
            user: format!("user{}", i % 97),
            arrival_ms: (i as i64 * 7) % 1_000,
            am: shape.am.then(|| Resource::new(1_024, 1)),
            stages: vec![Stage {
                groups: vec![TaskGroup {
                    priority: 1,
                    resource: Resource::new(shape.container.0, shape.container.1),
                    count: shape.tasks_per_app,
                    duration_ms: shape.container_ms,
                    host: None,
                    request_delay_ms: 0,
                }],
            }],
        })
        .collect();
    let mut properties = Properties::new();
    properties.insert("yarn.scheduler.fair.assignmultiple".into(), "true".into());
    properties.insert("yarn.scheduler.minimum-allocation-mb".into(), "1024".into());
    properties.insert("yarn.scheduler.maximum-allocation-mb".into(), "16384".into());
    properties.insert("yarn.scheduler.maximum-allocation-vcores".into(), "16".into());
    let supply = shape.nodes as u64 * (shape.node.0 / shape.container.0).min(shape.node.1 / shape.container.1) as u64;
    Workload {
        name: shape.name.to_string(),
        nodes,
        apps,
        allocations: xml,
        capacity: None,
        properties,
        max_outstanding: Some(shape.outstanding),
        description: format!(
            "{} nodes of {} MB/{} vcores in {} racks; {} leaf queues ({} parents × {}, weights 1–3); {} apps, each keeping {} containers of {} MB/{} vcore asked{}; capacity {} containers",
            shape.nodes,
            shape.node.0,
            shape.node.1,
            shape.racks,
            shape.parents * shape.leaves_per_parent,
            shape.parents,
            shape.leaves_per_parent,
            shape.apps,
            shape.outstanding,
            shape.container.0,
            shape.container.1,
            match shape.container_ms {
                Some(ms) => format!(", running {} s", ms / 1000),
                None => ", never completing".to_string(),
            },
            supply
        ),
    }
}

/// `preempt-1k`: batch work fills 1,000 nodes with 10-minute containers; at 60 s a prod queue
/// (fairSharePreemptionTimeout 15 s, threshold 1) arrives wanting more than its half. With
/// preemption on, prod should reach its fair share within the timeout, the 15 s wait before
/// kill and a few update intervals, taking no more than it is owed. With `managed_am`, prod's
/// apps first need room for their AMs, which costs them one more back-off round (YARN's way).
pub fn preemption_demo(seed: u64, managed_am: bool) -> Workload {
    let mut rng = Rng::new(seed);
    let nodes = (0..1_000)
        .map(|i| NodeDef {
            name: format!("node{:06}", i + 1),
            rack: format!("/rack{:04}", i % 25),
            resource: Resource::new(65_536, 32),
        })
        .collect();
    let task = |ms: i64| TaskGroup {
        priority: 1,
        resource: Resource::new(2_048, 1),
        count: 1_000_000,
        duration_ms: Some(ms),
        host: None,
        request_delay_ms: 0,
    };
    let mut apps: Vec<AppDef> = (0..10)
        .map(|i| AppDef {
            name: format!("batch{i:02}"),
            queue: "root.batch".into(),
            user: "etl".into(),
            arrival_ms: rng.below(100) as i64,
            am: Some(Resource::new(1_024, 1)),
            stages: vec![Stage { groups: vec![task(600_000)] }],
        })
        .collect();
    apps.extend((0..10).map(|i| AppDef {
        name: format!("prod{i:02}"),
        queue: "root.prod".into(),
        user: "svc".into(),
        arrival_ms: 60_000 + rng.below(100) as i64,
        am: managed_am.then(|| Resource::new(1_024, 1)),
        stages: vec![Stage { groups: vec![task(60_000)] }],
    }));
    let mut properties = Properties::new();
    for (k, v) in [
        ("yarn.scheduler.fair.assignmultiple", "true"),
        ("yarn.scheduler.fair.preemption", "true"),
        ("yarn.scheduler.minimum-allocation-mb", "1024"),
    ] {
        properties.insert(k.into(), v.into());
    }
    Workload {
                name: if managed_am { "preempt-1k-am" } else { "preempt-1k" }.into(),
        nodes,
        apps,
        allocations: "<allocations><queue name=\"batch\"/><queue name=\"prod\"><fairSharePreemptionTimeout>15</fairSharePreemptionTimeout><fairSharePreemptionThreshold>1</fairSharePreemptionThreshold></queue></allocations>".into(),
        capacity: None,
        properties,
        max_outstanding: Some(4_000),
                description: format!(
            "1000 nodes of 65536 MB/32 vcores; root.batch (10 apps, 10-minute containers of 2048 MB/1 vcore) fills the cluster; at 60 s root.prod (10 apps{}, 1-minute containers; fairSharePreemptionTimeout 15 s, threshold 1) arrives; preemption on, waitTimeBeforeKill 15 s",
            if managed_am { " with AM containers" } else { ", unmanaged AMs" }
        ),
    }
}
