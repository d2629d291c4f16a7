//! `fairloom shell`: YARN's DistributedShell. The client submits an application over the
//! REST API whose AM is `fairloom shell-am` (this binary, shipped as a local resource); the
//! AM asks for N containers, runs the command in each, and finishes SUCCEEDED when all exit
//! 0, FAILED otherwise with the exit codes in the diagnostics.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde_json::{json, Value};

use fairloom_protocol::am::{
    AllocateRequest, AllocateResponse, AmCommand, Container, FinalStatus, FinishAmRequest, RegisterAmRequest,
    RegisterAmResponse, ResourceRequest,
};
use fairloom_protocol::node::{StartContainer, StartContainersRequest, StartContainersResponse, StopContainersRequest};
use fairloom_protocol::token::{Credentials, Token, AMRM_TOKEN_KIND};
use fairloom_protocol::{env, exit, paths, LaunchContext, Res};

/// The command the AM runs, passed in its environment.
const COMMAND_ENV: &str = "DISTRIBUTEDSHELL_COMMAND";

#[derive(Args)]
pub struct ShellArgs {
    /// How many containers run the command.
    #[arg(long, default_value_t = 1)]
    num_containers: u32,
    #[arg(long)]
    queue: Option<String>,
    /// Each container's memory (MB).
    #[arg(long, default_value_t = 1024)]
    memory: i64,
    #[arg(long, default_value_t = 1)]
    vcores: i64,
    /// The AM container's memory (MB).
    #[arg(long, default_value_t = 1024)]
    master_memory: i64,
    #[arg(long, default_value = "DistributedShell")]
    name: String,
    /// The RM's web address.
    #[arg(long, default_value = "http://127.0.0.1:8088")]
    rm: String,
    /// Who submits (Hadoop's pseudo authentication).
    #[arg(long)]
    user: Option<String>,
    /// Give up waiting after this many seconds (the application keeps running).
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// The shell command each container runs.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

#[derive(Args)]
pub struct ShellAmArgs {
    #[arg(long)]
    num_containers: u32,
    #[arg(long)]
    memory: i64,
    #[arg(long)]
    vcores: i64,
    /// Milliseconds between allocate calls.
    #[arg(long, default_value_t = 200)]
    interval_ms: u64,
}

fn user_of(args: &ShellArgs) -> String {
    args.user.clone().or_else(|| std::env::var("USER").ok()).unwrap_or_else(|| "fairloom".to_string())
}

fn rest_error(e: ureq::Error) -> anyhow::Error {
    match e {
        ureq::Error::Status(code, r) => {
            let body: Value = r.into_json().unwrap_or(Value::Null);
            let e = &body["RemoteException"];
            let msg = e["message"].as_str().unwrap_or("(no message)");
            anyhow!("HTTP {code} {}: {msg}", e["exception"].as_str().unwrap_or("error"))
        }
        other => anyhow!("{other}"),
    }
}

/// How a YARN client waits for an RM that does not answer: the IPC client's ten tries a
/// second apart (`ipc.client.connect.max.retries`, `…retry.interval`), then again after
/// `yarn.resourcemanager.connect.retry-interval.ms`, until
/// `yarn.resourcemanager.connect.max-wait.ms` has passed.
struct RmRetry {
    rm: String,
    quick_tries: u32,
    quick_sleep: Duration,
    interval: Duration,
    max_wait: Duration,
    /// Since when the RM has not answered, and how often it was tried.
    down_since: Option<Instant>,
    tries: u32,
}

impl RmRetry {
    fn new(rm: &str) -> Self {
        Self {
            rm: rm.to_string(),
            quick_tries: 10,
            quick_sleep: Duration::from_secs(1),
            interval: Duration::from_secs(30),
            max_wait: Duration::from_secs(900),
            down_since: None,
            tries: 0,
        }
    }

