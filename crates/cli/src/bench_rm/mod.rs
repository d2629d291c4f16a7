//! `fairloom bench rm`: the ResourceManager under load. An RM runs in this process and
//! thousands of simulated NodeManagers heartbeat it over loopback (one keep-alive connection
//! each); applications are submitted over REST and their simulated AMs ask, receive and
//! release containers through the AM protocol. Reported: heartbeats handled per second,
//! heartbeat and REST read latency, and containers allocated per second of the event loop's
//! work next to the in-process simulator's CPS on the same workload.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use fairloom_config::properties::Properties;
use fairloom_model::Resource;
use fairloom_protocol::am::{
    AllocateRequest, AllocateResponse, FinalStatus, FinishAmRequest, RegisterAmRequest, ResourceRequest,
};
use fairloom_protocol::node::{NodeHeartbeatRequest, NodeHeartbeatResponse, RegisterNodeRequest, RegisterNodeResponse};
use fairloom_protocol::token::{Credentials, AMRM_TOKEN_KIND};
use fairloom_protocol::{paths, ContainerState, ContainerStatus, Res};
use fairloom_rm::conf::{RmConf, FAIR_CLASS};
use fairloom_sim::load::{AppDef, NodeDef, SimOptions, Stage, TaskGroup, Workload};

use crate::outln;

mod latency;
mod soak;

use latency::Latencies;

#[derive(Args)]
pub struct BenchRmArgs {
    /// Simulated NodeManagers.
    #[arg(long, default_value_t = 5000)]
    nodes: usize,
    /// How long to measure, after every node registered.
    #[arg(long, default_value_t = 30)]
    seconds: u64,
    /// Node heartbeat interval (ms).
    #[arg(long, default_value_t = 1000)]
    heartbeat_ms: u64,
    /// Applications kept running at once (a finished one is replaced).
    #[arg(long, default_value_t = 100)]
    apps: usize,
    /// Containers each application asks for.
    #[arg(long, default_value_t = 500)]
    containers: u32,
    /// How long each container runs (ms).
    #[arg(long, default_value_t = 4000)]
    task_ms: u64,
    /// Let a heartbeat assign more than one container (`yarn.scheduler.fair.assignmultiple`),
    /// in the service and in the in-process run alike.
    #[arg(long)]
    assign_multiple: bool,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
    /// Run for this many minutes instead of `--seconds`, sampling the process's resident
    /// memory and the RM's collections, and report each one's slope after the warm-up.
    #[arg(long, value_name = "MINUTES")]
    soak: Option<f64>,
    /// Minutes of the soak left out of the slopes (at most half of it).
    #[arg(long, value_name = "MINUTES", default_value_t = 10.0)]
    warmup: f64,
    /// Seconds between the soak's samples.
    #[arg(long, default_value_t = 60)]
    sample_seconds: u64,
}

impl BenchRmArgs {
    /// How long to measure.
    fn duration(&self) -> Duration {
        match self.soak {
            Some(m) => Duration::from_secs_f64(m.max(0.0) * 60.0),
            None => Duration::from_secs(self.seconds),
        }
    }
}

/// The scheduler properties both runs share.
fn scheduler_properties(args: &BenchRmArgs) -> Properties {
    let mut p = Properties::new();
    p.insert("yarn.scheduler.fair.assignmultiple".into(), args.assign_multiple.to_string());
    p
}

const NODE_MB: i64 = 65536;
const NODE_VCORES: i64 = 64;
const TASK: Res = Res { memory: 1024, vcores: 1 };

/// A keep-alive HTTP/1.1 connection speaking JSON (the simulated NMs and AMs need thousands
/// of these; a blocking client would need a thread each).
struct Conn {
    io: BufReader<TcpStream>,
    addr: SocketAddr,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Result<Self> {
        let s = TcpStream::connect(addr).await.with_context(|| format!("connecting to {addr}"))?;
        s.set_nodelay(true)?;
        Ok(Self { io: BufReader::new(s), addr })
    }

