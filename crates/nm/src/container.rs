//! Containers as processes: each runs `launch_container.sh` with bash in its own process
//! group, with YARN's environment and its stdout/stderr in the log dir; a kill is SIGTERM to
//! the group, then SIGKILL after the configured delay; a reaper thread records the exit.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fairloom_protocol::node::StartContainer;
use fairloom_protocol::{ContainerState, ContainerStatus, Res};

use crate::localize::localize;
use crate::metrics::NmMetrics;

#[derive(Debug, Clone)]
pub struct Ctr {
    pub id: String,
    pub app: String,
    pub user: String,
    pub resource: Res,
    pub priority: i32,
    /// The process group (its leader's pid).
    pub pgid: Option<i32>,
    pub state: ContainerState,
    pub exit_status: i32,
    pub diagnostics: String,
    /// The exit status to report once it dies, when someone asked for the kill.
    pub kill_status: Option<i32>,
    pub work_dir: PathBuf,
    pub log_dir: PathBuf,
    /// The RM has acknowledged its completion.
    pub acknowledged: bool,
}

impl Ctr {
    pub fn status(&self) -> ContainerStatus {
        ContainerStatus {
            container_id: self.id.clone(),
            state: self.state,
            exit_status: self.exit_status,
            diagnostics: self.diagnostics.clone(),
            resource: self.resource,
            priority: self.priority,
        }
    }
}

/// Every container of the node, by id.
pub type Table = Arc<Mutex<BTreeMap<String, Ctr>>>;

/// Where a node keeps things, and how it names itself to containers.
#[derive(Debug, Clone)]
pub struct Env {
    pub local_dir: PathBuf,
    pub log_root: PathBuf,
    pub host: String,
    pub port: u16,
    pub kill_delay: Duration,
    pub metrics: Arc<NmMetrics>,
}

/// The application id inside a container id (`container_[eNN_]TS_APP_ATT_N`).
pub fn app_of(container: &str) -> String {
    match container.parse::<fairloom_model::ContainerId>() {
        Ok(c) => c.attempt.application.to_string(),
        Err(_) => "unknown".to_string(),
    }
}

/// YARN's command markers: `{{VAR}}` is `$VAR` in the shell, `<LOG_DIR>` the container's
/// log dir, `<CPS>` the class-path separator.
pub fn expand_markers(command: &str, log_dir: &Path) -> String {
    let mut out = command.replace("<LOG_DIR>", &log_dir.display().to_string()).replace("<CPS>", ":");
    while let Some(start) = out.find("{{") {
        let Some(len) = out[start..].find("}}") else { break };
        let name = out[start + 2..start + len].to_string();
        out.replace_range(start..start + len + 2, &format!("${name}"));
    }
    out
}

fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "'\\''"))
}

