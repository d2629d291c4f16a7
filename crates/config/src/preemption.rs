//! The Capacity Scheduler's preemption monitor (`ProportionalCapacityPreemptionPolicy`):
//! every `yarn.resourcemanager.monitor.capacity.preemption.*` key with YARN's default.

use crate::error::{ConfigError, Result};
use crate::properties::Properties;

pub const PREFIX: &str = "yarn.resourcemanager.monitor.capacity.preemption.";
pub const MONITOR_POLICIES: &str = "yarn.resourcemanager.scheduler.monitor.policies";
pub const POLICY_CLASS: &str =
    "org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity.ProportionalCapacityPreemptionPolicy";

/// How the intra-queue selector weighs user limits against application priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntraQueueOrder {
    UserLimitFirst,
    PriorityFirst,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PreemptionConfig {
    /// `yarn.resourcemanager.scheduler.monitor.enable` and the policy among the monitors.
    pub enabled: bool,
    pub observe_only: bool,
    pub monitoring_interval_ms: i64,
    pub max_wait_before_kill_ms: i64,
    pub total_preemption_per_round: f32,
    /// Read as a double, as YARN's policy reads it.
    pub max_ignored_over_capacity: f64,
    pub natural_termination_factor: f64,
    pub select_based_on_reserved_containers: bool,
    pub additional_res_balance_based_on_reserved_containers: bool,
    pub balance_enabled: bool,
    pub balance_max_wait_before_kill_ms: i64,
    pub conservative_drf: bool,
    pub intra_queue_enabled: bool,
    pub intra_queue_minimum_threshold: f32,
    pub intra_queue_max_allowable_limit: f32,
    pub intra_queue_order: IntraQueueOrder,
    pub intra_queue_conservative_drf: bool,
    /// The queue-priority selector (`yarn.scheduler.capacity.ordering-policy.
    /// priority-utilization.underutilized-preemption.*`, read from capacity-scheduler.xml or
    /// yarn-site as YARN's scheduler configuration reads it).
    pub underutilized_preemption_enabled: bool,
    pub underutilized_reserved_container_delay_ms: i64,
    /// `yarn.scheduler.capacity.lazy-preemption-enabled`.
    pub lazy_preemption: bool,
}

impl Default for PreemptionConfig {
    fn default() -> Self {
        Self::from_properties(&Properties::new()).expect("YARN's defaults are valid")
    }
}

struct Reader<'a>(&'a Properties);

impl Reader<'_> {
    fn raw(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(|v| v.trim()).filter(|v| !v.is_empty())
    }

    fn bool(&self, key: &str, default: bool) -> Result<bool> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(ConfigError::new(format!("'{v}' is not a boolean (true or false)")).element(key)),
        }
    }

    fn long(&self, key: &str, default: i64) -> Result<i64> {
        self.raw(key).map_or(Ok(default), |v| {
            v.parse().map_err(|_| ConfigError::new(format!("'{v}' is not an integer")).element(key))
        })
    }

    fn double(&self, key: &str, default: f64) -> Result<f64> {
        self.raw(key).map_or(Ok(default), |v| {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| ConfigError::new(format!("'{v}' is not a number")).element(key))
        })
    }

    fn float(&self, key: &str, default: f32) -> Result<f32> {
        self.raw(key).map_or(Ok(default), |v| {
            v.parse::<f32>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| ConfigError::new(format!("'{v}' is not a number")).element(key))
        })
    }
}

