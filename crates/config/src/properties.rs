//! yarn-site.xml properties and the typed settings the Fair Scheduler reads from them,
//! with YARN's names and defaults.

use std::collections::BTreeMap;

use fairloom_model::{Resource, ResourceTypes, MEMORY, VCORES};

use crate::error::{ConfigError, Result};
use crate::xml;

/// Raw properties: name → value, as in yarn-site.xml.
pub type Properties = BTreeMap<String, String>;

/// Read a Hadoop `<configuration><property><name/><value/></property></configuration>` file.
pub fn parse_site_xml(text: &str) -> Result<Properties> {
    parse_site_xml_with_lines(text).map(|(props, _)| props)
}

/// [`parse_site_xml`], with the line of each property's `<name>` (for errors about values).
pub fn parse_site_xml_with_lines(text: &str) -> Result<(Properties, BTreeMap<String, u32>)> {
    let doc = xml::parse(text)?;
    let root = doc.root_element();
    if root.tag_name().name() != "configuration" {
        return Err(xml::error_at(root, "the root element must be <configuration>"));
    }
    let mut props = Properties::new();
    let mut lines = BTreeMap::new();
    let index = xml::Lines::of(&doc);
    for property in xml::elements(root) {
        if property.tag_name().name() != "property" {
            return Err(xml::error_at(property, "unknown element: only <property> may appear in <configuration>"));
        }
        let mut name = None;
        let mut value = None;
        for field in xml::elements(property) {
            match field.tag_name().name() {
                "name" => name = Some((xml::text(field).to_string(), index.line(field))),
                "value" => value = Some(field.text().unwrap_or("").to_string()),
                "description" | "final" | "source" => {}
                other => return Err(xml::error_at(field, format!("unknown element <{other}> in <property>"))),
            }
        }
        let (name, line) = name.ok_or_else(|| xml::error_at(property, "<property> without <name>"))?;
        lines.insert(name.clone(), line);
        props.insert(name, value.unwrap_or_default());
    }
    Ok((props, lines))
}

pub mod names {
    pub const RESOURCE_TYPES: &str = "yarn.resource-types";
    pub const MIN_MB: &str = "yarn.scheduler.minimum-allocation-mb";
    pub const MIN_VCORES: &str = "yarn.scheduler.minimum-allocation-vcores";
    pub const MAX_MB: &str = "yarn.scheduler.maximum-allocation-mb";
    pub const MAX_VCORES: &str = "yarn.scheduler.maximum-allocation-vcores";
    pub const INCREMENT_MB: &str = "yarn.scheduler.increment-allocation-mb";
    pub const INCREMENT_VCORES: &str = "yarn.scheduler.increment-allocation-vcores";
    pub const ALLOCATION_FILE: &str = "yarn.scheduler.fair.allocation.file";
    pub const USER_AS_DEFAULT_QUEUE: &str = "yarn.scheduler.fair.user-as-default-queue";
    pub const ALLOW_UNDECLARED_POOLS: &str = "yarn.scheduler.fair.allow-undeclared-pools";
    pub const PREEMPTION: &str = "yarn.scheduler.fair.preemption";
    pub const UTILIZATION_THRESHOLD: &str = "yarn.scheduler.fair.preemption.cluster-utilization-threshold";
    pub const WAIT_BEFORE_KILL: &str = "yarn.scheduler.fair.waitTimeBeforeKill";
    pub const WAIT_BEFORE_NEXT_STARVATION_CHECK: &str = "yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck";
    pub const SIZE_BASED_WEIGHT: &str = "yarn.scheduler.fair.sizebasedweight";
    pub const ASSIGN_MULTIPLE: &str = "yarn.scheduler.fair.assignmultiple";
    pub const DYNAMIC_MAX_ASSIGN: &str = "yarn.scheduler.fair.dynamic.max.assign";
    pub const MAX_ASSIGN: &str = "yarn.scheduler.fair.max.assign";
    pub const LOCALITY_THRESHOLD_NODE: &str = "yarn.scheduler.fair.locality.threshold.node";
    pub const LOCALITY_THRESHOLD_RACK: &str = "yarn.scheduler.fair.locality.threshold.rack";
    pub const LOCALITY_DELAY_NODE_MS: &str = "yarn.scheduler.fair.locality-delay-node-ms";
    pub const LOCALITY_DELAY_RACK_MS: &str = "yarn.scheduler.fair.locality-delay-rack-ms";
    pub const CONTINUOUS_SCHEDULING: &str = "yarn.scheduler.fair.continuous-scheduling-enabled";
    pub const CONTINUOUS_SCHEDULING_SLEEP_MS: &str = "yarn.scheduler.fair.continuous-scheduling-sleep-ms";
    pub const UPDATE_INTERVAL_MS: &str = "yarn.scheduler.fair.update-interval-ms";
    pub const RESERVABLE_NODES: &str = "yarn.scheduler.fair.reservable-nodes";
    pub const RESERVATION_THRESHOLD_MULTIPLE: &str = "yarn.scheduler.reservation-threshold.increment-multiple";
    pub const NM_HEARTBEAT_INTERVAL_MS: &str = "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms";
    /// fairloom's optimisation switches (not YARN properties).
    pub const ORDERING: &str = "fairloom.scheduler.ordering";
    pub const SKIP_NO_DEMAND: &str = "fairloom.scheduler.skip-no-demand";
    pub const USAGE: &str = "fairloom.scheduler.usage";
}

