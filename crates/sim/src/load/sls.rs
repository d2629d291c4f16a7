//! SLS inputs as YARN's Scheduler Load Simulator reads them: JSON traces (a stream of job
//! objects, not an array), nodes files (a stream of racks; empty entries skipped) and
//! SYNTH workloads.
//!
//! SLS defaults: NM 10240 MB / 10 vcores, AM 1024 MB / 1 vcore, task 1024 MB / 1 vcore, map
//! priority 20, reduce priority 10. A task's duration is `container.duration.ms`, else
//! `duration.ms`, else `container.end.ms − container.start.ms`; containers are requested when
//! the AM starts (a dag AM adds `container.request.delay`).

use std::collections::BTreeMap;

use fairloom_config::Properties;
use fairloom_model::{Resource, DEFAULT_RACK};
use serde_json::{Deserializer, Map, Value};

use super::rng::Rng;
use super::workload::{AppDef, NodeDef, Stage, TaskGroup, Workload};

const NM_MEMORY: i64 = 10_240;
const NM_VCORES: i64 = 10;
const TASK_MEMORY: i64 = 1_024;
const TASK_VCORES: i64 = 1;
const MAP_PRIORITY: i32 = 20;
const REDUCE_PRIORITY: i32 = 10;

/// A JSON object of a stream and the line it starts on.
type Entry = (usize, Map<String, Value>);

/// The JSON objects of a stream, each with the line it starts on.
fn stream(text: &str) -> Result<Vec<Entry>, String> {
    let mut out = Vec::new();
    let mut it = Deserializer::from_str(text).into_iter::<Value>();
    loop {
        let offset = it.byte_offset();
        match it.next() {
            None => break,
            Some(Err(e)) => return Err(format!("line {}, column {}: {e}", e.line(), e.column())),
            Some(Ok(Value::Object(m))) => {
                let skipped = text[offset..].len() - text[offset..].trim_start().len();
                let line = text[..offset + skipped].matches('\n').count() + 1;
                out.push((line, m));
            }
            Some(Ok(other)) => return Err(format!("expected a JSON object, found {other}")),
        }
    }
    Ok(out)
}

/// A number that SLS would read with `Long.parseLong(value.toString())`.
fn long(m: &Map<String, Value>, key: &str, at: &str) -> Result<Option<i64>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            n.as_i64().map(Some).ok_or_else(|| format!("{at}: {key} must be an integer, got {n}"))
        }
        Some(Value::String(s)) => {
            s.trim().parse().map(Some).map_err(|_| format!("{at}: {key} must be an integer, got \"{s}\""))
        }
        Some(other) => Err(format!("{at}: {key} must be an integer, got {other}")),
    }
}

fn text<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    m.get(key).and_then(Value::as_str)
}

/// `/rack/host` (or `host`) into (rack, host).
fn split_host(s: &str) -> (String, String) {
    match s.rsplit_once('/') {
        Some((rack, host)) if !rack.is_empty() => (rack.to_string(), host.to_string()),
        _ => (DEFAULT_RACK.to_string(), s.trim_start_matches('/').to_string()),
    }
}

/// Nodes file: `{"rack": "r", "nodes": [{"node": "n", "memory-mb": .., "vcores": ..}]}` entries.
pub fn parse_nodes(text: &str) -> Result<Vec<NodeDef>, String> {
    let mut nodes = Vec::new();
    for (line, entry) in stream(text)? {
        if entry.is_empty() {
            continue;
        }
        let at = format!("nodes entry at line {line}");
        let rack = text_field(&entry, "rack", &at)?;
        let rack = if rack.starts_with('/') { rack.to_string() } else { format!("/{rack}") };
        let list =
            entry.get("nodes").and_then(Value::as_array).ok_or_else(|| format!("{at}: 'nodes' must be a list"))?;
        for n in list {
            let n = n.as_object().ok_or_else(|| format!("{at}: each node must be an object"))?;
            if n.is_empty() {
                continue;
            }
            let name = text_field(n, "node", &at)?.to_string();
            let memory = long(n, "memory-mb", &at)?.unwrap_or(NM_MEMORY);
            let vcores = long(n, "vcores", &at)?.unwrap_or(NM_VCORES);
            nodes.push(NodeDef { name, rack: rack.clone(), resource: Resource::new(memory, vcores) });
        }
    }
    Ok(nodes)
}

