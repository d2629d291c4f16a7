//! Running a scenario: configuration, then each step against the real scheduler.

use std::collections::{BTreeMap, HashMap};

use fairloom_model::{Millis, Resource, ResourceTypes};
use fairloom_scheduler::driver::{AnyScheduler, NodeSpec, Placement, SubmitSpec};
use fairloom_scheduler::{
    AppId, Ask, ContainerId, NodeId, Reconfigure, SchedulerConfig, SchedulerError, SchedulerFile, SchedulerKind,
};
use serde_json::{json, Value};

use super::format::{
    locate_key, parse_step, properties_map, ContainerSelection, Document, HeartbeatNodes, ReloadSpec, Step,
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
    /// Steps where something happened that YARN does differently on purpose or by a known
    /// quirk, for the comparison with the oracle (docs/fidelity.md).
    pub notes: Vec<Value>,
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
    pub(crate) scheduler: AnyScheduler,
    pub(crate) now: Millis,
    pub(crate) apps: HashMap<String, AppId>,
    pub(crate) app_order: Vec<String>,
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
pub fn state_at(text: &str, label: Option<&str>) -> Result<(AnyScheduler, Millis), Failure> {
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

/// A node label of the scenario's `node_labels`: `{"name": "x", "exclusive": true}`.
fn node_label(v: &Value) -> Result<(String, bool), String> {
    let o = v.as_object().ok_or("a node label is an object {\"name\": ..., \"exclusive\": ...}")?;
    if let Some(bad) = o.keys().find(|k| *k != "name" && *k != "exclusive" && !k.starts_with('_')) {
        return Err(format!("unknown key `{bad}` in a node label"));
    }
    let name = o.get("name").and_then(Value::as_str).ok_or("a node label needs a string name")?;
    let exclusive = match o.get("exclusive") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(format!("exclusive must be true or false, got {other}")),
    };
    if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == ',') {
        return Err(format!("invalid node label name '{name}'"));
    }
    Ok((name.to_string(), exclusive))
}

fn build_scheduler(doc: &Document, properties: &BTreeMap<String, String>) -> Result<AnyScheduler, Failure> {
    let kind = match doc.scheduler.as_str() {
        "fair" => {
            if !doc.node_labels.is_empty() || !doc.capacity.is_empty() || doc.nodes.iter().any(|n| n.label.is_some()) {
                return Err(Failure::Unsupported {
                    message: "node labels and capacity settings need the Capacity Scheduler (scheduler: \"capacity\")"
                        .to_string(),
                });
            }
            SchedulerKind::Fair
        }
        "capacity" => {
            if doc.allocations.is_some() {
                return Err(Failure::Document {
                    message: "allocations (fair-scheduler.xml) do not apply to the Capacity Scheduler: give capacity"
                        .into(),
                    line: None,
                    column: None,
                });
            }
            SchedulerKind::Capacity
        }
        "fifo" => {
            return Err(Failure::Unsupported {
                message: "the FIFO scheduler is not supported: fairloom implements the Fair and Capacity Schedulers"
                    .to_string(),
            })
        }
        other => {
            return Err(Failure::Document { message: format!("unknown scheduler '{other}'"), line: None, column: None })
        }
    };
    let mut conf = SchedulerConfig::new(kind, properties.clone());
    conf.site_name = "properties".to_string();
    conf.extra_types = doc.resource_types.clone();
    conf.groups = doc.groups.clone();
    conf.labels = doc
        .node_labels
        .iter()
        .map(node_label)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| Failure::Document { message: format!("node_labels: {m}"), line: None, column: None })?;
    conf.file = match kind {
        SchedulerKind::Fair => {
            doc.allocations.clone().map(|text| ("allocations".to_string(), SchedulerFile::FairXml(text)))
        }
        SchedulerKind::Capacity => {
            Some(("capacity".to_string(), SchedulerFile::CapacityProperties(properties_map(&doc.capacity))))
        }
    };
    fairloom_scheduler::build(&conf).map_err(|e| match e {
        SchedulerError::Config(c) => Failure::Config { line: c.line, message: c.to_string() },
        other => Failure::Config { message: other.to_string(), line: None },
    })
}