impl PreemptionConfig {
    /// From the scheduler's configuration: yarn-site overlaid by capacity-scheduler.xml.
    pub fn from_properties(props: &Properties) -> Result<Self> {
        let r = Reader(props);
        let k = |s: &str| format!("{PREFIX}{s}");
        let underutilized = |s: &str| {
            format!("yarn.scheduler.capacity.ordering-policy.priority-utilization.underutilized-preemption.{s}")
        };
        let monitor = r.bool(crate::capacity::MONITOR_ENABLE, false)?;
        let listed = r.raw(MONITOR_POLICIES).is_none_or(|v| v.split(',').any(|c| c.trim() == POLICY_CLASS));
        let order_key = k("intra-queue-preemption.preemption-order-policy");
        let intra_queue_order = match r.raw(&order_key) {
            None => IntraQueueOrder::UserLimitFirst,
            Some(v) if v.eq_ignore_ascii_case("userlimit_first") => IntraQueueOrder::UserLimitFirst,
            Some(v) if v.eq_ignore_ascii_case("priority_first") => IntraQueueOrder::PriorityFirst,
            Some(v) => {
                return Err(
                    ConfigError::new(format!("'{v}' is not userlimit_first or priority_first")).element(order_key)
                )
            }
        };
        let c = Self {
            enabled: monitor && listed,
            observe_only: r.bool(&k("observe_only"), false)?,
            monitoring_interval_ms: r.long(&k("monitoring_interval"), 3000)?,
            max_wait_before_kill_ms: r.long(&k("max_wait_before_kill"), 15_000)?,
            total_preemption_per_round: r.float(&k("total_preemption_per_round"), 0.1)?,
            max_ignored_over_capacity: r.double(&k("max_ignored_over_capacity"), 0.1)?,
            natural_termination_factor: r.double(&k("natural_termination_factor"), 0.2)?,
            select_based_on_reserved_containers: r.bool(&k("select_based_on_reserved_containers"), false)?,
            additional_res_balance_based_on_reserved_containers: r
                .bool(&k("additional_res_balance_based_on_reserved_containers"), false)?,
            balance_enabled: r.bool(&k("preemption-to-balance-queue-after-satisfied.enabled"), false)?,
            balance_max_wait_before_kill_ms: r
                .long(&k("preemption-to-balance-queue-after-satisfied.max-wait-before-kill"), 300_000)?,
            conservative_drf: r.bool(&k("conservative-drf"), false)?,
            intra_queue_enabled: r.bool(&k("intra-queue-preemption.enabled"), false)?,
            intra_queue_minimum_threshold: r.float(&k("intra-queue-preemption.minimum-threshold"), 0.5)?,
            intra_queue_max_allowable_limit: r.float(&k("intra-queue-preemption.max-allowable-limit"), 0.2)?,
            intra_queue_order,
            intra_queue_conservative_drf: r.bool(&k("intra-queue-preemption.conservative-drf"), true)?,
            underutilized_preemption_enabled: r.bool(&underutilized("enabled"), false)?,
            underutilized_reserved_container_delay_ms: r.long(&underutilized("reserved-container-delay-ms"), 60_000)?,
            lazy_preemption: r.bool("yarn.scheduler.capacity.lazy-preemption-enabled", false)?,
        };
        for (name, v) in [
            ("total_preemption_per_round", c.total_preemption_per_round as f64),
            ("natural_termination_factor", c.natural_termination_factor),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(ConfigError::new(format!("{v} is not between 0 and 1")).element(k(name)));
            }
        }
        if c.max_ignored_over_capacity < 0.0 {
            return Err(ConfigError::new("must not be negative").element(k("max_ignored_over_capacity")));
        }
        if r.bool(&underutilized("allow-move-reservation"), false)? {
            return Err(ConfigError::new(
                "moving reservations to better nodes is not supported (YARN ships it as untested)",
            )
            .element(underutilized("allow-move-reservation")));
        }
        if c.lazy_preemption {
            return Err(ConfigError::new(
                "lazy preemption is not supported: fairloom kills selected containers after the wait, as YARN does with lazy preemption off",
            )
            .element("yarn.scheduler.capacity.lazy-preemption-enabled"));
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_yarns() {
        let c = PreemptionConfig::default();
        assert!(!c.enabled && !c.observe_only);
        assert_eq!(c.max_wait_before_kill_ms, 15_000);
        assert!((c.total_preemption_per_round - 0.1).abs() < 1e-7);
        assert!((c.natural_termination_factor - 0.2).abs() < 1e-12);
        assert_eq!(c.intra_queue_order, IntraQueueOrder::UserLimitFirst);
        assert!(c.intra_queue_conservative_drf && !c.conservative_drf);
        assert_eq!(c.balance_max_wait_before_kill_ms, 300_000);
    }

    #[test]
    fn the_monitor_needs_the_policy_listed() {
        let mut p = Properties::new();
        p.insert(crate::capacity::MONITOR_ENABLE.into(), "true".into());
        assert!(PreemptionConfig::from_properties(&p).unwrap().enabled);
        p.insert(MONITOR_POLICIES.into(), "org.example.Other".into());
        assert!(!PreemptionConfig::from_properties(&p).unwrap().enabled);
        p.insert(format!("{PREFIX}natural_termination_factor"), "2".into());
        assert!(PreemptionConfig::from_properties(&p).is_err());
    }

    #[test]
    fn the_queue_priority_selector_is_read_under_the_scheduler_prefix() {
        let key = |s: &str| {
            format!("yarn.scheduler.capacity.ordering-policy.priority-utilization.underutilized-preemption.{s}")
        };
        let mut p = Properties::new();
        p.insert(key("enabled"), "true".into());
        p.insert(key("reserved-container-delay-ms"), "0".into());
        let c = PreemptionConfig::from_properties(&p).unwrap();
        assert!(c.underutilized_preemption_enabled);
        assert_eq!(c.underutilized_reserved_container_delay_ms, 0);
        assert_eq!(PreemptionConfig::default().underutilized_reserved_container_delay_ms, 60_000);
        p.insert(key("allow-move-reservation"), "true".into());
        let e = PreemptionConfig::from_properties(&p).unwrap_err();
        assert!(e.to_string().contains("allow-move-reservation") && e.message.contains("not supported"), "{e}");
        p.insert(crate::capacity::PREFIX.to_string() + "lazy-preemption-enabled", "true".into());
        p.remove(&key("allow-move-reservation"));
        assert!(PreemptionConfig::from_properties(&p).unwrap_err().message.contains("lazy preemption"));
    }
}
