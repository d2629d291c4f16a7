//! Tasks on executors by locality level, with delay scheduling (Spark's TaskSetManager):
//! the allowed level relaxes to the next one after the locality wait passes without a launch
//! at the current level; a launch at a level brings the allowed level back to it.

use fairloom_model::Millis;

/// Locality levels, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    ProcessLocal,
    NodeLocal,
    NoPref,
    RackLocal,
    Any,
}

pub const LEVELS: [Level; 5] = [Level::ProcessLocal, Level::NodeLocal, Level::NoPref, Level::RackLocal, Level::Any];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub id: u64,
    pub executors: Vec<String>,
    pub hosts: Vec<String>,
    pub racks: Vec<String>,
}

impl Task {
    fn has_preference(&self) -> bool {
        !(self.executors.is_empty() && self.hosts.is_empty() && self.racks.is_empty())
    }

    /// The task's level on an executor.
    pub fn level_on(&self, executor: &Executor) -> Level {
        if self.executors.contains(&executor.id) {
            Level::ProcessLocal
        } else if self.hosts.contains(&executor.host) {
            Level::NodeLocal
        } else if !self.has_preference() {
            Level::NoPref
        } else if self.racks.contains(&executor.rack) {
            Level::RackLocal
        } else {
            Level::Any
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executor {
    pub id: String,
    pub host: String,
    pub rack: String,
}

/// The pending tasks of one stage, with delay scheduling.
#[derive(Debug, Clone)]
pub struct TaskSet {
    pending: Vec<Task>,
    /// Index into LEVELS of the most relaxed level allowed now.
    current: usize,
    last_launch: Millis,
    wait_ms: Millis,
}

impl TaskSet {
    /// `wait_ms`: Spark's `spark.locality.wait` (3 s by default), the same for every level.
    pub fn new(tasks: Vec<Task>, now: Millis, wait_ms: Millis) -> Self {
        Self { pending: tasks, current: 0, last_launch: now, wait_ms }
    }

    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    pub fn pending_tasks(&self) -> &[Task] {
        &self.pending
    }

    /// Levels at which some pending task could run at all.
    fn valid(&self, level: Level) -> bool {
        self.pending.iter().any(|t| match level {
            Level::ProcessLocal => !t.executors.is_empty(),
            Level::NodeLocal => !t.hosts.is_empty(),
            Level::NoPref => !t.has_preference(),
            Level::RackLocal => !t.racks.is_empty(),
            Level::Any => true,
        })
    }

    /// The allowed level at `now`: skip levels with no task; relax after the wait.
    pub fn allowed_level(&mut self, now: Millis) -> Level {
        while self.current < LEVELS.len() - 1 {
            let level = LEVELS[self.current];
            if !self.valid(level) {
                self.current += 1;
            } else if now - self.last_launch >= self.wait_ms {
                self.last_launch += self.wait_ms;
                self.current += 1;
            } else {
                break;
            }
        }
        LEVELS[self.current]
    }

    /// An executor offers a slot: the best-placed task allowed now, if any.
    pub fn offer(&mut self, executor: &Executor, now: Millis) -> Option<(Task, Level)> {
        let allowed = self.allowed_level(now);
        let (i, level) = self
            .pending
            .iter()
            .enumerate()
            .map(|(i, t)| (i, t.level_on(executor)))
            .filter(|(_, l)| *l <= allowed)
            .min_by_key(|(i, l)| (*l, *i))?;
        let task = self.pending.remove(i);
        if level != Level::NoPref {
            self.current = LEVELS.iter().position(|l| *l == level).expect("listed");
            self.last_launch = now;
        }
        Some((task, level))
    }
}
