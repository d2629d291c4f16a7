//! Containers as processes: each runs `launch_container.sh` with bash in its own process
//! group, with YARN's environment and its stdout/stderr in the log dir; a kill is SIGTERM to
//! the group, then SIGKILL after the configured delay; a reaper thread records the exit.

use std::collections::BTreeMap;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fairloom_protocol::token::{ContainerTokenId, Credentials};
use fairloom_protocol::{ContainerState, ContainerStatus, LaunchContext, Res};

use crate::executor::Executor;
use crate::localize::localize;
use crate::metrics::NmMetrics;
use crate::workdir;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Ctr {
    pub id: String,
    pub app: String,
    pub user: String,
    pub resource: Res,
    pub priority: i32,
    /// The process group (its leader's pid).
    pub pgid: Option<i32>,
    /// When the group's leader started (clock ticks since boot): with the pid, what tells it
    /// from a later process that reused the pid, after a restart of the node.
    #[serde(default)]
    pub start_ticks: Option<u64>,
    /// When its container token expires: until then no token may start it again.
    #[serde(default)]
    pub token_expiry: i64,
    pub state: ContainerState,
    pub exit_status: i32,
    pub diagnostics: String,
    /// The exit status to report once it dies, when someone asked for the kill.
    pub kill_status: Option<i32>,
    pub work_dir: PathBuf,
    pub log_dir: PathBuf,
    /// The RM has acknowledged its completion.
    pub acknowledged: bool,
    /// When the RM allocated it (from its token) and when it ended here (epoch ms; 0 while
    /// it runs).
    pub creation_time: i64,
    pub finish_time: i64,
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
            creation_time: self.creation_time,
            finish_time: self.finish_time,
        }
    }
}

/// What to start: who, what and where come from its container token, already checked.
pub struct Launch<'a> {
    pub id: &'a ContainerTokenId,
    pub context: &'a LaunchContext,
    /// The credentials file's bytes (an AM's AMRM token); an empty one otherwise.
    pub credentials: Option<&'a [u8]>,
}

pub use crate::workdir::TOKEN_FILE;

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Every container of the node, by id.
pub type Table = Arc<Mutex<BTreeMap<String, Ctr>>>;

/// Where a node keeps things, and how it names itself to containers.
#[derive(Clone)]
pub struct Env {
    pub local_dir: PathBuf,
    pub log_root: PathBuf,
    pub host: String,
    pub port: u16,
    pub kill_delay: Duration,
    pub metrics: Arc<NmMetrics>,
    /// Saves the node's state after every change (none in unit tests).
    pub persist: Option<Persist>,
    /// Who containers run as.
    pub executor: Arc<Executor>,
}

/// What saves a node's state (see [`crate::state`]).
pub type Persist = Arc<dyn Fn(&Table) + Send + Sync>;

impl Env {
    pub fn save(&self, table: &Table) {
        if let Some(p) = &self.persist {
            p(table);
        }
    }
}

/// Where a container's launch script leaves its command's exit code (YARN's
/// `<pid file>.exitcode`): how a restarted node learns how a container it took back ended.
pub fn exit_file(c: &Ctr) -> PathBuf {
    c.work_dir.join(format!("{}.exitcode", c.id))
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
    let text = command.replace("<LOG_DIR>", &log_dir.display().to_string()).replace("<CPS>", ":");
    // One pass, left to right (replacing in place and searching again from the start was
    // quadratic: a long enough command held a node for a minute).
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else { break };
        out.push_str(&rest[..start]);
        out.push('$');
        out.push_str(&rest[start + 2..start + 2 + len]);
        rest = &rest[start + 2 + len + 2..];
    }
    out.push_str(rest);
    out
}

fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "'\\''"))
}

/// Start `spec`. The container is in the table before its process starts, so a kill that
/// arrives meanwhile finds it.
pub fn launch(table: &Table, env: &Env, spec: &Launch) -> Result<(), String> {
    let ctr = admit(table, env, spec)?;
    run(table, env, spec, ctr);
    Ok(())
}

