//! Criterion benchmarks of the scheduling core:
//! - one allocation on a warm `meituan-12k` state (a container completes, its node heartbeats
//!   and the freed room is allocated again);
//! - one fair-share recomputation (the periodic update) over 10,000 active leaf queues, with
//!   every cache cleared first, and the same update when nothing changed.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use fairloom_config::{parse_allocation_file, SchedulerProperties};
use fairloom_model::{Resource, ANY};
use fairloom_scheduler::{Ask, ContainerId, Decision, FairScheduler, NodeId, NodeSpec, Scheduler, SubmitSpec};
use fairloom_sim::load::{presets, Workload};

/// A scheduler with the workload's nodes full and every app asking for more.
fn warm(w: &Workload) -> (FairScheduler, Vec<NodeId>) {
    let props = SchedulerProperties::from_properties(&w.properties, &[]).unwrap();
    let alloc = parse_allocation_file(&w.allocations, &props.resource_types).unwrap();
    let mut s = FairScheduler::new(props, alloc).unwrap();
    let specs: Vec<NodeSpec<'_>> = w
        .nodes
        .iter()
        .map(|n| NodeSpec { name: &n.name, rack: Some(&n.rack), resource: n.resource, label: None })
        .collect();
    let nodes = s.add_nodes(&specs).unwrap();
    for a in &w.apps {
        // Unmanaged AMs: the state is about task containers.
        let id = s.submit(&SubmitSpec::new(&a.name, &a.queue, &a.user, None), 0);
        let g = &a.stages[0].groups[0];
        let ask = Ask {
            priority: g.priority,
            resource_name: ANY.into(),
            capability: g.resource,
            num_containers: 1_000_000,
            relax_locality: true,
            node_label: None,
        };
        s.set_asks(id, &[ask]).unwrap();
    }
    s.update(0);
    for _ in 0..8 {
        for &n in &nodes {
            s.node_update(n, 0);
        }
    }
    s.update(0);
    (s, nodes)
}

fn allocation(c: &mut Criterion) {
    let w = presets::generate(presets::shape("meituan-12k").unwrap(), 1);
    let (mut s, nodes) = warm(&w);
    let mut i = 0usize;
    let mut d = Vec::new();
    c.bench_function("allocation on a warm meituan-12k state", |b| {
        b.iter(|| {
            // The next node reports one container finished, as the simulator's heartbeats do.
            let node = nodes[i % nodes.len()];
            i += 1;
            let done: Option<(ContainerId, i32)> = s.node_containers(node).next().map(|c| (c, 0));
            d.clear();
            s.node_heartbeat_into(node, done.as_slice(), 0, &mut d);
            black_box(d.iter().filter(|d| matches!(d, Decision::Allocated { .. })).count())
        })
    });
}

fn fair_shares(c: &mut Criterion) {
    // 100 parents × 100 leaves, one runnable app in each leaf.
    let mut xml = String::from("<allocations>");
    for p in 0..100 {
        xml.push_str(&format!("<queue name=\"p{p}\"><weight>{}</weight>", 1 + p % 3));
        for l in 0..100 {
            xml.push_str(&format!("<queue name=\"l{l}\"><weight>{}</weight></queue>", 1 + l % 4));
        }
        xml.push_str("</queue>");
    }
    xml.push_str("</allocations>");
    let props = SchedulerProperties::default();
    let alloc = parse_allocation_file(&xml, &props.resource_types).unwrap();
    let mut s = FairScheduler::new(props, alloc).unwrap();
    let names: Vec<String> = (0..1000).map(|i| format!("n{i}")).collect();
    let specs: Vec<NodeSpec<'_>> = names
        .iter()
        .map(|n| NodeSpec { name: n, rack: None, resource: Resource::new(65536, 32), label: None })
        .collect();
    s.add_nodes(&specs).unwrap();
    for p in 0..100 {
        for l in 0..100 {
            s.submit(&SubmitSpec::new(&format!("a{p}_{l}"), &format!("root.p{p}.l{l}"), "u", None), 0);
        }
    }
    // Everything recomputed, as YARN's update does every time.
    c.bench_function("fair-share update over 10,000 active queues", |b| {
        b.iter(|| {
            s.clear_caches();
            s.update(black_box(0))
        })
    });
    // What fairloom's update costs when no demand or runnable app changed since the last one.
    c.bench_function("update over 10,000 active queues, nothing changed", |b| b.iter(|| s.update(black_box(0))));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = allocation, fair_shares
}
criterion_main!(benches);
