//! The scenario document (docs/scenario-format.md, version 1) and its steps.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Keys beginning with `_` are comments; any other unknown key is an error.
#[derive(Debug, Default)]
pub struct Comments;

impl<'de> Deserialize<'de> for Comments {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Comments;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("comment keys starting with '_'")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Comments, A::Error> {
                while let Some(key) = map.next_key::<String>()? {
                    if !key.starts_with('_') {
                        return Err(de::Error::custom(format!("unknown key `{key}`")));
                    }
                    map.next_value::<IgnoredAny>()?;
                }
                Ok(Comments)
            }
        }
        d.deserialize_map(V)
    }
}

/// A property value: the format says strings; numbers and booleans are taken as written.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyValue(pub String);

impl<'de> Deserialize<'de> for PropertyValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) => Ok(Self(s)),
            Value::Number(n) => Ok(Self(n.to_string())),
            Value::Bool(b) => Ok(Self(b.to_string())),
            other => Err(de::Error::custom(format!("a property value must be a string, got {other}"))),
        }
    }
}

pub fn properties_map(p: &BTreeMap<String, PropertyValue>) -> BTreeMap<String, String> {
    p.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect()
}

#[derive(Debug, Deserialize)]
pub struct NodeSpec {
    pub name: String,
    pub rack: Option<String>,
    pub resource: BTreeMap<String, i64>,
    pub label: Option<String>,
    #[serde(flatten)]
    pub _comments: Comments,
}

#[derive(Debug, Deserialize)]
pub struct Document {
    pub name: String,
    #[serde(default = "fair")]
    pub scheduler: String,
    #[serde(default)]
    pub properties: BTreeMap<String, PropertyValue>,
    pub allocations: Option<String>,
    #[serde(default)]
    pub capacity: BTreeMap<String, PropertyValue>,
    #[serde(default)]
    pub groups: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub resource_types: Vec<String>,
    #[serde(default)]
    pub nodes: Vec<NodeSpec>,
    #[serde(default)]
    pub node_labels: Vec<Value>,
    #[serde(default)]
    pub steps: Vec<Value>,
    pub expect_error: Option<String>,
    #[serde(flatten)]
    pub _comments: Comments,
}

fn fair() -> String {
    "fair".to_string()
}

// ----- steps --------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmitSpec {
    pub app: String,
    #[serde(default = "default_queue")]
    pub queue: String,
    #[serde(default = "default_user")]
    pub user: String,
    pub am: Option<BTreeMap<String, i64>>,
    #[serde(default)]
    pub priority: i32,
    pub node_label: Option<String>,
}

fn default_queue() -> String {
    "default".to_string()
}