    /// `call` until the RM answers (any answer, an error status too: that is not retried);
    /// says at once that the RM is not answering, and when it answers again.
    fn call(
        &mut self,
        what: &str,
        mut call: impl FnMut() -> Result<ureq::Response, Box<ureq::Error>>,
    ) -> Result<ureq::Response> {
        loop {
            match call().map_err(|e| *e) {
                Ok(r) => return Ok(self.answered(r)),
                Err(e @ ureq::Error::Status(..)) => {
                    self.answered(());
                    return Err(rest_error(e).context(format!("{what} ({})", self.rm)));
                }
                Err(e) => {
                    let since = *self.down_since.get_or_insert_with(|| {
                        println!(
                            "The ResourceManager at {} is not answering ({e}); retrying as YARN clients do",
                            self.rm
                        );
                        Instant::now()
                    });
                    self.tries += 1;
                    eprintln!(
                        "Retrying connect to server: {}. Already tried {} time(s); retry policy is RetryUpToMaximumCountWithFixedSleep(maxRetries={}, sleepTime={} MILLISECONDS)",
                        self.rm.trim_start_matches("http://"),
                        (self.tries - 1) % self.quick_tries,
                        self.quick_tries,
                        self.quick_sleep.as_millis()
                    );
                    if since.elapsed() >= self.max_wait {
                        bail!(
                            "{what}: the ResourceManager at {} has not answered for {} s (yarn.resourcemanager.connect.max-wait.ms); the application may still be running",
                            self.rm,
                            self.max_wait.as_secs()
                        );
                    }
                    let pause =
                        if self.tries.is_multiple_of(self.quick_tries) { self.interval } else { self.quick_sleep };
                    std::thread::sleep(
                        pause.min(self.max_wait.saturating_sub(since.elapsed())).max(Duration::from_millis(10)),
                    );
                }
            }
        }
    }

