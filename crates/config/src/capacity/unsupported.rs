//! capacity-scheduler.xml settings fairloom refuses, with the reason.

use super::{Reader, PREFIX};
use crate::error::Result;

/// Settings whose behaviour fairloom does not have yet: a configuration that turns one on is
/// refused, naming the key, rather than run as if it were off. (`reservable` is accepted: with
/// no reservation ever made, as without YARN's ReservationSystem API, a plan queue's
/// applications all run in its default reservation queue, which holds the plan's whole
/// capacity and settings: the queue behaves as the leaf fairloom makes it.)
pub(super) fn check(r: &Reader<'_>) -> Result<()> {
    const PLACEMENT: &str = "queue placement (mappings of users and groups to queues) is not supported: applications are submitted to a leaf queue by name or path";
    for (key, value) in r.props {
        let Some(rest) = key.strip_prefix(PREFIX) else { continue };
        let value = value.trim();
        let on = value.eq_ignore_ascii_case("true");
        let why = match rest {
            "queue-mappings" | "mapping-rule-json" | "mapping-rule-json-file" if !value.is_empty() => Some(PLACEMENT),
            "mapping-rule-format" if value.eq_ignore_ascii_case("json") => Some(PLACEMENT),
            "schedule-asynchronously.enable" if on => Some(
                "asynchronous scheduling is not supported: fairloom allocates on node heartbeats (set it to false)",
            ),
            "multi-node-placement-enabled" if on => {
                Some("multi-node placement is not supported: fairloom offers one node per heartbeat (set it to false)")
            }
            _ if rest == "max-parallel-apps" || rest.ends_with(".max-parallel-apps") => {
                Some("max-parallel-apps is not supported yet (maximum-applications and the AM limits are)")
            }
            _ if rest.contains(".user-settings.") && rest.ends_with(".weight") => {
                Some("user weights are not supported: every user counts once in the user limit")
            }
            _ if (rest.ends_with(".auto-create-child-queue.enabled")
                || rest.ends_with(".auto-queue-creation-v2.enabled"))
                && on =>
            {
                Some("automatic queue creation is not supported: every queue must be listed in its parent's queues")
            }
            _ => None,
        };
        if let Some(why) = why {
            return Err(r.error(key, why));
        }
    }
    Ok(())
}