/// How the allocation walk orders children: kept incrementally, or sorted at every visit
/// (YARN's way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordering {
    Incremental,
    Sorted,
}

/// Queue usage: maintained incrementally, or summed over the subtree whenever read
/// (YARN 2.7's way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageMode {
    Incremental,
    Recomputed,
}

/// The optimisation switches, read once per scheduling pass. Each keeps YARN's decisions
/// exactly; they trade only speed, so an operator can roll one back and the simulator can
/// measure each one's effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Optimizations {
    pub ordering: Ordering,
    /// Skip child queues with no app that has pending demand.
    pub skip_no_demand: bool,
    pub usage: UsageMode,
}

impl Optimizations {
    pub const ALL_ON: Self =
        Self { ordering: Ordering::Incremental, skip_no_demand: true, usage: UsageMode::Incremental };
    /// YARN 2.7: children sorted at every visit, all of them visited, usage recomputed.
    pub const YARN_2_7: Self = Self { ordering: Ordering::Sorted, skip_no_demand: false, usage: UsageMode::Recomputed };
}

/// What the Fair Scheduler reads from yarn-site.xml, resolved and validated.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedulerProperties {
    pub resource_types: ResourceTypes,
    pub minimum_allocation: Resource,
    pub maximum_allocation: Resource,
    pub increment_allocation: Resource,
    pub allocation_file: String,
    pub user_as_default_queue: bool,
    pub allow_undeclared_pools: bool,
    pub preemption: bool,
    pub preemption_utilization_threshold: f32,
    pub wait_time_before_kill_ms: i64,
    pub wait_time_before_next_starvation_check_ms: i64,
    pub size_based_weight: bool,
    pub assign_multiple: bool,
    pub dynamic_max_assign: bool,
    pub max_assign: i32,
    pub locality_threshold_node: f64,
    pub locality_threshold_rack: f64,
    pub locality_delay_node_ms: i64,
    pub locality_delay_rack_ms: i64,
    pub continuous_scheduling: bool,
    pub continuous_scheduling_sleep_ms: i64,
    pub update_interval_ms: i64,
    pub reservable_nodes: f32,
    pub reservation_threshold_increment_multiple: f32,
    pub nm_heartbeat_interval_ms: i64,
    pub optimizations: Optimizations,
    /// Things worth telling the operator that are not errors (deprecated names, overrides).
    pub warnings: Vec<String>,
}

impl Default for SchedulerProperties {
    fn default() -> Self {
        Self::from_properties(&Properties::new(), &[]).expect("YARN's defaults are valid")
    }
}

struct Reader<'a> {
    props: &'a Properties,
}

