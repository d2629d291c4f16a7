//! Running a scenario: configuration, then each step against the real scheduler.

use std::collections::{BTreeMap, HashMap};

use fairloom_config::{parse_allocation_file, AllocationFile, ConfigError, SchedulerProperties};
use fairloom_model::{Millis, Resource, ResourceTypes};
use fairloom_scheduler::{AppId, Ask, ContainerId, FairScheduler, NodeId};
use serde_json::{json, Value};

use super::format::{
    locate_key, parse_step, properties_map, ContainerSelection, Document, HeartbeatNodes, PropertyValue, Step,
};
use super::observe::observe;

/// Why a scenario did not run to its end.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Not valid JSON, or not a scenario document.
    Document { message: String, line: Option<usize>, column: Option<usize> },
    /// The configuration does not load (a legitimate outcome when the file expects it).
    Config { message: String, line: Option<u32> },
    /// A step cannot run.
    Scenario { step: usize, message: String },
    /// The file needs something fairloom does not support yet.
    Unsupported { message: String },
}

/// What a scenario run produced.
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub observations: Vec<Value>,
    /// The `expect` block of each observation, by observation index.
    pub expectations: Vec<Option<Value>>,
    pub reloads: Vec<Value>,
    /// Step-level assertions (a reload or move that should or should not have been rejected).
    pub step_failures: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub name: String,
    pub expect_config_error: bool,
    pub result: Result<Run, Failure>,
}

pub(crate) struct Runner {
    pub(crate) scheduler: FairScheduler,
    pub(crate) now: Millis,
    pub(crate) apps: HashMap<String, AppId>,
    pub(crate) app_order: Vec<String>,
    properties: BTreeMap<String, String>,
    extra_types: Vec<String>,
    last_reload: Option<String>,
    run: Run,
    audit: bool,
}

/// Resource from a scenario object keyed by resource type name.
pub(crate) fn resource(types: &ResourceTypes, map: &BTreeMap<String, i64>) -> Result<Resource, String> {
    let mut r = Resource::none();
    for (name, &value) in map {
        let i = types
            .index_of(name)
            .ok_or_else(|| format!("unknown resource type '{name}' (declare it in resource_types)"))?;
        r.set(i, value);
    }
    Ok(r)
}

fn load_config(
    props: &BTreeMap<String, String>,
    extra: &[String],
    allocations: Option<&str>,
) -> Result<(SchedulerProperties, AllocationFile), ConfigError> {
    let props = SchedulerProperties::from_properties(props, extra).map_err(|e| e.in_file("properties"))?;
    let alloc = match allocations {
        Some(text) => parse_allocation_file(text, &props.resource_types).map_err(|e| e.in_file("allocations"))?,
        None => AllocationFile::default(),
    };
    Ok((props, alloc))
}

/// Parse and run a scenario document. `audit` runs the auditor after every step and turns a
/// mismatch into a scenario error.
pub fn run_text(text: &str, audit: bool) -> Outcome {
    let doc: Document = match serde_json::from_str(text) {
        Ok(d) => d,
        Err(e) => {
            let message = e.to_string();
            // Unknown keys are reported where the key stands, not where its object ends.
            let (line, column) = message
                .split('`')
                .nth(1)
                .filter(|_| message.starts_with("unknown key"))
                .and_then(|k| locate_key(text, k))
                .map_or((Some(e.line()).filter(|&l| l > 0), Some(e.column()).filter(|&c| c > 0)), |(l, c)| {
                    (Some(l), Some(c))
                });
            let message = message.split(" at line ").next().unwrap_or(&message).to_string();
            return Outcome {
                name: String::new(),
                expect_config_error: false,
                result: Err(Failure::Document { message, line, column }),
            };
        }
    };
    let name = doc.name.clone();
    let expect_config_error = match doc.expect_error.as_deref() {
        None => false,
        Some("config") => true,
        Some(other) => {
            let message = format!("expect_error must be \"config\" or null, got \"{other}\"");
            return Outcome {
                name,
                expect_config_error: false,
                result: Err(Failure::Document { message, line: None, column: None }),
            };
        }
    };
    let result = run_document(doc, audit);
    Outcome { name, expect_config_error, result }
}

