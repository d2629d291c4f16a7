//! Spark's container requests on YARN: YarnAllocator's update of pending requests with
//! LocalityPreferredContainerPlacementStrategy. The driver sends a target number of
//! executors and where its pending tasks would like to run; this turns that into requests to
//! add and pending requests to cancel.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The rack of a host that `host_to_rack` does not name.
pub const DEFAULT_RACK: &str = "/default-rack";

/// A container request: the hosts it prefers, or any host (`None`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingRequest {
    pub hosts: Option<Vec<String>>,
}

/// The AM's state, as `fairloom am plan --input` reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AmState {
    pub target_executors: u32,
    pub running: u32,
    #[serde(default)]
    pub starting: u32,
    pub cores_per_executor: u32,
    #[serde(default = "one")]
    pub cores_per_task: u32,
    #[serde(default)]
    pub locality_aware_tasks: u32,
    #[serde(default)]
    pub host_to_local_task_count: BTreeMap<String, u32>,
    /// Containers running per host.
    #[serde(default)]
    pub allocated: BTreeMap<String, u32>,
    /// Requests already sent and not yet allocated.
    #[serde(default)]
    pub pending: Vec<PendingRequest>,
    #[serde(default)]
    pub host_to_rack: BTreeMap<String, String>,
}

fn one() -> u32 {
    1
}

/// A request to add: hosts and their racks, or any host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewRequest {
    pub hosts: Option<Vec<String>>,
    pub racks: Option<Vec<String>>,
}

/// What to do: indexes into `pending` to cancel, and requests to add.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Plan {
    pub cancel: Vec<usize>,
    pub add: Vec<NewRequest>,
}

/// The plan with the reasoning behind it, for people.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Explained {
    pub plan: Plan,
    pub missing: i64,
    pub stale: Vec<usize>,
    pub locality_free: Vec<usize>,
    pub locality_matched: Vec<usize>,
    pub executors_for_local_tasks: u32,
    /// Per preferred host: containers still wanted there.
    pub expected: BTreeMap<String, u32>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("cores_per_executor must be at least 1")]
    NoCores,
    #[error("cores_per_task ({task}) must be between 1 and cores_per_executor ({executor})")]
    TaskCores { task: u32, executor: u32 },
}

impl AmState {
    fn rack(&self, host: &str) -> String {
        self.host_to_rack.get(host).cloned().unwrap_or_else(|| DEFAULT_RACK.to_string())
    }

    /// Executors needed for the locality-aware tasks: ceil(tasks × cpus per task / cores).
    pub fn executors_for_local_tasks(&self) -> u32 {
        let cores = self.cores_per_executor.max(1) as u64;
        ((self.locality_aware_tasks as u64 * self.cores_per_task as u64).div_ceil(cores)) as u32
    }
}

/// Pending requests by locality: matched (hosts intersect the preferred hosts), stale
/// (hosts disjoint from them), free (any host). Indexes into `pending`.
fn split(state: &AmState) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let (mut matched, mut stale, mut free) = (Vec::new(), Vec::new(), Vec::new());
    for (i, p) in state.pending.iter().enumerate() {
        match &p.hosts {
            None => free.push(i),
            Some(hosts) if hosts.iter().any(|h| state.host_to_local_task_count.contains_key(h)) => matched.push(i),
            Some(_) => stale.push(i),
        }
    }
    (matched, stale, free)
}

/// Containers still wanted per preferred host: the host's part of the executors the
/// locality-aware tasks need, less what runs there and what matched pending requests put
/// there (each such request counts once per host it lists, scaled so all of them add up to
/// the number of matched requests).
fn expected_per_host(state: &AmState, matched: &[usize]) -> BTreeMap<String, u32> {
    let total: u64 = state.host_to_local_task_count.values().map(|&c| c as u64).sum();
    let needed = state.executors_for_local_tasks() as f64;
    let mut pending_hosts: BTreeMap<&str, u32> = BTreeMap::new();
    for &i in matched {
        for h in state.pending[i].hosts.iter().flatten() {
            *pending_hosts.entry(h.as_str()).or_default() += 1;
        }
    }
    let entries: f64 = pending_hosts.values().map(|&c| c as f64).sum();
    let scale = if entries > 0.0 { matched.len() as f64 / entries } else { 0.0 };
    state
        .host_to_local_task_count
        .iter()
        .map(|(host, &count)| {
            let expected = if total > 0 { count as f64 * needed / total as f64 } else { 0.0 };
            let existing = state.allocated.get(host).copied().unwrap_or(0) as f64
                + pending_hosts.get(host.as_str()).copied().unwrap_or(0) as f64 * scale;
            (host.clone(), (expected - existing).ceil().max(0.0) as u32)
        })
        .collect()
}