impl Reader<'_> {
    fn raw(&self, name: &str) -> Option<&str> {
        self.props.get(name).map(|v| v.trim())
    }

    fn error(name: &str, value: &str, what: &str) -> ConfigError {
        ConfigError::new(format!("'{value}' is not {what}")).element(name.to_string())
    }

    fn bool(&self, name: &str, default: bool) -> Result<bool> {
        match self.raw(name) {
            None | Some("") => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(Self::error(name, v, "a boolean (true or false)")),
        }
    }

    fn long(&self, name: &str, default: i64) -> Result<i64> {
        match self.raw(name) {
            None | Some("") => Ok(default),
            Some(v) => v.parse().map_err(|_| Self::error(name, v, "an integer")),
        }
    }

    fn float(&self, name: &str, default: f64) -> Result<f64> {
        match self.raw(name) {
            None | Some("") => Ok(default),
            Some(v) => v.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| Self::error(name, v, "a number")),
        }
    }

    /// A per-type value that may carry a unit suffix ("1 Gi", "512Mi", "1k").
    fn with_units(&self, name: &str, is_memory: bool) -> Result<Option<i64>> {
        match self.raw(name) {
            None | Some("") => Ok(None),
            Some(v) => {
                parse_with_units(v, is_memory).map(Some).map_err(|m| ConfigError::new(m).element(name.to_string()))
            }
        }
    }
}

/// Hadoop's unit suffixes: binary (Ki, Mi, Gi, Ti, Pi) and decimal (k, M, G, T, P).
/// Memory is expressed in MiB, so "1 Gi" is 1024 and "512Mi" is 512.
pub(crate) fn parse_with_units(value: &str, is_memory: bool) -> std::result::Result<i64, String> {
    let digits_end = value.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(value.len());
    let (number, unit) = value.split_at(digits_end);
    let number: i64 = number.parse().map_err(|_| format!("'{value}' is not an integer with an optional unit"))?;
    let unit = unit.trim();
    let factor: f64 = match unit {
        "" => return Ok(number),
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        other => return Err(format!("unknown unit '{other}' in '{value}'")),
    };
    let base = if is_memory { 1024f64.powi(2) } else { 1.0 };
    Ok((number as f64 * factor / base) as i64)
}

fn type_property(ty: &str, what: &str) -> String {
    format!("yarn.resource-types.{ty}.{what}")
}