/// Take `spec` into the table as NEW (the part that must happen in the order requests come:
/// a kill that follows finds it); [`run`] does the rest.
pub fn admit(table: &Table, env: &Env, spec: &Launch) -> Result<Ctr, String> {
    let user = spec.id.user.as_str();
    // It becomes a path: nothing is created for a name that could leave the node's dirs (the
    // RM refuses such names; this node does not take that on trust).
    fairloom_model::user::check_user_name(user).map_err(|e| e.to_string())?;
    let cid = spec.id.container;
    let id = cid.to_string();
    let app = cid.attempt.application.to_string();
    let work = env.local_dir.join("usercache").join(user).join("appcache").join(&app).join(&id);
    let logs = env.log_root.join(&app).join(&id);
    let ctr = Ctr {
        id: id.clone(),
        app: app.clone(),
        user: user.to_string(),
        resource: spec.id.resource,
        priority: spec.id.priority,
        pgid: None,
        start_ticks: None,
        token_expiry: spec.id.expiry,
        state: ContainerState::New,
        exit_status: 0,
        diagnostics: String::new(),
        kill_status: None,
        work_dir: work.clone(),
        log_dir: logs.clone(),
        acknowledged: false,
        creation_time: spec.id.creation_time,
        finish_time: 0,
    };
    {
        let mut t = table.lock().map_err(|_| "container table poisoned".to_string())?;
        if t.contains_key(&id) {
            return Err(format!("Container {id} already is running on this node!!"));
        }
        t.insert(id.clone(), ctr.clone());
    }
    Ok(ctr)
}

/// Start an admitted container's process: its directories, local resources and fork, the
/// slow part (it may run on a thread of its own). A failure is the container's end.
pub fn run(table: &Table, env: &Env, spec: &Launch, mut ctr: Ctr) {
    let (id, user) = (ctr.id.clone(), ctr.user.clone());
    let (work, logs) = (ctr.work_dir.clone(), ctr.log_dir.clone());
    let started = start_process(env, spec, &id, &work, &logs);
    let Ok(mut t) = table.lock() else { return };
    match started {
        Ok(child) => {
            let pgid = child.id() as i32;
            if let Some(c) = t.get_mut(&id) {
                c.pgid = Some(pgid);
                c.start_ticks = crate::state::start_ticks(pgid);
                c.state = ContainerState::Running;
                if let Some(status) = c.kill_status {
                    // Killed before it ran: stop it now.
                    signal_group(pgid, libc::SIGKILL);
                    c.exit_status = status;
                }
            }
            drop(t);
            // Saved at once: a node killed now must find this process when it comes back.
            env.save(table);
            tracing::info!("Container {id} of user {user} started (process group {pgid})");
            env.metrics.launched.inc();
            reap(table.clone(), id, child, env.clone());
        }
        Err(e) => {
            tracing::warn!("Container {id} failed to launch: {e}");
            env.metrics.failed.inc();
            ctr.state = ContainerState::Complete;
            ctr.exit_status = -1;
            ctr.diagnostics = format!("Container launch failed: {e}");
            ctr.finish_time = now_ms();
            t.insert(id, ctr);
            drop(t);
            env.save(table);
        }
    }
}