    fn answered<T>(&mut self, r: T) -> T {
        if let Some(since) = self.down_since.take() {
            println!("The ResourceManager at {} answers again (after {} s)", self.rm, since.elapsed().as_secs());
            self.tries = 0;
        }
        r
    }
}

pub fn run(args: &ShellArgs) -> Result<ExitCode> {
    let user = user_of(args);
    let base = args.rm.trim_end_matches('/');
    let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(30)).build();
    let mut rm = RmRetry::new(base);
    let q = format!("user.name={user}");
    let url = format!("{base}/ws/v1/cluster/apps/new-application?{q}");
    let new: Value = rm
        .call("asking for a new application", || agent.post(&url).call().map_err(Box::new))?
        .into_json()
        .context("new-application")?;
    let id = new["application-id"].as_str().ok_or_else(|| anyhow!("new-application gave no id: {new}"))?.to_string();
    let exe = std::env::current_exe().context("where is this binary")?;
    let am = format!(
        "./fairloom shell-am --num-containers {} --memory {} --vcores {} 1><LOG_DIR>/AppMaster.stdout 2><LOG_DIR>/AppMaster.stderr",
        args.num_containers, args.memory, args.vcores
    );
    let mut body = json!({
        "application-id": id,
        "application-name": args.name,
        "application-type": "DISTRIBUTEDSHELL",
        "am-container-spec": {
            "local-resources": { "entry": [{ "key": "fairloom", "value": {
                "resource": format!("file://{}", exe.display()), "type": "FILE", "visibility": "APPLICATION" } }] },
            "environment": { "entry": [{ "key": COMMAND_ENV, "value": args.command.join(" ") }] },
            "commands": { "command": am },
        },
        "resource": { "memory": args.master_memory, "vCores": 1 },
        "max-app-attempts": 2,
    });
    if let Some(queue) = &args.queue {
        body["queue"] = json!(queue);
    }
    let url = format!("{base}/ws/v1/cluster/apps?{q}");
    rm.call("submitting the application", || agent.post(&url).send_json(body.clone()).map_err(Box::new))?;
    println!("Submitted application {id}");
    let deadline = Instant::now() + Duration::from_secs(args.timeout);
    let mut last = String::new();
    let url = format!("{base}/ws/v1/cluster/apps/{id}?{q}");
    while Instant::now() < deadline {
        let app: Value =
            rm.call("asking for the application's report", || agent.get(&url).call().map_err(Box::new))?.into_json()?;
        let app = &app["app"];
        let state = app["state"].as_str().unwrap_or("?").to_string();
        let line = format!(
            "{id}: state {state}, progress {:.0}%, running containers {}",
            app["progress"].as_f64().unwrap_or(0.0),
            app["runningContainers"]
        );
        if line != last {
            println!("{line}");
            last = line;
        }
        if matches!(state.as_str(), "FINISHED" | "FAILED" | "KILLED") {
            let fin = app["finalStatus"].as_str().unwrap_or("?");
            println!("Application {id} {state} with final status {fin}");
            if let Some(d) = app["diagnostics"].as_str().filter(|d| !d.is_empty()) {
                println!("Diagnostics: {d}");
            }
            return Ok(if fin == "SUCCEEDED" { ExitCode::SUCCESS } else { ExitCode::from(1) });
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    bail!("gave up waiting for {id} after {} s (it keeps running)", args.timeout)
}

/// The AM's side of the AM protocol.
struct AmClient {
    agent: ureq::Agent,
    base: String,
    /// The AMRM token: from the container's credentials file, then whatever the RM rolls to.
    token: Token,
    attempt: String,
}

/// The RM's answer that this attempt is over (YARN's AMRMClientAsync shuts down on it).
const ATTEMPT_OVER: &str = "ApplicationAttemptNotFoundException";

impl AmClient {
    fn post<T: serde::Serialize, R: serde::de::DeserializeOwned>(&self, path: &str, body: &T) -> Result<R> {
        self.agent
            .post(&format!("{}{path}", self.base))
            .set(paths::AMRM_TOKEN_HEADER, &self.token.to_header())
            .send_json(body)
            .map_err(rest_error)?
            .into_json()
            .context("reading the RM's answer")
    }

    fn register(&self) -> Result<RegisterAmResponse> {
        let req = RegisterAmRequest { host: "127.0.0.1".to_string(), rpc_port: -1, tracking_url: String::new() };
        self.post(paths::REGISTER_AM, &req)
    }
}

/// The AMRM token in the container's credentials file (`HADOOP_TOKEN_FILE_LOCATION`).
fn amrm_token() -> Result<Token> {
    let path = need_env(env::TOKEN_FILE)?;
    let bytes = std::fs::read(&path).with_context(|| format!("reading the credentials file {path}"))?;
    let creds = Credentials::from_bytes(&bytes).with_context(|| format!("the credentials file {path}"))?;
    creds.token(AMRM_TOKEN_KIND).cloned().ok_or_else(|| anyhow!("{path} holds no AMRM token"))
}

/// Stop the containers this AM started (with each node's NM token).
fn stop_all(agent: &ureq::Agent, launched: &BTreeMap<String, Container>, nm_tokens: &BTreeMap<String, Token>) {
    for c in launched.values() {
        let Some(t) = nm_tokens.get(&c.node_id) else { continue };
        let url = format!("http://{}{}", c.node_http_address, paths::STOP_CONTAINERS);
        let req = agent.post(&url).set(paths::NM_TOKEN_HEADER, &t.to_header());
        let _ = req.send_json(StopContainersRequest { container_ids: vec![c.id.clone()] });
    }
}

fn need_env(name: &str) -> Result<String> {
    std::env::var(name).map_err(|_| anyhow!("{name} is not set: shell-am runs inside an AM container"))
}

/// How the AM's containers ended so far.
#[derive(Default)]
struct Tally {
    /// Containers the RM gave (DistributedShell's numAllocatedContainers).
    allocated: u32,
    succeeded: u32,
    failed: Vec<(String, i32)>,
}

pub fn run_am(args: &ShellAmArgs) -> Result<ExitCode> {
    let container: fairloom_model::ContainerId = need_env(env::CONTAINER_ID)?.parse()?;
    let mut client = AmClient {
        agent: ureq::AgentBuilder::new().timeout(Duration::from_secs(30)).build(),
        base: format!("http://{}", need_env(env::RM_SCHEDULER_ADDRESS)?),
        token: amrm_token()?,
        attempt: container.attempt.to_string(),
    };
    let command = need_env(COMMAND_ENV)?;
    let capability = Res::new(args.memory, args.vcores);
    let n = args.num_containers;
    let registered = client.register()?;
    eprintln!("registered {} in queue {}", client.attempt, registered.queue);
    let mut response_id = 0i64;
    // What the RM holds for us at the key (AMRMClient's bookkeeping): sent only when it changes.
    let mut outstanding = n as i32;
    let mut send_ask = true;
    let mut launched: BTreeMap<String, Container> = BTreeMap::new();
    // The NM token of each node, as the RM hands them out (one per node, renewed when rolled).
    let mut nm_tokens: BTreeMap<String, Token> = BTreeMap::new();
    let mut tally = Tally::default();
    let mut failures_since = None::<Instant>;
    let stop_agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(10)).build();
    while tally.succeeded + (tally.failed.len() as u32) < n {
        let req = AllocateRequest {
            response_id,
            asks: if send_ask {
                vec![ResourceRequest {
                    priority: 0,
                    resource_name: "*".to_string(),
                    capability,
                    num_containers: outstanding.max(0),
                    relax_locality: true,
                }]
            } else {
                Vec::new()
            },
            releases: Vec::new(),
            progress: (tally.succeeded + tally.failed.len() as u32) as f32 / n.max(1) as f32,
        };
        let resp: AllocateResponse = match client.post(paths::ALLOCATE, &req) {
            Ok(r) => {
                failures_since = None;
                r
            }
            Err(e) if e.to_string().contains(ATTEMPT_OVER) => {
                // Failed or finished elsewhere: nothing this AM does counts any more.
                eprintln!("the RM says this attempt is over: {e:#}");
                stop_all(&stop_agent, &launched, &nm_tokens);
                bail!("attempt {} is over: {e:#}", client.attempt);
            }
            Err(e) => {
                // The RM may be restarting; give up only after a long silence.
                let since = *failures_since.get_or_insert_with(Instant::now);
                if since.elapsed() > Duration::from_secs(300) {
                    return Err(e.context("the RM has not answered for 300 s"));
                }
                std::thread::sleep(Duration::from_millis(args.interval_ms));
                continue;
            }
        };
        if resp.am_command == Some(AmCommand::AmResync) {
            eprintln!("RM asked for a resync: registering again");
            let again = client.register()?;
            for c in again.containers_from_previous_attempts {
                launched.entry(c.id.clone()).or_insert(c);
            }
            response_id = 0;
            send_ask = true;
            continue;
        }
        if resp.am_command == Some(AmCommand::AmShutdown) {
            bail!("the RM asked this AM to shut down");
        }
        send_ask = false;
        response_id = resp.response_id;
        if let Some(t) = resp.amrm_token {
            eprintln!("the RM rolled its AMRM key: using the new token");
            client.token = t;
        }
        for t in resp.nm_tokens {
            nm_tokens.insert(t.node_id, t.token);
        }
        let mut extra = Vec::new();
        tally.allocated += resp.allocated.len() as u32;
        for c in resp.allocated {
            let done = tally.succeeded + tally.failed.len() as u32;
            let wanted = (launched.len() as u32) + done < n;
            outstanding -= 1;
            if !wanted {
                extra.push(c.id.clone());
                continue;
            }
            let (Some(token), Some(nm_token)) = (c.token.clone(), nm_tokens.get(&c.node_id)) else {
                eprintln!("no container or NM token for {} on {}", c.id, c.node_id);
                tally.failed.push((c.id.clone(), -1));
                continue;
            };
            let start = StartContainersRequest {
                containers: vec![StartContainer {
                    token,
                    launch: LaunchContext {
                        commands: vec![redirected(&command)],
                        environment: Vec::new(),
                        local_resources: Vec::new(),
                    },
                    credentials: None,
                }],
            };
            let url = format!("http://{}{}", c.node_http_address, paths::START_CONTAINERS);
            let call = client.agent.post(&url).set(paths::NM_TOKEN_HEADER, &nm_token.to_header());
            match call.send_json(&start) {
                Ok(r) => {
                    let r: StartContainersResponse = r.into_json()?;
                    if r.started.contains(&c.id) {
                        eprintln!("started {} on {}", c.id, c.node_id);
                        launched.insert(c.id.clone(), c);
                    } else {
                        tally.failed.push((c.id.clone(), -1));
                    }
                }
                Err(e) => {
                    eprintln!("could not start {} on {}: {}", c.id, c.node_id, rest_error(e));
                    tally.failed.push((c.id.clone(), -1));
                }
            }
        }
        if !extra.is_empty() {
            let release = AllocateRequest { response_id, asks: Vec::new(), releases: extra, progress: 0.0 };
            if let Ok(r) = client.post::<_, AllocateResponse>(paths::ALLOCATE, &release) {
                response_id = r.response_id;
            }
        }
        for s in resp.completed {
            if launched.remove(&s.container_id).is_none() {
                continue;
            }
            match s.exit_status {
                0 => tally.succeeded += 1,
                // Lost to the framework (preempted, node lost, killed by the RM): ask again,
                // as YARN's DistributedShell does.
                exit::ABORTED | exit::PREEMPTED | exit::KILLED_BY_RESOURCEMANAGER | exit::DISKS_FAILED => {
                    eprintln!("{} was lost ({}): asking for another", s.container_id, s.exit_status);
                    outstanding += 1;
                    send_ask = true;
                }
                code => tally.failed.push((s.container_id.clone(), code)),
            }
        }
        // A node that went away takes its containers with it, whether or not the RM can still
        // report them (after its restart it cannot): ask for others, as DistributedShell does.
        for n in
            resp.updated_nodes.iter().filter(|n| matches!(n.state.as_str(), "LOST" | "DECOMMISSIONED" | "SHUTDOWN"))
        {
            let gone: Vec<String> =
                launched.values().filter(|c| c.node_id == n.node_id).map(|c| c.id.clone()).collect();
            for id in gone {
                eprintln!("{id} was on node {} which is {}: asking for another", n.node_id, n.state);
                launched.remove(&id);
                outstanding += 1;
                send_ask = true;
            }
        }
        if let Some(p) = resp.preemption {
            eprintln!("preemption warning for {} containers", p.strict_contract.len() + p.contract.len());
        }
        std::thread::sleep(Duration::from_millis(args.interval_ms));
    }
    // Stop anything still running (there should be nothing).
    stop_all(&stop_agent, &launched, &nm_tokens);
    // As YARN's DistributedShell: no message on success; on failure its line (completed
    // counts the failed ones too), then which containers exited with what.
    let (status, diagnostics) = if tally.failed.is_empty() {
        (FinalStatus::Succeeded, String::new())
    } else {
        let codes: Vec<String> = tally.failed.iter().map(|(c, code)| format!("{c} exited with {code}")).collect();
        let failed = tally.failed.len();
        (
            FinalStatus::Failed,
            format!(
                "Diagnostics., total={n}, completed={}, allocated={}, failed={failed}; {}",
                tally.succeeded as usize + failed,
                tally.allocated,
                codes.join("; ")
            ),
        )
    };
    eprintln!("finishing: {} {diagnostics}", status.name());
    let fin = FinishAmRequest { final_status: status, diagnostics, tracking_url: String::new() };
    let _: fairloom_protocol::am::FinishAmResponse = client.post(paths::FINISH_AM, &fin)?;
    Ok(ExitCode::SUCCESS)
}

/// The user's command with all of its output in the container's log files: the whole command
/// is one subshell, so a list (`a; b >&2; c`) does not hand the redirection to its last
/// command alone, which truncated what the others wrote. The newlines keep a trailing `#`
/// comment from swallowing the closing parenthesis, and a command opening with `(` from
/// making `((`.
fn redirected(command: &str) -> String {
    format!("(\n{command}\n) 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr")
}

#[cfg(test)]
mod tests {
    use super::redirected;

    #[test]
    fn every_command_of_a_list_writes_to_the_log_files() {
        let dir = std::env::temp_dir().join(format!("fairloom-shell-redirect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for command in ["echo a; echo b >&2; echo c # a comment", "(echo a); echo c; echo b 1>&2"] {
            let line = redirected(command).replace("<LOG_DIR>", dir.to_str().unwrap());
            let status = std::process::Command::new("/bin/bash").arg("-c").arg(&line).status().unwrap();
            assert!(status.success(), "{line}");
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
            assert_eq!((read("stdout"), read("stderr")), ("a\nc\n".to_string(), "b\n".to_string()), "{command}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