    async fn call(
        &mut self,
        method: &str,
        path: &str,
        body: &[u8],
        header: Option<(&str, &str)>,
    ) -> Result<(u16, Vec<u8>)> {
        let extra = header.map(|(k, v)| format!("{k}: {v}\r\n")).unwrap_or_default();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra}\r\n",
            self.addr,
            body.len()
        );
        let s = self.io.get_mut();
        s.write_all(head.as_bytes()).await?;
        s.write_all(body).await?;
        let mut line = String::new();
        self.io.read_line(&mut line).await?;
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| anyhow!("bad status line {line:?}"))?;
        let mut length = 0usize;
        loop {
            line.clear();
            if self.io.read_line(&mut line).await? == 0 {
                bail!("connection closed");
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse()?;
                }
            }
        }
        let mut out = vec![0u8; length];
        self.io.read_exact(&mut out).await?;
        Ok((status, out))
    }

    async fn json<T: DeserializeOwned>(
        &mut self,
        path: &str,
        body: &impl serde::Serialize,
        header: Option<(&str, &str)>,
    ) -> Result<T> {
        let (status, bytes) = self.call("POST", path, &serde_json::to_vec(body)?, header).await?;
        if status != 200 {
            bail!("{path}: HTTP {status}: {}", String::from_utf8_lossy(&bytes));
        }
        Ok(serde_json::from_slice(&bytes)?)
    }
}

struct Running {
    status: ContainerStatus,
    /// `None`: until its AM says it is done.
    end: Option<Instant>,
}

#[derive(Default)]
struct SimNode {
    running: Vec<Running>,
    done: Vec<ContainerStatus>,
}

struct Shared {
    nodes: Vec<Mutex<SimNode>>,
    heartbeat_us: Mutex<Latencies>,
    rest_us: Mutex<Latencies>,
    heartbeats: AtomicU64,
    errors: AtomicU64,
    apps_finished: AtomicU64,
    measuring: AtomicBool,
    stop: AtomicBool,
    task: Duration,
    containers: u32,
    scheduler: SocketAddr,
}

fn running(id: &str, resource: Res, priority: i32) -> ContainerStatus {
    ContainerStatus {
        container_id: id.to_string(),
        state: ContainerState::Running,
        exit_status: 0,
        diagnostics: String::new(),
        resource,
        priority,
        creation_time: 0,
        finish_time: 0,
    }
}

fn node_index(node_id: &str) -> Option<usize> {
    node_id.strip_prefix("sim-")?.split(':').next()?.parse().ok()
}