/// Become `uid`, `gid` with `groups`, between fork and exec (only system calls that are
/// safe there: the groups were looked up before the fork).
fn become_user(uid: u32, gid: u32, groups: &[u32]) -> std::io::Result<()> {
    // SAFETY: setgroups, setgid and setuid are async-signal-safe system calls reading only
    // the slice given; the order drops the groups and the group before the user.
    unsafe {
        if libc::setgroups(groups.len(), groups.as_ptr()) != 0 || libc::setgid(gid) != 0 || libc::setuid(uid) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn start_process(env: &Env, spec: &Launch, id: &str, work: &Path, logs: &Path) -> Result<std::process::Child, String> {
    use std::io::Write;
    let user = spec.id.user.as_str();
    let run_as = env.executor.run_as(user).map_err(|e| e.0)?;
    let user_dir = env.local_dir.join("usercache").join(user);
    // Top-down: each level is the NodeManager's before the next is looked at.
    workdir::parents(&[&env.local_dir.join("usercache"), &user_dir, &user_dir.join("appcache")], run_as.as_ref())?;
    workdir::prepare(work, logs, run_as.as_ref())?;
    // The NodeManager's own files first, then the local resources (which may not take their
    // names): nothing of the user's can be in their way.
    let token_file = work.join(TOKEN_FILE);
    let mut tokens = workdir::create(&token_file, 0o600)?;
    let empty = Credentials::default().to_bytes();
    tokens.write_all(spec.credentials.unwrap_or(&empty)).map_err(|e| format!("{}: {e}", token_file.display()))?;
    let script_path = work.join(workdir::LAUNCH_SCRIPT);
    let mut script_file = workdir::create(&script_path, 0o700)?;
    let out = workdir::create(&logs.join("stdout"), 0o640)?;
    let err = workdir::create(&logs.join("stderr"), 0o640)?;
    localize(work, &spec.context.local_resources, run_as.as_ref()).map_err(|e| e.to_string())?;
    let mut vars: Vec<(String, String)> = Vec::new();
    // YARN's env whitelist: what the node's own environment passes through.
    for name in ["PATH", "HOME", "LANG", "JAVA_HOME", "HADOOP_HOME", "HADOOP_CONF_DIR", "TMPDIR"] {
        if let Ok(v) = std::env::var(name) {
            vars.push((name.to_string(), v));
        }
    }
    if let Some(r) = &run_as {
        // Not the NodeManager's home: the user's own.
        vars.retain(|(k, _)| k != "HOME");
        vars.push(("HOME".to_string(), r.home.clone()));
    }
    let yarn = [
        ("CONTAINER_ID", id.to_string()),
        ("NM_HOST", env.host.clone()),
        ("NM_PORT", env.port.to_string()),
        ("NM_HTTP_PORT", env.port.to_string()),
        ("LOG_DIRS", logs.display().to_string()),
        ("LOCAL_DIRS", env.local_dir.display().to_string()),
        ("PWD", work.display().to_string()),
        ("USER", user.to_string()),
        ("LOGNAME", user.to_string()),
        ("HADOOP_TOKEN_FILE_LOCATION", token_file.display().to_string()),
        ("LOCAL_USER_DIRS", env.local_dir.join("usercache").join(user).display().to_string()),
    ];
    vars.extend(yarn.iter().map(|(k, v)| (k.to_string(), v.clone())));
    for (k, v) in &spec.context.environment {
        // YARN's own variables are the node's to set, not the launch context's.
        if yarn.iter().any(|(name, _)| name == k) {
            continue;
        }
        vars.retain(|(name, _)| name != k);
        vars.push((k.clone(), expand_markers(v, logs)));
    }
    let command = spec.context.commands.iter().map(|c| expand_markers(c, logs)).collect::<Vec<_>>().join(" ");
    let mut script = String::from("#!/bin/bash\n");
    for (k, v) in &vars {
        if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !k.is_empty() {
            script.push_str(&format!("export {k}={}\n", quote(v)));
        }
    }
    // The command runs in a child shell and its exit code is left in a file (written whole:
    // a temporary then renamed), so a node restarted meanwhile can tell how it ended. A
    // killed group takes this shell with it and leaves no file: the kill's status stands.
    let exit = work.join(format!("{id}.exitcode"));
    let exit = quote(&exit.display().to_string());
    script.push_str(&format!("/bin/bash -c {}\nrc=$?\n", quote(&command)));
    script.push_str(&format!("echo \"$rc\" > {exit}.tmp && /bin/mv -f {exit}.tmp {exit}\nexit \"$rc\"\n"));
    script_file.write_all(script.as_bytes()).map_err(|e| format!("{}: {e}", script_path.display()))?;
    if let Some(r) = &run_as {
        workdir::hand_over(work, logs, &[&tokens, &script_file, &out, &err], r)?;
    }
    drop((tokens, script_file));
    let mut cmd = Command::new("/bin/bash");
    cmd.arg(&script_path)
        .current_dir(work)
        .env_clear()
        .envs(vars.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    if let Some(r) = run_as {
        let (uid, gid, groups) = (r.uid, r.gid, r.groups);
        // SAFETY: the closure runs in the child between fork and exec and only makes the
        // async-signal-safe calls of become_user, over data moved in before the fork.
        unsafe {
            cmd.pre_exec(move || become_user(uid, gid, &groups));
        }
    }
    cmd.spawn().map_err(|e| format!("cannot start /bin/bash: {e}"))
}

/// Wait for the process on a thread of its own and record how it ended.
fn reap(table: Table, id: String, mut child: std::process::Child, env: Env) {
    std::thread::spawn(move || {
        let status = child.wait();
        let code = match status {
            Ok(s) => s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)),
            Err(_) => -1,
        };
        ended(&table, &id, code, &env);
    });
}

/// Watch a container taken back after the node's restart (not this process's child: its
/// leader is polled) and record how it ended, from the exit code its script left.
pub fn watch(table: Table, id: String, pgid: i32, ticks: Option<u64>, exit_file: PathBuf, env: Env) {
    std::thread::spawn(move || {
        while crate::state::still_running(pgid, ticks) {
            std::thread::sleep(Duration::from_millis(200));
        }
        // The script writes the file as it exits; give it a moment (YARN waits 2 s).
        let mut code = None;
        for _ in 0..20 {
            code = read_exit_code(&exit_file);
            if code.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        ended(&table, &id, code.unwrap_or(LOST), &env);
    });
}

/// The exit code a container's script left in `path`. The file is in the container's own
/// directory, so its user may have put anything there: it is read only if it is a regular
/// file (not through a link, never waiting on a FIFO), and only its first bytes.
pub fn read_exit_code(path: &Path) -> Option<i32> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW).open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// YARN's `ExitCode.LOST`: a container taken back whose exit code is nowhere to be found.
pub const LOST: i32 = 154;

/// Record that container `id` ended with `code` (its process's, or LOST).
fn ended(table: &Table, id: &str, code: i32, env: &Env) {
    {
        let Ok(mut t) = table.lock() else { return };
        let Some(c) = t.get_mut(id) else { return };
        c.state = ContainerState::Complete;
        c.finish_time = now_ms();
        if let Some(pg) = c.pgid {
            // Whatever the container left behind in its group goes with it.
            signal_group(pg, libc::SIGKILL);
        }
        env.metrics.ended(c.kill_status.is_some(), code);
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
                if code == LOST {
                    c.diagnostics = format!("Container exited with a non-zero exit code {LOST}");
                } else if code != 0 {
                    c.diagnostics = format!("Exception from container-launch. Exit code: {code}");
                }
            }
        }
    }
    env.save(table);
}