fn run_document(doc: Document, audit: bool) -> Result<Run, Failure> {
    run_until(doc, audit, None).map(|r| r.run)
}

/// The scheduler's state after the observation labelled `label` (or at the end), and the clock.
pub fn state_at(text: &str, label: Option<&str>) -> Result<(fairloom_scheduler::FairScheduler, Millis), Failure> {
    let doc: Document = serde_json::from_str(text).map_err(|e| Failure::Document {
        message: e.to_string(),
        line: Some(e.line()).filter(|&l| l > 0),
        column: Some(e.column()).filter(|&c| c > 0),
    })?;
    let runner = run_until(doc, true, label)?;
    if let Some(l) = label {
        if !runner.run.observations.iter().any(|o| o["label"] == l) {
            return Err(Failure::Document {
                message: format!("no observation labelled '{l}'"),
                line: None,
                column: None,
            });
        }
    }
    Ok((runner.scheduler, runner.now))
}

fn run_until(doc: Document, audit: bool, stop_at: Option<&str>) -> Result<Runner, Failure> {
    match doc.scheduler.as_str() {
        "fair" => {}
        "capacity" | "fifo" => {
            return Err(Failure::Unsupported {
                message: format!(
                    "the {} scheduler is not supported yet: fairloom implements the Fair Scheduler",
                    doc.scheduler
                ),
            })
        }
        other => {
            return Err(Failure::Document { message: format!("unknown scheduler '{other}'"), line: None, column: None })
        }
    }
    if !doc.node_labels.is_empty() || !doc.capacity.is_empty() || doc.nodes.iter().any(|n| n.label.is_some()) {
        return Err(Failure::Unsupported {
            message: "node labels and capacity settings are not supported yet".to_string(),
        });
    }
    let properties = properties_map(&doc.properties);
    let (props, alloc) = load_config(&properties, &doc.resource_types, doc.allocations.as_deref())
        .map_err(|e| Failure::Config { message: e.to_string(), line: e.line })?;
    let mut scheduler =
        FairScheduler::new(props, alloc).map_err(|e| Failure::Config { message: e.to_string(), line: None })?;
    scheduler.set_groups(doc.groups.clone());
    let mut runner = Runner {
        scheduler,
        now: 0,
        apps: HashMap::new(),
        app_order: Vec::new(),
        properties,
        extra_types: doc.resource_types.clone(),
        last_reload: None,
        run: Run::default(),
        audit,
    };
    for n in &doc.nodes {
        runner.add_node(n.name.as_str(), n.rack.as_deref(), &n.resource).map_err(|message| Failure::Document {
            message: format!("nodes: {message}"),
            line: None,
            column: None,
        })?;
    }
    for (i, raw) in doc.steps.iter().enumerate() {
        let step = parse_step(raw).map_err(|message| Failure::Scenario { step: i, message })?;
        let stop = matches!(&step, Step::Observe { label, .. } if Some(label.as_str()) == stop_at);
        runner.step(i, step).map_err(|message| Failure::Scenario { step: i, message })?;
        if runner.audit {
            let mismatches = runner.scheduler.audit();
            if !mismatches.is_empty() {
                let list: Vec<String> = mismatches.iter().map(ToString::to_string).collect();
                return Err(Failure::Scenario {
                    step: i,
                    message: format!("auditor found {} mismatches: {}", list.len(), list.join("; ")),
                });
            }
        }
        if stop {
            break;
        }
    }
    Ok(runner)
}

impl Runner {
    fn add_node(&mut self, name: &str, rack: Option<&str>, res: &BTreeMap<String, i64>) -> Result<NodeId, String> {
        let r = resource(self.scheduler.resource_types(), res)?;
        self.scheduler.add_node(name, rack, r).map_err(|e| e.to_string())
    }

    fn app(&self, name: &str) -> Result<AppId, String> {
        self.apps.get(name).copied().ok_or_else(|| format!("unknown application '{name}'"))
    }