async fn nm(
    shared: Arc<Shared>,
    i: usize,
    tracker: SocketAddr,
    interval: Duration,
    registered: Arc<AtomicU64>,
) -> Result<()> {
    let id = format!("sim-{i}:8041");
    let reg = RegisterNodeRequest {
        node_id: id.clone(),
        http_address: format!("sim-{i}:8042"),
        rack: Some(format!("/rack{}", i / 40)),
        resource: Res::new(NODE_MB, NODE_VCORES),
        containers: Vec::new(),
        version: "bench".to_string(),
        previous_session: String::new(),
        proof: String::new(),
        instance: format!("bench-{i}"),
    };
    // Thousands connect at once: a refused or reset connection tries again.
    let mut tries = 0;
    let session;
    let mut conn = loop {
        let attempt = async {
            let mut conn = Conn::open(tracker).await?;
            let r: RegisterNodeResponse = conn.json(paths::REGISTER_NODE, &reg, None).await?;
            anyhow::Ok((conn, r))
        };
        match attempt.await {
            Ok((c, r)) => {
                session = r.session;
                break c;
            }
            Err(e) if tries >= 20 => return Err(e.context(format!("registering {id}"))),
            Err(_) => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(100 * tries)).await;
            }
        }
    };
    registered.fetch_add(1, Ordering::Relaxed);
    // Spread the nodes over the interval, as real heartbeats are.
    let n = shared.nodes.len().max(1) as u64;
    let mut next = tokio::time::Instant::now() + interval.mul_f64((i as u64 % n) as f64 / n as f64);
    let mut response_id = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        tokio::time::sleep_until(next).await;
        next += interval;
        let containers = {
            let mut node = shared.nodes[i].lock().map_err(|_| anyhow!("poisoned"))?;
            let now = Instant::now();
            let SimNode { running, done } = &mut *node;
            running.retain(|r| {
                let over = r.end.is_some_and(|e| e <= now);
                if over {
                    done.push(ContainerStatus { state: ContainerState::Complete, ..r.status.clone() });
                }
                !over
            });
            let mut all: Vec<ContainerStatus> = running.iter().map(|r| r.status.clone()).collect();
            all.append(done);
            all
        };
        let req = NodeHeartbeatRequest {
            node_id: id.clone(),
            session: session.clone(),
            response_id,
            containers,
            healthy: true,
            health_report: String::new(),
            // Simulated nodes check no tokens: they never need the next keys.
            last_known_container_token_key_id: -1,
            last_known_nm_token_key_id: -1,
        };
        let sent = Instant::now();
        let out: NodeHeartbeatResponse = match conn.json(paths::NODE_HEARTBEAT, &req, None).await {
            Ok(o) => o,
            Err(_) => {
                shared.errors.fetch_add(1, Ordering::Relaxed);
                conn = Conn::open(tracker).await?;
                continue;
            }
        };
        if shared.measuring.load(Ordering::Relaxed) {
            let us = sent.elapsed().as_micros().min(u32::MAX as u128) as u32;
            shared.heartbeat_us.lock().map_err(|_| anyhow!("poisoned"))?.record(us);
            shared.heartbeats.fetch_add(1, Ordering::Relaxed);
        }
        response_id = out.response_id;
        let mut node = shared.nodes[i].lock().map_err(|_| anyhow!("poisoned"))?;
        for k in &out.kill {
            if let Some(pos) = node.running.iter().position(|r| r.status.container_id == k.container_id) {
                let r = node.running.remove(pos);
                node.done.push(ContainerStatus {
                    state: ContainerState::Complete,
                    exit_status: k.exit_status,
                    ..r.status
                });
            }
        }
        for s in out.start {
            // The RM starts AM containers itself; the AM then runs here, as a task, with the
            // AMRM token of its credentials.
            let Ok(c) = s.id() else { continue };
            let id = c.container.to_string();
            node.running.push(Running { status: running(&id, c.resource, c.priority), end: None });
            let creds = s.credentials.as_deref().and_then(|b| Credentials::from_bytes(b).ok());
            if let Some(token) = creds.as_ref().and_then(|c| c.token(AMRM_TOKEN_KIND)) {
                tokio::spawn(am(shared.clone(), i, id, c.container.attempt.to_string(), token.to_header()));
            }
        }
    }
    Ok(())
}

async fn am(shared: Arc<Shared>, node: usize, container: String, attempt: String, token: String) {
    match run_am(&shared, &token).await {
        // Once the bench stops, the RM goes away under the AMs still running: not an error.
        Err(_) if shared.stop.load(Ordering::Relaxed) => {}
        Err(e) => {
            eprintln!("bench: AM {attempt}: {e:#}");
            shared.errors.fetch_add(1, Ordering::Relaxed);
        }
        Ok(()) => {}
    }
    if let Ok(mut n) = shared.nodes[node].lock() {
        if let Some(r) = n.running.iter_mut().find(|r| r.status.container_id == container) {
            r.end = Some(Instant::now());
        }
    }
    shared.apps_finished.fetch_add(1, Ordering::Relaxed);
}

