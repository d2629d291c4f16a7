//! Comparing an `expect` block with its observation (subset match, `approx`, `contains`).

use serde_json::{Map, Value};

fn show(v: Option<&Value>) -> String {
    match v {
        None => "nothing (absent)".to_string(),
        Some(v) => v.to_string(),
    }
}

fn numbers_equal(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    match (a.as_i64(), b.as_i64()) {
        (Some(x), Some(y)) => x == y,
        _ => match (a.as_u64(), b.as_u64()) {
            (Some(x), Some(y)) => x == y,
            _ => a.as_f64() == b.as_f64(),
        },
    }
}

fn is_approx(m: &Map<String, Value>) -> bool {
    m.contains_key("approx") && m.keys().all(|k| k == "approx" || k == "tol")
}

fn is_contains(m: &Map<String, Value>) -> bool {
    m.len() == 1 && m.contains_key("contains")
}

/// Every difference between `expected` and `actual`, as `path: expected X, got Y`.
pub fn compare(expected: &Value, actual: Option<&Value>, path: &str, out: &mut Vec<String>) {
    let mismatch = |out: &mut Vec<String>| out.push(format!("{path}: expected {expected}, got {}", show(actual)));
    match expected {
        Value::Object(m) if is_approx(m) => {
            let want = m["approx"].as_f64();
            let tol = m.get("tol").and_then(Value::as_f64).unwrap_or(0.0);
            match (want, actual.and_then(Value::as_f64)) {
                (Some(w), Some(a)) if (w - a).abs() <= tol => {}
                _ => mismatch(out),
            }
        }
        Value::Object(m) if is_contains(m) => match (m["contains"].as_str(), actual.and_then(Value::as_str)) {
            (Some(w), Some(a)) if a.contains(w) => {}
            _ => mismatch(out),
        },
        Value::Object(m) => {
            let Some(Value::Object(actual)) = actual else {
                mismatch(out);
                return;
            };
            for (k, v) in m {
                let child = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match (v, actual.get(k)) {
                    // null asks for null or absence (a queue or app given as null must be absent).
                    (Value::Null, None | Some(Value::Null)) => {}
                    (_, got) => compare(v, got, &child, out),
                }
            }
        }
        Value::Number(want) => match actual {
            Some(Value::Number(got)) if numbers_equal(want, got) => {}
            _ => mismatch(out),
        },
        other => {
            if actual != Some(other) {
                mismatch(out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn diff(e: Value, a: Value) -> Vec<String> {
        let mut out = Vec::new();
        compare(&e, Some(&a), "", &mut out);
        out
    }

    #[test]
    fn subset_and_special_forms() {
        assert!(diff(json!({"a": {"x": 1}}), json!({"a": {"x": 1, "y": 2}, "b": 3})).is_empty());
        assert_eq!(diff(json!({"a": {"x": 2}}), json!({"a": {"x": 1}})), ["a.x: expected 2, got 1"]);
        assert!(diff(json!({"w": {"approx": 0.5, "tol": 0.01}}), json!({"w": 0.505})).is_empty());
        assert!(!diff(json!({"w": {"approx": 0.5, "tol": 0.001}}), json!({"w": 0.505})).is_empty());
        assert!(diff(json!({"m": {"contains": "reject"}}), json!({"m": "rejected: x"})).is_empty());
        assert!(diff(json!({"q": {"gone": null}}), json!({"q": {}})).is_empty());
        assert!(!diff(json!({"q": {"gone": null}}), json!({"q": {"gone": {"x": 1}}})).is_empty());
        assert!(diff(json!({"w": 1.0}), json!({"w": 1})).is_empty());
        assert!(!diff(json!({"missing": 1}), json!({})).is_empty());
        assert!(diff(json!({"big": 9223372036854775807i64}), json!({"big": 9223372036854775807i64})).is_empty());
    }
}