    fn node(&self, name: &str) -> Result<NodeId, String> {
        self.scheduler.node_id(name).ok_or_else(|| format!("unknown node '{name}'"))
    }

    fn res(&self, map: &BTreeMap<String, i64>) -> Result<Resource, String> {
        resource(self.scheduler.resource_types(), map)
    }

    fn containers(&self, sel: &ContainerSelection) -> Result<Vec<ContainerId>, String> {
        if let Some(names) = &sel.containers {
            return names
                .iter()
                .map(|n| {
                    let (app, seq) = n.rsplit_once('/').ok_or_else(|| format!("container name '{n}' is not APP/N"))?;
                    let seq: u32 = seq.parse().map_err(|_| format!("container name '{n}' is not APP/N"))?;
                    self.scheduler
                        .container_by_seq(self.app(app)?, seq)
                        .ok_or_else(|| format!("container {n} is not live"))
                })
                .collect();
        }
        let app = self.app(sel.app.as_deref().ok_or("give either containers or app and count")?)?;
        let node = sel.node.as_deref().map(|n| self.node(n)).transpose()?;
        let count = sel.count.ok_or("give either containers or app and count")? as usize;
        let found = self.scheduler.latest_containers(app, count, node);
        if found.len() < count {
            return Err(format!("only {} live non-AM containers match, {count} asked", found.len()));
        }
        Ok(found)
    }

    fn step(&mut self, index: usize, step: Step) -> Result<(), String> {
        match step {
            Step::Advance(ms) => self.now += ms,
            Step::Update => self.scheduler.update(self.now),
            Step::Heartbeat { nodes, rounds } => {
                let names: Vec<String> = match nodes {
                    HeartbeatNodes::One(n) if n == "all" => {
                        self.scheduler.nodes().map(|(_, n)| n.name.clone()).collect()
                    }
                    HeartbeatNodes::One(n) => vec![n],
                    HeartbeatNodes::Many(v) => v,
                };
                let ids = names.iter().map(|n| self.node(n)).collect::<Result<Vec<_>, _>>()?;
                for _ in 0..rounds {
                    for &id in &ids {
                        self.scheduler.node_update(id, self.now);
                    }
                }
            }
            Step::AddNode(n) => {
                if n.label.is_some() {
                    return Err("node labels are not supported yet".to_string());
                }
                self.add_node(&n.name, n.rack.as_deref(), &n.resource)?;
            }
            Step::RemoveNode(name) => {
                let id = self.node(&name)?;
                self.scheduler.remove_node(id);
            }
            Step::Submit(s) => {
                if self.apps.contains_key(&s.app) {
                    return Err(format!("application '{}' is already submitted", s.app));
                }
                if s.node_label.is_some() {
                    return Err("node labels are not supported yet".to_string());
                }
                // The Fair Scheduler gives every application the same priority (FSAppAttempt's
                // is constant), so `priority` is read and deliberately not used.
                let _ = s.priority;
                let am = s.am.as_ref().map(|m| self.res(m)).transpose()?;
                let id = self.scheduler.submit(&s.app, &s.queue, &s.user, am, self.now);
                self.apps.insert(s.app.clone(), id);
                self.app_order.push(s.app);
            }
            Step::Ask(a) => {
                let app = self.app(&a.app)?;
                let mut asks = Vec::new();
                for r in &a.requests {
                    if r.node_label.is_some() {
                        return Err("node labels are not supported yet".to_string());
                    }
                    asks.push(Ask {
                        priority: r.priority,
                        resource_name: r.resource_name.clone(),
                        capability: self.res(&r.capability)?,
                        num_containers: r.num_containers,
                        relax_locality: r.relax_locality,
                    });
                }
                self.scheduler.set_asks(app, &asks).map_err(|e| e.to_string())?;
            }
            Step::Complete(sel) | Step::Release(sel) => {
                for c in self.containers(&sel)? {
                    self.scheduler.complete_container(c, sel.exit_status).map_err(|e| e.to_string())?;
                }
            }
            Step::Finish(name) => {
                let app = self.app(&name)?;
                self.scheduler.finish_app(app).map_err(|e| e.to_string())?;
            }
            Step::Move { spec, expect_error } => {
                let app = self.app(&spec.app)?;
                let result = match self.scheduler.move_app(app, &spec.queue) {
                    Ok(_) => "applied".to_string(),
                    Err(e) => format!("rejected: {e}"),
                };
                self.record_reload(index, result, expect_error, "move");
                return Ok(());
            }
            Step::Place(p) => {
                let app = self.app(&p.app)?;
                let node = self.node(&p.node)?;
                let cap = self.res(&p.capability)?;
                if p.reserved {
                    self.scheduler.place_reservation(app, node, cap, p.priority).map_err(|e| e.to_string())?;
                } else {
                    self.scheduler
                        .place_containers(app, node, cap, p.priority, p.count, p.am)
                        .map_err(|e| e.to_string())?;
                }
            }
            Step::Reload { spec, expect_error } => {
                if spec.capacity.is_some() {
                    return Err("capacity settings are not supported yet".to_string());
                }
                let result = self.reload(spec.allocations.as_deref(), spec.properties.as_ref());
                self.record_reload(index, result, expect_error, "reload");
                return Ok(());
            }
            Step::Observe { label, expect } => {
                let mut o = observe(self, &label);
                if let Some(r) = self.last_reload.take() {
                    o["reload"] = Value::String(r);
                }
                self.run.observations.push(o);
                self.run.expectations.push(expect);
                return Ok(());
            }
        }
        self.last_reload = None;
        Ok(())
    }

