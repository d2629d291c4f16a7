//! Spark's dynamic allocation target: grows exponentially while tasks are backlogged, shrinks
//! to what the tasks need, and releases executors idle past a timeout.

use fairloom_model::Millis;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicAllocation {
    pub min_executors: u32,
    pub max_executors: u32,
    pub tasks_per_executor: u32,
    pub backlog_timeout_ms: Millis,
    pub sustained_backlog_timeout_ms: Millis,
    pub idle_timeout_ms: Millis,
    pub target: u32,
    to_add: u32,
    next_add_at: Option<Millis>,
}

impl DynamicAllocation {
    /// Spark's defaults: backlog 1 s, sustained backlog 1 s, idle 60 s.
    pub fn new(min_executors: u32, max_executors: u32, tasks_per_executor: u32) -> Self {
        Self {
            min_executors,
            max_executors,
            tasks_per_executor: tasks_per_executor.max(1),
            backlog_timeout_ms: 1_000,
            sustained_backlog_timeout_ms: 1_000,
            idle_timeout_ms: 60_000,
            target: min_executors,
            to_add: 1,
            next_add_at: None,
        }
    }

    /// Executors the tasks need: ceil((pending + running) / tasks per executor).
    pub fn needed(&self, pending_tasks: u32, running_tasks: u32) -> u32 {
        (pending_tasks + running_tasks).div_ceil(self.tasks_per_executor)
    }

    /// Re-evaluate the target at `now`.
    pub fn update(&mut self, pending_tasks: u32, running_tasks: u32, now: Millis) -> u32 {
        let cap = self.needed(pending_tasks, running_tasks).clamp(self.min_executors, self.max_executors);
        if self.target > cap {
            // Demand fell: come down at once, and start ramping from one again.
            self.target = cap;
            self.to_add = 1;
        }
        if pending_tasks == 0 {
            self.next_add_at = None;
            self.to_add = 1;
            return self.target;
        }
        let due = *self.next_add_at.get_or_insert(now + self.backlog_timeout_ms);
        if now >= due && self.target < cap {
            self.target = (self.target + self.to_add).min(cap);
            self.to_add *= 2;
            self.next_add_at = Some(now + self.sustained_backlog_timeout_ms);
        }
        self.target
    }

    /// An executor without tasks since `idle_since` should be released at `now`.
    pub fn should_release(&self, idle_since: Millis, now: Millis, executors: u32) -> bool {
        executors > self.min_executors && now - idle_since >= self.idle_timeout_ms
    }
}
