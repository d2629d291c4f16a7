//! The one place a scheduler is built from configuration, for every owner: the
//! ResourceManager, the load simulator, the scenario runner and the `shares`, `capacities`
//! and `preempt` commands. What it reads is what YARN's ResourceManager reads: which
//! scheduler (`yarn.resourcemanager.scheduler.class`), yarn-site, and the scheduler's own
//! file; plus the switches only some owners set (resource types a scenario declares, node
//! labels, the users' groups). A hot reload ([`Reconfigure`]) takes the same files.

use std::collections::BTreeMap;
use std::str::FromStr;

use fairloom_config::{
    parse_allocation_file, parse_capacity_xml, AllocationFile, ConfigError, Properties, SchedulerProperties,
};

use crate::capacity::{CapacityScheduler, CapacitySetup};
use crate::driver::{AnyScheduler, SchedulerError};
use crate::fair::FairScheduler;

/// `yarn.resourcemanager.scheduler.class` for the Fair Scheduler.
pub const FAIR_CLASS: &str = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler";
/// `yarn.resourcemanager.scheduler.class` for the Capacity Scheduler (YARN's default).
pub const CAPACITY_CLASS: &str = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler";
const SCHEDULER_CLASS: &str = "yarn.resourcemanager.scheduler.class";

/// Which scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchedulerKind {
    Fair,
    Capacity,
}

impl SchedulerKind {
    /// `fair` or `capacity`, as scenarios and the command line name them.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fair => "fair",
            Self::Capacity => "capacity",
        }
    }

    /// The scheduler yarn-site picks: `yarn.resourcemanager.scheduler.class`, the Capacity
    /// Scheduler when it is absent (YARN's default).
    pub fn from_site(site: &Properties) -> Result<Self, ConfigError> {
        match site.get(SCHEDULER_CLASS).map(|s| s.trim()) {
            None | Some(CAPACITY_CLASS) => Ok(Self::Capacity),
            Some(FAIR_CLASS) => Ok(Self::Fair),
            Some(other) => Err(ConfigError::new(format!(
                "unknown scheduler class '{other}' (fairloom has {FAIR_CLASS} and {CAPACITY_CLASS})"
            ))
            .element(SCHEDULER_CLASS)),
        }
    }
}

impl FromStr for SchedulerKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "fair" => Ok(Self::Fair),
            "capacity" => Ok(Self::Capacity),
            other => Err(format!("unknown scheduler '{other}' (fair or capacity)")),
        }
    }
}

/// The scheduler's own file.
#[derive(Debug, Clone, PartialEq)]
pub enum SchedulerFile {
    /// fair-scheduler.xml, as text.
    FairXml(String),
    /// capacity-scheduler.xml, as text (errors then name its lines).
    CapacityXml(String),
    /// Capacity Scheduler properties already read (simulator presets, scenarios).
    CapacityProperties(Properties),
}

/// Everything a scheduler is built from.
#[derive(Debug, Clone)]
pub struct SchedulerConfig {
    pub kind: SchedulerKind,
    /// yarn-site.xml.
    pub site: Properties,
    /// The name errors in `site` are reported under.
    pub site_name: String,
    /// The scheduler's file and the name its errors are reported under; `None` is YARN's
    /// default: every queue default for the Fair Scheduler, one `root.default` queue with all
    /// the capacity for the Capacity Scheduler.
    pub file: Option<(String, SchedulerFile)>,
    /// Countable resource types beyond memory, vcores and `yarn.resource-types`.
    pub extra_types: Vec<String>,
    /// Node labels (partitions) with their exclusivity; the Capacity Scheduler's only.
    pub labels: Vec<(String, bool)>,
    /// User → groups (the first is the primary group); users not listed have one group
    /// named like the user.
    pub groups: BTreeMap<String, Vec<String>>,
}

impl SchedulerConfig {
    /// `kind` over `site`, with its default file and no labels or groups.
    pub fn new(kind: SchedulerKind, site: Properties) -> Self {
        Self {
            kind,
            site,
            site_name: "yarn-site.xml".to_string(),
            file: None,
            extra_types: Vec::new(),
            labels: Vec::new(),
            groups: BTreeMap::new(),
        }
    }

    /// The same with the scheduler's file, named `name` in errors.
    pub fn with_file(mut self, name: impl Into<String>, file: SchedulerFile) -> Self {
        self.file = Some((name.into(), file));
        self
    }
}

