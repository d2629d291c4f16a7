//! capacity-scheduler.xml: the Capacity Scheduler's queue tree and settings, with YARN's
//! property names, defaults, inheritance and validation rules. Percentages are read as
//! float32, as `Configuration.getFloat` reads them, so guarantees resolve as YARN's do.

use std::collections::{BTreeMap, BTreeSet};

use fairloom_model::{Resource, ResourceTypes, MEMORY, VCORES};

use crate::acl::Acl;
use crate::error::{ConfigError, Result};
use crate::properties::Properties;

mod unsupported;

pub const PREFIX: &str = "yarn.scheduler.capacity.";
/// `ParentQueue`'s tolerance for children's capacities summing to 100%.
pub const PRECISION: f32 = 0.0005;
const DEFAULT_CALCULATOR: &str = "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator";
const DOMINANT_CALCULATOR: &str = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator";
/// yarn-site switches the Capacity Scheduler's configuration also reads.
pub const MONITOR_ENABLE: &str = "yarn.resourcemanager.scheduler.monitor.enable";
pub const INTRA_QUEUE_PREEMPTION_ENABLED: &str =
    "yarn.resourcemanager.monitor.capacity.preemption.intra-queue-preemption.enabled";

/// A queue's guarantee as configured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CapacityValue {
    /// Percent of the parent's guarantee (0–100), float32.
    Percent(f32),
    /// `[memory=…,vcores=…]`: an absolute resource.
    Absolute(Resource),
    /// `2w`: a weight among siblings.
    Weight(f32),
}

/// A queue's maximum as configured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MaxCapacityValue {
    /// Percent of the parent's maximum (0–100], float32.
    Percent(f32),
    Absolute(Resource),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceCalculatorKind {
    /// Memory only.
    Default,
    /// Dominant share against the cluster, every type.
    Dominant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueState {
    Running,
    Stopped,
}

/// How a leaf orders its applications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppOrdering {
    /// Application priority, then submission order.
    Fifo,
    /// Least memory used first.
    Fair { size_based_weight: bool },
}

/// How a parent orders its children.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueOrdering {
    /// Least used capacity (relative to the guarantee) first.
    Utilization,
    /// Queue priority first where YARN lets it decide (both under or both over guarantee).
    PriorityUtilization,
}

/// The node labels a queue may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccessibleLabels {
    Any,
    Some(BTreeSet<String>),
}

impl AccessibleLabels {
    pub fn allows(&self, label: &str) -> bool {
        label.is_empty()
            || match self {
                Self::Any => true,
                Self::Some(set) => set.contains(label),
            }
    }
}

/// A queue's settings in one partition ("" is the default partition).
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionCapacity {
    pub capacity: CapacityValue,
    pub maximum: MaxCapacityValue,
    pub max_am_percent: f32,
}

/// One queue, after defaults and inheritance.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityQueueConfig {
    /// Full path, `root.a.b`.
    pub path: String,
    /// Last path component.
    pub name: String,
    pub parent: Option<usize>,
    /// In the order `queues` lists them (YARN's order of equal children).
    pub children: Vec<usize>,
    /// By partition label: "" always, and every label the queue has a setting for or may access.
    pub partitions: BTreeMap<String, PartitionCapacity>,
    pub accessible_labels: AccessibleLabels,
    pub default_label: Option<String>,
    /// Effective: a queue under a STOPPED parent is STOPPED.
    pub state: QueueState,
    pub user_limit_factor: f32,
    pub min_user_limit_percent: f32,
    /// `maximum-applications` of the queue, when set.
    pub max_applications: Option<i32>,
    pub app_ordering: AppOrdering,
    pub queue_ordering: QueueOrdering,
    pub priority: i32,
    /// Effective `disable_preemption` (inherited; true everywhere when the monitor is off).
    pub preemption_disabled: bool,
    /// `intra-queue-preemption.disable_preemption` as the hierarchy gives it (inherited; true
    /// everywhere when intra-queue preemption is off). See [`Self::intra_disabled`].
    pub intra_preemption_disabled: bool,
    pub acl_submit: Acl,
    pub acl_administer: Acl,
    /// `maximum-allocation-mb` / `-vcores` of the queue, when set.
    pub maximum_allocation_mb: Option<i64>,
    pub maximum_allocation_vcores: Option<i64>,
    /// Line of the queue's entry in its parent's `queues` (files only).
    pub line: Option<u32>,
}

