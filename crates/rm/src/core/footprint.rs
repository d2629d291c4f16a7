//! How many entries each collection the RM keeps holds: what `/metrics` exposes as
//! `fairloom_rm_entries` and `bench rm --soak` watches for growth. Each is bounded, by
//! configuration or by live work; the bound is named here, next to the count.

use super::Core;

impl Core {
    /// (collection, entries), in a fixed order. O(applications): read at a publish.
    pub fn footprint(&self) -> Vec<(&'static str, usize)> {
        // One walk over the applications and one over the nodes: this runs at every publish.
        let (mut live, mut attempts, mut nm_tokens, mut pending) = (0, 0, 0, 0);
        for app in self.apps.values() {
            live += usize::from(!app.state.is_final());
            attempts += app.attempts.len();
            if let Some(a) = app.attempt() {
                nm_tokens += a.nm_tokens_sent.len();
                pending += a.new_allocated.len() + a.new_completed.len();
            }
        }
        let (containers, container_apps) = self.containers.counts();
        let (mut inactive, mut queued) = (0, 0);
        for n in self.nodes.values() {
            inactive += usize::from(n.state != super::NodeState::Running);
            queued += n.to_start.len() + n.to_kill.len() + n.to_ack.len();
        }
        vec![
            // Live work: applications not finished, and their live containers.
            ("apps_live", live),
            // Configuration: yarn.resourcemanager.max-completed-applications.
            ("apps_finished_kept", self.apps.len() - live),
            // At most yarn.resourcemanager.am.max-attempts per kept application.
            ("attempts", attempts),
            ("containers_live", containers),
            ("container_apps", container_apps),
            // Live applications: those with containers that ended in this RM's life.
            ("ended_containers", self.ended.values().map(|s| s.len()).sum()),
            ("scheduler_apps", self.by_sched.len()),
            // Retired between two updates, then forgotten by the scheduler.
            ("scheduler_apps_retired", self.retired.len()),
            // Registered nodes, plus fairloom.resourcemanager.max-inactive-nodes that left.
            ("nodes", self.nodes.count()),
            ("nodes_inactive", inactive),
            // One record per known node.
            ("node_changes", self.node_changes.records()),
            // Per live attempt, at most the nodes.
            ("nm_tokens_sent", nm_tokens),
            // Drained by each allocate and each heartbeat.
            ("am_pending_reports", pending),
            ("node_pending_actions", queued),
            // MAX_RESERVED_IDS.
            ("reserved_ids", self.reserved_ids.len()),
            // Emptied at each store flush.
            ("usage_dirty", self.usage_dirty.len()),
            ("unflushed_ends", self.awaiting_flush.len()),
            // Applications whose AM is exiting; nodes awaited after a restart.
            ("finishing_ams", self.finishing.len()),
            ("awaited_nodes", self.awaited.len()),
            // Leaf queues ever used (YARN's QueueMetrics keep them too).
            ("queue_counts", self.queue_counts.len()),
        ]
    }
}