impl SchedulerProperties {
    /// Resolve properties. `extra_types` adds countable resource types to `yarn.resource-types`.
    pub fn from_properties(props: &Properties, extra_types: &[String]) -> Result<Self> {
        let r = Reader { props };
        let mut warnings = Vec::new();
        let mut declared: Vec<String> = r
            .raw(names::RESOURCE_TYPES)
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        for t in extra_types {
            if !declared.contains(t) {
                declared.push(t.clone());
            }
        }
        let types = ResourceTypes::with_extra(&declared)
            .map_err(|e| ConfigError::new(e.to_string()).element(names::RESOURCE_TYPES))?;

        let mut min = types.filled(0);
        let mut max = types.unbounded();
        let mut inc = types.filled(1);
        min.set(MEMORY, r.long(names::MIN_MB, 1024)?);
        min.set(VCORES, r.long(names::MIN_VCORES, 1)?);
        max.set(MEMORY, r.long(names::MAX_MB, 8192)?);
        max.set(VCORES, r.long(names::MAX_VCORES, 4)?);
        inc.set(MEMORY, r.long(names::INCREMENT_MB, 1024)?);
        inc.set(VCORES, r.long(names::INCREMENT_VCORES, 1)?);
        for (i, ty) in types.names().iter().enumerate() {
            let is_memory = i == MEMORY;
            if let Some(v) = r.with_units(&type_property(ty, "increment-allocation"), is_memory)? {
                let legacy = if is_memory {
                    Some(names::INCREMENT_MB)
                } else if i == VCORES {
                    Some(names::INCREMENT_VCORES)
                } else {
                    None
                };
                if let Some(legacy) = legacy.filter(|l| r.raw(l).is_some()) {
                    warnings.push(format!(
                        "both {legacy} and {} are set: the per-type setting wins",
                        type_property(ty, "increment-allocation")
                    ));
                }
                inc.set(i, v);
            }
            if i > VCORES {
                if let Some(v) = r.with_units(&type_property(ty, "minimum-allocation"), false)? {
                    min.set(i, v);
                }
                if let Some(v) = r.with_units(&type_property(ty, "maximum-allocation"), false)? {
                    max.set(i, v);
                }
            }
        }
        for (i, ty) in types.names().iter().enumerate() {
            let (lo, hi, step) = (min.get(i), max.get(i), inc.get(i));
            if lo < 0 || lo > hi {
                let (min_name, max_name) = match i {
                    MEMORY => (names::MIN_MB.to_string(), names::MAX_MB.to_string()),
                    VCORES => (names::MIN_VCORES.to_string(), names::MAX_VCORES.to_string()),
                    _ => (type_property(ty, "minimum-allocation"), type_property(ty, "maximum-allocation")),
                };
                let label = if i == MEMORY { "memory".to_string() } else { ty.clone() };
                return Err(ConfigError::new(format!(
                    "Invalid resource scheduler {label} allocation configuration: {min_name}={lo}, {max_name}={hi}: \
                     the minimum must be at least 0 and the maximum no smaller than the minimum"
                ))
                .element(min_name));
            }
            if step <= 0 {
                let name = match i {
                    MEMORY => names::INCREMENT_MB.to_string(),
                    VCORES => names::INCREMENT_VCORES.to_string(),
                    _ => type_property(ty, "increment-allocation"),
                };
                return Err(ConfigError::new(format!(
                    "the increment allocation of {ty} must be greater than 0, got {step}"
                ))
                .element(name));
            }
        }
        if r.raw(names::CONTINUOUS_SCHEDULING).is_some() {
            warnings.push(format!(
                "{} is deprecated in YARN; fairloom schedules on node heartbeats",
                names::CONTINUOUS_SCHEDULING
            ));
        }
        Ok(Self {
            resource_types: types,
            minimum_allocation: min,
            maximum_allocation: max,
            increment_allocation: inc,
            allocation_file: r.raw(names::ALLOCATION_FILE).unwrap_or("fair-scheduler.xml").to_string(),
            user_as_default_queue: r.bool(names::USER_AS_DEFAULT_QUEUE, true)?,
            allow_undeclared_pools: r.bool(names::ALLOW_UNDECLARED_POOLS, true)?,
            preemption: r.bool(names::PREEMPTION, false)?,
            preemption_utilization_threshold: r.float(names::UTILIZATION_THRESHOLD, 0.8)? as f32,
            wait_time_before_kill_ms: r.long(names::WAIT_BEFORE_KILL, 15_000)?,
            wait_time_before_next_starvation_check_ms: r.long(names::WAIT_BEFORE_NEXT_STARVATION_CHECK, 10_000)?,
            size_based_weight: r.bool(names::SIZE_BASED_WEIGHT, false)?,
            assign_multiple: r.bool(names::ASSIGN_MULTIPLE, false)?,
            dynamic_max_assign: r.bool(names::DYNAMIC_MAX_ASSIGN, true)?,
            max_assign: r.long(names::MAX_ASSIGN, -1)?.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
            locality_threshold_node: r.float(names::LOCALITY_THRESHOLD_NODE, -1.0)?,
            locality_threshold_rack: r.float(names::LOCALITY_THRESHOLD_RACK, -1.0)?,
            locality_delay_node_ms: r.long(names::LOCALITY_DELAY_NODE_MS, -1)?,
            locality_delay_rack_ms: r.long(names::LOCALITY_DELAY_RACK_MS, -1)?,
            continuous_scheduling: r.bool(names::CONTINUOUS_SCHEDULING, false)?,
            continuous_scheduling_sleep_ms: r.long(names::CONTINUOUS_SCHEDULING_SLEEP_MS, 5)?,
            update_interval_ms: r.long(names::UPDATE_INTERVAL_MS, 500)?,
            reservable_nodes: r.float(names::RESERVABLE_NODES, 0.05)? as f32,
            reservation_threshold_increment_multiple: r.float(names::RESERVATION_THRESHOLD_MULTIPLE, 2.0)? as f32,
            nm_heartbeat_interval_ms: r.long(names::NM_HEARTBEAT_INTERVAL_MS, 1000)?,
            optimizations: Optimizations {
                ordering: match r.raw(names::ORDERING) {
                    None | Some("") | Some("incremental") => Ordering::Incremental,
                    Some("sorted") => Ordering::Sorted,
                    Some(v) => return Err(Reader::error(names::ORDERING, v, "incremental or sorted")),
                },
                skip_no_demand: r.bool(names::SKIP_NO_DEMAND, true)?,
                usage: match r.raw(names::USAGE) {
                    None | Some("") | Some("incremental") => UsageMode::Incremental,
                    Some("recomputed") => UsageMode::Recomputed,
                    Some(v) => return Err(Reader::error(names::USAGE, v, "incremental or recomputed")),
                },
            },
            warnings,
        })
    }