impl CapacityQueueConfig {
    pub fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }

    /// YARN's `getIntraQueuePreemptionDisabled`: the hierarchy flag or `disable_preemption`.
    pub fn intra_disabled(&self) -> bool {
        self.intra_preemption_disabled || self.preemption_disabled
    }

    pub fn partition(&self, label: &str) -> Option<&PartitionCapacity> {
        self.partitions.get(label)
    }
}

/// The whole capacity-scheduler.xml, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityConfig {
    /// Pre-order: every parent before its children; `queues[0]` is root.
    pub queues: Vec<CapacityQueueConfig>,
    pub calculator: ResourceCalculatorKind,
    pub max_applications: i32,
    pub max_am_percent: f32,
    pub node_locality_delay: i32,
    pub rack_locality_additional_delay: i32,
    pub rack_locality_full_reset: bool,
    pub assign_multiple: bool,
    pub max_assign: i32,
    pub max_offswitch_assign: i32,
    pub reservations_continue_looking: bool,
    pub lazy_preemption: bool,
    /// Every node label some queue names.
    pub labels: BTreeSet<String>,
    pub warnings: Vec<String>,
}

impl CapacityConfig {
    pub fn queue(&self, path: &str) -> Option<&CapacityQueueConfig> {
        self.queues.iter().find(|q| q.path == path)
    }
}

/// Where each property was written (1-based line), for errors in files.
pub type Lines = BTreeMap<String, u32>;

struct Reader<'a> {
    /// The capacity-scheduler properties.
    props: &'a Properties,
    /// yarn-site, which the capacity properties override (YARN loads both into one object).
    site: &'a Properties,
    lines: Option<&'a Lines>,
    types: &'a ResourceTypes,
}

impl Reader<'_> {
    fn raw(&self, key: &str) -> Option<&str> {
        self.props.get(key).or_else(|| self.site.get(key)).map(|v| v.trim())
    }

    fn error(&self, key: &str, message: impl Into<String>) -> ConfigError {
        let e = ConfigError::new(message).element(key.to_string());
        match self.lines.and_then(|l| l.get(key)) {
            Some(&line) => e.at(line),
            None => e,
        }
    }

    fn float(&self, key: &str, default: f32) -> Result<f32> {
        match self.raw(key) {
            None | Some("") => Ok(default),
            Some(v) => v
                .parse::<f32>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| self.error(key, format!("'{v}' is not a number"))),
        }
    }

    fn int(&self, key: &str, default: i64) -> Result<i64> {
        match self.raw(key) {
            None | Some("") => Ok(default),
            Some(v) => v.parse::<i64>().map_err(|_| self.error(key, format!("'{v}' is not an integer"))),
        }
    }

    fn bool(&self, key: &str, default: bool) -> Result<bool> {
        match self.raw(key) {
            None | Some("") => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(self.error(key, format!("'{v}' is not a boolean (true or false)"))),
        }
    }

    fn opt_bool(&self, key: &str) -> Result<Option<bool>> {
        match self.raw(key) {
            None | Some("") => Ok(None),
            Some(_) => self.bool(key, false).map(Some),
        }
    }

    /// `[memory=…,vcores=…,res=…]`. Memory is in MB; a type not named is 0.
    fn absolute(&self, key: &str, value: &str) -> Result<Resource> {
        let inner = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')).unwrap_or(value);
        let mut r = Resource::none();
        for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, amount) = part
                .split_once('=')
                .ok_or_else(|| self.error(key, format!("'{part}' in '{value}' is not name=value")))?;
            let (name, amount) = (name.trim(), amount.trim());
            let index = match name {
                "memory" | "memory-mb" => MEMORY,
                "vcores" => VCORES,
                other => self
                    .types
                    .index_of(other)
                    .ok_or_else(|| self.error(key, format!("unknown resource type '{other}' in '{value}'")))?,
            };
            let v = crate::properties::parse_with_units(amount, index == MEMORY).map_err(|m| self.error(key, m))?;
            if v < 0 {
                return Err(self.error(key, format!("negative amount '{amount}' in '{value}'")));
            }
            r.set(index, v);
        }
        Ok(r)
    }

    fn capacity(&self, key: &str) -> Result<Option<CapacityValue>> {
        let Some(v) = self.raw(key).filter(|v| !v.is_empty()) else { return Ok(None) };
        if v.starts_with('[') {
            return self.absolute(key, v).map(|r| Some(CapacityValue::Absolute(r)));
        }
        if let Some(w) = v.strip_suffix('w') {
            let w: f32 = w.trim().parse().ok().filter(|x: &f32| x.is_finite() && *x >= 0.0).ok_or_else(|| {
                self.error(key, format!("'{v}' is not a weight (a non-negative number followed by w)"))
            })?;
            return Ok(Some(CapacityValue::Weight(w)));
        }
        let p = self.float(key, 0.0)?;
        if !(0.0..=100.0).contains(&p) {
            return Err(self.error(key, format!("Illegal capacity of {p} for queue: it must be between 0 and 100")));
        }
        Ok(Some(CapacityValue::Percent(p)))
    }

    fn max_capacity(&self, key: &str) -> Result<Option<MaxCapacityValue>> {
        let Some(v) = self.raw(key).filter(|v| !v.is_empty()) else { return Ok(None) };
        if v.starts_with('[') {
            return self.absolute(key, v).map(|r| Some(MaxCapacityValue::Absolute(r)));
        }
        let p = self.float(key, 100.0)?;
        // YARN reads -1 (UNDEFINED) as 100%.
        if p == -1.0 {
            return Ok(Some(MaxCapacityValue::Percent(100.0)));
        }
        if !(0.0..=100.0).contains(&p) {
            return Err(self.error(key, format!("Illegal value of maximumCapacity {p}: it must be between 0 and 100")));
        }
        Ok(Some(MaxCapacityValue::Percent(p)))
    }
}

