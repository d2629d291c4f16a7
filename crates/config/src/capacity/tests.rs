use super::*;

fn load(pairs: &[(&str, &str)]) -> Result<CapacityConfig> {
    let props: Properties = pairs.iter().map(|(k, v)| (format!("{PREFIX}{k}"), v.to_string())).collect();
    parse_capacity_config(&props, &Properties::new(), None, &ResourceTypes::default())
}

#[test]
fn defaults_and_tree() {
    let c = load(&[("root.queues", "a,b"), ("root.a.capacity", "100")]).unwrap();
    assert_eq!(c.queues.len(), 3);
    assert_eq!(c.queues[0].children, vec![1, 2]);
    let b = c.queue("root.b").unwrap();
    assert_eq!(b.partitions[""].capacity, CapacityValue::Percent(0.0));
    assert_eq!(b.partitions[""].maximum, MaxCapacityValue::Percent(100.0));
    assert!((b.partitions[""].max_am_percent - 0.1).abs() < 1e-6);
    assert_eq!(b.user_limit_factor, 1.0);
    assert_eq!(b.min_user_limit_percent, 100.0);
    assert_eq!(b.state, QueueState::Running);
    assert_eq!(b.app_ordering, AppOrdering::Fifo);
    assert!(b.preemption_disabled, "the monitor is off");
    assert!(c.queues[0].acl_submit.all && !b.acl_submit.all);
    assert_eq!(c.calculator, ResourceCalculatorKind::Default);
    assert_eq!(c.node_locality_delay, 40);
}

#[test]
fn children_must_sum_to_100() {
    let e = load(&[("root.queues", "a,b"), ("root.a.capacity", "60"), ("root.b.capacity", "30")]).unwrap_err();
    assert!(e.message.contains("Illegal capacity of 90"), "{e}");
    assert!(load(&[("root.queues", "a,b"), ("root.a.capacity", "70.00001"), ("root.b.capacity", "30")]).is_ok());
}

#[test]
fn mixed_kinds_and_unknown_parents_fail() {
    let e = load(&[("root.queues", "a,b"), ("root.a.capacity", "[memory=10,vcores=1]"), ("root.b.capacity", "50")])
        .unwrap_err();
    assert!(e.message.contains("mixed capacity types"), "{e}");
    let e = load(&[("root.queues", "a"), ("root.a.capacity", "100"), ("root.x.queues", "y")]).unwrap_err();
    assert!(e.message.contains("root.x is not in the queue tree"), "{e}");
}

#[test]
fn inheritance_of_preemption_flags() {
    let props: Properties = [
        (MONITOR_ENABLE.to_string(), "true".to_string()),
        (format!("{PREFIX}root.queues"), "a,b".to_string()),
        (format!("{PREFIX}root.a.capacity"), "50".to_string()),
        (format!("{PREFIX}root.b.capacity"), "50".to_string()),
        (format!("{PREFIX}root.a.disable_preemption"), "true".to_string()),
        (format!("{PREFIX}root.a.queues"), "a1,a2".to_string()),
        (format!("{PREFIX}root.a.a1.capacity"), "50".to_string()),
        (format!("{PREFIX}root.a.a2.capacity"), "50".to_string()),
        (format!("{PREFIX}root.a.a2.disable_preemption"), "false".to_string()),
    ]
    .into_iter()
    .collect();
    let c = parse_capacity_config(&props, &Properties::new(), None, &ResourceTypes::default()).unwrap();
    let disabled = |p: &str| c.queue(p).unwrap().preemption_disabled;
    assert!(!disabled("root") && disabled("root.a") && disabled("root.a.a1") && !disabled("root.a.a2"));
    assert!(!disabled("root.b"));
}

#[test]
fn labels_and_absolute_values() {
    let c = load(&[
        ("root.queues", "a"),
        ("root.a.capacity", "100"),
        ("root.accessible-node-labels.x.capacity", "100"),
        ("root.a.accessible-node-labels", "x"),
        ("root.a.accessible-node-labels.x.capacity", "100"),
        ("root.a.accessible-node-labels.x.maximum-capacity", "[memory=20,vcores=2]"),
    ])
    .unwrap();
    let a = c.queue("root.a").unwrap();
    assert_eq!(a.partitions["x"].maximum, MaxCapacityValue::Absolute(Resource::new(20, 2)));
    assert!(a.accessible_labels.allows("x") && !a.accessible_labels.allows("y"));
    assert!(c.labels.contains("x"));
}

#[test]
fn file_errors_carry_lines() {
    let xml = "<configuration>\n<property><name>yarn.scheduler.capacity.root.queues</name><value>a</value></property>\n<property><name>yarn.scheduler.capacity.root.a.capacity</name><value>lots</value></property>\n</configuration>";
    let (props, lines) = parse_capacity_xml(xml).unwrap();
    let e = parse_capacity_config(&props, &Properties::new(), Some(&lines), &ResourceTypes::default()).unwrap_err();
    assert_eq!(e.line, Some(3));
    assert_eq!(e.element.as_deref(), Some("yarn.scheduler.capacity.root.a.capacity"));
}

#[test]
fn unsupported_settings_are_refused_by_name() {
    let base = [("root.queues", "a"), ("root.a.capacity", "100")];
    let refused = [
        ("queue-mappings", "u:alice:a", "queue placement"),
        ("mapping-rule-format", "json", "queue placement"),
        ("schedule-asynchronously.enable", "true", "asynchronous scheduling"),
        ("multi-node-placement-enabled", "true", "multi-node placement"),
        ("root.a.max-parallel-apps", "4", "max-parallel-apps"),
        ("user.max-parallel-apps", "4", "max-parallel-apps"),
        ("root.a.user-settings.alice.weight", "2", "user weights"),
        ("root.auto-queue-creation-v2.enabled", "true", "automatic queue creation"),
        ("root.a.auto-create-child-queue.enabled", "true", "automatic queue creation"),
    ];
    for (key, value, why) in refused {
        let mut pairs = base.to_vec();
        pairs.push((key, value));
        let e = load(&pairs).unwrap_err();
        assert!(e.message.contains(why) && e.to_string().contains(key), "{key}: {e}");
    }
    // Off, or empty as YARN's shipped file has them: accepted.
    let accepted = [
        ("queue-mappings", ""),
        ("schedule-asynchronously.enable", "false"),
        ("root.a.auto-create-child-queue.enabled", "false"),
        ("root.a.reservable", "true"),
    ];
    for (key, value) in accepted {
        let mut pairs = base.to_vec();
        pairs.push((key, value));
        assert!(load(&pairs).is_ok(), "{key}={value}");
    }
}