pub fn signal_group(pgid: i32, signal: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; it has no memory effects.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// Kill a container: SIGTERM to its group, SIGKILL after `delay`; `status` is what will be
/// reported for it. Unknown or finished containers are left alone.
pub fn kill(table: &Table, id: &str, status: i32, diagnostics: &str, env: &Env) {
    let delay = env.kill_delay;
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
    // A node killed now must still report this container as killed, not as failed.
    env.save(table);
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
        assert_eq!(expand_markers("{{a}}{{b}} {{c", Path::new("/l")), "$a$b {{c");
        assert_eq!(expand_markers("{{}}", Path::new("/l")), "$");
        // Long: linear time (it was quadratic).
        let long = "{{}}".repeat(400_000);
        assert_eq!(expand_markers(&long, Path::new("/l")).len(), 400_000);
    }

    #[test]
    fn nothing_is_created_for_a_bad_user() {
        let dir = std::env::temp_dir().join(format!("fairloom-launch-refused-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let env = Env {
            local_dir: dir.join("local"),
            log_root: dir.join("logs"),
            host: "127.0.0.1".to_string(),
            port: 1,
            kill_delay: Duration::from_millis(10),
            metrics: Arc::new(NmMetrics::default()),
            persist: None,
            executor: Arc::new(Executor::Default),
        };
        let table: Table = Arc::new(Mutex::new(BTreeMap::new()));
        for user in ["../../../x", "a/b", "..", ""] {
            let id = ContainerTokenId {
                container: "container_1_0001_01_000001".parse().unwrap(),
                node: "h:1".to_string(),
                user: user.to_string(),
                resource: Res::new(1024, 1),
                expiry: 0,
                key_id: 0,
                rm_identifier: 0,
                priority: 0,
                creation_time: 0,
                is_am: false,
            };
            let context = LaunchContext::default();
            let e = launch(&table, &env, &Launch { id: &id, context: &context, credentials: None }).unwrap_err();
            assert!(e.contains("Invalid user name"), "{e}");
        }
        assert!(!dir.exists(), "nothing was created");
        assert!(table.lock().unwrap().is_empty());
    }

    #[test]
    fn an_exit_code_file_is_read_only_when_it_is_one() {
        let dir = std::env::temp_dir().join(format!("fairloom-exitcode-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("c.exitcode");
        std::fs::write(&f, "3\n").unwrap();
        assert_eq!(read_exit_code(&f), Some(3));
        let fifo = dir.join("fifo.exitcode");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path it is given.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert_eq!(read_exit_code(&fifo), None, "a FIFO is not waited on");
        let link = dir.join("link.exitcode");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert_eq!(read_exit_code(&link), None, "nor read through a link");
        std::fs::write(&f, "7".repeat(10_000)).unwrap();
        assert_eq!(read_exit_code(&f), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn container_ids_name_their_app() {
        assert_eq!(app_of("container_e02_17_0003_01_000004"), "application_17_0003");
        assert_eq!(app_of("junk"), "unknown");
    }
}
