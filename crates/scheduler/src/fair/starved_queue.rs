//! The order in which YARN's Fair Scheduler serves starved applications: its `FSStarvedApps`
//! queue, a `java.util.concurrent.PriorityBlockingQueue` ordered by a comparator that puts
//! `a` before `b` when `a`'s starvation fits in `b`'s, and after it otherwise.
//!
//! That comparator is not an order (two apps whose starvations do not fit either way each
//! come "after" the other), so which app is served first depends on how the binary heap
//! happened to sift them: insertion order, and the starvation values at the moment of each
//! comparison. Sorting cannot reproduce it; the heap is kept as Java keeps it
//! (`java_heap`).

use std::cmp::Ordering;

use fairloom_model::Resource;

use crate::ids::AppId;
use crate::java_heap::JavaHeap;

/// YARN's `StarvationComparator`: `a` before `b` when `a`'s starvation fits in `b`'s, after
/// it otherwise (never equal).
fn compare(a: &Resource, b: &Resource) -> Ordering {
    if a.fits_in(b) {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

/// The starved applications of one preemption pass, in Java's heap layout.
#[derive(Debug, Default)]
pub(crate) struct StarvedQueue {
    heap: JavaHeap<AppId>,
}

impl StarvedQueue {
    /// `FSStarvedApps.addStarvedApp`: an app already queued is not added again.
    /// `starvation` reads each app's starvation as it is now.
    pub(crate) fn offer(&mut self, app: AppId, starvation: impl Fn(AppId) -> Resource) {
        if !self.heap.contains(&app) {
            self.heap.offer(app, |a, b| compare(&starvation(*a), &starvation(*b)));
        }
    }

    /// `take`, until the queue is empty: the order the apps are served in.
    pub(crate) fn drain(mut self, starvation: impl Fn(AppId) -> Resource) -> Vec<AppId> {
        let mut order = Vec::new();
        while let Some(app) = self.heap.poll(|a, b| compare(&starvation(*a), &starvation(*b))) {
            order.push(app);
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(seq: u32) -> AppId {
        AppId { seq, slot: seq }
    }

    /// Two starvations neither of which fits in the other: the first offered is served
    /// first, whichever is larger by memory (a sort would put the smaller first).
    #[test]
    fn incomparable_starvations_keep_the_heap_order() {
        let values = [Resource::new(18432, 6), Resource::new(12288, 10)];
        let starvation = |a: AppId| values[a.seq as usize];
        let mut queue = StarvedQueue::default();
        queue.offer(app(0), starvation);
        queue.offer(app(1), starvation);
        assert_eq!(queue.drain(starvation), vec![app(0), app(1)]);
        let mut queue = StarvedQueue::default();
        queue.offer(app(1), starvation);
        queue.offer(app(0), starvation);
        assert_eq!(queue.drain(starvation), vec![app(1), app(0)]);
    }

    /// A starvation that fits in the others' goes first; an app offered twice is queued once.
    #[test]
    fn a_fitting_starvation_goes_first_and_duplicates_are_dropped() {
        let values = [Resource::new(4096, 4), Resource::new(2048, 2), Resource::new(1024, 1)];
        let starvation = |a: AppId| values[a.seq as usize];
        let mut queue = StarvedQueue::default();
        for a in [0, 1, 0, 2, 1] {
            queue.offer(app(a), starvation);
        }
        assert_eq!(queue.drain(starvation), vec![app(2), app(1), app(0)]);
    }
}