fn queue_key(path: &str, suffix: &str) -> String {
    format!("{PREFIX}{path}.{suffix}")
}

fn split_list(v: &str) -> Vec<String> {
    v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

/// Resolve a capacity-scheduler.xml (`props`, with `lines` when it came from a file) over the
/// yarn-site properties `site` it is loaded together with.
pub fn parse_capacity_config(
    props: &Properties,
    site: &Properties,
    lines: Option<&Lines>,
    types: &ResourceTypes,
) -> Result<CapacityConfig> {
    let r = Reader { props, site, lines, types };
    let calculator = match r.raw(&format!("{PREFIX}resource-calculator")) {
        None | Some("") | Some(DEFAULT_CALCULATOR) => ResourceCalculatorKind::Default,
        Some(DOMINANT_CALCULATOR) => ResourceCalculatorKind::Dominant,
        Some(other) => {
            return Err(r.error(
                &format!("{PREFIX}resource-calculator"),
                format!("unknown resource calculator '{other}': {DEFAULT_CALCULATOR} or {DOMINANT_CALCULATOR}"),
            ))
        }
    };
    let max_am_percent = r.float(&format!("{PREFIX}maximum-am-resource-percent"), 0.1)?;
    let monitors = r.bool(MONITOR_ENABLE, false)?;
    let intra_enabled = r.bool(INTRA_QUEUE_PREEMPTION_ENABLED, false)?;
    let mut queues: Vec<CapacityQueueConfig> = Vec::new();
    build_queue(&r, "root", None, None, max_am_percent, monitors, intra_enabled, &mut queues)?;
    check_known_queues(&r, &queues)?;
    unsupported::check(&r)?;
    let labels: BTreeSet<String> = queues
        .iter()
        .flat_map(|q| q.partitions.keys().cloned())
        .chain(queues.iter().filter_map(|q| q.default_label.clone()))
        .filter(|l| !l.is_empty())
        .collect();
    for parent in 0..queues.len() {
        validate_children(&r, &queues, parent)?;
    }
    Ok(CapacityConfig {
        queues,
        calculator,
        max_applications: r.int(&format!("{PREFIX}maximum-applications"), 10_000)? as i32,
        max_am_percent,
        node_locality_delay: r.int(&format!("{PREFIX}node-locality-delay"), 40)? as i32,
        rack_locality_additional_delay: r.int(&format!("{PREFIX}rack-locality-additional-delay"), -1)? as i32,
        rack_locality_full_reset: r.bool(&format!("{PREFIX}rack-locality-full-reset"), true)?,
        assign_multiple: r.bool(&format!("{PREFIX}per-node-heartbeat.multiple-assignments-enabled"), true)?,
        max_assign: r.int(&format!("{PREFIX}per-node-heartbeat.maximum-container-assignments"), 100)? as i32,
        max_offswitch_assign: r.int(&format!("{PREFIX}per-node-heartbeat.maximum-offswitch-assignments"), 1)? as i32,
        reservations_continue_looking: r.bool(&format!("{PREFIX}reservations-continue-look-all-nodes"), true)?,
        lazy_preemption: r.bool(&format!("{PREFIX}lazy-preemption-enabled"), false)?,
        labels,
        warnings: Vec::new(),
    })
}

#[allow(clippy::too_many_arguments)]
fn build_queue(
    r: &Reader<'_>,
    path: &str,
    parent: Option<usize>,
    line: Option<u32>,
    global_am_percent: f32,
    monitors: bool,
    intra_enabled: bool,
    out: &mut Vec<CapacityQueueConfig>,
) -> Result<usize> {
    let key = |s: &str| queue_key(path, s);
    let is_root = parent.is_none();
    let parent_conf = parent.map(|p| out[p].clone());
    let name = path.rsplit('.').next().unwrap_or(path).to_string();

    let accessible_labels = match r.raw(&key("accessible-node-labels")) {
        _ if is_root => AccessibleLabels::Any,
        None => parent_conf.as_ref().map_or(AccessibleLabels::Any, |p| p.accessible_labels.clone()),
        Some(v) if v.split(',').any(|l| l.trim() == "*") => AccessibleLabels::Any,
        Some(v) => AccessibleLabels::Some(split_list(v).into_iter().collect()),
    };
    let queue_am_percent = r.float(&key("maximum-am-resource-percent"), global_am_percent)?;
    if !(0.0..=1.0).contains(&queue_am_percent) {
        return Err(r.error(&key("maximum-am-resource-percent"), "must be between 0 and 1"));
    }
    let mut partitions = BTreeMap::new();
    let default_capacity = if is_root {
        CapacityValue::Percent(100.0)
    } else {
        r.capacity(&key("capacity"))?.unwrap_or(CapacityValue::Percent(0.0))
    };
    if is_root && matches!(r.capacity(&key("capacity"))?, Some(CapacityValue::Weight(_))) {
        return Err(r.error(&key("capacity"), "the root queue cannot have a weight"));
    }
    let default_max = if is_root {
        MaxCapacityValue::Percent(100.0)
    } else {
        r.max_capacity(&key("maximum-capacity"))?.unwrap_or(MaxCapacityValue::Percent(100.0))
    };
    partitions.insert(
        String::new(),
        PartitionCapacity { capacity: default_capacity, maximum: default_max, max_am_percent: queue_am_percent },
    );
    // Labels: those the queue has settings for, and those it may access by name.
    let prefix = key("accessible-node-labels.");
    let mut named: BTreeSet<String> = r
        .props
        .keys()
        .filter_map(|k| k.strip_prefix(&prefix))
        .filter_map(|rest| rest.split_once('.').map(|(label, _)| label.to_string()))
        .collect();
    if let AccessibleLabels::Some(set) = &accessible_labels {
        named.extend(set.iter().cloned());
    }
    for label in named {
        let lk = |s: &str| format!("{prefix}{label}.{s}");
        let capacity = r.capacity(&lk("capacity"))?.unwrap_or(CapacityValue::Percent(0.0));
        let maximum = r.max_capacity(&lk("maximum-capacity"))?.unwrap_or(MaxCapacityValue::Percent(100.0));
        let am = r.float(&lk("maximum-am-resource-percent"), queue_am_percent)?;
        partitions.insert(label, PartitionCapacity { capacity, maximum, max_am_percent: am });
    }

    let state = match r.raw(&key("state")) {
        None | Some("") => QueueState::Running,
        Some(v) if v.eq_ignore_ascii_case("RUNNING") => QueueState::Running,
        Some(v) if v.eq_ignore_ascii_case("STOPPED") => QueueState::Stopped,
        Some(v) => return Err(r.error(&key("state"), format!("'{v}' is not a queue state (RUNNING or STOPPED)"))),
    };
    let state =
        if parent_conf.as_ref().is_some_and(|p| p.state == QueueState::Stopped) { QueueState::Stopped } else { state };
    let children_names = r.raw(&key("queues")).map(split_list).unwrap_or_default();
    let leaf = children_names.is_empty();
    let ordering_key = key("ordering-policy");
    let (app_ordering, queue_ordering) = match (leaf, r.raw(&ordering_key)) {
        (true, None | Some("") | Some("fifo")) => (AppOrdering::Fifo, QueueOrdering::Utilization),
        (true, Some("fair")) => {
            let sbw = r.bool(&format!("{ordering_key}.fair.enable-size-based-weight"), false)?;
            (AppOrdering::Fair { size_based_weight: sbw }, QueueOrdering::Utilization)
        }
        (false, None | Some("") | Some("utilization")) => (AppOrdering::Fifo, QueueOrdering::Utilization),
        (false, Some("priority-utilization")) => (AppOrdering::Fifo, QueueOrdering::PriorityUtilization),
        (true, Some(v)) => {
            return Err(
                r.error(&ordering_key, format!("'{v}' is not an ordering policy of a leaf queue (fifo or fair)"))
            )
        }
        (false, Some(v)) => {
            return Err(r.error(
                &ordering_key,
                format!("'{v}' is not an ordering policy of a parent queue (utilization or priority-utilization)"),
            ))
        }
    };
    let user_limit_factor = r.float(&key("user-limit-factor"), 1.0)?;
    let min_user_limit_percent = r.float(&key("minimum-user-limit-percent"), 100.0)?;
    if !(min_user_limit_percent > 0.0 && min_user_limit_percent <= 100.0) {
        return Err(r.error(&key("minimum-user-limit-percent"), "must be above 0 and at most 100"));
    }
    let max_applications = match r.int(&key("maximum-applications"), -1)? {
        x if x < 0 => None,
        x => Some(x.min(i32::MAX as i64) as i32),
    };
    let own_disable = r.opt_bool(&key("disable_preemption"))?;
    let preemption_disabled =
        !monitors || own_disable.unwrap_or_else(|| parent_conf.as_ref().is_some_and(|p| p.preemption_disabled));
    let own_intra = r.opt_bool(&key("intra-queue-preemption.disable_preemption"))?;
    // The hierarchy flag inherits on its own; the effective one also honours disable_preemption.
    let intra_hierarchy = !intra_enabled
        || own_intra.unwrap_or_else(|| parent_conf.as_ref().is_some_and(|p| p.intra_preemption_disabled));
    let default_acl = if is_root { Acl::everyone() } else { Acl::nobody() };
    let acl = |suffix: &str| r.raw(&key(suffix)).map(Acl::parse).unwrap_or_else(|| default_acl.clone());
    let default_label = r
        .raw(&key("default-node-label-expression"))
        .map(|v| v.to_string())
        .or_else(|| parent_conf.as_ref().and_then(|p| p.default_label.clone()))
        .filter(|l| !l.is_empty());
    let alloc = |suffix: &str| -> Result<Option<i64>> {
        match r.raw(&key(suffix)) {
            None | Some("") => Ok(None),
            Some(_) => r.int(&key(suffix), 0).map(Some),
        }
    };
    let id = out.len();
    out.push(CapacityQueueConfig {
        path: path.to_string(),
        name,
        parent,
        children: Vec::new(),
        partitions,
        accessible_labels,
        default_label,
        state,
        user_limit_factor,
        min_user_limit_percent,
        max_applications,
        app_ordering,
        queue_ordering,
        priority: r.int(&key("priority"), 0)?.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
        preemption_disabled,
        intra_preemption_disabled: intra_hierarchy,
        acl_submit: acl("acl_submit_applications"),
        acl_administer: acl("acl_administer_queue"),
        maximum_allocation_mb: alloc("maximum-allocation-mb")?,
        maximum_allocation_vcores: alloc("maximum-allocation-vcores")?,
        line,
    });
    let queues_line = r.lines.and_then(|l| l.get(&key("queues")).copied());
    let mut seen = BTreeSet::new();
    for child in children_names {
        if child.contains('.') || !seen.insert(child.clone()) {
            let why = if child.contains('.') { "contains '.'" } else { "is listed twice" };
            return Err(r.error(&key("queues"), format!("queue name '{child}' in {path} {why}")));
        }
        let c = build_queue(
            r,
            &format!("{path}.{child}"),
            Some(id),
            queues_line,
            global_am_percent,
            monitors,
            intra_enabled,
            out,
        )?;
        out[id].children.push(c);
    }
    Ok(id)
}

/// A `queues` or `capacity` property for a queue that is not in the tree is a typo in the
/// hierarchy (a parent that does not list it), not something to ignore.
fn check_known_queues(r: &Reader<'_>, queues: &[CapacityQueueConfig]) -> Result<()> {
    let known: BTreeSet<&str> = queues.iter().map(|q| q.path.as_str()).collect();
    for key in r.props.keys() {
        let Some(rest) = key.strip_prefix(PREFIX) else { continue };
        if !rest.starts_with("root.") {
            continue;
        }
        let path = ["queues", "capacity", "maximum-capacity"]
            .iter()
            .find_map(|s| rest.strip_suffix(&format!(".{s}")))
            .filter(|p| !p.contains(".accessible-node-labels."));
        if let Some(path) = path {
            if !known.contains(path) {
                let parent = path.rsplit_once('.').map_or("root", |(p, _)| p);
                return Err(r.error(
                    key,
                    format!("queue {path} is not in the queue tree: its parent {parent} does not list it in {PREFIX}{parent}.queues"),
                ));
            }
        }
    }
    Ok(())
}

fn kind(c: &CapacityValue) -> &'static str {
    match c {
        CapacityValue::Percent(_) => "percentage",
        CapacityValue::Absolute(_) => "absolute resource",
        CapacityValue::Weight(_) => "weight",
    }
}