async fn run_am(shared: &Shared, token: &str) -> Result<()> {
    let mut conn = Conn::open(shared.scheduler).await?;
    let header = Some((paths::AMRM_TOKEN_HEADER, token));
    let reg = RegisterAmRequest { host: "bench".into(), rpc_port: 0, tracking_url: String::new() };
    let _: Value = conn.json(paths::REGISTER_AM, &reg, header).await?;
    let ask = ResourceRequest {
        priority: 1,
        resource_name: "*".into(),
        capability: TASK,
        num_containers: shared.containers as i32,
        relax_locality: true,
    };
    let (mut response_id, mut asks, mut done) = (0, vec![ask], 0u32);
    while done < shared.containers && !shared.stop.load(Ordering::Relaxed) {
        let req = AllocateRequest {
            response_id,
            asks: std::mem::take(&mut asks),
            releases: Vec::new(),
            progress: done as f32 / shared.containers as f32,
        };
        let out: AllocateResponse = conn.json(paths::ALLOCATE, &req, header).await?;
        response_id = out.response_id;
        let end = Instant::now() + shared.task;
        for c in out.allocated {
            let Some(i) = node_index(&c.node_id) else { continue };
            if let Ok(mut n) = shared.nodes[i].lock() {
                n.running.push(Running { status: running(&c.id, c.resource, c.priority), end: Some(end) });
            }
        }
        done += out.completed.len() as u32;
        tokio::time::sleep(Duration::from_millis(1000)).await;
    }
    let fin = FinishAmRequest {
        final_status: FinalStatus::Succeeded,
        diagnostics: String::new(),
        tracking_url: String::new(),
    };
    let _: Value = conn.json(paths::FINISH_AM, &fin, header).await?;
    Ok(())
}

async fn submit(web: SocketAddr, n: usize) -> Result<()> {
    let mut conn = Conn::open(web).await?;
    for _ in 0..n {
        let (s, new) = conn.call("POST", "/ws/v1/cluster/apps/new-application?user.name=bench", b"", None).await?;
        if s != 200 {
            bail!("new-application: HTTP {s}");
        }
        let new: Value = serde_json::from_slice(&new)?;
        let body = json!({
            "application-id": new["application-id"],
            "application-name": "bench",
            "am-container-spec": { "commands": { "command": "simulated" } },
            "resource": { "memory": 1024, "vCores": 1 },
        });
        let (s, _) =
            conn.call("POST", "/ws/v1/cluster/apps?user.name=bench", &serde_json::to_vec(&body)?, None).await?;
        if s != 202 {
            bail!("submit: HTTP {s}");
        }
    }
    Ok(())
}