fn text_field<'a>(m: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a str, String> {
    text(m, key).ok_or_else(|| format!("{at}: '{key}' is missing or not a string"))
}

/// SLS's precedence: `container.duration.ms`, else `duration.ms`, else end − start.
fn task_duration(task: &Map<String, Value>, at: &str) -> Result<i64, String> {
    match (long(task, "container.duration.ms", at)?, long(task, "duration.ms", at)?) {
        (Some(d), _) | (None, Some(d)) => Ok(d),
        (None, None) => match (long(task, "container.start.ms", at)?, long(task, "container.end.ms", at)?) {
            (Some(s), Some(e)) => Ok(e - s),
            _ => Err(format!("{at}: no duration (container.duration.ms, duration.ms or start and end)")),
        },
    }
}

/// The nodes file's nodes, or else the trace's hosts with SLS's default size.
fn trace_nodes(nodes: Option<&str>, hosts: BTreeMap<String, String>) -> Result<Vec<NodeDef>, String> {
    let nodes = match nodes {
        Some(text) => parse_nodes(text).map_err(|e| format!("nodes file: {e}"))?,
        None => hosts
            .into_iter()
            .map(|(host, rack)| NodeDef { name: host, rack, resource: Resource::new(NM_MEMORY, NM_VCORES) })
            .collect(),
    };
    if nodes.is_empty() {
        return Err("no nodes: give a nodes file or a trace with container.host".to_string());
    }
    Ok(nodes)
}

/// An SLS JSON trace. Without a nodes file, the nodes are the trace's hosts (SLS's default).
pub fn from_trace(
    trace: &str,
    nodes: Option<&str>,
    allocations: &str,
    properties: Properties,
) -> Result<Workload, String> {
    let jobs = stream(trace)?;
    let mut hosts: BTreeMap<String, String> = BTreeMap::new();
    let mut apps = Vec::new();
    for (index, (line, job)) in jobs.iter().enumerate() {
        let id = text(job, "job.id").map_or_else(|| format!("job_{}", index + 1), str::to_string);
        let at = format!("job {id} (line {line})");
        let am_type = text(job, "yarn.sls.am.type").unwrap_or("mapreduce");
        if am_type == "spark" {
            return Err(format!("{at}: a trace with spark jobs runs as a Spark comparison, and cannot mix spark with other AM types yet"));
        }
        if !matches!(am_type, "mapreduce" | "dag") {
            return Err(format!("{at}: AM type '{am_type}' is not supported yet (mapreduce, dag and spark are)"));
        }
        let start = long(job, "job.start.ms", &at)?.ok_or_else(|| format!("{at}: job.start.ms is missing"))?;
        let tasks =
            job.get("job.tasks").and_then(Value::as_array).ok_or_else(|| format!("{at}: job.tasks must be a list"))?;
        let (mut maps, mut reduces) = (Vec::new(), Vec::new());
        for (t, task) in tasks.iter().enumerate() {
            let task = task.as_object().ok_or_else(|| format!("{at}: task {t} must be an object"))?;
            let tat = format!("{at}, task {t}");
            let duration = task_duration(task, &tat)?;
            if duration < 0 {
                return Err(format!("{tat}: negative duration {duration} ms"));
            }
            let is_reduce = text(task, "container.type") == Some("reduce");
            let priority = long(task, "container.priority", &tat)?
                .map_or(if is_reduce { REDUCE_PRIORITY } else { MAP_PRIORITY }, |p| p as i32);
            let memory = long(task, "container.memory", &tat)?.unwrap_or(TASK_MEMORY);
            let vcores = long(task, "container.vcores", &tat)?.unwrap_or(TASK_VCORES);
            let count = long(task, "count", &tat)?.unwrap_or(1).max(0) as u64;
            let host = text(task, "container.host").map(split_host).map(|(rack, host)| {
                hosts.entry(host.clone()).or_insert(rack);
                host
            });
            let delay = if am_type == "dag" { long(task, "container.request.delay", &tat)?.unwrap_or(0) } else { 0 };
            let group = TaskGroup {
                priority,
                resource: Resource::new(memory, vcores),
                count,
                duration_ms: Some(duration),
                host,
                request_delay_ms: delay,
            };
            if is_reduce {
                reduces.push(group);
            } else {
                maps.push(group);
            }
        }
        let mut stages = vec![Stage { groups: maps }];
        if !reduces.is_empty() {
            stages.push(Stage { groups: reduces });
        }
        apps.push(AppDef {
            name: id,
            queue: text(job, "job.queue.name").unwrap_or("default").to_string(),
            user: text(job, "job.user").unwrap_or("default").to_string(),
            arrival_ms: start,
            am: Some(Resource::new(TASK_MEMORY, TASK_VCORES)),
            stages,
        });
    }
    let nodes = trace_nodes(nodes, hosts)?;
    Ok(Workload {
        name: "sls-trace".to_string(),
        description: format!("SLS trace: {} jobs on {} nodes", apps.len(), nodes.len()),
        nodes,
        apps,
        allocations: allocations.to_string(),
        capacity: None,
        properties,
        max_outstanding: None,
    })
}

