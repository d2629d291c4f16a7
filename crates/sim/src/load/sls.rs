//! SLS inputs: JSON traces (a stream of job objects), nodes files and SYNTH workloads.

use fairloom_config::Properties;
use fairloom_model::Resource;
use serde_json::{Deserializer, Value};

use super::workload::Workload;

pub fn from_trace(
    _trace: &str,
    _nodes: Option<&str>,
    _allocations: &str,
    _properties: Properties,
) -> Result<Workload, String> {
    Err("SLS traces: not supported yet".to_string())
}

pub fn from_synth(_synth: &str, _allocations: &str, _properties: Properties, _seed: u64) -> Result<Workload, String> {
    Err("SYNTH workloads: not supported yet".to_string())
}

#[allow(dead_code)]
fn stream(text: &str) -> Result<Vec<Value>, String> {
    Deserializer::from_str(text).into_iter::<Value>().map(|v| v.map_err(|e| e.to_string())).collect()
}

#[allow(dead_code)]
fn _unused(_: Resource) {}