fn default_user() -> String {
    "user".to_string()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestSpec {
    pub priority: i32,
    pub resource_name: String,
    pub capability: BTreeMap<String, i64>,
    pub num_containers: i32,
    #[serde(default = "yes")]
    pub relax_locality: bool,
    pub node_label: Option<String>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskSpec {
    pub app: String,
    pub requests: Vec<RequestSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContainerSelection {
    pub app: Option<String>,
    pub count: Option<u32>,
    pub node: Option<String>,
    pub containers: Option<Vec<String>>,
    #[serde(default)]
    pub exit_status: i32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveSpec {
    pub app: String,
    pub queue: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaceSpec {
    pub app: String,
    pub node: String,
    #[serde(default = "one")]
    pub count: u32,
    pub capability: BTreeMap<String, i64>,
    #[serde(default)]
    pub priority: i32,
    #[serde(default)]
    pub am: bool,
    #[serde(default)]
    pub reserved: bool,
    pub node_label: Option<String>,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReloadSpec {
    pub allocations: Option<String>,
    pub properties: Option<BTreeMap<String, PropertyValue>>,
    pub capacity: Option<BTreeMap<String, PropertyValue>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum HeartbeatNodes {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug)]
pub enum Step {
    Advance(i64),
    Update,
    Heartbeat { nodes: HeartbeatNodes, rounds: u32 },
    AddNode(NodeSpec),
    RemoveNode(String),
    Submit(SubmitSpec),
    Ask(AskSpec),
    Complete(ContainerSelection),
    Release(ContainerSelection),
    Finish(String),
    Move { spec: MoveSpec, expect_error: Option<bool> },
    Place(PlaceSpec),
    Reload { spec: ReloadSpec, expect_error: Option<bool> },
    Observe { label: String, expect: Option<Value> },
}

const STEP_KEYS: &[&str] = &[
    "advance_ms",
    "update",
    "heartbeat",
    "add_node",
    "remove_node",
    "submit",
    "ask",
    "complete",
    "release",
    "finish",
    "move",
    "place",
    "reload",
    "observe",
];

fn strip_comments(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.iter().filter(|(k, _)| !k.starts_with('_')).map(|(k, v)| (k.clone(), v.clone())).collect())
        }
        other => other.clone(),
    }
}

fn typed<T: serde::de::DeserializeOwned>(key: &str, v: &Value) -> Result<T, String> {
    serde_json::from_value(strip_comments(v)).map_err(|e| format!("{key}: {e}"))
}

/// Parse one step object; the message names what is wrong.
pub fn parse_step(v: &Value) -> Result<Step, String> {
    let obj: &Map<String, Value> = v.as_object().ok_or("a step must be an object")?;
    let keys: Vec<&str> = obj.keys().map(String::as_str).filter(|k| STEP_KEYS.contains(k)).collect();
    let key = match keys.as_slice() {
        [k] => *k,
        [] => return Err(format!("no step key: expected one of {}", STEP_KEYS.join(", "))),
        many => return Err(format!("a step has exactly one step key, found {}", many.join(", "))),
    };
    let allowed_extra: &[&str] = match key {
        "heartbeat" => &["rounds"],
        "observe" => &["expect"],
        "reload" | "move" => &["expect_error"],
        _ => &[],
    };
    if let Some(bad) = obj.keys().find(|k| *k != key && !k.starts_with('_') && !allowed_extra.contains(&k.as_str())) {
        return Err(format!("unknown key `{bad}` in a {key} step"));
    }
    let body = &obj[key];
    let expect_error = || -> Result<Option<bool>, String> {
        match obj.get("expect_error") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(format!("expect_error must be true or false, got {other}")),
        }
    };
    Ok(match key {
        "advance_ms" => {
            Step::Advance(body.as_i64().filter(|&x| x >= 0).ok_or("advance_ms must be a non-negative integer")?)
        }
        "update" => Step::Update,
        "heartbeat" => {
            let rounds = match obj.get("rounds") {
                None => 1,
                Some(r) => {
                    r.as_u64().filter(|&r| r <= u32::MAX as u64).ok_or("rounds must be a non-negative integer")? as u32
                }
            };
            Step::Heartbeat { nodes: typed(key, body)?, rounds }
        }
        "add_node" => Step::AddNode(typed(key, body)?),
        "remove_node" => Step::RemoveNode(typed(key, body)?),
        "submit" => Step::Submit(typed(key, body)?),
        "ask" => Step::Ask(typed(key, body)?),
        "complete" => Step::Complete(typed(key, body)?),
        "release" => Step::Release(typed(key, body)?),
        "finish" => Step::Finish(typed(key, body)?),
        "move" => Step::Move { spec: typed(key, body)?, expect_error: expect_error()? },
        "place" => Step::Place(typed(key, body)?),
        "reload" => Step::Reload { spec: typed(key, body)?, expect_error: expect_error()? },
        "observe" => Step::Observe { label: typed(key, body)?, expect: obj.get("expect").cloned() },
        _ => unreachable!("step keys are listed above"),
    })
}

/// Line and column (1-based) of the first `"key":` in `text`, to place an unknown-key error.
pub fn locate_key(text: &str, key: &str) -> Option<(usize, usize)> {
    let needle = format!("\"{key}\"");
    let mut from = 0;
    while let Some(rel) = text[from..].find(&needle) {
        let at = from + rel;
        from = at + needle.len();
        if text[from..].trim_start().starts_with(':') {
            let line = text[..at].matches('\n').count() + 1;
            let column = at - text[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
            return Some((line, column));
        }
    }
    None
}
