//! fair-scheduler.xml: the allocation file, read into typed queue and placement configuration.
//!
//! Every element YARN's allocation loader knows is read with YARN's units and clamps. Unknown
//! elements at the top level and inside queues are errors (a typo must not silently change
//! shares); inside `<queuePlacementPolicy>` non-rule elements are ignored, as YARN does.

use std::collections::{BTreeMap, HashMap};

use fairloom_model::{Resource, ResourceTypes, UNBOUNDED};
use roxmltree::Node;

use crate::acl::Acl;
use crate::error::Result;
use crate::placement::{parse_placement_policy, RuleConfig};
use crate::resource_string::{parse_resource, ConfigurableResource};
use crate::xml::{self, error_at, java_bool};

/// A queue's ordering policy: a closed set, as YARN ships three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PolicyKind {
    Fair,
    Drf,
    Fifo,
}

const POLICY_PACKAGE: &str = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.policies.";

impl PolicyKind {
    /// YARN's `SchedulingPolicy.parse`: a short name in any case, or the policy's class name.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let t = text.trim();
        let class = t.strip_prefix(POLICY_PACKAGE).unwrap_or(t);
        match (t.to_lowercase().as_str(), class) {
            ("fair", _) | (_, "FairSharePolicy") => Ok(Self::Fair),
            ("drf", _) | (_, "DominantResourceFairnessPolicy") => Ok(Self::Drf),
            ("fifo", _) | (_, "FifoPolicy") => Ok(Self::Fifo),
            _ => Err(format!("unknown scheduling policy '{t}': use fair, drf or fifo")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Fair => "fair",
            Self::Drf => "drf",
            Self::Fifo => "fifo",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueType {
    Leaf,
    Parent,
}

/// One `<queue>` (or `<pool>`) element, with only what the file sets.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueConfig {
    /// Full path, `root.a.b`.
    pub path: String,
    pub queue_type: QueueType,
    /// `<reservation/>`: a plan queue (internally a parent).
    pub reservable: bool,
    pub min_resources: Option<Resource>,
    pub max_resources: Option<ConfigurableResource>,
    pub max_child_resources: Option<ConfigurableResource>,
    pub max_container_allocation: Option<Resource>,
    pub max_running_apps: Option<i32>,
    pub max_am_share: Option<f32>,
    pub weight: Option<f32>,
    pub min_share_preemption_timeout_ms: Option<i64>,
    pub fair_share_preemption_timeout_ms: Option<i64>,
    pub fair_share_preemption_threshold: Option<f32>,
    pub scheduling_policy: Option<PolicyKind>,
    pub acl_submit_apps: Option<Acl>,
    pub acl_administer_apps: Option<Acl>,
    pub acl_administer_reservations: Option<Acl>,
    pub acl_list_reservations: Option<Acl>,
    pub acl_submit_reservations: Option<Acl>,
    pub allow_preemption_from: Option<bool>,
    /// Line of the element in the file.
    pub line: u32,
}

impl QueueConfig {
    pub fn new(path: impl Into<String>, queue_type: QueueType) -> Self {
        Self {
            path: path.into(),
            queue_type,
            reservable: false,
            min_resources: None,
            max_resources: None,
            max_child_resources: None,
            max_container_allocation: None,
            max_running_apps: None,
            max_am_share: None,
            weight: None,
            min_share_preemption_timeout_ms: None,
            fair_share_preemption_timeout_ms: None,
            fair_share_preemption_threshold: None,
            scheduling_policy: None,
            acl_submit_apps: None,
            acl_administer_apps: None,
            acl_administer_reservations: None,
            acl_list_reservations: None,
            acl_submit_reservations: None,
            allow_preemption_from: None,
            line: 0,
        }
    }

    pub fn parent_path(&self) -> Option<&str> {
        self.path.rsplit_once('.').map(|(p, _)| p)
    }
}

/// The whole allocation file.
#[derive(Debug, Clone, PartialEq)]
pub struct AllocationFile {
    /// Root first, then every configured queue in document (pre-)order.
    pub queues: Vec<QueueConfig>,
    /// Per-user maxRunningApps.
    pub user_max_apps: BTreeMap<String, i32>,
    pub user_max_apps_default: i32,
    pub queue_max_apps_default: i32,
    pub queue_max_resources_default: Option<ConfigurableResource>,
    pub queue_max_am_share_default: f32,
    pub default_fair_share_preemption_timeout_ms: Option<i64>,
    pub default_min_share_preemption_timeout_ms: Option<i64>,
    pub default_fair_share_preemption_threshold: Option<f32>,
    pub default_scheduling_policy: PolicyKind,
    /// `None` when the file has no (non-empty) policy: the scheduler generates one.
    pub placement_policy: Option<Vec<RuleConfig>>,
    pub reservation_agent: Option<String>,
    pub reservation_policy: Option<String>,
    pub reservation_planner: Option<String>,
    pub warnings: Vec<String>,
    /// Position in `queues` by path, kept by the loader (a lookup per queue would otherwise
    /// scan, which is quadratic when a 10,000-queue file is applied). After editing `queues`
    /// by hand, call [`AllocationFile::reindex`].
    path_index: HashMap<String, usize>,
}

impl Default for AllocationFile {
    fn default() -> Self {
        Self {
            queues: vec![QueueConfig::new("root", QueueType::Parent)],
            user_max_apps: BTreeMap::new(),
            user_max_apps_default: i32::MAX,
            queue_max_apps_default: i32::MAX,
            queue_max_resources_default: None,
            queue_max_am_share_default: 0.5,
            default_fair_share_preemption_timeout_ms: None,
            default_min_share_preemption_timeout_ms: None,
            default_fair_share_preemption_threshold: None,
            default_scheduling_policy: PolicyKind::Fair,
            placement_policy: None,
            reservation_agent: None,
            reservation_policy: None,
            reservation_planner: None,
            warnings: Vec::new(),
            path_index: HashMap::from([("root".to_string(), 0)]),
        }
    }
}

impl AllocationFile {
    pub fn queue(&self, path: &str) -> Option<&QueueConfig> {
        self.path_index.get(path).and_then(|&i| self.queues.get(i)).filter(|q| q.path == path)
    }

    /// Rebuild the path index from `queues`.
    pub fn reindex(&mut self) {
        self.path_index = self.queues.iter().enumerate().map(|(i, q)| (q.path.clone(), i)).collect();
    }
}

/// Trim as YARN trims queue names: Java whitespace plus U+00A0.
pub fn trim_queue_name(name: &str) -> &str {
    name.trim_matches(|c: char| c.is_whitespace() || c == '\u{a0}')
}

struct Loader<'t> {
    types: &'t ResourceTypes,
    out: AllocationFile,
    lines: xml::Lines,
}

fn int(node: Node<'_, '_>) -> Result<i32> {
    let t = xml::text(node);
    t.parse().map_err(|_| error_at(node, format!("'{t}' is not an integer")))
}

fn long(node: Node<'_, '_>) -> Result<i64> {
    let t = xml::text(node);
    t.parse().map_err(|_| error_at(node, format!("'{t}' is not an integer")))
}

fn float(node: Node<'_, '_>) -> Result<f32> {
    let t = xml::text(node);
    t.parse::<f32>().ok().filter(|x| x.is_finite()).ok_or_else(|| error_at(node, format!("'{t}' is not a number")))
}

/// A timeout in seconds in the file, milliseconds inside.
fn seconds(node: Node<'_, '_>) -> Result<i64> {
    Ok(long(node)?.saturating_mul(1000))
}

fn policy(node: Node<'_, '_>) -> Result<PolicyKind> {
    PolicyKind::parse(xml::text(node)).map_err(|m| error_at(node, m))
}

fn resource(types: &ResourceTypes, node: Node<'_, '_>, missing: i64) -> Result<ConfigurableResource> {
    parse_resource(xml::text(node), types, missing).map_err(|m| error_at(node, m))
}

fn absolute(types: &ResourceTypes, node: Node<'_, '_>, missing: i64) -> Result<Resource> {
    match resource(types, node, missing)? {
        ConfigurableResource::Absolute(r) => Ok(r),
        ConfigurableResource::Percentage(_) => Err(error_at(node, "a percentage is not allowed here")),
    }
}

impl Loader<'_> {
    fn load_queue(&mut self, parent: Option<&str>, element: Node<'_, '_>) -> Result<()> {
        let raw = element.attribute("name").ok_or_else(|| error_at(element, "a queue needs a name attribute"))?;
        let name = trim_queue_name(raw);
        if name.is_empty() {
            return Err(error_at(element, format!("queue name '{raw}' is empty or only white space")));
        }
        if name.contains('.') {
            return Err(error_at(element, format!("queue name '{name}' may not contain '.'")));
        }
        let path = match parent {
            Some(p) => format!("{p}.{name}"),
            None => "root".to_string(),
        };
        if self.out.queue(&path).is_some() && path != "root" {
            return Err(error_at(element, format!("queue {path} is defined twice")));
        }
        let explicit_parent = element.attribute("type") == Some("parent");
        let mut q = QueueConfig::new(path.clone(), if explicit_parent { QueueType::Parent } else { QueueType::Leaf });
        q.line = self.lines.line(element);
        let index = if path == "root" {
            // Root is always present (first); a configured root replaces the placeholder.
            self.out.queues[0] = q;
            0
        } else {
            self.out.path_index.insert(path.clone(), self.out.queues.len());
            self.out.queues.push(q);
            self.out.queues.len() - 1
        };
        let mut has_children = false;
        let types = self.types;
        for field in xml::elements(element) {
            let tag = field.tag_name().name();
            let q = &mut self.out.queues[index];
            match tag {
                "minResources" => q.min_resources = Some(absolute(types, field, 0)?),
                "maxResources" => q.max_resources = Some(resource(types, field, UNBOUNDED)?),
                "maxChildResources" => q.max_child_resources = Some(resource(types, field, UNBOUNDED)?),
                "maxContainerAllocation" => q.max_container_allocation = Some(absolute(types, field, UNBOUNDED)?),
                "maxRunningApps" | "maxRunningJobs" => q.max_running_apps = Some(int(field)?),
                "maxAMShare" => q.max_am_share = Some(float(field)?.min(1.0)),
                "weight" => q.weight = Some(float(field)?),
                "minSharePreemptionTimeout" => q.min_share_preemption_timeout_ms = Some(seconds(field)?),
                "fairSharePreemptionTimeout" => q.fair_share_preemption_timeout_ms = Some(seconds(field)?),
                "fairSharePreemptionThreshold" => {
                    q.fair_share_preemption_threshold = Some(float(field)?.clamp(0.0, 1.0))
                }
                "schedulingPolicy" | "schedulingMode" => q.scheduling_policy = Some(policy(field)?),
                "aclSubmitApps" => q.acl_submit_apps = Some(Acl::parse(field.text().unwrap_or(""))),
                "aclAdministerApps" => q.acl_administer_apps = Some(Acl::parse(field.text().unwrap_or(""))),
                "aclAdministerReservations" => {
                    q.acl_administer_reservations = Some(Acl::parse(field.text().unwrap_or("")))
                }
                "aclListReservations" => q.acl_list_reservations = Some(Acl::parse(field.text().unwrap_or(""))),
                "aclSubmitReservations" => q.acl_submit_reservations = Some(Acl::parse(field.text().unwrap_or(""))),
                "reservation" => q.reservable = true,
                "allowPreemptionFrom" => q.allow_preemption_from = Some(java_bool(xml::text(field))),
                "queue" | "pool" => {
                    has_children = true;
                    self.load_queue(Some(&path), field)?;
                }
                other => return Err(error_at(field, format!("unknown element <{other}> in queue {path}"))),
            }
        }
        let q = &mut self.out.queues[index];
        if q.reservable && (has_children || explicit_parent) {
            return Err(error_at(
                element,
                format!(
                    "queue {path}: a queue with child queues or type='parent' cannot also have a <reservation> element"
                ),
            ));
        }
        if has_children || q.reservable {
            q.queue_type = QueueType::Parent;
        }
        if q.queue_type == QueueType::Parent && q.max_am_share.is_some() && path != "root" {
            return Err(error_at(element, format!("queue {path}: maxAMShare may only be set on a leaf queue")));
        }
        Ok(())
    }