/// True when every job of the trace has `yarn.sls.am.type: spark`.
pub fn is_spark_trace(trace: &str) -> bool {
    stream(trace)
        .is_ok_and(|jobs| !jobs.is_empty() && jobs.iter().all(|(_, j)| text(j, "yarn.sls.am.type") == Some("spark")))
}

/// A trace of spark jobs as Spark-like apps: each task prefers the host it ran on in the
/// trace; executors take the tasks' container size, one task per executor core.
pub fn spark_from_trace(
    trace: &str,
    nodes: Option<&str>,
    allocations: &str,
    properties: Properties,
) -> Result<super::spark::SparkWorkload, String> {
    use super::spark::{SparkApp, SparkTask, SparkWorkload};
    let mut hosts: BTreeMap<String, String> = BTreeMap::new();
    let mut apps = Vec::new();
    for (index, (line, job)) in stream(trace)?.iter().enumerate() {
        let id = text(job, "job.id").map_or_else(|| format!("job_{}", index + 1), str::to_string);
        let at = format!("job {id} (line {line})");
        let start = long(job, "job.start.ms", &at)?.ok_or_else(|| format!("{at}: job.start.ms is missing"))?;
        let list =
            job.get("job.tasks").and_then(Value::as_array).ok_or_else(|| format!("{at}: job.tasks must be a list"))?;
        let mut tasks = Vec::new();
        let mut executor = Resource::new(TASK_MEMORY, TASK_VCORES);
        for (t, task) in list.iter().enumerate() {
            let task = task.as_object().ok_or_else(|| format!("{at}: task {t} must be an object"))?;
            let tat = format!("{at}, task {t}");
            let duration = task_duration(task, &tat)?;
            executor = Resource::new(
                long(task, "container.memory", &tat)?.unwrap_or(TASK_MEMORY),
                long(task, "container.vcores", &tat)?.unwrap_or(TASK_VCORES),
            );
            let preferred: Vec<String> = text(task, "container.host")
                .map(split_host)
                .map(|(rack, host)| {
                    hosts.entry(host.clone()).or_insert(rack);
                    vec![host]
                })
                .unwrap_or_default();
            let count = long(task, "count", &tat)?.unwrap_or(1).max(0);
            for _ in 0..count {
                tasks.push(SparkTask { hosts: preferred.clone(), duration_ms: duration.max(0) });
            }
        }
        let cores = executor.vcores().max(1) as u32;
        apps.push(SparkApp {
            name: id,
            queue: text(job, "job.queue.name").unwrap_or("default").to_string(),
            arrival_ms: start,
            executor,
            cores_per_executor: cores,
            max_executors: long(job, "spark.dynamicAllocation.maxExecutors", &at)?.unwrap_or(1_000) as u32,
            tasks,
        });
    }
    let nodes = trace_nodes(nodes, hosts)?;
    Ok(SparkWorkload {
        name: "sls-spark-trace".to_string(),
        description: format!("SLS trace: {} spark jobs on {} nodes", apps.len(), nodes.len()),
        nodes,
        apps,
        allocations: allocations.to_string(),
        capacity: None,
        properties,
    })
}

/// A SYNTH value: a number, or `{"val": .., "std": ..}` sampled from a normal distribution.
fn sample(v: Option<&Value>, rng: &mut Rng) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::Object(m) => {
            let val = m.get("val")?.as_f64()?;
            let std = m.get("std").and_then(Value::as_f64).unwrap_or(0.0);
            Some(if std > 0.0 { rng.normal(val, std) } else { val })
        }
        _ => None,
    }
}