/// LocalityPreferredContainerPlacementStrategy: up to `containers` requests, the
/// locality-aware ones first listing every host whose scaled count is still positive.
fn locality_of_requested_containers(
    state: &AmState,
    containers: u32,
    expected: &BTreeMap<String, u32>,
) -> Vec<NewRequest> {
    let aware_total: u32 = expected.values().sum();
    let free = containers.saturating_sub(aware_total);
    let aware = containers - free;
    let mut out: Vec<NewRequest> = (0..free).map(|_| NewRequest { hosts: None, racks: None }).collect();
    if aware > 0 {
        let largest = expected.values().copied().max().unwrap_or(0).max(1) as f64;
        let mut ratio: Vec<(String, i64)> =
            expected.iter().map(|(h, &c)| (h.clone(), (c as f64 * aware as f64 / largest).ceil() as i64)).collect();
        for _ in 0..aware {
            let hosts: Vec<String> = ratio.iter().filter(|(_, r)| *r > 0).map(|(h, _)| h.clone()).collect();
            let racks: BTreeSet<String> = hosts.iter().map(|h| state.rack(h)).collect();
            out.push(NewRequest { hosts: Some(hosts), racks: Some(racks.into_iter().collect()) });
            for (_, r) in ratio.iter_mut() {
                *r -= 1;
            }
        }
    }
    out
}

/// YarnAllocator's `updateResourceRequests`, explained.
pub fn explain(state: &AmState) -> Result<Explained, PlanError> {
    if state.cores_per_executor == 0 {
        return Err(PlanError::NoCores);
    }
    if state.cores_per_task == 0 || state.cores_per_task > state.cores_per_executor {
        return Err(PlanError::TaskCores { task: state.cores_per_task, executor: state.cores_per_executor });
    }
    let (matched, stale, free) = split(state);
    let pending = state.pending.len() as i64;
    let missing = state.target_executors as i64 - pending - state.starting as i64 - state.running as i64;
    let mut e = Explained {
        missing,
        stale: stale.clone(),
        locality_free: free.clone(),
        locality_matched: matched.clone(),
        executors_for_local_tasks: state.executors_for_local_tasks(),
        ..Default::default()
    };
    if missing > 0 {
        let cancelled = stale.len() as i64;
        let available = missing + cancelled;
        let potential = available + free.len() as i64;
        e.expected = expected_per_host(state, &matched);
        let mut add: Vec<NewRequest> = locality_of_requested_containers(state, potential as u32, &e.expected)
            .into_iter()
            .filter(|r| r.hosts.is_some())
            .collect();
        let mut cancel = stale.clone();
        e.notes.push(format!(
            "{missing} executors missing (target {} − pending {pending} − starting {} − running {}); {cancelled} stale requests cancelled, so {available} can be asked; {} any-host requests could be traded for local ones",
            state.target_executors,
            state.starting,
            state.running,
            free.len()
        ));
        if available >= add.len() as i64 {
            let fill = available - add.len() as i64;
            e.notes.push(format!("{} requests prefer hosts; {fill} more ask for any host", add.len()));
            add.extend((0..fill).map(|_| NewRequest { hosts: None, racks: None }));
        } else {
            let n = add.len() as i64 - available;
            e.notes
                .push(format!("{} requests prefer hosts: {n} any-host requests are cancelled to make room", add.len()));
            cancel.extend(free.iter().take(n as usize));
        }
        cancel.sort_unstable();
        e.plan = Plan { cancel, add };
    } else if pending > 0 && missing < 0 {
        let n = pending.min(-missing) as usize;
        let mut cancel: Vec<usize> = stale.iter().chain(&free).chain(&matched).copied().take(n).collect();
        e.notes
            .push(format!("{} more pending than needed: cancel {n}, stale first, then any-host, then local", -missing));
        cancel.sort_unstable();
        e.plan = Plan { cancel, add: Vec::new() };
    } else {
        e.notes.push("nothing to change: pending, starting and running executors meet the target".to_string());
    }
    Ok(e)
}

/// The plan alone.
pub fn plan(state: &AmState) -> Result<Plan, PlanError> {
    explain(state).map(|e| e.plan)
}
