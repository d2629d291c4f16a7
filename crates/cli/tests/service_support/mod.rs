//! Running `fairloom rm`, `fairloom nm` and `fairloom shell` as real processes on loopback,
//! each stopped when its guard drops; every wait is bounded.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_fairloom");

/// A free port on loopback (bound, then let go).
/// A port free now, for a daemon started next to listen on. Taken below Linux's ephemeral
/// range (32768 and up): a port the kernel picked there could be handed to another test's
/// outgoing connection before the daemon binds it.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // Each test binary starts at its own place, spread by its pid.
    let start = std::process::id() * 7919;
    for _ in 0..12_000 {
        let port = 20_000 + (start.wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed)) % 12_000) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in 20000..32000")
}

pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("fairloom-it-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Self(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A yarn-site.xml with fixed loopback ports (so a restarted RM is found again), short
/// intervals, the Fair Scheduler and recovery on; `extra` adds or overrides keys.
pub struct Cluster {
    pub conf: PathBuf,
    pub web: String,
    pub tracker: String,
    /// The AM protocol's address.
    pub sched: String,
}

pub fn write_conf(dir: &Path, extra: &[(&str, &str)], allocations: Option<&str>) -> Cluster {
    let conf = dir.join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    let web = format!("127.0.0.1:{}", free_port());
    let tracker = format!("127.0.0.1:{}", free_port());
    let sched = format!("127.0.0.1:{}", free_port());
    let store = dir.join("rmstore").display().to_string();
    let mut props: Vec<(String, String)> = vec![
        ("yarn.resourcemanager.webapp.address", web.as_str()),
        ("yarn.resourcemanager.resource-tracker.address", tracker.as_str()),
        ("yarn.resourcemanager.scheduler.address", sched.as_str()),
        (
            "yarn.resourcemanager.scheduler.class",
            "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler",
        ),
        ("yarn.scheduler.fair.user-as-default-queue", "false"),
        ("yarn.resourcemanager.recovery.enabled", "true"),
        ("yarn.resourcemanager.leveldb-state-store.path", store.as_str()),
        ("yarn.resourcemanager.nodemanagers.heartbeat-interval-ms", "100"),
        ("yarn.nm.liveness-monitor.expiry-interval-ms", "3000"),
        ("yarn.am.liveness-monitor.expiry-interval-ms", "4000"),
        ("yarn.nodemanager.sleep-delay-before-sigkill.ms", "300"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in extra {
        props.retain(|(name, _)| name != k);
        props.push((k.to_string(), v.to_string()));
    }
    let mut xml = String::from("<configuration>\n");
    for (k, v) in &props {
        xml.push_str(&format!("  <property><name>{k}</name><value>{v}</value></property>\n"));
    }
    xml.push_str("</configuration>\n");
    std::fs::write(conf.join("yarn-site.xml"), xml).unwrap();
    if let Some(a) = allocations {
        std::fs::write(conf.join("fair-scheduler.xml"), a).unwrap();
    }
    Cluster { conf, web, tracker, sched }
}

/// A child process, killed (SIGTERM, then SIGKILL) when dropped. Its stderr (the daemons'
/// logs) is kept and printed only if the test fails, so a passing run stays quiet.
pub struct Proc {
    pub child: Child,
    pub lines: mpsc::Receiver<String>,
    pub seen: Vec<String>,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    name: String,
}

impl Proc {
    pub fn spawn(args: &[&str]) -> Self {
        Self::spawn_bin(BIN, args)
    }

    /// `bin` (a copy of fairloom elsewhere) with `args`.
    pub fn spawn_bin(bin: &str, args: &[&str]) -> Self {
        Self::spawn_cmd(Command::new(bin).args(args))
    }

    /// fairloom with `args`, run from `cwd`.
    pub fn spawn_in(cwd: &Path, args: &[&str]) -> Self {
        Self::spawn_cmd(Command::new(BIN).args(args).current_dir(cwd))
    }

    fn spawn_cmd(cmd: &mut Command) -> Self {
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start fairloom");
        let out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let err = child.stderr.take().unwrap();
        let keep = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                keep.lock().unwrap().push(line);
            }
        });
        let name = cmd.get_args().next().and_then(|a| a.to_str()).unwrap_or("").to_string();
        Self { child, lines: rx, seen: Vec::new(), log, name }
    }

    /// What the process wrote to stderr so far.
    pub fn stderr(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Wait (bounded) for an output line containing `text`.
    pub fn wait_line(&mut self, text: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(line) = self.lines.recv_timeout(Duration::from_millis(100)) {
                self.seen.push(line.clone());
                if line.contains(text) {
                    return line;
                }
            }
        }
        panic!("no line with '{text}' within {within:?}; saw {:?}", self.seen);
    }

    /// Wait (bounded) for the process to exit; all its output lines.
    pub fn finish(mut self, within: Duration) -> (Option<i32>, Vec<String>) {
        let deadline = Instant::now() + within;
        loop {
            while let Ok(line) = self.lines.try_recv() {
                self.seen.push(line);
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                std::thread::sleep(Duration::from_millis(50));
                while let Ok(line) = self.lines.try_recv() {
                    self.seen.push(line);
                }
                return (status.code(), std::mem::take(&mut self.seen));
            }
            if Instant::now() > deadline {
                panic!("still running after {within:?}; output {:?}", self.seen);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn sigkill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn terminate(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: signalling our own child by pid.
            unsafe {
                libc_kill(self.child.id() as i32, 15);
            }
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.terminate();
        if std::thread::panicking() {
            std::thread::sleep(Duration::from_millis(50));
            for line in self.log.lock().unwrap().iter() {
                eprintln!("[{} {}] {line}", self.name, self.child.id());
            }
        }
    }
}

pub fn start_rm(c: &Cluster) -> Proc {
    start_rm_with(c, &[])
}

/// The RM with `extra` arguments (e.g. `--log-dir`).
pub fn start_rm_with(c: &Cluster, extra: &[&str]) -> Proc {
    let mut args = vec!["rm", "--conf", c.conf.to_str().unwrap()];
    args.extend_from_slice(extra);
    let mut rm = Proc::spawn(&args);
    rm.wait_line("REST API", Duration::from_secs(20));
    rm
}

pub fn start_nm(c: &Cluster, dir: &Path, name: &str, resource: &str) -> Proc {
    start_nm_with(c, dir, name, resource, &[])
}

/// A NodeManager with `extra` arguments.
pub fn start_nm_with(c: &Cluster, dir: &Path, name: &str, resource: &str, extra: &[&str]) -> Proc {
    let d = dir.join(name);
    let mut args = vec![
        "nm",
        "--rm",
        &c.tracker,
        "--resource",
        resource,
        "--dir",
        d.to_str().unwrap(),
        "--conf",
        c.conf.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let mut nm = Proc::spawn(&args);
    nm.wait_line("fairloom NodeManager", Duration::from_secs(20));
    nm
}

pub fn get(url: &str) -> Result<Value, (u16, Value)> {
    match ureq::get(url).call() {
        Ok(r) => Ok(r.into_json().unwrap_or(Value::Null)),
        Err(ureq::Error::Status(code, r)) => Err((code, r.into_json().unwrap_or(Value::Null))),
        Err(e) => Err((0, Value::String(e.to_string()))),
    }
}

pub fn send(method: &str, url: &str, body: &str) -> Result<Value, (u16, Value)> {
    let r = ureq::request(method, url).set("content-type", "application/json").send_string(body);
    match r {
        Ok(r) => {
            let text = r.into_string().unwrap_or_default();
            Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
        }
        Err(ureq::Error::Status(code, r)) => Err((code, r.into_json().unwrap_or(Value::Null))),
        Err(e) => Err((0, Value::String(e.to_string()))),
    }
}

/// Poll `f` every 100 ms until it gives `Some`, for at most `within`.
pub fn eventually<T>(within: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = f() {
            return v;
        }
        if Instant::now() > deadline {
            panic!("timed out after {within:?} waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Wait until `nodes` NodeManagers are RUNNING.
pub fn wait_nodes(c: &Cluster, nodes: usize) {
    eventually(Duration::from_secs(20), "nodes to register", || {
        let m = get(&format!("http://{}/ws/v1/cluster/metrics", c.web)).ok()?;
        (m["clusterMetrics"]["activeNodes"].as_u64()? as usize >= nodes).then_some(())
    });
}

pub fn app(c: &Cluster, id: &str) -> Value {
    get(&format!("http://{}/ws/v1/cluster/apps/{id}", c.web)).map(|v| v["app"].clone()).unwrap_or(Value::Null)
}

/// Submit a DistributedShell app without waiting; its id.
pub fn shell(c: &Cluster, args: &[&str]) -> Proc {
    let rm = format!("http://{}", c.web);
    let mut all = vec!["shell", "--rm", rm.as_str(), "--timeout", "90", "--user", "alice"];
    all.extend_from_slice(args);
    Proc::spawn(&all)
}

pub fn submitted_id(p: &mut Proc) -> String {
    let line = p.wait_line("Submitted application", Duration::from_secs(20));
    line.rsplit(' ').next().unwrap().to_string()
}

/// The node id a NodeManager printed at start.
pub fn node_id(nm: &Proc) -> String {
    let line = nm.seen.iter().find(|l| l.contains("fairloom NodeManager")).expect("started");
    line.split_whitespace().nth(2).unwrap().to_string()
}

/// Wait until the NodeManagers themselves run `n` containers (allocated is not started).
pub fn wait_running_on_nodes(c: &Cluster, n: usize) {
    eventually(Duration::from_secs(30), "containers to run on the nodes", || {
        let nodes = get(&format!("http://{}/ws/v1/cluster/nodes?states=RUNNING", c.web)).ok()?;
        let mut running = 0;
        for node in nodes["nodes"]["node"].as_array()? {
            let http = node["nodeHTTPAddress"].as_str()?;
            let cs = get(&format!("http://{http}/ws/v1/node/containers")).ok()?;
            running += cs["containers"]["container"]
                .as_array()
                .map(|l| l.iter().filter(|c| c["state"] == "RUNNING").count())
                .unwrap_or(0);
        }
        (running == n).then_some(())
    });
}
