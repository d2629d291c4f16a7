//! YARN's DistributedShell application master, pure: how many containers it asks for and when
//! it asks again, which allocations it launches and which it gives back, how completions and
//! lost nodes count, and the final status with DistributedShell's diagnostics. The caller
//! (`fairloom shell-am`) does the I/O: it sends [`ShellAm::request`], hands each
//! [`AllocateResponse`] to [`ShellAm::heard`], starts the [`Launch`]es it gets back on their
//! nodes, reports each start, then settles the rest of the response.

use std::collections::BTreeMap;

use fairloom_model::exit;
use fairloom_protocol::am::NodeReport;
use fairloom_protocol::am::{
    AllocateRequest, AllocateResponse, AmCommand, Container, FinalStatus, FinishAmRequest, ResourceRequest,
};
use fairloom_protocol::node::{StartContainer, StartContainersRequest};
use fairloom_protocol::token::Token;
use fairloom_protocol::{ContainerStatus, LaunchContext, Res};

/// One container to start on its node, with the node's NM token.
#[derive(Debug, Clone)]
pub struct Launch {
    pub container: Container,
    pub nm_token: Token,
    pub request: StartContainersRequest,
}

/// What the caller does with an allocate response.
#[derive(Debug)]
pub enum Heard {
    /// The RM lost this attempt's registration (it restarted): register again, hand the
    /// containers it reports to [`ShellAm::resynced`], and go on.
    Resync,
    /// The RM asked this AM to shut down.
    Shutdown,
    /// Start these containers, give the surplus back, then [`ShellAm::settle`] the rest.
    Work { launches: Vec<Launch>, releases: Vec<String>, rest: Settle },
}

/// The part of a response read after the launches: completions and node changes may name the
/// containers just started.
#[derive(Debug)]
pub struct Settle {
    completed: Vec<ContainerStatus>,
    updated_nodes: Vec<NodeReport>,
}

/// The DistributedShell AM's state between allocate calls.
#[derive(Debug)]
pub struct ShellAm {
    total: u32,
    capability: Res,
    command: String,
    response_id: i64,
    /// What the RM holds for us at the one ask key (AMRMClient's bookkeeping), sent only
    /// when it changed.
    outstanding: i32,
    send_ask: bool,
    /// Started and not yet completed, by container id.
    launched: BTreeMap<String, Container>,
    /// The NM token of each node, as the RM hands them out (renewed when its key rolls).
    nm_tokens: BTreeMap<String, Token>,
    /// Containers the RM gave (DistributedShell's numAllocatedContainers).
    allocated: u32,
    succeeded: u32,
    failed: Vec<(String, i32)>,
    /// Lines for the AM's log.
    log: Vec<String>,
}

impl ShellAm {
    /// An AM that runs `command` in `total` containers of `capability`.
    pub fn new(total: u32, capability: Res, command: &str) -> Self {
        Self {
            total,
            capability,
            command: command.to_string(),
            response_id: 0,
            outstanding: total.min(i32::MAX as u32) as i32,
            send_ask: true,
            launched: BTreeMap::new(),
            nm_tokens: BTreeMap::new(),
            allocated: 0,
            succeeded: 0,
            failed: Vec::new(),
            log: Vec::new(),
        }
    }

    fn completed(&self) -> u32 {
        self.succeeded + self.failed.len() as u32
    }

    /// Every container ran to an end (successfully or not).
    pub fn done(&self) -> bool {
        self.completed() >= self.total
    }

    /// The next allocate call: the ask only when it changed since the RM last heard it.
    pub fn request(&self) -> AllocateRequest {
        let asks = if self.send_ask {
            vec![ResourceRequest {
                priority: 0,
                resource_name: "*".to_string(),
                capability: self.capability,
                num_containers: self.outstanding.max(0),
                relax_locality: true,
            }]
        } else {
            Vec::new()
        };
        AllocateRequest {
            response_id: self.response_id,
            asks,
            releases: Vec::new(),
            progress: self.completed() as f32 / self.total.max(1) as f32,
        }
    }

    /// The call giving back containers the AM did not need (no asks: the RM has them).
    pub fn release_request(&self, releases: Vec<String>) -> AllocateRequest {
        AllocateRequest { response_id: self.response_id, asks: Vec::new(), releases, progress: 0.0 }
    }

    /// The RM answered the release call.
    pub fn released(&mut self, response_id: i64) {
        self.response_id = response_id;
    }