/// ParentQueue's checks: siblings use one kind of capacity, and percentages of children add
/// up to 100% where the parent has a guarantee (to 0 where it has none).
fn validate_children(r: &Reader<'_>, queues: &[CapacityQueueConfig], parent: usize) -> Result<()> {
    let p = &queues[parent];
    if p.children.is_empty() {
        return Ok(());
    }
    let key = queue_key(&p.path, "queues");
    for (label, pc) in &p.partitions {
        let for_label = if label.is_empty() { String::new() } else { format!(" for label={label}") };
        let caps: Vec<(&CapacityQueueConfig, CapacityValue)> = p
            .children
            .iter()
            .map(|&c| &queues[c])
            .map(|c| (c, c.partitions.get(label).map_or(CapacityValue::Percent(0.0), |x| x.capacity)))
            .collect();
        let first = kind(&caps[0].1);
        if let Some((c, v)) = caps.iter().find(|(_, v)| kind(v) != first) {
            return Err(r.error(
                &key,
                format!(
                    "Parent queue '{}' has children with mixed capacity types{for_label}: '{}' uses {} while '{}' uses {}",
                    p.path,
                    caps[0].0.path,
                    first,
                    c.path,
                    kind(v)
                ),
            ));
        }
        // Below root a parent and its children may not mix absolute resources and percentages.
        if parent != 0 && (matches!(pc.capacity, CapacityValue::Absolute(_)) != (first == "absolute resource")) {
            return Err(r.error(
                &key,
                format!(
                    "Parent queue '{}' and child queue '{}' should use either percentage based capacity configuration or absolute resource together{for_label}",
                    p.path, caps[0].0.path
                ),
            ));
        }
        if first == "percentage" {
            let parent_capacity = match pc.capacity {
                CapacityValue::Percent(x) => x / 100.0,
                _ => 1.0,
            };
            let sum: f32 = caps
                .iter()
                .map(|(_, v)| match v {
                    CapacityValue::Percent(x) => x / 100.0,
                    _ => 0.0,
                })
                .sum();
            if (parent_capacity > 0.0 && (1.0 - sum).abs() > PRECISION) || (parent_capacity == 0.0 && sum > 0.0) {
                return Err(r.error(
                    &key,
                    format!(
                        "Illegal capacity of {} for children of queue {}{for_label}: they must add up to 100 (or to 0 under a parent with capacity 0)",
                        sum * 100.0,
                        p.path
                    ),
                ));
            }
        }
        if let CapacityValue::Absolute(own) = pc.capacity {
            let sum = caps.iter().fold(Resource::none(), |acc, (_, v)| match v {
                CapacityValue::Absolute(x) => acc.saturating_add(*x),
                _ => acc,
            });
            if parent != 0 && !sum.fits_in(&own) {
                return Err(r.error(
                    &key,
                    format!("the children of queue {} ask for more than its absolute capacity{for_label}", p.path),
                ));
            }
        }
    }
    Ok(())
}

/// Read `<configuration><property>` pairs and the line of each property.
pub fn parse_capacity_xml(text: &str) -> Result<(Properties, Lines)> {
    crate::properties::parse_site_xml_with_lines(text)
}

/// A capacity-scheduler.xml's text read and checked over the yarn-site properties `site`
/// (errors name `name` and the line): its properties and the configuration they make.
pub fn load_capacity_file(text: &str, name: &str, site: &Properties) -> Result<(Properties, CapacityConfig)> {
    let (capacity, lines) = parse_capacity_xml(text).map_err(|e| e.in_file(name))?;
    let props = crate::properties::SchedulerProperties::from_properties(site, &[])?;
    let conf =
        parse_capacity_config(&capacity, site, Some(&lines), &props.resource_types).map_err(|e| e.in_file(name))?;
    Ok((capacity, conf))
}

#[cfg(test)]
mod tests;