/// Start `spec` (its token already checked). The container is in the table before its
/// process starts, so a kill that arrives meanwhile finds it.
pub fn launch(table: &Table, env: &Env, spec: &StartContainer) -> Result<(), String> {
    // Both become paths: nothing is created for a name that could leave the node's dirs.
    fairloom_model::user::check_user_name(&spec.user).map_err(|e| e.to_string())?;
    let cid: fairloom_model::ContainerId =
        spec.container_id.parse().map_err(|e| format!("invalid container id '{}': {e}", spec.container_id))?;
    if cid.to_string() != spec.container_id {
        return Err(format!("container id '{}' is not in its canonical form {cid}", spec.container_id));
    }
    let app = cid.attempt.application.to_string();
    let work = env.local_dir.join("usercache").join(&spec.user).join("appcache").join(&app).join(&spec.container_id);
    let logs = env.log_root.join(&app).join(&spec.container_id);
    let mut ctr = Ctr {
        id: spec.container_id.clone(),
        app: app.clone(),
        user: spec.user.clone(),
        resource: spec.resource,
        priority: spec.priority,
        pgid: None,
        state: ContainerState::New,
        exit_status: 0,
        diagnostics: String::new(),
        kill_status: None,
        work_dir: work.clone(),
        log_dir: logs.clone(),
        acknowledged: false,
    };
    {
        let mut t = table.lock().map_err(|_| "container table poisoned".to_string())?;
        if t.contains_key(&spec.container_id) {
            return Err(format!("Container {} already is running on this node", spec.container_id));
        }
        t.insert(spec.container_id.clone(), ctr.clone());
    }
    let started = start_process(env, spec, &work, &logs);
    let mut t = table.lock().map_err(|_| "container table poisoned".to_string())?;
    match started {
        Ok(child) => {
            let pgid = child.id() as i32;
            if let Some(c) = t.get_mut(&spec.container_id) {
                c.pgid = Some(pgid);
                c.state = ContainerState::Running;
                if let Some(status) = c.kill_status {
                    // Killed before it ran: stop it now.
                    signal_group(pgid, libc::SIGKILL);
                    c.exit_status = status;
                }
            }
            drop(t);
            tracing::info!("Container {} of user {} started (process group {pgid})", spec.container_id, spec.user);
            env.metrics.launched.inc();
            reap(table.clone(), spec.container_id.clone(), child, env.metrics.clone());
            Ok(())
        }
        Err(e) => {
            tracing::warn!("Container {} failed to launch: {e}", spec.container_id);
            env.metrics.failed.inc();
            ctr.state = ContainerState::Complete;
            ctr.exit_status = -1;
            ctr.diagnostics = format!("Container launch failed: {e}");
            t.insert(spec.container_id.clone(), ctr);
            Ok(())
        }
    }
}

fn start_process(env: &Env, spec: &StartContainer, work: &Path, logs: &Path) -> Result<std::process::Child, String> {
    std::fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    std::fs::create_dir_all(logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    localize(work, &spec.launch.local_resources).map_err(|e| e.to_string())?;
    let mut vars: Vec<(String, String)> = Vec::new();
    // YARN's env whitelist: what the node's own environment passes through.
    for name in ["PATH", "HOME", "LANG", "JAVA_HOME", "HADOOP_HOME", "HADOOP_CONF_DIR", "TMPDIR"] {
        if let Ok(v) = std::env::var(name) {
            vars.push((name.to_string(), v));
        }
    }
    let own = [
        ("CONTAINER_ID", spec.container_id.clone()),
        ("NM_HOST", env.host.clone()),
        ("NM_PORT", env.port.to_string()),
        ("NM_HTTP_PORT", env.port.to_string()),
        ("LOG_DIRS", logs.display().to_string()),
        ("LOCAL_DIRS", env.local_dir.display().to_string()),
        ("PWD", work.display().to_string()),
        ("USER", spec.user.clone()),
        ("LOGNAME", spec.user.clone()),
        ("HADOOP_TOKEN_FILE_LOCATION", String::new()),
        ("LOCAL_USER_DIRS", env.local_dir.join("usercache").join(&spec.user).display().to_string()),
    ];
    vars.extend(own.into_iter().map(|(k, v)| (k.to_string(), v)));
    for (k, v) in &spec.launch.environment {
        vars.retain(|(name, _)| name != k);
        vars.push((k.clone(), expand_markers(v, logs)));
    }
    let command = spec.launch.commands.iter().map(|c| expand_markers(c, logs)).collect::<Vec<_>>().join(" ");
    let mut script = String::from("#!/bin/bash\n");
    for (k, v) in &vars {
        if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !k.is_empty() {
            script.push_str(&format!("export {k}={}\n", quote(v)));
        }
    }
    script.push_str(&format!("exec /bin/bash -c {}\n", quote(&command)));
    let script_path = work.join("launch_container.sh");
    std::fs::write(&script_path, script).map_err(|e| format!("{}: {e}", script_path.display()))?;
    let out = File::create(logs.join("stdout")).map_err(|e| e.to_string())?;
    let err = File::create(logs.join("stderr")).map_err(|e| e.to_string())?;
    Command::new("/bin/bash")
        .arg(&script_path)
        .current_dir(work)
        .env_clear()
        .envs(vars.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start /bin/bash: {e}"))
}

/// Wait for the process on a thread of its own and record how it ended.
fn reap(table: Table, id: String, mut child: std::process::Child, metrics: Arc<NmMetrics>) {
    std::thread::spawn(move || {
        let status = child.wait();
        let Ok(mut t) = table.lock() else { return };
        let Some(c) = t.get_mut(&id) else { return };
        c.state = ContainerState::Complete;
        let code = match status {
            Ok(s) => s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)),
            Err(_) => -1,
        };
        if let Some(pg) = c.pgid {
            // Whatever the container left behind in its group goes with it.
            signal_group(pg, libc::SIGKILL);
        }
        metrics.ended(c.kill_status.is_some(), code);
        tracing::info!(
            "Container {id} exited with code {code}{}",
            c.kill_status.map(|s| format!(" after a kill (reported as {s})")).unwrap_or_default()
        );
        match c.kill_status {
            Some(s) => {
                c.exit_status = s;
                if c.diagnostics.is_empty() {
                    c.diagnostics = format!("Container killed (exit code {code})");
                }
            }
            None => {
                c.exit_status = code;
                if code != 0 {
                    c.diagnostics = format!("Exception from container-launch. Exit code: {code}");
                }
            }
        }
    });
}