    fn load_user(&mut self, element: Node<'_, '_>) -> Result<()> {
        let name = element.attribute("name").ok_or_else(|| error_at(element, "a user needs a name attribute"))?;
        for field in xml::elements(element) {
            match field.tag_name().name() {
                "maxRunningApps" | "maxRunningJobs" => {
                    self.out.user_max_apps.insert(name.to_string(), int(field)?);
                }
                other => return Err(error_at(field, format!("unknown element <{other}> in user {name}"))),
            }
        }
        Ok(())
    }
}

/// Read an allocation file. `types` are the cluster's resource types (for resource strings).
pub fn parse_allocation_file(text: &str, types: &ResourceTypes) -> Result<AllocationFile> {
    let doc = xml::parse(text)?;
    let root = doc.root_element();
    if root.tag_name().name() != "allocations" {
        return Err(error_at(root, "bad allocation file: the root element must be <allocations>"));
    }
    let mut loader = Loader { types, out: AllocationFile::default(), lines: xml::Lines::of(&doc) };
    let queue_elements: Vec<Node> =
        xml::elements(root).filter(|n| matches!(n.tag_name().name(), "queue" | "pool")).collect();
    let mut legacy_fair_timeout = None;
    // YARN's AllocationFileParser keeps one value per top-level element name, the last one
    // (and the last placement policy), and reads it only after the whole file: an earlier
    // occurrence, even a malformed one, counts for nothing. Queues, users and the default
    // scheduling policy are read at each occurrence, as there.
    let repeatable = |name: &str| {
        matches!(name, "queue" | "pool" | "user" | "defaultQueueSchedulingPolicy" | "defaultQueueSchedulingMode")
    };
    let elements: Vec<Node> = xml::elements(root).collect();
    let superseded = |i: usize| {
        let name = elements[i].tag_name().name();
        !repeatable(name) && elements[i + 1..].iter().any(|later| later.tag_name().name() == name)
    };
    for (i, &element) in elements.iter().enumerate() {
        if superseded(i) {
            continue;
        }
        let out = &mut loader.out;
        match element.tag_name().name() {
            "queue" | "pool" => {
                let is_root =
                    element.attribute("name").is_some_and(|n| trim_queue_name(n).eq_ignore_ascii_case("root"));
                if is_root && queue_elements.len() > 1 {
                    return Err(error_at(
                        element,
                        "if the root queue is configured, every other queue must be inside it",
                    ));
                }
                loader.load_queue(if is_root { None } else { Some("root") }, element)?;
            }
            "user" => loader.load_user(element)?,
            "userMaxAppsDefault" | "userMaxJobsDefault" => out.user_max_apps_default = int(element)?,
            "queueMaxAppsDefault" | "queueMaxJobsDefault" => out.queue_max_apps_default = int(element)?,
            "queueMaxResourcesDefault" => {
                let r = resource(types, element, UNBOUNDED)?;
                loader.out.queue_max_resources_default = Some(r);
            }
            "queueMaxAMShareDefault" => out.queue_max_am_share_default = float(element)?.min(1.0),
            "defaultFairSharePreemptionTimeout" => {
                out.default_fair_share_preemption_timeout_ms = Some(seconds(element)?)
            }
            "fairSharePreemptionTimeout" => legacy_fair_timeout = Some(seconds(element)?),
            "defaultMinSharePreemptionTimeout" => out.default_min_share_preemption_timeout_ms = Some(seconds(element)?),
            "defaultFairSharePreemptionThreshold" => {
                out.default_fair_share_preemption_threshold = Some(float(element)?.clamp(0.0, 1.0))
            }
            "defaultQueueSchedulingPolicy" | "defaultQueueSchedulingMode" => {
                let p = policy(element)?;
                if p == PolicyKind::Fifo {
                    return Err(error_at(
                        element,
                        "fifo cannot be the default scheduling policy: it also applies to root and parent queues, and fifo is for leaves only",
                    ));
                }
                out.default_scheduling_policy = p;
            }
            "queuePlacementPolicy" => {
                let (rules, warnings) = parse_placement_policy(element)?;
                out.warnings.extend(warnings);
                if rules.is_empty() {
                    out.warnings.push("queuePlacementPolicy has no rules: the generated policy is used".to_string());
                    out.placement_policy = None;
                } else {
                    out.placement_policy = Some(rules);
                }
            }
            "reservation-agent" => out.reservation_agent = Some(xml::text(element).to_string()),
            "reservation-policy" => out.reservation_policy = Some(xml::text(element).to_string()),
            "reservation-planner" => out.reservation_planner = Some(xml::text(element).to_string()),
            other => return Err(error_at(element, format!("unknown element <{other}> in <allocations>"))),
        }
    }
    if loader.out.default_fair_share_preemption_timeout_ms.is_none() {
        loader.out.default_fair_share_preemption_timeout_ms = legacy_fair_timeout;
    }
    Ok(loader.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<AllocationFile> {
        parse_allocation_file(text, &ResourceTypes::default())
    }

    #[test]
    fn queue_lookup_by_path_follows_the_queue_list() {
        let mut f =
            load(r#"<allocations><queue name="root"><queue name="a"><queue name="b"/></queue></queue></allocations>"#)
                .unwrap();
        assert_eq!(f.queue("root").map(|q| q.path.as_str()), Some("root"));
        assert_eq!(f.queue("root.a.b").map(|q| q.path.as_str()), Some("root.a.b"));
        assert!(f.queue("root.b").is_none());
        // Edited by hand: a stale index never returns the wrong queue, and reindex finds it.
        f.queues.swap(1, 2);
        assert!(f.queue("root.a").is_none_or(|q| q.path == "root.a"));
        f.reindex();
        assert_eq!(f.queue("root.a").map(|q| q.path.as_str()), Some("root.a"));
        assert_eq!(AllocationFile::default().queue("root").map(|q| q.path.as_str()), Some("root"));
    }

    #[test]
    fn queues_types_and_settings() {
        let f = load(
            r#"<allocations>
                 <queue name="a"><weight>2.5</weight><minResources>1024 mb, 1 vcores</minResources>
                   <queue name="b"><maxAMShare>1.5</maxAMShare><schedulingPolicy>fifo</schedulingPolicy></queue>
                 </queue>
                 <pool name=" c "><maxRunningJobs>3</maxRunningJobs><fairSharePreemptionTimeout>60</fairSharePreemptionTimeout></pool>
                 <queue name="d" type="parent"/>
                 <user name="bob"><maxRunningApps>2</maxRunningApps></user>
                 <queueMaxAMShareDefault>0.3</queueMaxAMShareDefault>
                 <fairSharePreemptionTimeout>7</fairSharePreemptionTimeout>
               </allocations>"#,
        )
        .unwrap();
        let paths: Vec<&str> = f.queues.iter().map(|q| q.path.as_str()).collect();
        assert_eq!(paths, ["root", "root.a", "root.a.b", "root.c", "root.d"]);
        let a = f.queue("root.a").unwrap();
        assert_eq!(a.queue_type, QueueType::Parent);
        assert_eq!(a.weight, Some(2.5));
        assert_eq!(a.line, 2);
        let b = f.queue("root.a.b").unwrap();
        assert_eq!(
            (b.queue_type, b.max_am_share, b.scheduling_policy),
            (QueueType::Leaf, Some(1.0), Some(PolicyKind::Fifo))
        );
        assert_eq!(f.queue("root.c").unwrap().fair_share_preemption_timeout_ms, Some(60_000));
        assert_eq!(f.queue("root.d").unwrap().queue_type, QueueType::Parent);
        assert_eq!(f.user_max_apps.get("bob"), Some(&2));
        assert_eq!(f.default_fair_share_preemption_timeout_ms, Some(7000));
    }

    #[test]
    fn errors_name_line_and_element() {
        let e = load("<allocations>\n<queue name=\"a\">\n<wieght>1</wieght></queue></allocations>").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert_eq!(e.element.as_deref(), Some("wieght"));
        assert!(load("<allocations><queue name=\"\"/></allocations>").is_err());
        assert!(load("<allocations><queue name=\"\u{a0}\"/></allocations>").is_err());
        assert!(load("<allocations><queue name=\"a.b\"/></allocations>").is_err());
        assert!(load("<allocation/>").is_err());
        assert!(load("<allocations><defaultQueueSchedulingPolicy>fifo</defaultQueueSchedulingPolicy></allocations>")
            .is_err());
        assert!(load("<allocations><queue name=\"p\" type=\"parent\"><reservation/></queue></allocations>").is_err());
        assert!(load("<allocations><queue name=\"root\"/><queue name=\"x\"/></allocations>").is_err());
        assert!(load("<allocations><queue name=\"a\"><weight>heavy</weight></queue></allocations>").is_err());
        assert!(load("<allocations><queue name=\"a\"><maxResources>lots</maxResources></queue></allocations>").is_err());
        assert!(load("<allocations><queue name=\"a\"><minResources>50%</minResources></queue></allocations>").is_err());
        assert!(load(
            "<allocations><queue name=\"a\"><maxAMShare>0.5</maxAMShare><queue name=\"b\"/></queue></allocations>"
        )
        .is_err());
        let e = load("<allocations><queue name=\"a\">").unwrap_err();
        assert!(e.message.contains("malformed XML"), "{e}");
    }

    #[test]
    fn reservable_queue_is_a_parent() {
        let f = load("<allocations><queue name=\"r\"><reservation></reservation></queue><reservation-agent>X</reservation-agent></allocations>").unwrap();
        let r = f.queue("root.r").unwrap();
        assert!(r.reservable);
        assert_eq!(r.queue_type, QueueType::Parent);
        assert_eq!(f.reservation_agent.as_deref(), Some("X"));
    }

    #[test]
    fn policy_names() {
        assert_eq!(PolicyKind::parse("DRF"), Ok(PolicyKind::Drf));
        assert_eq!(PolicyKind::parse(&format!("{POLICY_PACKAGE}FifoPolicy")), Ok(PolicyKind::Fifo));
        assert!(PolicyKind::parse("lottery").is_err());
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    const FILE: &str = "<?xml version=\"1.0\"?>\n<allocations>\n  <queue name=\"a\" type=\"parent\">\n    <weight>2.0</weight>\n    <minResources>1024 mb, 1 vcores</minResources>\n    <maxResources>memory-mb=40%, vcores=50%</maxResources>\n    <queue name=\"b\"><maxAMShare>0.3</maxAMShare><aclSubmitApps>u1,u2 g1</aclSubmitApps></queue>\n  </queue>\n  <user name=\"u\"><maxRunningApps>3</maxRunningApps></user>\n  <queuePlacementPolicy><rule name=\"specified\"/><rule name=\"nestedUserQueue\"><rule name=\"primaryGroup\" create=\"false\"/></rule><rule name=\"default\"/></queuePlacementPolicy>\n</allocations>\n";

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        /// Damaged allocation files give an error (with a line where one is known), never a panic.
        #[test]
        fn damaged_files_never_panic(cut in 0usize..FILE.len(), at in 0usize..FILE.len(), byte in 32u8..127) {
            let types = ResourceTypes::default();
            let _ = parse_allocation_file(&FILE[..cut], &types);
            let mut damaged = FILE.as_bytes().to_vec();
            damaged[at] = byte;
            if let Ok(text) = String::from_utf8(damaged) {
                if let Err(e) = parse_allocation_file(&text, &types) {
                    prop_assert!(!e.to_string().is_empty());
                }
            }
        }

        #[test]
        fn resource_strings_never_panic(s in "[0-9a-z%=,. -]{0,30}") {
            let _ = parse_resource(&s, &ResourceTypes::default(), UNBOUNDED);
        }
    }

    #[test]
    fn the_fuzzed_file_is_valid() {
        assert!(parse_allocation_file(FILE, &ResourceTypes::default()).is_ok());
    }

    #[test]
    fn the_last_top_level_value_wins_as_in_yarn() {
        let later_good = parse_allocation_file(
            "<allocations><queueMaxAMShareDefault>half</queueMaxAMShareDefault>\
             <queueMaxAMShareDefault>0.2</queueMaxAMShareDefault></allocations>",
            &ResourceTypes::default(),
        )
        .unwrap();
        assert!((later_good.queue_max_am_share_default - 0.2).abs() < 1e-6);
        let later_bad = parse_allocation_file(
            "<allocations><queueMaxAMShareDefault>0.2</queueMaxAMShareDefault>\
             <queueMaxAMShareDefault>half</queueMaxAMShareDefault></allocations>",
            &ResourceTypes::default(),
        );
        assert!(later_bad.is_err(), "the value read is the last one");
        let two_policies = parse_allocation_file(
            "<allocations><queuePlacementPolicy><rule name=\"nosuchrule\"/></queuePlacementPolicy>\
             <queuePlacementPolicy><rule name=\"default\"/></queuePlacementPolicy></allocations>",
            &ResourceTypes::default(),
        );
        assert!(two_policies.is_ok(), "only the last placement policy is read: {two_policies:?}");
    }
}
