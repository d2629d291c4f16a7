//! maxRunningApps for queues and users, with YARN's release order (its MaxRunningAppsEnforcer).

use super::state::AppState;
use super::tree::ROOT;
use super::FairScheduler;
use crate::ids::{AppId, QueueId};
use crate::java_heap::JavaHeap;
use crate::reason::WaitReason;

/// Per-user runnable count and the user's waiting applications, in arrival order.
#[derive(Debug, Clone, Default)]
pub struct UserRunState {
    pub runnable: i32,
    pub waiting: Vec<AppId>,
}

impl FairScheduler {
    pub(crate) fn user_max_apps(&self, user: &str) -> i32 {
        self.alloc.user_max_apps.get(user).copied().unwrap_or(self.alloc.user_max_apps_default)
    }

    /// `None` when an app of `user` may run in `queue`; otherwise the limit in the way
    /// (the user's limit is checked first, then the leaf and its ancestors).
    pub(crate) fn runnable_block(&self, queue: QueueId, user: &str) -> Option<WaitReason> {
        let user_limit = self.user_max_apps(user);
        let user_running = self.users.get(user).map_or(0, |u| u.runnable);
        if user_running >= user_limit {
            return Some(WaitReason::UserMaxRunningApps { user: user.to_string(), limit: user_limit });
        }
        self.path_to_root(queue).find_map(|q| {
            let q = self.q(q);
            (q.runnable_count as i64 >= q.settings.max_running_apps as i64)
                .then(|| WaitReason::QueueMaxRunningApps { queue: q.name.clone(), limit: q.settings.max_running_apps })
        })
    }

    pub(crate) fn track_runnable(&mut self, app: AppId) {
        let (queue, user) = {
            let a = &self.apps[app];
            (a.queue.expect("a tracked app has a queue"), a.user.clone())
        };
        self.users.entry(user).or_default().runnable += 1;
        self.shares_stale = true;
        let path: Vec<QueueId> = self.path_to_root(queue).collect();
        for q in path {
            self.q_mut(q).runnable_count += 1;
        }
    }

    pub(crate) fn untrack_runnable(&mut self, app: AppId) {
        let (queue, user) = {
            let a = &self.apps[app];
            (a.queue.expect("a tracked app has a queue"), a.user.clone())
        };
        if let Some(u) = self.users.get_mut(&user) {
            u.runnable -= 1;
        }
        self.drop_idle_user(&user);
        self.shares_stale = true;
        let path: Vec<QueueId> = self.path_to_root(queue).collect();
        for q in path {
            self.q_mut(q).runnable_count -= 1;
        }
    }

    pub(crate) fn track_non_runnable(&mut self, app: AppId) {
        let user = self.apps[app].user.clone();
        self.users.entry(user).or_default().waiting.push(app);
    }

    pub(crate) fn untrack_non_runnable(&mut self, app: AppId) {
        let user = self.apps[app].user.clone();
        if let Some(u) = self.users.get_mut(&user) {
            u.waiting.retain(|&a| a != app);
        }
        self.drop_idle_user(&user);
    }

    /// A user with nothing running or waiting is not kept (every user who ever submitted
    /// would be, for the RM's life); absent reads as idle.
    fn drop_idle_user(&mut self, user: &str) {
        if self.users.get(user).is_some_and(|u| u.runnable == 0 && u.waiting.is_empty()) {
            self.users.remove(user);
        }
    }

    /// After a runnable app of `queue` and its user went away: release waiting apps that
    /// the freed slot allows, in global start-time order.
    pub(crate) fn update_runnability_on_app_removal(&mut self, user: &str, queue: QueueId) {
        // Only a queue that was at its limit before the removal can release anything; the
        // highest such ancestor bounds the search.
        let highest = self
            .path_to_root(queue)
            .filter(|&q| {
                let q = self.q(q);
                q.runnable_count as i64 == q.settings.max_running_apps as i64 - 1
            })
            .last();
        let mut lists: Vec<Vec<AppId>> = Vec::new();
        if let Some(h) = highest {
            self.gather_possibly_runnable(h, &mut lists);
        }
        let user_running = self.users.get(user).map_or(0, |u| u.runnable);
        if user_running == self.user_max_apps(user) - 1 {
            if let Some(u) = self.users.get(user) {
                lists.push(u.waiting.clone());
            }
        }
        let max = lists.len();
        self.update_apps_runnability(lists, max);
    }