    fn reload(&mut self, allocations: Option<&str>, properties: Option<&BTreeMap<String, PropertyValue>>) -> String {
        let props = properties.map(properties_map).unwrap_or_else(|| self.properties.clone());
        let current_alloc = self.scheduler.allocation_file().clone();
        let loaded = match load_config(&props, &self.extra_types, allocations) {
            Ok((p, a)) => Ok((p, if allocations.is_some() { a } else { current_alloc })),
            Err(e) => Err(e.to_string()),
        };
        let result = loaded.and_then(|(p, a)| self.scheduler.reload(p, a).map_err(|e| e.to_string()));
        match result {
            Ok(()) => {
                self.properties = props;
                "applied".to_string()
            }
            Err(e) => format!("rejected: {e}"),
        }
    }

    fn record_reload(&mut self, index: usize, result: String, expect_error: Option<bool>, what: &str) {
        let rejected = result.starts_with("rejected");
        if let Some(expected) = expect_error {
            if expected != rejected {
                let wanted = if expected { "rejected" } else { "applied" };
                self.run.step_failures.push(format!("steps[{index}] ({what}): expected {wanted}, got {result}"));
            }
        }
        self.run.reloads.push(json!({"step": index, "result": result}));
        self.last_reload = Some(result);
    }
}

impl Outcome {
    /// The JSON `scenario run` prints, and its exit code.
    pub fn to_json(&self) -> (Value, i32) {
        match &self.result {
            Ok(run) => (json!({"name": self.name, "observations": run.observations, "reloads": run.reloads}), 0),
            Err(Failure::Config { message, line }) => {
                let mut e = json!({"kind": "config", "message": message});
                if let Some(l) = line {
                    e["line"] = json!(l);
                }
                (json!({"name": self.name, "error": e}), 0)
            }
            Err(Failure::Scenario { step, message }) => {
                (json!({"name": self.name, "error": {"kind": "scenario", "step": step, "message": message}}), 2)
            }
            Err(Failure::Unsupported { message }) => {
                (json!({"name": self.name, "error": {"kind": "unsupported", "message": message}}), 2)
            }
            Err(Failure::Document { message, line, column }) => {
                let mut e = json!({"kind": "document", "message": message});
                if let Some(l) = line {
                    e["line"] = json!(l);
                }
                if let Some(c) = column {
                    e["column"] = json!(c);
                }
                (json!({"error": e}), 2)
            }
        }
    }
}