fn run_until(doc: Document, audit: bool, stop_at: Option<&str>) -> Result<Runner, Failure> {
    let properties = properties_map(&doc.properties);
    let scheduler = build_scheduler(&doc, &properties)?;
    let mut runner = Runner {
        scheduler,
        now: 0,
        apps: HashMap::new(),
        app_order: Vec::new(),
        last_reload: None,
        run: Run::default(),
        audit,
    };
    for n in &doc.nodes {
        runner
            .add_node(n.name.as_str(), n.rack.as_deref(), &n.resource, n.label.as_deref())
            .map_err(|message| Failure::Document { message: format!("nodes: {message}"), line: None, column: None })?;
    }
    for (i, raw) in doc.steps.iter().enumerate() {
        let step = parse_step(raw).map_err(|message| Failure::Scenario { step: i, message })?;
        let stop = matches!(&step, Step::Observe { label, .. } if Some(label.as_str()) == stop_at);
        let resized = runner.scheduler.counters().reservations_served_resized;
        runner.step(i, step).map_err(|message| Failure::Scenario { step: i, message })?;
        if runner.scheduler.counters().reservations_served_resized > resized {
            runner.run.notes.push(json!({"step": i, "note": "reservation served at another size"}));
        }
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
    fn add_node(
        &mut self,
        name: &str,
        rack: Option<&str>,
        res: &BTreeMap<String, i64>,
        label: Option<&str>,
    ) -> Result<NodeId, String> {
        let resource = resource(self.scheduler.resource_types(), res)?;
        let spec = NodeSpec { name, rack, resource, label };
        let ids = self.scheduler.add_nodes(std::slice::from_ref(&spec)).map_err(|e| e.to_string())?;
        Ok(ids[0])
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
                        self.scheduler.cluster().nodes().map(|(_, n)| n.name.clone()).collect()
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
                self.add_node(&n.name, n.rack.as_deref(), &n.resource, n.label.as_deref())?;
            }
            Step::RemoveNode(name) => {
                let id = self.node(&name)?;
                self.scheduler.remove_node(id);
            }
            Step::Submit(s) => {
                if self.apps.contains_key(&s.app) {
                    return Err(format!("application '{}' is already submitted", s.app));
                }
                let am = s.am.as_ref().map(|m| self.res(m)).transpose()?;
                let spec = SubmitSpec {
                    name: &s.app,
                    queue: &s.queue,
                    user: &s.user,
                    am,
                    priority: s.priority,
                    node_label: s.node_label.as_deref(),
                };
                let id = self.scheduler.submit(&spec, self.now);
                self.apps.insert(s.app.clone(), id);
                self.app_order.push(s.app);
            }
            Step::Ask(a) => {
                let app = self.app(&a.app)?;
                let mut asks = Vec::new();
                for r in &a.requests {
                    asks.push(Ask {
                        priority: r.priority,
                        resource_name: r.resource_name.clone(),
                        capability: self.res(&r.capability)?,
                        num_containers: r.num_containers,
                        relax_locality: r.relax_locality,
                        node_label: r.node_label.clone(),
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
                let before = self.scheduler.app(app).queue.map(str::to_string);
                let held_reservations = self.scheduler.app(app).reservations > 0;
                let result = match self.scheduler.move_app(app, &spec.queue) {
                    Ok(_) => "applied".to_string(),
                    Err(e) => format!("rejected: {e}"),
                };
                let own_queue = result == "applied" && self.scheduler.app(app).queue == before.as_deref();
                self.record_reload(index, result, expect_error, "move");
                // For the comparison with YARN (docs/fidelity.md, known differences): it moves
                // an app to its own queue all the same, and leaves the queues' reserved counts
                // behind when the app holds reservations.
                if let Some(last) = self.run.reloads.last_mut() {
                    if own_queue {
                        last["own_queue"] = Value::Bool(true);
                    }
                    if held_reservations && !own_queue {
                        last["with_reservations"] = Value::Bool(true);
                    }
                }
                return Ok(());
            }
            Step::Place(p) => {
                let app = self.app(&p.app)?;
                let node = self.node(&p.node)?;
                let cap = self.res(&p.capability)?;
                if p.reserved {
                    if p.count != 1 || p.am {
                        return Err("a placed reservation has count 1 and is not an AM".to_string());
                    }
                    self.scheduler
                        .place_reservation(app, node, cap, p.priority, self.now)
                        .map_err(|e| e.to_string())?;
                } else {
                    let placement = Placement {
                        app,
                        node,
                        capability: cap,
                        priority: p.priority,
                        count: p.count,
                        am: p.am,
                        label: p.node_label.as_deref(),
                    };
                    self.scheduler.place_containers(&placement).map_err(|e| e.to_string())?;
                }
            }
            Step::Reload { spec, expect_error } => {
                let result = self.reload(&spec);
                // YARN installs a file's placement rules (its own, or without one those the
                // site properties make) before it parses the top-level values that can reject
                // it (docs/fidelity.md, known differences).
                let placement_installed =
                    result.starts_with("rejected") && spec.allocations.is_some() && rejected_after_placement(&result);
                self.record_reload(index, result, expect_error, "reload");
                if placement_installed {
                    if let Some(last) = self.run.reloads.last_mut() {
                        last["placement_rules"] = Value::Bool(true);
                    }
                }
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

    fn reload(&mut self, spec: &ReloadSpec) -> String {
        let site = spec.properties.as_ref().map(properties_map);
        let file = match (&spec.allocations, &spec.capacity) {
            (Some(_), Some(_)) => return "rejected: give allocations or capacity, not both".to_string(),
            (Some(text), None) => Some(("allocations".to_string(), SchedulerFile::FairXml(text.clone()))),
            (None, Some(c)) => Some(("capacity".to_string(), SchedulerFile::CapacityProperties(properties_map(c)))),
            (None, None) => None,
        };
        let change = Reconfigure { site: site.map(|s| ("properties".to_string(), s)), file };
        match self.scheduler.reload(&change) {
            Ok(()) => "applied".to_string(),
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
            Ok(run) => {
                let mut out = json!({"name": self.name, "observations": run.observations, "reloads": run.reloads});
                if !run.notes.is_empty() {
                    out["notes"] = Value::Array(run.notes.clone());
                }
                (out, 0)
            }
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

/// Whether YARN, rejecting an allocation file for this reason, has already installed its
/// placement rules: `AllocationFileLoaderService.reloadAllocations` parses the queues and
/// users first, then installs the rules, then reads the top-level default values, whose
/// errors reject the file only then.
fn rejected_after_placement(result: &str) -> bool {
    // The legacy top-level `fairSharePreemptionTimeout` is left out: the same name inside a
    // queue is parsed before the rules, and the message does not say which it was.
    const READ_AFTER_PLACEMENT: [&str; 7] = [
        "queueMaxResourcesDefault",
        "userMaxAppsDefault",
        "defaultFairSharePreemptionTimeout",
        "defaultMinSharePreemptionTimeout",
        "queueMaxAppsDefault",
        "defaultFairSharePreemptionThreshold",
        "queueMaxAMShareDefault",
    ];
    READ_AFTER_PLACEMENT.iter().any(|name| result.contains(&format!(" {name}:")))
}
