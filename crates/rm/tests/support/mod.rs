//! An in-process ResourceManager on loopback ports for the REST tests, and a small client.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{json, Value};

use fairloom_config::properties::Properties;
use fairloom_protocol::node::{
    NodeHeartbeatRequest, NodeHeartbeatResponse, RegisterNodeRequest, RegisterNodeResponse, StartContainer,
};
use fairloom_protocol::token::{Credentials, AMRM_TOKEN_KIND};
use fairloom_protocol::{paths, ContainerState, ContainerStatus, Res};
use fairloom_rm::conf::RmConf;
use fairloom_rm::RmHandle;

pub struct Rm {
    pub base: String,
    pub handle: Option<RmHandle>,
    pub rt: tokio::runtime::Runtime,
    /// Each registered node's session, which its heartbeats carry.
    pub sessions: Mutex<HashMap<String, String>>,
    _dir: TempDir,
}

pub struct TempDir(pub PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Drop for Rm {
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            self.rt.block_on(h.stop());
        }
    }
}

/// The AMRM token the RM put in an AM container's credentials, as the header carries it.
pub fn am_token(am: &StartContainer) -> String {
    let creds = Credentials::from_bytes(am.credentials.as_deref().expect("the AM is given credentials")).unwrap();
    creds.token(AMRM_TOKEN_KIND).expect("an AMRM token").to_header()
}

pub const FAIR: &str = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler";

