//! Usage that survives a restart: an application's memory- and vcore-seconds are stored
//! with it, and a node is told a container's end is noted (and forgets it) only once the
//! usage that end added is stored. A restarted RM so counts every container once: the ends
//! it stored are not reported again, the others are, with their times.
//!
//! Ends are stored in batches (one write of the usage of every application they changed, at
//! most every [`FLUSH_MS`]), not one write per container. With a store that keeps nothing
//! (recovery off) there is nothing to wait for: ends are acknowledged at once.

use fairloom_model::{ApplicationId, ContainerId, Millis};
use fairloom_protocol::Res;

use super::Core;
use crate::core::recovery::usage_of;

/// The longest a node waits, after reporting an end, to be told it was noted.
pub const FLUSH_MS: Millis = 250;

/// What `resource` held from `from` to `to` counts, in MB-seconds and vcore-seconds, as YARN
/// counts it (resource × elapsed milliseconds / 1000, so a 1.9 s container counts 1.9 s).
pub(crate) fn resource_seconds(resource: Res, from: Millis, to: Millis) -> (i64, i64) {
    let ms = (to - from).max(0);
    (resource.memory.saturating_mul(ms) / 1000, resource.vcores.saturating_mul(ms) / 1000)
}

impl Core {
    /// Count `resource` held from `from` to `to` (ms) in `app`'s usage, as YARN's
    /// RMContainerImpl does (resource × milliseconds / 1000).
    pub(super) fn add_usage(&mut self, app: ApplicationId, resource: Res, from: Millis, to: Millis) {
        let Some(a) = self.apps.get_mut(&app) else { return };
        let (memory, vcores) = resource_seconds(resource, from, to);
        a.memory_seconds = a.memory_seconds.saturating_add(memory);
        a.vcore_seconds = a.vcore_seconds.saturating_add(vcores);
        if self.durable {
            self.usage_dirty.insert(app);
        }
    }

    /// `node` reported container `id` ended: it is acknowledged once its usage is stored; at
    /// once (true) when nothing is stored.
    pub(super) fn pending_ack(&mut self, node: &str, id: ContainerId) -> bool {
        if !self.durable {
            return true;
        }
        // The node's name is copied once per batch, not per end.
        match self.unflushed.get_mut(node) {
            Some(ids) => ids.push(id),
            None => {
                self.unflushed.insert(node.to_string(), vec![id]);
            }
        }
        self.awaiting_flush.insert(id);
        false
    }

    /// The RM ended container `id` itself (its node will report it): its end is not to be
    /// acknowledged before its usage is stored either.
    pub(super) fn ended_unstored(&mut self, id: ContainerId) {
        if self.durable {
            self.awaiting_flush.insert(id);
        }
    }

    /// Whether the end of container `id` (a reported id, parsed) is counted but not stored yet.
    pub(super) fn awaiting_flush(&self, id: &str) -> bool {
        !self.awaiting_flush.is_empty() && id.parse().is_ok_and(|c: ContainerId| self.awaiting_flush.contains(&c))
    }

    /// Store what changed when the batch is due.
    pub(super) fn maybe_flush(&mut self, now: Millis) {
        if now - self.last_flush >= FLUSH_MS {
            self.flush_usage(now);
        }
    }

    /// Store the usage of every application it changed for, in one write; then the ends it
    /// came from are acknowledged at their nodes' next heartbeats. A write that fails is
    /// tried again at the next batch, and nothing is acknowledged meanwhile.
    pub(super) fn flush_usage(&mut self, now: Millis) {
        self.last_flush = now;
        if self.usage_dirty.is_empty() && self.unflushed.is_empty() {
            return;
        }
        let rows: Vec<_> = self
            .usage_dirty
            .iter()
            .filter_map(|id| self.apps.get(id))
            .map(|a| (a.id.to_string(), usage_of(a)))
            .collect();
        if let Err(e) = self.store.put_usage(&rows) {
            tracing::error!("cannot store the usage of {} applications: {e}; trying again", rows.len());
            return;
        }
        self.usage_dirty.clear();
        self.awaiting_flush.clear();
        for (node, ids) in self.unflushed.drain() {
            if let Some(n) = self.nodes.get_mut(&node) {
                n.to_ack.extend(ids.iter().map(ContainerId::to_string));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_seconds_count_milliseconds_as_yarn_does() {
        // 1.9 s: YARN's resource × ms / 1000, not whole seconds.
        assert_eq!(resource_seconds(Res::new(1024, 2), 5_000, 6_900), (1945, 3));
        assert_eq!(
            resource_seconds(Res::new(1024, 2), 5_000, 4_000),
            (0, 0),
            "a clock behind the allocation counts nothing"
        );
    }
}
