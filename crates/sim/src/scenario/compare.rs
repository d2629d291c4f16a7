//! fairloom's output against YARN's: the comparison behind `fairloom scenario diff`.
//!
//! Both sides are documents of the shape `fairloom scenario run` prints. The oracle (YARN's own
//! schedulers, driven by tests/yarn-oracle) prints the fields it can read from YARN; every one of
//! them is compared, apart from those in [`NOT_COMPARED`], and every queue, application and node
//! one side has must be on the other. The first difference, in step order, is reported.

use serde_json::Value;

/// Fields that are not compared, with the reason. Everything else the oracle prints is.
pub const NOT_COMPARED: &[(&str, &str)] = &[
    ("wait_reason", "fairloom's own explanation of a wait; YARN's schedulers keep no such text"),
    ("rejection", "compared as present or absent only: YARN's message and fairloom's are worded apart"),
    ("reload", "compared as applied or rejected only: the rejection messages are worded apart"),
    ("error.message", "compared by kind only (config, scenario, unsupported, document)"),
];

/// One difference: where, and both values.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The index of the step in `steps` whose result differs (observe, reload or move); `None`
    /// for a difference before any step (the configuration).
    pub step: Option<usize>,
    /// A path like `observe[label].apps.app1.usage.memory-mb`.
    pub path: String,
    pub fairloom: Value,
    pub yarn: Value,
}

/// The first difference between fairloom's output and YARN's, in step order, or `None` when they
/// agree. `steps` is the scenario's step list, to place observations and reloads at their step.
pub fn first_difference(fairloom: &Value, yarn: &Value, steps: &[Value]) -> Option<Difference> {
    differences(fairloom, yarn, steps).into_iter().next()
}

/// Every difference, in step order (within a step, in document order).
pub fn differences(fairloom: &Value, yarn: &Value, steps: &[Value]) -> Vec<Difference> {
    let mut found = Vec::new();
    compare_documents(fairloom, yarn, steps, &mut found);
    found.sort_by_key(|d| d.step.map_or(0, |s| s + 1));
    found
}

impl Difference {
    /// The path without its observation label (`apps.app1.usage`), for matching known
    /// differences whatever the observation.
    pub fn field(&self) -> &str {
        match self.path.strip_prefix("observe[") {
            Some(rest) => rest.split_once("].").map_or(rest, |(_, field)| field),
            None => &self.path,
        }
    }
}

fn compare_documents<'a>(fairloom: &'a Value, yarn: &'a Value, steps: &[Value], out: &mut Vec<Difference>) {
    let kind = |doc: &Value| doc.get("error").map(|e| e.get("kind").cloned().unwrap_or(Value::Null));
    match (kind(fairloom), kind(yarn)) {
        (None, None) => {}
        (Some(a), Some(b)) if a == b => return,
        (a, b) => {
            let step = fairloom
                .pointer("/error/step")
                .or_else(|| yarn.pointer("/error/step"))
                .and_then(Value::as_u64)
                .map(|s| s as usize);
            out.push(Difference {
                step,
                path: "error".into(),
                fairloom: a.map_or(Value::String("no error".into()), |_| fairloom["error"].clone()),
                yarn: b.map_or(Value::String("no error".into()), |_| yarn["error"].clone()),
            });
            return;
        }
    }
    let observe_steps: Vec<usize> =
        steps.iter().enumerate().filter(|(_, s)| s.get("observe").is_some()).map(|(i, _)| i).collect();
    let list = |doc: &'a Value, key: &str| -> &'a [Value] {
        doc.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
    };

    let (ours, theirs) = (list(fairloom, "reloads"), list(yarn, "reloads"));
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        let step = a["step"].as_u64().map(|s| s as usize);
        let (ra, rb) = (outcome(&a["result"]), outcome(&b["result"]));
        if ra != rb {
            out.push(Difference {
                step,
                path: format!("reloads[{i}]"),
                fairloom: a["result"].clone(),
                yarn: b["result"].clone(),
            });
        }
    }
    let (ours, theirs) = (list(fairloom, "observations"), list(yarn, "observations"));
    if ours.len() != theirs.len() {
        out.push(Difference {
            step: None,
            path: "observations".into(),
            fairloom: ours.len().into(),
            yarn: theirs.len().into(),
        });
    }
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        let label = a["label"].as_str().unwrap_or("?");
        let step = observe_steps.get(i).copied();
        let mut found = Vec::new();
        compare_value(a, b, &format!("observe[{label}]"), 0, &mut found);
        out.extend(found.into_iter().map(|(path, fairloom, yarn)| Difference { step, path, fairloom, yarn }));
    }
}

/// "applied" or "rejected", whatever the message.
fn outcome(result: &Value) -> &str {
    match result.as_str() {
        Some(s) if s.starts_with("rejected") => "rejected",
        Some(s) => s,
        None => "",
    }
}