/// A hot reload (YARN's queue refresh): each file given replaces the one in force; a file
/// not given stays. A configuration that does not load is refused whole.
#[derive(Debug, Clone, Default)]
pub struct Reconfigure {
    /// A new yarn-site, named in errors.
    pub site: Option<(String, Properties)>,
    /// A new scheduler file, named in errors.
    pub file: Option<(String, SchedulerFile)>,
}

/// fair-scheduler.xml's text, or why the Fair Scheduler cannot take `file`.
pub(crate) fn fair_text(file: &SchedulerFile) -> Result<&str, SchedulerError> {
    match file {
        SchedulerFile::FairXml(text) => Ok(text),
        SchedulerFile::CapacityXml(_) | SchedulerFile::CapacityProperties(_) => {
            Err(SchedulerError::InvalidRequest("capacity settings need the Capacity Scheduler".to_string()))
        }
    }
}

/// The allocation file `text` (named `name` in errors), read with `props`'s resource types.
pub(crate) fn fair_allocations(
    name: &str,
    text: &str,
    props: &SchedulerProperties,
) -> Result<AllocationFile, SchedulerError> {
    Ok(parse_allocation_file(text, &props.resource_types).map_err(|e| e.in_file(name))?)
}

/// The Capacity Scheduler's properties in `file`, with their lines when it was XML.
pub(crate) fn capacity_properties(
    name: &str,
    file: &SchedulerFile,
) -> Result<(Properties, Option<fairloom_config::capacity::Lines>), SchedulerError> {
    match file {
        SchedulerFile::CapacityXml(text) => {
            let (props, lines) = parse_capacity_xml(text).map_err(|e| e.in_file(name))?;
            Ok((props, Some(lines)))
        }
        SchedulerFile::CapacityProperties(props) => Ok((props.clone(), None)),
        SchedulerFile::FairXml(_) => Err(SchedulerError::InvalidRequest(
            "allocations (fair-scheduler.xml) do not apply to the Capacity Scheduler".to_string(),
        )),
    }
}

/// The scheduler `conf` describes.
pub fn build(conf: &SchedulerConfig) -> Result<AnyScheduler, SchedulerError> {
    Ok(match conf.kind {
        SchedulerKind::Fair => Box::new(build_fair(conf)?),
        SchedulerKind::Capacity => Box::new(build_capacity(conf)?),
    })
}

/// The Fair Scheduler `conf` describes (its `kind` aside), for a tool that works on it alone.
pub fn build_fair(conf: &SchedulerConfig) -> Result<FairScheduler, SchedulerError> {
    // A file of the other scheduler is the first thing refused, before labels or yarn-site.
    let file = conf.file.as_ref().map(|(name, file)| fair_text(file).map(|text| (name, text))).transpose()?;
    if let Some((label, _)) = conf.labels.first() {
        return Err(SchedulerError::NotSupported(format!(
            "node label '{label}': node labels need the Capacity Scheduler"
        )));
    }
    let props = SchedulerProperties::from_properties(&conf.site, &conf.extra_types)
        .map_err(|e| e.in_file(conf.site_name.clone()))?;
    let alloc = match file {
        Some((name, text)) => fair_allocations(name, text, &props)?,
        None => AllocationFile::default(),
    };
    let mut s = FairScheduler::new(props, alloc)?;
    s.set_extra_types(conf.extra_types.clone());
    s.set_groups(conf.groups.clone());
    Ok(s)
}

/// The Capacity Scheduler `conf` describes (its `kind` aside), for a tool that works on it
/// alone.
pub fn build_capacity(conf: &SchedulerConfig) -> Result<CapacityScheduler, SchedulerError> {
    let (name, capacity, lines) = match &conf.file {
        Some((name, file)) => {
            let (props, lines) = capacity_properties(name, file)?;
            (name.as_str(), props, lines)
        }
        None => ("(built-in)", default_capacity(), None),
    };
    let setup = CapacitySetup { site: conf.site.clone(), capacity, lines, extra_types: conf.extra_types.clone() };
    let mut s = CapacityScheduler::new(setup, &conf.labels).map_err(|e| match e {
        SchedulerError::Config(c) => SchedulerError::Config(c.in_file(name)),
        other => other,
    })?;
    s.set_groups(conf.groups.clone());
    Ok(s)
}

/// YARN's capacity-scheduler.xml as shipped: one queue, `root.default`, with all of it.
fn default_capacity() -> Properties {
    [("yarn.scheduler.capacity.root.queues", "default"), ("yarn.scheduler.capacity.root.default.capacity", "100")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