    /// Read an allocate response up to the launches it calls for.
    pub fn heard(&mut self, resp: AllocateResponse) -> Heard {
        match resp.am_command {
            Some(AmCommand::AmResync) => {
                self.log.push("RM asked for a resync: registering again".to_string());
                return Heard::Resync;
            }
            Some(AmCommand::AmShutdown) => return Heard::Shutdown,
            None => {}
        }
        self.send_ask = false;
        self.response_id = resp.response_id;
        for t in resp.nm_tokens {
            self.nm_tokens.insert(t.node_id, t.token);
        }
        self.allocated += resp.allocated.len() as u32;
        let (mut launches, mut releases) = (Vec::new(), Vec::new());
        for c in resp.allocated {
            self.outstanding -= 1;
            // Launches of this response count as launched already: a start that fails counts
            // as a failed container instead, so the sum is the same either way.
            if self.launched.len() as u32 + launches.len() as u32 + self.completed() >= self.total {
                releases.push(c.id);
                continue;
            }
            let (Some(token), Some(nm_token)) = (c.token.clone(), self.nm_tokens.get(&c.node_id)) else {
                self.log.push(format!("no container or NM token for {} on {}", c.id, c.node_id));
                self.failed.push((c.id, -1));
                continue;
            };
            let request = StartContainersRequest {
                containers: vec![StartContainer {
                    token,
                    launch: LaunchContext {
                        commands: vec![redirected(&self.command)],
                        environment: Vec::new(),
                        local_resources: Vec::new(),
                    },
                    credentials: None,
                }],
            };
            launches.push(Launch { nm_token: nm_token.clone(), container: c, request });
        }
        if let Some(p) = &resp.preemption {
            self.log.push(format!("preemption warning for {} containers", p.strict_contract.len() + p.contract.len()));
        }
        Heard::Work {
            launches,
            releases,
            rest: Settle { completed: resp.completed, updated_nodes: resp.updated_nodes },
        }
    }

    /// A launch's node started its container (`true`) or did not.
    pub fn started(&mut self, launch: Launch, ok: bool) {
        let c = launch.container;
        if ok {
            self.log.push(format!("started {} on {}", c.id, c.node_id));
            self.launched.insert(c.id.clone(), c);
        } else {
            self.failed.push((c.id, -1));
        }
    }

    /// Completions and node changes of the response last [`heard`](Self::heard).
    pub fn settle(&mut self, rest: Settle) {
        for s in rest.completed {
            if self.launched.remove(&s.container_id).is_none() {
                continue;
            }
            match s.exit_status {
                exit::SUCCESS => self.succeeded += 1,
                // Lost to the framework (preempted, node lost, killed by the RM): ask again,
                // as YARN's DistributedShell does.
                exit::ABORTED | exit::PREEMPTED | exit::KILLED_BY_RESOURCEMANAGER | exit::DISKS_FAILED => {
                    self.log.push(format!("{} was lost ({}): asking for another", s.container_id, s.exit_status));
                    self.ask_again();
                }
                code => self.failed.push((s.container_id, code)),
            }
        }
        // A node that went away takes its containers with it, whether or not the RM can still
        // report them (after its restart it cannot): ask for others, as DistributedShell does.
        for n in
            rest.updated_nodes.iter().filter(|n| matches!(n.state.as_str(), "LOST" | "DECOMMISSIONED" | "SHUTDOWN"))
        {
            let gone: Vec<String> =
                self.launched.values().filter(|c| c.node_id == n.node_id).map(|c| c.id.clone()).collect();
            for id in gone {
                self.log.push(format!("{id} was on node {} which is {}: asking for another", n.node_id, n.state));
                self.launched.remove(&id);
                self.ask_again();
            }
        }
    }

    fn ask_again(&mut self) {
        self.outstanding += 1;
        self.send_ask = true;
    }

    /// Registered again after a resync: the containers the RM still knows of stay ours, and
    /// the ask goes again from a fresh response id.
    pub fn resynced(&mut self, containers_from_previous_attempts: Vec<Container>) {
        for c in containers_from_previous_attempts {
            self.launched.entry(c.id.clone()).or_insert(c);
        }
        self.response_id = 0;
        self.send_ask = true;
    }

    /// The containers still running, each with its node's NM token when the AM has one (to
    /// stop them when the AM ends early).
    pub fn running(&self) -> impl Iterator<Item = (&Container, Option<&Token>)> {
        self.launched.values().map(|c| (c, self.nm_tokens.get(&c.node_id)))
    }

    /// What happened since the last call, for the AM's log.
    pub fn take_log(&mut self) -> Vec<String> {
        std::mem::take(&mut self.log)
    }

    /// How the application ends. As YARN's DistributedShell: no message on success; on
    /// failure its line (completed counts the failed ones too), then which containers exited
    /// with what.
    pub fn finish(&self) -> FinishAmRequest {
        let (final_status, diagnostics) = if self.failed.is_empty() {
            (FinalStatus::Succeeded, String::new())
        } else {
            let codes: Vec<String> = self.failed.iter().map(|(c, code)| format!("{c} exited with {code}")).collect();
            let failed = self.failed.len();
            (
                FinalStatus::Failed,
                format!(
                    "Diagnostics., total={}, completed={}, allocated={}, failed={failed}; {}",
                    self.total,
                    self.succeeded as usize + failed,
                    self.allocated,
                    codes.join("; ")
                ),
            )
        };
        FinishAmRequest { final_status, diagnostics, tracking_url: String::new() }
    }
}

/// The user's command with all of its output in the container's log files: the whole command
/// is one subshell, so a list (`a; b >&2; c`) does not hand the redirection to its last
/// command alone, which truncated what the others wrote. The newlines keep a trailing `#`
/// comment from swallowing the closing parenthesis, and a command opening with `(` from
/// making `((`.
pub fn redirected(command: &str) -> String {
    format!("(\n{command}\n) 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr")
}

#[cfg(test)]
mod tests;