async fn reader(shared: Arc<Shared>, web: SocketAddr) -> Result<()> {
    let mut conn = Conn::open(web).await?;
    let paths = ["/ws/v1/cluster/apps?states=RUNNING", "/ws/v1/cluster/scheduler", "/ws/v1/cluster/metrics"];
    let mut k = 0;
    while !shared.stop.load(Ordering::Relaxed) {
        let t = Instant::now();
        let (s, _) = conn.call("GET", paths[k % paths.len()], b"", None).await?;
        if s == 200 && shared.measuring.load(Ordering::Relaxed) {
            let us = t.elapsed().as_micros().min(u32::MAX as u128) as u32;
            shared.rest_us.lock().map_err(|_| anyhow!("poisoned"))?.record(us);
        }
        k += 1;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    Ok(())
}

async fn scrape(web: SocketAddr) -> Result<HashMap<String, f64>> {
    let mut conn = Conn::open(web).await?;
    let (_, body) = conn.call("GET", "/metrics", b"", None).await?;
    let text = String::from_utf8(body)?;
    Ok(text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' ').and_then(|(k, v)| Some((k.to_string(), v.parse().ok()?))))
        .collect())
}

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// The same cluster and applications in the in-process simulator: its CPS, and its CPS per
/// second of the scheduler's node walk (a second run with the phase timers on, which slow
/// the heartbeats they time).
fn in_process(args: &BenchRmArgs, apps: usize) -> Result<(f64, f64)> {
    let nodes = (0..args.nodes)
        .map(|i| NodeDef {
            name: format!("sim-{i}"),
            rack: format!("/rack{}", i / 40),
            resource: Resource::new(NODE_MB, NODE_VCORES),
        })
        .collect();
    let span = args.seconds as i64 * 1000;
    let apps = (0..apps.max(1))
        .map(|k| AppDef {
            name: format!("bench-{k}"),
            queue: "default".into(),
            user: "bench".into(),
            arrival_ms: if k < args.apps {
                0
            } else {
                (k - args.apps) as i64 * span / (apps - args.apps).max(1) as i64
            },
            am: Some(Resource::new(1024, 1)),
            stages: vec![Stage {
                groups: vec![TaskGroup {
                    priority: 1,
                    resource: Resource::new(TASK.memory, TASK.vcores),
                    count: args.containers as u64,
                    duration_ms: Some(args.task_ms as i64),
                    host: None,
                    request_delay_ms: 0,
                }],
            }],
        })
        .collect();
    let w = Workload {
        name: "bench-rm".into(),
        nodes,
        apps,
        allocations: "<allocations/>".into(),
        capacity: None,
        properties: scheduler_properties(args),
        max_outstanding: None,
        description: "fairloom bench rm's workload, in process".into(),
    };
    let opts =
        SimOptions { duration_ms: span + 10_000, node_heartbeat_ms: args.heartbeat_ms as i64, ..SimOptions::default() };
    let report = fairloom_sim::load::simulate(&w, opts.clone(), 1).map_err(|e| anyhow!("{e}"))?;
    let timed =
        fairloom_sim::load::simulate(&w, SimOptions { phase_timers: true, ..opts }, 1).map_err(|e| anyhow!("{e}"))?;
    let walk = timed.core_phases.walk_seconds();
    let allocations = timed.allocations as f64;
    Ok((report.cps, if walk > 0.0 { allocations / walk } else { 0.0 }))
}

pub fn run(args: &BenchRmArgs) -> Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let figures = rt.block_on(bench(args))?;
    if args.soak.is_some() {
        // A soak is about what stays; the in-process comparison is the short run's.
        if args.json {
            outln!("{}", serde_json::to_string_pretty(&figures)?);
        } else {
            soak::print_verdict(&figures["soak"]["verdict"]);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let allocations = figures["allocations"].as_f64().unwrap_or(0.0);
    let apps_total = figures["apps_submitted"].as_u64().unwrap_or(0) as usize;
    let (sim_cps, sim_walk_cps) = in_process(args, apps_total)?;
    let mut figures = figures;
    figures["in_process_cps"] = json!(sim_cps);
    figures["in_process_cps_walk"] = json!(sim_walk_cps);
    let service_cps = figures["service_cps"].as_f64().unwrap_or(0.0);
    figures["service_to_in_process"] = json!(if sim_cps > 0.0 { service_cps / sim_cps } else { 0.0 });
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&figures)?);
        return Ok(ExitCode::SUCCESS);
    }
    let f = |k: &str| figures[k].as_f64().unwrap_or(0.0);
    outln!("fairloom bench rm: {} simulated NodeManagers every {} ms, {} apps at once × {} containers of {} ms, {:.1} s measured", args.nodes, args.heartbeat_ms, args.apps, args.containers, args.task_ms, f("seconds"));
    outln!("  node heartbeats handled     {:>10.0} /s  ({} errors)", f("heartbeats_per_second"), figures["errors"]);
    outln!(
        "  heartbeat latency           p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        f("heartbeat_p50_ms"),
        f("heartbeat_p99_ms"),
        f("heartbeat_max_ms")
    );
    outln!(
        "  REST read latency           p50 {:.2} ms, p99 {:.2} ms ({} reads)",
        f("rest_p50_ms"),
        f("rest_p99_ms"),
        figures["rest_reads"]
    );
    outln!("  containers allocated        {allocations:.0} ({:.0} /s of wall time)", f("wall_cps"));
    outln!(
        "  event loop busy             {:.1} s of {} s ({:.0}%)",
        f("loop_busy_seconds"),
        args.seconds,
        100.0 * f("loop_busy_seconds") / args.seconds as f64
    );
    outln!("  CPS through the service     {service_cps:.0} per second of event-loop work");
    outln!(
        "                              {:.0} per CPU second of the loop's thread ({:.1} s CPU)",
        f("service_cps_cpu"),
        f("loop_cpu_seconds")
    );
    outln!(
        "                              {:.0} per second of the scheduler's node walk inside it ({:.2} s)",
        f("service_cps_walk"),
        f("service_walk_seconds")
    );
    outln!(
        "  CPS in process (simulator)  {sim_cps:.0} on the same workload ({:.2}× the service)",
        if service_cps > 0.0 { sim_cps / service_cps } else { 0.0 }
    );
    outln!(
        "                              {:.0} per second of its node walk (phase timers on)",
        f("in_process_cps_walk")
    );
    outln!("  process CPU                 {:.1} s (RM, simulated NMs and AMs together)", f("cpu_seconds"));
    Ok(ExitCode::SUCCESS)
}