    /// `increment × reservation-threshold.increment-multiple`, truncated per type as YARN does.
    pub fn reservation_threshold(&self) -> Resource {
        let m = self.reservation_threshold_increment_multiple as f64;
        let mut r = Resource::none();
        r.set(MEMORY, (self.increment_allocation.memory() as f64 * m) as i64);
        r.set(VCORES, (self.increment_allocation.vcores() as f64 * m) as i64);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Properties {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn yarn_defaults() {
        let p = SchedulerProperties::default();
        assert_eq!(p.minimum_allocation, Resource::new(1024, 1));
        assert_eq!(p.maximum_allocation, Resource::new(8192, 4));
        assert_eq!(p.increment_allocation, Resource::new(1024, 1));
        assert!(p.user_as_default_queue && p.allow_undeclared_pools && !p.preemption);
        assert_eq!(p.update_interval_ms, 500);
        assert_eq!(p.wait_time_before_kill_ms, 15_000);
        assert!((p.preemption_utilization_threshold - 0.8).abs() < 1e-6);
    }

    #[test]
    fn bounds_are_validated() {
        let e = SchedulerProperties::from_properties(&props(&[(names::MIN_MB, "2048"), (names::MAX_MB, "1024")]), &[])
            .unwrap_err();
        assert!(e.message.starts_with("Invalid resource scheduler memory"), "{e}");
        assert_eq!(e.element.as_deref(), Some(names::MIN_MB));
        assert!(SchedulerProperties::from_properties(
            &props(&[(names::MIN_VCORES, "2"), (names::MAX_VCORES, "1")]),
            &[]
        )
        .is_err());
        assert!(SchedulerProperties::from_properties(&props(&[(names::MIN_MB, "-1")]), &[]).is_err());
        assert!(SchedulerProperties::from_properties(&props(&[(names::INCREMENT_MB, "0")]), &[]).is_err());
        assert!(SchedulerProperties::from_properties(&props(&[(names::MIN_MB, "0")]), &[]).is_ok());
    }

    #[test]
    fn unit_suffixes_and_per_type_increment_wins() {
        let p = SchedulerProperties::from_properties(
            &props(&[(names::INCREMENT_MB, "512"), ("yarn.resource-types.memory-mb.increment-allocation", "1 Gi")]),
            &[],
        )
        .unwrap();
        assert_eq!(p.increment_allocation.memory(), 1024);
        assert_eq!(p.warnings.len(), 1);
        assert_eq!(parse_with_units("1k", false), Ok(1000));
        assert!(parse_with_units("1 Xi", false).is_err());
    }

    #[test]
    fn more_resource_types_than_the_build_holds_name_the_property() {
        let extra = |n: usize| (0..n).map(|i| format!("example.com/t{i}")).collect::<Vec<_>>().join(",");
        let max = fairloom_model::MAX_RESOURCE_TYPES;
        let fits = props(&[(names::RESOURCE_TYPES, &extra(max - 2))]);
        assert_eq!(SchedulerProperties::from_properties(&fits, &[]).unwrap().resource_types.len(), max);
        let e =
            SchedulerProperties::from_properties(&props(&[(names::RESOURCE_TYPES, &extra(max - 1))]), &[]).unwrap_err();
        assert_eq!(e.element.as_deref(), Some(names::RESOURCE_TYPES));
        assert!(e.message.contains("wide-resources"), "{e}");
    }

    #[test]
    fn bad_values_name_the_property() {
        let e = SchedulerProperties::from_properties(&props(&[(names::ASSIGN_MULTIPLE, "yes")]), &[]).unwrap_err();
        assert_eq!(e.element.as_deref(), Some(names::ASSIGN_MULTIPLE));
        let e = SchedulerProperties::from_properties(&props(&[(names::MAX_MB, "lots")]), &[]).unwrap_err();
        assert!(e.to_string().contains(names::MAX_MB));
    }

    #[test]
    fn site_xml() {
        let p = parse_site_xml(
            "<configuration>\n<property><name>yarn.scheduler.fair.preemption</name><value>true</value></property>\n</configuration>",
        )
        .unwrap();
        assert_eq!(p.get(names::PREEMPTION).map(String::as_str), Some("true"));
        let e = parse_site_xml("<configuration>\n<propery/></configuration>").unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = parse_site_xml("<configuration>\n<property>").unwrap_err();
        assert!(e.message.contains("malformed XML"));
    }
}