    /// After a reload: any queue below its (perhaps raised) limit releases waiting apps.
    pub(crate) fn update_runnability_on_reload(&mut self) {
        let mut lists = Vec::new();
        self.gather_possibly_runnable(ROOT, &mut lists);
        self.update_apps_runnability(lists, usize::MAX);
    }

    /// YARN's `gatherPossiblyRunnableAppLists`: the waiting lists of the leaves under
    /// `queue` that are below their limits, children in YARN's order.
    fn gather_possibly_runnable(&self, queue: QueueId, lists: &mut Vec<Vec<AppId>>) {
        let q = self.q(queue);
        if (q.runnable_count as i64) < q.settings.max_running_apps as i64 {
            if q.leaf {
                lists.push(q.non_runnable_apps.clone());
            } else {
                for c in self.children_in_yarn_order(queue) {
                    self.gather_possibly_runnable(*c, lists);
                }
            }
        }
    }

    /// YARN's `updateAppsRunnability`: the lists merged by start time as its
    /// `MultiListStartTimeIterator` merges them (a `PriorityQueue` of the lists keyed by
    /// their next app's start time alone, so apps started in the same millisecond come in
    /// the order Java's heap gives), each app made runnable if it can be, up to `max`.
    fn update_apps_runnability(&mut self, lists: Vec<Vec<AppId>>, max: usize) {
        if max == 0 {
            return;
        }
        let next_time = |list: &[AppId], pos: usize| list.get(pos).map_or(i64::MAX, |&a| self.apps[a].start_time);
        let by_time = |a: &(usize, i64), b: &(usize, i64)| a.1.cmp(&b.1);
        let mut heap = JavaHeap::default();
        for (i, list) in lists.iter().enumerate() {
            heap.offer((i, next_time(list, 0)), by_time);
        }
        let mut merged = Vec::new();
        let mut positions = vec![0; lists.len()];
        while heap.peek().is_some_and(|(_, time)| time != i64::MAX) {
            let (i, _) = heap.poll(by_time).expect("peeked");
            merged.push(lists[i][positions[i]]);
            positions[i] += 1;
            heap.offer((i, next_time(&lists[i], positions[i])), by_time);
        }
        let mut released = 0;
        let mut prev = None;
        for app in merged {
            // YARN skips an app only when it comes twice in a row (its queue's list and its
            // user's); one already made runnable is skipped here in any case.
            if prev == Some(app) {
                continue;
            }
            prev = Some(app);
            let (queue, user) = {
                let a = &self.apps[app];
                (a.queue.expect("a waiting app has a queue"), a.user.clone())
            };
            if self.apps[app].runnable || self.runnable_block(queue, &user).is_some() {
                continue;
            }
            self.make_runnable(app);
            released += 1;
            if released >= max {
                break;
            }
        }
    }

    fn make_runnable(&mut self, app: AppId) {
        let queue = self.apps[app].queue.expect("a waiting app has a queue");
        self.q_mut(queue).non_runnable_apps.retain(|&a| a != app);
        self.q_mut(queue).runnable_apps.push(app);
        self.untrack_non_runnable(app);
        let a = &mut self.apps[app];
        a.runnable = true;
        a.wait = None;
        if a.unmanaged_am || a.am_running {
            a.state = AppState::Running;
        }
        if a.am_running {
            let am = a.am_resource;
            self.q_mut(queue).am_usage.add_assign(am);
        }
        self.track_runnable(app);
        self.refresh_app(app);
    }
}