/// A SYNTH workload (legacy flat keys or Sample-based keys), generated with `seed`.
pub fn from_synth(synth: &str, allocations: &str, properties: Properties, seed: u64) -> Result<Workload, String> {
    let doc: Value =
        serde_json::from_str(synth).map_err(|e| format!("line {}, column {}: {e}", e.line(), e.column()))?;
    let num = |k: &str| doc.get(k).and_then(Value::as_f64).ok_or_else(|| format!("'{k}' is missing or not a number"));
    let num_nodes = num("num_nodes")? as usize;
    let per_rack = num("nodes_per_rack")?.max(1.0) as usize;
    let num_jobs = num("num_jobs")? as usize;
    let mut rng = Rng::new(doc.get("rand_seed").and_then(Value::as_u64).unwrap_or(seed));
    let workloads = doc.get("workloads").and_then(Value::as_array).ok_or("'workloads' must be a list")?;
    if workloads.is_empty() {
        return Err("'workloads' is empty".to_string());
    }
    let weights: Vec<f64> =
        workloads.iter().map(|w| w.get("workload_weight").and_then(Value::as_f64).unwrap_or(1.0)).collect();
    let pick = |rng: &mut Rng, weights: &[f64]| {
        let total: f64 = weights.iter().sum();
        let mut x = rng.unit() * total;
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        weights.len() - 1
    };
    let mut apps = Vec::new();
    for j in 0..num_jobs {
        let w = &workloads[pick(&mut rng, &weights)];
        let classes = w.get("job_classes").and_then(Value::as_array).ok_or("'job_classes' must be a list")?;
        let class_weights: Vec<f64> =
            classes.iter().map(|c| c.get("class_weight").and_then(Value::as_f64).unwrap_or(1.0)).collect();
        let class = &classes[pick(&mut rng, &class_weights)];
        // Arrival: the time distribution's weighted points, in seconds.
        let times = w.get("time_distribution").and_then(Value::as_array).cloned().unwrap_or_default();
        let time_weights: Vec<f64> =
            times.iter().map(|t| t.get("weight").and_then(Value::as_f64).unwrap_or(0.0)).collect();
        let arrival_s = if times.is_empty() {
            0.0
        } else {
            times[pick(&mut rng, &time_weights)].get("time").and_then(Value::as_f64).unwrap_or(0.0)
        };
        let mut stages = Vec::new();
        if let Some(tasks) = class.get("tasks").and_then(Value::as_array) {
            for t in tasks {
                let count = sample(t.get("count"), &mut rng).unwrap_or(1.0).round().max(0.0) as u64;
                let secs = sample(t.get("time"), &mut rng).unwrap_or(10.0).max(0.0);
                let memory = sample(t.get("max_memory"), &mut rng).unwrap_or(TASK_MEMORY as f64) as i64;
                let vcores = sample(t.get("max_vcores"), &mut rng).unwrap_or(TASK_VCORES as f64).round() as i64;
                let priority = t.get("priority").and_then(Value::as_i64).unwrap_or(MAP_PRIORITY as i64) as i32;
                stages.push(Stage {
                    groups: vec![TaskGroup {
                        priority,
                        resource: Resource::new(memory, vcores),
                        count,
                        duration_ms: Some((secs * 1000.0) as i64),
                        host: None,
                        request_delay_ms: 0,
                    }],
                });
            }
        } else {
            let f = |k: &str| class.get(k).and_then(Value::as_f64);
            let n = |rng: &mut Rng, avg: &str, std: &str| {
                rng.normal(f(avg).unwrap_or(0.0), f(std).unwrap_or(0.0)).round().max(0.0)
            };
            let maps = n(&mut rng, "mtasks_avg", "mtasks_stddev") as u64;
            let reduces = n(&mut rng, "rtasks_avg", "rtasks_stddev") as u64;
            let mtime = n(&mut rng, "mtime_avg", "mtime_stddev") as i64 * 1000;
            let rtime = n(&mut rng, "rtime_avg", "rtime_stddev") as i64 * 1000;
            let mm = f("map_max_memory_avg").unwrap_or(TASK_MEMORY as f64) as i64;
            let mv = f("map_max_vcores_avg").unwrap_or(TASK_VCORES as f64).round() as i64;
            let rm = f("reduce_max_memory_avg").unwrap_or(TASK_MEMORY as f64) as i64;
            let rv = f("reduce_max_vcores_avg").unwrap_or(TASK_VCORES as f64).round() as i64;
            stages.push(Stage {
                groups: vec![TaskGroup {
                    priority: MAP_PRIORITY,
                    resource: Resource::new(mm, mv),
                    count: maps,
                    duration_ms: Some(mtime),
                    host: None,
                    request_delay_ms: 0,
                }],
            });
            if reduces > 0 {
                stages.push(Stage {
                    groups: vec![TaskGroup {
                        priority: REDUCE_PRIORITY,
                        resource: Resource::new(rm, rv),
                        count: reduces,
                        duration_ms: Some(rtime),
                        host: None,
                        request_delay_ms: 0,
                    }],
                });
            }
        }
        apps.push(AppDef {
            name: format!("synth_job_{}", j + 1),
            queue: w.get("queue_name").and_then(Value::as_str).unwrap_or("default").to_string(),
            user: class.get("user_name").and_then(Value::as_str).unwrap_or("default").to_string(),
            arrival_ms: (arrival_s * 1000.0) as i64,
            am: Some(Resource::new(TASK_MEMORY, TASK_VCORES)),
            stages,
        });
    }
    apps.sort_by_key(|a| a.arrival_ms);
    let nodes = (0..num_nodes)
        .map(|i| NodeDef {
            name: format!("node{}", i + 1),
            rack: format!("/rack{}", i / per_rack + 1),
            resource: Resource::new(NM_MEMORY, NM_VCORES),
        })
        .collect();
    Ok(Workload {
        name: "sls-synth".to_string(),
        description: format!("SYNTH: {num_jobs} jobs on {num_nodes} nodes"),
        nodes,
        apps,
        allocations: allocations.to_string(),
        capacity: None,
        properties,
        max_outstanding: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_file_skips_empty_entries() {
        let text = r#"{"rack": "r1", "nodes": [{"node": "a"}, {"node": "b", "memory-mb": 2048, "vcores": 2}, {}]}
            {}
            {"rack": "/r2", "nodes": [{"node": "c"}]}"#;
        let nodes = parse_nodes(text).unwrap();
        assert_eq!(nodes.len(), 3);
        assert_eq!((nodes[0].rack.as_str(), nodes[0].resource), ("/r1", Resource::new(10_240, 10)));
        assert_eq!(nodes[1].resource, Resource::new(2048, 2));
        assert_eq!(nodes[2].rack, "/r2");
        assert!(parse_nodes("{\"rack\": \"r\"}").unwrap_err().contains("line 1"));
    }

    #[test]
    fn trace_durations_follow_sls_precedence() {
        let trace = r#"{"job.start.ms": 5, "job.queue.name": "q", "job.id": "j1", "job.tasks": [
              {"container.host": "/r1/h1", "container.start.ms": 10, "container.end.ms": 110},
              {"container.host": "/r1/h2", "duration.ms": 7, "container.end.ms": 110},
              {"container.duration.ms": "3", "duration.ms": 7, "container.type": "reduce"}]}
            {"job.start.ms": "9", "job.tasks": []}"#;
        let w = from_trace(trace, None, "<allocations/>", Properties::new()).unwrap();
        assert_eq!(w.apps.len(), 2);
        let maps = &w.apps[0].stages[0].groups;
        assert_eq!((maps[0].duration_ms, maps[1].duration_ms), (Some(100), Some(7)));
        assert_eq!(maps[0].priority, MAP_PRIORITY);
        let reduces = &w.apps[0].stages[1].groups;
        assert_eq!((reduces[0].duration_ms, reduces[0].priority), (Some(3), REDUCE_PRIORITY));
        assert_eq!(w.apps[1].arrival_ms, 9);
        assert_eq!(w.nodes.len(), 2);
        assert_eq!(w.nodes[0].rack, "/r1");
    }

    #[test]
    fn trace_errors_name_the_job() {
        let e = from_trace("{\"job.id\": \"x\", \"job.tasks\": []}", None, "", Properties::new()).unwrap_err();
        assert!(e.contains("job x") && e.contains("job.start.ms"), "{e}");
        let e = from_trace("{\"job.start.ms\": 0, \"job.tasks\": [{}]}", None, "", Properties::new()).unwrap_err();
        assert!(e.contains("no duration"), "{e}");
        let e = from_trace("{\"job.start.ms\": 0,\n \"job.tasks\": [}", None, "", Properties::new()).unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        let e = from_trace(
            "{\"job.start.ms\": 0, \"yarn.sls.am.type\": \"stream\", \"job.tasks\": []}",
            None,
            "",
            Properties::new(),
        )
        .unwrap_err();
        assert!(e.contains("not supported"), "{e}");
    }
}