async fn bench(args: &BenchRmArgs) -> Result<Value> {
    let mut site = scheduler_properties(args);
    for (k, v) in [
        ("yarn.resourcemanager.scheduler.class", FAIR_CLASS),
        ("yarn.resourcemanager.webapp.address", "127.0.0.1:0"),
        ("yarn.resourcemanager.resource-tracker.address", "127.0.0.1:0"),
        ("yarn.resourcemanager.scheduler.address", "127.0.0.1:0"),
        ("yarn.nm.liveness-monitor.expiry-interval-ms", "600000"),
        ("yarn.am.liveness-monitor.expiry-interval-ms", "600000"),
        ("yarn.scheduler.maximum-allocation-mb", "65536"),
        // Every simulated NM and AM connects from this one address.
        ("fairloom.resource-tracker.max-connections-per-peer", "0"),
        ("fairloom.scheduler.max-connections-per-peer", "0"),
    ] {
        site.insert(k.to_string(), v.to_string());
    }
    site.insert("yarn.resourcemanager.nodemanagers.heartbeat-interval-ms".into(), args.heartbeat_ms.to_string());
    let conf = RmConf::from_site(site, &std::env::temp_dir()).map_err(|e| anyhow!("{e}"))?;
    let rm = fairloom_rm::start(conf).await.map_err(|e| anyhow!("{e}"))?;
    let shared = Arc::new(Shared {
        nodes: (0..args.nodes).map(|_| Mutex::new(SimNode::default())).collect(),
        heartbeat_us: Mutex::new(Latencies::default()),
        rest_us: Mutex::new(Latencies::default()),
        heartbeats: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        apps_finished: AtomicU64::new(0),
        measuring: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        task: Duration::from_millis(args.task_ms),
        containers: args.containers,
        scheduler: rm.scheduler,
    });
    let registered = Arc::new(AtomicU64::new(0));
    let interval = Duration::from_millis(args.heartbeat_ms);
    let mut tasks = Vec::new();
    for i in 0..args.nodes {
        tasks.push(tokio::spawn(nm(shared.clone(), i, rm.tracker, interval, registered.clone())));
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    while (registered.load(Ordering::Relaxed) as usize) < args.nodes {
        if Instant::now() > deadline {
            bail!("only {} of {} nodes registered within 120 s", registered.load(Ordering::Relaxed), args.nodes);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    submit(rm.webapp, args.apps).await?;
    let mut submitted = args.apps;
    tasks.push(tokio::spawn(reader(shared.clone(), rm.webapp)));
    // Measure from the first allocations on.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = scrape(rm.webapp).await?;
    let cpu0 = cpu_seconds();
    shared.measuring.store(true, Ordering::Relaxed);
    let started = Instant::now();
    let end = started + args.duration();
    let mut replaced = 0u64;
    let every = Duration::from_secs(args.sample_seconds.max(1));
    let (mut samples, mut next_sample, mut allocated_before) = (Vec::new(), started, 0.0);
    if args.soak.is_some() && !args.json {
        outln!("fairloom bench rm --soak: {} simulated NodeManagers, {} apps at once × {} containers of {} ms; a sample every {} s", args.nodes, args.apps, args.containers, args.task_ms, every.as_secs());
    }
    while Instant::now() < end {
        if args.soak.is_some() && Instant::now() >= next_sample {
            next_sample += every;
            let now = scrape(rm.webapp).await?;
            let allocated = now.get("fairloom_scheduler_containers_allocated_total").copied().unwrap_or(0.0);
            let s = soak::sample(started.elapsed().as_secs_f64() / 60.0, &now, allocated - allocated_before);
            allocated_before = allocated;
            if !args.json {
                soak::print_sample(&s, every.as_secs_f64());
            }
            samples.push(s);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let finished = shared.apps_finished.load(Ordering::Relaxed);
        if finished > replaced {
            submit(rm.webapp, (finished - replaced) as usize).await?;
            submitted += (finished - replaced) as usize;
            replaced = finished;
        }
    }
    shared.measuring.store(false, Ordering::Relaxed);
    let secs = started.elapsed().as_secs_f64();
    let after = scrape(rm.webapp).await?;
    let cpu = cpu_seconds() - cpu0;
    shared.stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.abort();
    }
    rm.stop().await;
    let soak = args.soak.map(|minutes| {
        let warmup = args.warmup.clamp(0.0, minutes / 2.0);
        let rows: Vec<Value> = samples.iter().map(|s| json!({ "minute": s.minute, "values": s.values })).collect();
        json!({ "minutes": minutes, "samples": rows, "verdict": soak::verdict(&samples, warmup) })
    });
    let delta = |k: &str| after.get(k).copied().unwrap_or(0.0) - before.get(k).copied().unwrap_or(0.0);
    let allocations = delta("fairloom_scheduler_containers_allocated_total");
    let busy = delta("fairloom_rm_loop_busy_seconds_total");
    let loop_cpu = delta("fairloom_rm_loop_cpu_seconds_total");
    // The scheduler's node walk inside the service (its phase timers, every phase).
    let walk: f64 =
        after.keys().filter(|k| k.starts_with("fairloom_scheduler_phase_seconds_total{")).map(|k| delta(k)).sum();
    let hb = shared.heartbeat_us.lock().map_err(|_| anyhow!("poisoned"))?;
    let rest = shared.rest_us.lock().map_err(|_| anyhow!("poisoned"))?;
    Ok(json!({
        "nodes": args.nodes,
        "heartbeat_ms": args.heartbeat_ms,
        "seconds": secs,
        "heartbeats": shared.heartbeats.load(Ordering::Relaxed),
        "heartbeats_per_second": shared.heartbeats.load(Ordering::Relaxed) as f64 / secs,
        "heartbeat_p50_ms": hb.percentile_ms(0.50),
        "heartbeat_p99_ms": hb.percentile_ms(0.99),
        "heartbeat_max_ms": hb.percentile_ms(1.0),
        "rest_reads": rest.len(),
        "rest_p50_ms": rest.percentile_ms(0.50),
        "rest_p99_ms": rest.percentile_ms(0.99),
        "errors": shared.errors.load(Ordering::Relaxed),
        "apps_submitted": submitted,
        "allocations": allocations,
        "wall_cps": allocations / secs,
        "loop_busy_seconds": busy,
        "service_cps": if busy > 0.0 { allocations / busy } else { 0.0 },
        "loop_cpu_seconds": loop_cpu,
        "service_cps_cpu": if loop_cpu > 0.0 { allocations / loop_cpu } else { 0.0 },
        "service_walk_seconds": walk,
        "service_cps_walk": if walk > 0.0 { allocations / walk } else { 0.0 },
        "cpu_seconds": cpu,
        "soak": soak,
    }))
}
