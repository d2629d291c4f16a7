//! `fairloom shell`: YARN's DistributedShell. The client submits an application over the
//! REST API whose AM is `fairloom shell-am` (this binary, shipped as a local resource); the
//! AM asks for N containers, runs the command in each, and finishes SUCCEEDED when all exit
//! 0, FAILED otherwise with the exit codes in the diagnostics. What the AM decides is
//! `fairloom_am::shell`; here is its I/O: the client's REST calls, the AM protocol and the
//! NodeManagers' start and stop calls.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde_json::{json, Value};

use fairloom_am::shell::{Heard, Launch, ShellAm};
use fairloom_protocol::am::{AllocateResponse, RegisterAmRequest, RegisterAmResponse};
use fairloom_protocol::node::{StartContainersResponse, StopContainersRequest};
use fairloom_protocol::token::{Credentials, Token, AMRM_TOKEN_KIND};
use fairloom_protocol::{env, paths, Res};

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
    #[command(flatten)]
    rm: crate::rm_target::RmTarget,
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
    let base = args.rm.url()?;
    let base = base.as_str();
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
fn stop_all(agent: &ureq::Agent, am: &ShellAm) {
    for (c, t) in am.running() {
        let Some(t) = t else { continue };
        let url = format!("http://{}{}", c.node_http_address, paths::STOP_CONTAINERS);
        let req = agent.post(&url).set(paths::NM_TOKEN_HEADER, &t.to_header());
        let _ = req.send_json(StopContainersRequest { container_ids: vec![c.id.clone()] });
    }
}

fn need_env(name: &str) -> Result<String> {
    std::env::var(name).map_err(|_| anyhow!("{name} is not set: shell-am runs inside an AM container"))
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
    let mut am = ShellAm::new(args.num_containers, Res::new(args.memory, args.vcores), &command);
    let registered = client.register()?;
    eprintln!("registered {} in queue {}", client.attempt, registered.queue);
    let mut failures_since = None::<Instant>;
    let stop_agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(10)).build();
    while !am.done() {
        let mut resp: AllocateResponse = match client.post(paths::ALLOCATE, &am.request()) {
            Ok(r) => {
                failures_since = None;
                r
            }
            Err(e) if e.to_string().contains(ATTEMPT_OVER) => {
                // Failed or finished elsewhere: nothing this AM does counts any more.
                eprintln!("the RM says this attempt is over: {e:#}");
                stop_all(&stop_agent, &am);
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
        if let Some(t) = resp.amrm_token.take() {
            eprintln!("the RM rolled its AMRM key: using the new token");
            client.token = t;
        }
        match am.heard(resp) {
            Heard::Resync => {
                log(&mut am);
                let again = client.register()?;
                am.resynced(again.containers_from_previous_attempts);
                continue;
            }
            Heard::Shutdown => bail!("the RM asked this AM to shut down"),
            Heard::Work { launches, releases, rest } => {
                for launch in launches {
                    let ok = start(&client.agent, &launch);
                    am.started(launch, ok);
                }
                if !releases.is_empty() {
                    if let Ok(r) = client.post::<_, AllocateResponse>(paths::ALLOCATE, &am.release_request(releases)) {
                        am.released(r.response_id);
                    }
                }
                am.settle(rest);
            }
        }
        log(&mut am);
        std::thread::sleep(Duration::from_millis(args.interval_ms));
    }
    // Stop anything still running (there should be nothing).
    stop_all(&stop_agent, &am);
    let fin = am.finish();
    eprintln!("finishing: {} {}", fin.final_status.name(), fin.diagnostics);
    let _: fairloom_protocol::am::FinishAmResponse = client.post(paths::FINISH_AM, &fin)?;
    Ok(ExitCode::SUCCESS)
}

fn log(am: &mut ShellAm) {
    for line in am.take_log() {
        eprintln!("{line}");
    }
}

/// Start one container on its node: did the node start it.
fn start(agent: &ureq::Agent, launch: &Launch) -> bool {
    let c = &launch.container;
    let url = format!("http://{}{}", c.node_http_address, paths::START_CONTAINERS);
    let call = agent.post(&url).set(paths::NM_TOKEN_HEADER, &launch.nm_token.to_header());
    match call
        .send_json(&launch.request)
        .map_err(rest_error)
        .and_then(|r| Ok(r.into_json::<StartContainersResponse>()?))
    {
        Ok(r) => r.started.contains(&c.id),
        Err(e) => {
            eprintln!("could not start {} on {}: {e:#}", c.id, c.node_id);
            false
        }
    }
}
