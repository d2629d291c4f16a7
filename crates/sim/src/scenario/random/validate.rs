//! The validity check: run the drawn scenario through fairloom's runner and drop or trim the
//! steps it cannot run, until the whole file runs.
//!
//! Only steps whose validity depends on the scheduler's state are ever at fault: an `ask`,
//! `finish`, `complete` or `release` for an application the scheduler rejected, and a
//! `complete`/`release` of more containers than the application holds. The script tracks
//! everything else (nodes, finished applications) itself.

use serde_json::{json, Value};

use super::script::{label_observes, observe};
use crate::scenario::{run_text, Failure};

/// Runs of the runner before giving up and cutting the script at the failing step.
const MAX_RUNS: usize = 80;

/// What the validity check changed in a drawn script.
#[derive(Debug, Clone, Default)]
pub struct Repairs {
    /// Steps removed.
    pub dropped: usize,
    /// `complete`/`release` counts lowered to what the application held.
    pub trimmed: usize,
    /// The check gave up and cut the script at a step it could not repair.
    pub truncated: bool,
    /// One line per change: `steps[i] (ask): <the runner's message>`.
    pub notes: Vec<String>,
    /// Failures that are not the script's fault: a configuration that does not load, an
    /// auditor mismatch (the step is still dropped). Empty unless the generator or fairloom
    /// has a bug.
    pub anomalies: Vec<String>,
}

impl Repairs {
    /// Steps dropped or trimmed.
    pub fn changed(&self) -> usize {
        self.dropped + self.trimmed
    }
}

/// Run `document(steps)` and repair `steps` until it runs; the steps and what changed.
pub(super) fn repair(document: impl Fn(&[Value]) -> String, mut steps: Vec<Value>) -> (Vec<Value>, Repairs) {
    let mut repairs = Repairs::default();
    for _ in 0..MAX_RUNS {
        match run_text(&document(&steps), true).result {
            Ok(_) => return (steps, repairs),
            Err(Failure::Scenario { step, message }) => {
                if message.starts_with("auditor") {
                    repairs.anomalies.push(format!("steps[{step}] {}: {message}", steps[step]));
                }
                fix(&mut steps, step, &message, &mut repairs);
            }
            Err(other) => {
                repairs.anomalies.push(format!("{other:?}"));
                return (steps, repairs);
            }
        }
    }
    if let Err(Failure::Scenario { step, message }) = run_text(&document(&steps), true).result {
        repairs.notes.push(format!("steps[{step}]: {message}; the script is cut there"));
        repairs.dropped += steps.len() - step;
        repairs.truncated = true;
        steps.truncate(step);
        steps.push(observe());
        label_observes(&mut steps);
    }
    (steps, repairs)
}

/// The step's key (`ask`, `finish`, ...) and the application it names, if any.
fn step_app(step: &Value) -> (&str, Option<&str>) {
    let Some((key, body)) = step.as_object().and_then(|o| o.iter().find(|(k, _)| !k.starts_with('_'))) else {
        return ("?", None);
    };
    let app = match key.as_str() {
        "finish" => body.as_str(),
        _ => body.get("app").and_then(Value::as_str),
    };
    (key.as_str(), app)
}

/// Repair the script at failing step `i`.
fn fix(steps: &mut Vec<Value>, i: usize, message: &str, repairs: &mut Repairs) {
    let (kind, app) = step_app(&steps[i]);
    let kind = kind.to_string();
    repairs.notes.push(format!("steps[{i}] ({kind}): {message}"));
    let app = app.map(str::to_string);
    // The application was rejected: nothing can name it from here on.
    if let (Some(app), true) = (&app, message.contains("is not running")) {
        let before = steps.len();
        let mut index = 0;
        steps.retain(|s| {
            index += 1;
            let (k, a) = step_app(s);
            let names_it = a == Some(app.as_str()) && matches!(k, "ask" | "finish" | "complete" | "release");
            !(index > i && names_it)
        });
        repairs.dropped += before - steps.len();
        return;
    }
    // Fewer containers than the count: complete what there is.
    if kind == "complete" || kind == "release" {
        if let Some(held) = held_containers(message).filter(|&n| n > 0) {
            steps[i][&kind]["count"] = json!(held);
            repairs.trimmed += 1;
            return;
        }
    }
    steps.remove(i);
    repairs.dropped += 1;
}

/// N in the runner's "only N live non-AM containers match, K asked".
fn held_containers(message: &str) -> Option<u64> {
    message.strip_prefix("only ")?.split_whitespace().next()?.parse().ok()
}
