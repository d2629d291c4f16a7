//! Why an application waits. Reasons that concern one application are recorded on it; a
//! queue found at its limit is one note on the queue, not a write to each application under
//! it (the walk passes full queues often, and they may hold thousands of applications). A
//! sequence orders the two: an application's reason is the newest of its own and the notes
//! of its leaf and the leaf's ancestors.

use std::borrow::Cow;

use fairloom_model::Resource;

use super::CapacityScheduler;
use crate::ids::{AppId, PartitionId, QueueId};
use crate::reason::WaitReason;

impl CapacityScheduler {
    pub(crate) fn next_wait_seq(&mut self) -> u64 {
        self.wait_seq += 1;
        self.wait_seq
    }

    /// Record why `app` waits now (`None`: it does not, it was just served).
    pub(crate) fn set_wait(&mut self, app: AppId, reason: Option<WaitReason>) {
        let seq = self.next_wait_seq();
        let a = &mut self.apps[app];
        a.wait = reason;
        a.wait_seq = seq;
    }

    /// The walk found `q` at `limit` in partition `p` (the partition its applications ask
    /// in): its waiting applications wait for it.
    pub(crate) fn note_queue_limit(&mut self, q: QueueId, p: PartitionId, limit: Resource) {
        let seq = self.next_wait_seq();
        self.queues[q].parts[p.index()].limit_note = Some((seq, limit));
    }

    /// Why `app` waits: the newest of what it recorded and the limit notes on its queues in
    /// the partitions it asks in (those apply to activated applications only, the ones the
    /// walk offers nodes to).
    pub fn wait_reason(&self, app: AppId) -> Option<Cow<'_, WaitReason>> {
        let a = &self.apps[app];
        let own = a.wait.as_ref().map(Cow::Borrowed);
        let Some(leaf) = a.queue.filter(|_| a.activated) else { return own };
        let mut best: Option<(u64, QueueId, Resource)> = None;
        for q in self.path_to_root(leaf) {
            for (p, part) in self.queues[q].parts.iter().enumerate() {
                let Some((seq, limit)) = part.limit_note else { continue };
                let asks_here = a.pending.get(p).is_some_and(|r| r.any_positive());
                if asks_here && seq > a.wait_seq && best.is_none_or(|(s, _, _)| seq > s) {
                    best = Some((seq, q, limit));
                }
            }
        }
        match best {
            Some((_, q, limit)) => {
                Some(Cow::Owned(WaitReason::QueueMaxCapacity { queue: self.queues[q].name.clone(), limit }))
            }
            None => own,
        }
    }
}