/// Compares YARN's value `b` with fairloom's `a`; differences go to `out` in document order.
/// At depth 1 (`queues`, `apps`, `nodes`) the key sets must match; below, YARN's keys decide
/// what is compared.
fn compare_value(a: &Value, b: &Value, path: &str, depth: usize, out: &mut Vec<(String, Value, Value)>) {
    match (a, b) {
        (Value::Object(ma), Value::Object(mb)) => {
            if depth == 1 {
                for key in ma.keys().filter(|k| !mb.contains_key(*k)) {
                    out.push((format!("{path}.{key}"), ma[key].clone(), Value::String("absent".into())));
                }
            }
            for (key, vb) in mb {
                let sub = format!("{path}.{key}");
                match (key.as_str(), ma.get(key)) {
                    ("wait_reason", _) => {}
                    ("rejection", Some(va)) => {
                        if va.is_null() != vb.is_null() {
                            out.push((sub, va.clone(), vb.clone()));
                        }
                    }
                    ("reload", Some(va)) => {
                        if outcome(va) != outcome(vb) {
                            out.push((sub, va.clone(), vb.clone()));
                        }
                    }
                    (_, Some(va)) => compare_value(va, vb, &sub, depth + 1, out),
                    (_, None) => out.push((sub, Value::String("absent".into()), vb.clone())),
                }
            }
        }
        (Value::Number(na), Value::Number(nb)) => {
            let same = match (na.as_i64(), nb.as_i64()) {
                (Some(x), Some(y)) => x == y,
                _ => {
                    let (x, y) = (na.as_f64().unwrap_or(f64::NAN), nb.as_f64().unwrap_or(f64::NAN));
                    // Floats YARN keeps as Java floats print with float noise on one side.
                    (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1.0)
                }
            };
            if !same {
                out.push((path.to_string(), a.clone(), b.clone()));
            }
        }
        _ if a == b => {}
        _ => out.push((path.to_string(), a.clone(), b.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn steps() -> Vec<Value> {
        vec![json!({"submit": {}}), json!({"observe": "a"}), json!({"reload": {}}), json!({"observe": "b"})]
    }

    fn doc(usage: i64, reload: &str) -> Value {
        json!({"name": "x",
            "observations": [
                {"label": "a", "apps": {"app1": {"usage": {"memory-mb": usage}, "wait_reason": "w1"}}, "queues": {}, "nodes": {}},
                {"label": "b", "apps": {"app1": {"usage": {"memory-mb": 0}, "rejection": null}}, "queues": {}, "nodes": {}, "reload": reload}
            ],
            "reloads": [{"step": 2, "result": reload}]})
    }

    #[test]
    fn equal_documents_agree_whatever_the_wording() {
        let yarn = doc(1024, "rejected: YARN's words");
        let ours = doc(1024, "rejected: fairloom's words");
        assert_eq!(first_difference(&ours, &yarn, &steps()), None);
    }

    #[test]
    fn the_first_difference_by_step_is_reported_with_both_values() {
        let yarn = doc(1024, "applied");
        let ours = doc(2048, "rejected: no");
        let d = first_difference(&ours, &yarn, &steps()).expect("they differ");
        assert_eq!(d.step, Some(1));
        assert_eq!(d.path, "observe[a].apps.app1.usage.memory-mb");
        assert_eq!((d.fairloom, d.yarn), (json!(2048), json!(1024)));
        let ours = doc(1024, "rejected: no");
        let d = first_difference(&ours, &yarn, &steps()).expect("the reload differs");
        assert_eq!((d.step, d.path.as_str()), (Some(2), "reloads[0]"));
    }

    #[test]
    fn a_field_or_an_entity_missing_on_one_side_differs() {
        let yarn = doc(0, "applied");
        let mut ours = yarn.clone();
        ours["observations"][0]["apps"]["app2"] = json!({});
        let d = first_difference(&ours, &yarn, &steps()).expect("an extra app");
        assert_eq!(d.path, "observe[a].apps.app2");
        let mut ours = yarn.clone();
        ours["observations"][1]["apps"]["app1"].as_object_mut().unwrap().remove("usage");
        let d = first_difference(&ours, &yarn, &steps()).expect("a missing field");
        assert_eq!(d.path, "observe[b].apps.app1.usage");
    }

    #[test]
    fn errors_compare_by_kind() {
        let config = |m: &str| json!({"name": "x", "error": {"kind": "config", "message": m}});
        assert_eq!(first_difference(&config("a"), &config("b"), &[]), None);
        let d = first_difference(&doc(0, "applied"), &config("bad"), &steps()).expect("one side failed");
        assert_eq!(d.path, "error");
        assert_eq!(d.fairloom, json!("no error"));
    }

    #[test]
    fn floats_compare_within_float_noise_only() {
        let a = json!({"observations": [{"label": "a", "queues": {"root": {"used_capacity": 0.1}}}]});
        let b = json!({"observations": [{"label": "a", "queues": {"root": {"used_capacity": 0.100000001}}}]});
        assert_eq!(first_difference(&a, &b, &steps()), None);
        let c = json!({"observations": [{"label": "a", "queues": {"root": {"used_capacity": 0.11}}}]});
        assert!(first_difference(&a, &c, &steps()).is_some());
    }
}