/// Start an RM with `site` over YARN's loopback defaults (port 0), and `file` as the
/// scheduler's configuration (fair-scheduler.xml or capacity-scheduler.xml by the class).
pub fn start(name: &str, site: &[(&str, &str)], file: Option<&str>) -> Rm {
    let dir = std::env::temp_dir().join(format!("fairloom-rm-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut props = Properties::new();
    for (k, v) in [
        ("yarn.resourcemanager.webapp.address", "127.0.0.1:0"),
        ("yarn.resourcemanager.resource-tracker.address", "127.0.0.1:0"),
        ("yarn.resourcemanager.scheduler.address", "127.0.0.1:0"),
    ] {
        props.insert(k.to_string(), v.to_string());
    }
    // Its own store, should a test turn recovery on.
    props
        .insert("yarn.resourcemanager.leveldb-state-store.path".to_string(), dir.join("rmstore").display().to_string());
    for (k, v) in site {
        props.insert(k.to_string(), v.to_string());
    }
    if let Some(text) = file {
        let fair = props.get("yarn.resourcemanager.scheduler.class").is_some_and(|c| c == FAIR);
        let name = if fair { "fair-scheduler.xml" } else { "capacity-scheduler.xml" };
        std::fs::write(dir.join(name), text).unwrap();
    }
    let conf = RmConf::from_site(props, &dir).expect("configuration");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let handle = rt.block_on(fairloom_rm::start(conf)).expect("the RM starts");
    Rm {
        base: format!("http://{}", handle.webapp),
        handle: Some(handle),
        rt,
        sessions: Mutex::new(HashMap::new()),
        _dir: TempDir(dir),
    }
}

/// What a node reports of one container of 1024 MB, 1 vcore.
pub fn status(container_id: &str, state: ContainerState, priority: i32) -> ContainerStatus {
    ContainerStatus {
        container_id: container_id.to_string(),
        state,
        exit_status: 0,
        diagnostics: String::new(),
        resource: Res::new(1024, 1),
        priority,
        creation_time: 0,
        finish_time: 0,
    }
}

/// (status, JSON body or Null).
pub fn call(method: &str, url: &str, body: Option<Value>) -> (u16, Value) {
    let req = ureq::request(method, url);
    let out = match body {
        Some(b) => req.send_json(b),
        None => req.call(),
    };
    match out {
        Ok(r) => {
            let status = r.status();
            (status, r.into_json().unwrap_or(Value::Null))
        }
        Err(ureq::Error::Status(status, r)) => (status, r.into_json().unwrap_or(Value::Null)),
        Err(e) => panic!("{method} {url}: {e}"),
    }
}

impl Rm {
    pub fn url(&self, path: &str, user: Option<&str>) -> String {
        match user {
            Some(u) => format!("{}{path}{}user.name={u}", self.base, if path.contains('?') { "&" } else { "?" }),
            None => format!("{}{path}", self.base),
        }
    }

    /// new-application then submit as `user` to `queue`; (status, app id, error body).
    pub fn submit(&self, user: &str, queue: &str, extra: Value) -> (u16, String, Value) {
        let (s, new) = call("POST", &self.url("/ws/v1/cluster/apps/new-application", Some(user)), None);
        assert_eq!(s, 200, "{new}");
        let id = new["application-id"].as_str().unwrap().to_string();
        let mut body = json!({
            "application-id": id,
            "application-name": format!("{user}-app"),
            "queue": queue,
            "am-container-spec": { "commands": { "command": "sleep 1" } },
            "resource": { "memory": 1024, "vCores": 1 },
        });
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                b.insert(k.clone(), v.clone());
            }
        }
        let (s, err) = call("POST", &self.url("/ws/v1/cluster/apps", Some(user)), Some(body));
        (s, id, err)
    }

    pub fn app(&self, id: &str) -> (u16, Value) {
        call("GET", &self.url(&format!("/ws/v1/cluster/apps/{id}"), None), None)
    }

    pub fn put(&self, id: &str, what: &str, user: &str, body: Value) -> (u16, Value) {
        call("PUT", &self.url(&format!("/ws/v1/cluster/apps/{id}/{what}"), Some(user)), Some(body))
    }

    /// Register a node `name` over the node protocol; heartbeat it with [`Rm::heartbeat`].
    pub fn register_node(&self, name: &str, memory: i64, vcores: i64) {
        self.register_node_with(name, memory, vcores, Vec::new());
    }

    /// Register (or register again) node `name`, reporting the containers it has.
    pub fn register_node_with(&self, name: &str, memory: i64, vcores: i64, containers: Vec<ContainerStatus>) {
        let out = self.try_register_node(name, memory, vcores, containers);
        assert_eq!(out.action, fairloom_protocol::node::NodeAction::Normal, "{}", out.diagnostics);
    }

    /// Register node `name`; the RM's answer, whatever it is.
    pub fn try_register_node(
        &self,
        name: &str,
        memory: i64,
        vcores: i64,
        containers: Vec<ContainerStatus>,
    ) -> RegisterNodeResponse {
        let tracker = self.handle.as_ref().unwrap().tracker;
        let req = RegisterNodeRequest {
            node_id: name.to_string(),
            http_address: "127.0.0.1:1".to_string(),
            rack: None,
            resource: Res::new(memory, vcores),
            containers,
            version: "test".to_string(),
            previous_session: self.sessions.lock().unwrap().get(name).cloned().unwrap_or_default(),
            proof: String::new(),
            instance: format!("test-{name}"),
        };
        let url = format!("http://{tracker}{}", paths::REGISTER_NODE);
        let (s, body) = call("POST", &url, Some(serde_json::to_value(req).unwrap()));
        assert_eq!(s, 200, "{body}");
        let out: RegisterNodeResponse = serde_json::from_value(body).unwrap();
        self.sessions.lock().unwrap().insert(name.to_string(), out.session.clone());
        out
    }

    /// Heartbeat node `name` until it is told to start something (the scheduler's update
    /// runs on the loop's tick, so an AM is placed a tick after its submission), at most 5 s.
    pub fn heartbeat_until_started(&self, name: &str) -> Vec<StartContainer> {
        for response_id in 0..50 {
            let started = self.heartbeat_starts(name, response_id);
            if !started.is_empty() {
                return started;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Vec::new()
    }

    /// One heartbeat of node `name` reporting nothing; the containers it is told to start.
    pub fn heartbeat_starts(&self, name: &str, response_id: u64) -> Vec<StartContainer> {
        self.heartbeat_reporting(name, response_id, Vec::new())
    }

    /// One heartbeat of node `name` reporting `containers`; the containers it is told to start.
    pub fn heartbeat_reporting(
        &self,
        name: &str,
        response_id: u64,
        containers: Vec<ContainerStatus>,
    ) -> Vec<StartContainer> {
        self.heartbeat(name, response_id, containers).start
    }

    /// One heartbeat of node `name` with its session; the whole answer.
    pub fn heartbeat(&self, name: &str, response_id: u64, containers: Vec<ContainerStatus>) -> NodeHeartbeatResponse {
        let session = self.sessions.lock().unwrap().get(name).cloned().unwrap_or_default();
        self.heartbeat_as(name, &session, response_id, containers)
    }

    /// One heartbeat of node `name` carrying `session` (another's, or none).
    pub fn heartbeat_as(
        &self,
        name: &str,
        session: &str,
        response_id: u64,
        containers: Vec<ContainerStatus>,
    ) -> NodeHeartbeatResponse {
        let tracker = self.handle.as_ref().unwrap().tracker;
        let req = NodeHeartbeatRequest {
            node_id: name.to_string(),
            session: session.to_string(),
            response_id,
            containers,
            healthy: true,
            health_report: String::new(),
            last_known_container_token_key_id: -1,
            last_known_nm_token_key_id: -1,
        };
        let url = format!("http://{tracker}{}", paths::NODE_HEARTBEAT);
        let (s, body) = call("POST", &url, Some(serde_json::to_value(req).unwrap()));
        assert_eq!(s, 200, "{body}");
        serde_json::from_value(body).unwrap()
    }

    /// POST `body` to the AM protocol's `path` with the attempt's AMRM token.
    pub fn am_call(&self, path: &str, token: &str, body: Value) -> (u16, Value) {
        let tracker = self.handle.as_ref().unwrap().scheduler;
        let url = format!("http://{tracker}{path}");
        match ureq::post(&url).set(paths::AMRM_TOKEN_HEADER, token).send_json(body) {
            Ok(r) => (r.status(), r.into_json().unwrap_or(Value::Null)),
            Err(ureq::Error::Status(s, r)) => (s, r.into_json().unwrap_or(Value::Null)),
            Err(e) => panic!("POST {path}: {e}"),
        }
    }

    /// Register, as attempt 1 of app `id`, the AM that `am` started; its AMRM token (as the
    /// header carries it) and attempt id.
    pub fn register_am(&self, id: &str, am: &StartContainer) -> (String, String) {
        let token = am_token(am);
        let attempt = format!("appattempt_{}_000001", id.trim_start_matches("application_"));
        let (s, reg) =
            self.am_call("/fairloom/v1/am/register", &token, json!({ "host": "h", "rpc_port": 0, "tracking_url": "" }));
        assert_eq!(s, 200, "{reg}");
        (token, attempt)
    }

    pub fn text(&self, path: &str) -> (u16, String) {
        match ureq::get(&self.url(path, None)).call() {
            Ok(r) => (r.status(), r.into_string().unwrap()),
            Err(ureq::Error::Status(s, r)) => (s, r.into_string().unwrap_or_default()),
            Err(e) => panic!("GET {path}: {e}"),
        }
    }

    /// `/metrics` once `ok` holds of it (the loop publishes every 200 ms), within 10 s.
    pub fn scrape_until(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let (status, text) = self.text("/metrics");
            assert_eq!(status, 200);
            if ok(&text) {
                return text;
            }
            assert!(std::time::Instant::now() < deadline, "no {what} within 10 s in:\n{text}");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}