pub fn signal_group(pgid: i32, signal: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; it has no memory effects.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Kill a container: SIGTERM to its group, SIGKILL after `delay`; `status` is what will be
/// reported for it. Unknown or finished containers are left alone.
pub fn kill(table: &Table, id: &str, status: i32, diagnostics: &str, delay: Duration) {
    let pgid = {
        let Ok(mut t) = table.lock() else { return };
        let Some(c) = t.get_mut(id) else { return };
        if c.state == ContainerState::Complete || c.kill_status.is_some() {
            return;
        }
        c.kill_status = Some(status);
        c.diagnostics = diagnostics.to_string();
        tracing::info!("Killing container {id} (exit status {status}): {diagnostics}");
        c.pgid
    };
    let Some(pgid) = pgid else { return };
    signal_group(pgid, libc::SIGTERM);
    let table = table.clone();
    let id = id.to_string();
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        let alive =
            table.lock().map(|t| t.get(&id).is_some_and(|c| c.state != ContainerState::Complete)).unwrap_or(false);
        if alive {
            signal_group(pgid, libc::SIGKILL);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_become_shell_variables_and_paths() {
        let cmd = "{{JAVA_HOME}}/bin/java -cp a<CPS>b 1><LOG_DIR>/stdout {{X}}";
        assert_eq!(expand_markers(cmd, Path::new("/l")), "$JAVA_HOME/bin/java -cp a:b 1>/l/stdout $X");
        assert_eq!(expand_markers("{{unclosed", Path::new("/l")), "{{unclosed");
    }

    #[test]
    fn nothing_is_created_for_a_bad_user_or_container_id() {
        let dir = std::env::temp_dir().join(format!("fairloom-launch-refused-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let env = Env {
            local_dir: dir.join("local"),
            log_root: dir.join("logs"),
            host: "127.0.0.1".to_string(),
            port: 1,
            kill_delay: Duration::from_millis(10),
            metrics: Arc::new(NmMetrics::default()),
        };
        let table: Table = Arc::new(Mutex::new(BTreeMap::new()));
        let spec = |user: &str, id: &str| StartContainer {
            container_id: id.to_string(),
            user: user.to_string(),
            resource: Res::new(1024, 1),
            priority: 0,
            token: String::new(),
            launch: Default::default(),
        };
        for (user, id) in [
            ("../../../x", "container_1_0001_01_000001"),
            ("alice", "../container_1_0001_01_000001"),
            ("alice", "container_1_0001_01_000001/../../x"),
            ("alice", "container_01_0001_01_000001"),
        ] {
            let e = launch(&table, &env, &spec(user, id)).unwrap_err();
            assert!(e.contains("Invalid user name") || e.contains("container id"), "{e}");
        }
        assert!(!dir.exists(), "nothing was created");
        assert!(table.lock().unwrap().is_empty());
    }

    #[test]
    fn container_ids_name_their_app() {
        assert_eq!(app_of("container_e02_17_0003_01_000004"), "application_17_0003");
        assert_eq!(app_of("junk"), "unknown");
    }
}
