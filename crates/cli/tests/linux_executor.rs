//! The Linux container executor with real local users, created here: each container runs as
//! its submitting user, in directories closed to others, with its credentials readable by it
//! alone; one user's container can neither read another application's files or token nor
//! signal its processes; container-executor.cfg's bans and minimum uid hold.
//!
//! It needs root (to create users and to run containers as them). Without root it says so
//! and passes, unless FAIRLOOM_REQUIRE_ROOT_TESTS is set (CI sets it), where it fails.

mod service_support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;
use service_support::*;

/// Local users made for the test, removed when it ends.
struct Users(Vec<String>);

impl Users {
    fn add(names: &[&str]) -> Self {
        let mut made = Vec::new();
        for n in names {
            let _ = Command::new("userdel").arg(n).output();
            let out = Command::new("useradd")
                .args(["--no-create-home", "--shell", "/usr/sbin/nologin", n])
                .output()
                .expect("useradd");
            assert!(out.status.success(), "useradd {n}: {}", String::from_utf8_lossy(&out.stderr));
            made.push(n.to_string());
        }
        Self(made)
    }
}

impl Drop for Users {
    fn drop(&mut self) {
        for n in &self.0 {
            let _ = Command::new("userdel").arg(n).output();
        }
    }
}

fn uid_of(name: &str) -> u32 {
    let out = Command::new("id").args(["-u", name]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// The real uid of process `pid`.
fn uid_of_pid(pid: i32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Uid:")?.split_whitespace().next()?.parse().ok())
}

/// Processes whose environment says they are container `container`.
fn pids_of(container: &str, under: &Path) -> Vec<i32> {
    let (needle, dir) = (format!("CONTAINER_ID={container}"), under.display().to_string());
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_string_lossy().parse().ok()?;
            let env = String::from_utf8_lossy(&std::fs::read(e.path().join("environ")).ok()?).to_string();
            (env.split('\0').any(|kv| kv == needle) && env.contains(&dir)).then_some(pid)
        })
        .collect()
}

fn mode(p: &Path) -> (u32, u32) {
    let m = std::fs::metadata(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    (m.uid(), m.permissions().mode() & 0o7777)
}

/// The one container directory under `app_dir` whose id ends in `suffix`.
fn container_dir(app_dir: &Path, suffix: &str) -> PathBuf {
    eventually(Duration::from_secs(20), "the container's directory", || {
        std::fs::read_dir(app_dir).ok()?.flatten().map(|e| e.path()).find(|p| p.to_string_lossy().ends_with(suffix))
    })
}

fn submit_as(c: &Cluster, user: &str, command: &str) -> String {
    let base = format!("http://{}/ws/v1/cluster", c.web);
    let new = send("POST", &format!("{base}/apps/new-application?user.name={user}"), "").unwrap();
    let id = new["application-id"].as_str().unwrap().to_string();
    let body = json!({ "application-id": id, "am-container-spec": { "commands": { "command": command } },
        "resource": { "memory": 1024, "vCores": 1 }, "max-app-attempts": 1 });
    send("POST", &format!("{base}/apps?user.name={user}"), &body.to_string()).unwrap();
    id
}

#[test]
fn containers_run_as_their_users_and_cannot_reach_each_other() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { geteuid() } != 0 || Command::new("useradd").arg("--help").output().is_err() {
        assert!(
            std::env::var_os("FAIRLOOM_REQUIRE_ROOT_TESTS").is_none(),
            "the Linux container executor test needs root and useradd here"
        );
        eprintln!("skipped: the Linux container executor test needs root and useradd");
        return;
    }
    let tag = std::process::id() % 100_000;
    let (alice, bob, banned) = (format!("fla{tag}"), format!("flb{tag}"), format!("flx{tag}"));
    let _users = Users::add(&[&alice, &bob, &banned]);
    let dir = TempDir::new("lce");
    let c = write_conf(
        &dir.0,
        &[
            (
                "yarn.nodemanager.container-executor.class",
                "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor",
            ),
            ("yarn.nodemanager.linux-container-executor.nonsecure-mode.limit-users", "false"),
        ],
        None,
    );
    std::fs::write(c.conf.join("container-executor.cfg"), format!("banned.users={banned}\nmin.user.id=1000\n"))
        .unwrap();
    // The NodeManagers' registration secret, root's alone: what no job on the node can read.
    let secret = dir.0.join("registration-secret");
    std::fs::write(&secret, "the nodes' own\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let site = c.conf.join("yarn-site.xml");
    let text = std::fs::read_to_string(&site).unwrap().replace(
        "</configuration>",
        &format!(
            "  <property><name>fairloom.nodemanager.registration-secret.file</name><value>{}</value></property>\n</configuration>",
            secret.display()
        ),
    );
    std::fs::write(&site, text).unwrap();
    // A directory bob owned under an older layout: the NodeManager takes it back.
    let bob_cache = dir.0.join("nm1/nm-local-dir/usercache").join(&bob).join("appcache");
    std::fs::create_dir_all(&bob_cache).unwrap();
    let bob_uid = uid_of(&bob);
    for d in [bob_cache.parent().unwrap(), bob_cache.as_path()] {
        std::os::unix::fs::chown(d, Some(bob_uid), Some(bob_uid)).unwrap();
    }
    // The AM is this binary, shipped as a file:// resource: the users must be able to run it.
    let bin_dir = std::env::temp_dir().join(format!("fairloom-lce-bin-{}", std::process::id()));
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::fs::set_permissions(&bin_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = bin_dir.join("fairloom");
    std::fs::copy(BIN, &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = bin.to_str().unwrap().to_string();
    let shell_as = |user: &str, cmd: &str| {
        let rm = format!("http://{}", c.web);
        Proc::spawn_bin(
            &bin,
            &["shell", "--rm", &rm, "--timeout", "90", "--user", user, "--num-containers", "1", "--", cmd],
        )
    };
    let _rm = start_rm(&c);
    let _nm = start_nm(&c, &dir.0, "nm1", "8192 mb, 8 vcores");
    wait_nodes(&c, 1);

    // alice's job runs a while.
    let mut a = shell_as(&alice, "sleep 25");
    let a_id = submitted_id(&mut a);
    let a_app_dir = dir.0.join("nm1/nm-local-dir/usercache").join(&alice).join("appcache").join(&a_id);
    let a_am_dir = container_dir(&a_app_dir, "_01_000001");
    let a_task_dir = container_dir(&a_app_dir, "_01_000002");
    let a_task = a_task_dir.file_name().unwrap().to_string_lossy().to_string();
    let a_pids = eventually(Duration::from_secs(20), "alice's task to run", || {
        let p = pids_of(&a_task, &dir.0);
        (!p.is_empty()).then_some(p)
    });
    let alice_uid = uid_of(&alice);
    for pid in &a_pids {
        assert_eq!(uid_of_pid(*pid), Some(alice_uid), "alice's container runs as alice");
    }
    // The directories above her containers' are the NodeManager's (she passes through, lists
    // and changes nothing); her containers' are hers; her AM's token file hers alone.
    let user_dir = dir.0.join("nm1/nm-local-dir/usercache").join(&alice);
    assert_eq!(mode(&user_dir), (0, 0o711));
    assert_eq!(mode(&a_app_dir), (0, 0o711));
    assert_eq!(mode(&dir.0.join("nm1/userlogs").join(&a_id)), (0, 0o711));
    assert_eq!(mode(&a_am_dir), (alice_uid, 0o710));
    let a_token = a_am_dir.join("container_tokens");
    assert_eq!(mode(&a_token), (alice_uid, 0o600));
    assert_eq!(mode(&a_am_dir.join("launch_container.sh")), (alice_uid, 0o700));
    let a_logs = dir.0.join("nm1/userlogs").join(&a_id).join(&a_task);
    assert_eq!(mode(&a_logs), (alice_uid, 0o750));

    // bob's container tries alice's token, her directory and her processes.
    // It also tries to plant links where the NodeManager will make directories next, to read
    // the nodes' registration secret, and to register a node of its own (it would be given
    // the node keys, and the AMs placed there).
    let script = bin_dir.join("probe.sh");
    std::fs::write(&script, PROBE).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tracker_port = c.tracker.rsplit(':').next().unwrap().to_string();
    let probe = format!(
        "bash {} {} {} {} {} {tracker_port} {}",
        script.display(),
        a_token.display(),
        a_app_dir.display(),
        a_logs.display(),
        a_pids[0],
        secret.display()
    );
    let mut b = shell_as(&bob, &probe);
    let b_id = submitted_id(&mut b);
    let (code, out) = b.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");
    let b_logs = dir.0.join("nm1/userlogs").join(&b_id);
    let said: String = std::fs::read_dir(&b_logs)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path().join("stdout")).unwrap_or_default())
        .collect();
    for refused in
        ["token=1", "appdir=2", "logs=1", "kill=1", "plant=1", "plant_other=1", "secret=1", "\"action\":\"SHUTDOWN\""]
    {
        assert!(said.contains(refused), "bob's container was not refused ({refused}): {said}");
    }
    // The directories bob owned under the older layout are the NodeManager's again.
    assert_eq!(mode(bob_cache.parent().unwrap()), (0, 0o711));
    assert_eq!(mode(&bob_cache), (0, 0o711));
    assert!(said.contains("own=0") && said.contains(&format!("user={bob}")), "{said}");
    // alice's job is untouched and finishes as it would have.
    assert_eq!(app(&c, &a_id)["state"], "RUNNING");
    let (code, out) = a.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{out:?}");

    // A local resource named as the NodeManager's own launch script, linking a root-owned
    // file: refused, the file untouched (root once wrote the script through that link).
    let precious = bin_dir.join("precious.conf");
    std::fs::write(&precious, "root's\n").unwrap();
    std::fs::set_permissions(&precious, std::fs::Permissions::from_mode(0o644)).unwrap();
    let base = format!("http://{}/ws/v1/cluster", c.web);
    let new = send("POST", &format!("{base}/apps/new-application?user.name={bob}"), "").unwrap();
    let evil_id = new["application-id"].as_str().unwrap().to_string();
    let body = json!({ "application-id": evil_id, "max-app-attempts": 1, "resource": { "memory": 1024, "vCores": 1 },
        "am-container-spec": { "commands": { "command": "sleep 1" },
            "local-resources": { "entry": [{ "key": "launch_container.sh",
                "value": { "resource": format!("file://{}", precious.display()), "type": "FILE" } }] } } });
    send("POST", &format!("{base}/apps?user.name={bob}"), &body.to_string()).unwrap();
    let evil = eventually(Duration::from_secs(30), "the app to fail", || {
        let a = app(&c, &evil_id);
        (a["state"] == "FAILED").then_some(a)
    });
    assert!(evil["diagnostics"].as_str().unwrap().contains("the NodeManager's own"), "{evil}");
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "root's\n");
    assert_eq!(mode(&precious), (0, 0o644));

    // container-executor.cfg: a banned user, a system user below the minimum uid, root and
    // an unknown user get no container, and say why.
    for (user, why) in [
        (banned.clone(), format!("Requested user {banned} is banned")),
        (
            "daemon".to_string(),
            "Requested user daemon is not whitelisted and has id 1,which is below the minimum allowed 1000".to_string(),
        ),
        ("root".to_string(), "Running as root is not allowed".to_string()),
        ("nosuchuser".to_string(), "User nosuchuser not found".to_string()),
    ] {
        let id = submit_as(&c, &user, "touch /tmp/should-not-exist");
        let a = eventually(Duration::from_secs(30), "the app to fail", || {
            let a = app(&c, &id);
            (a["state"] == "FAILED").then_some(a)
        });
        assert!(a["diagnostics"].as_str().unwrap().contains(&why), "{user}: {a}");
    }
    let _ = std::fs::remove_dir_all(&bin_dir);
}

/// What bob's container tries: $1 alice's token file, $2 her application dir, $3 her task's
/// log dir, $4 her task's pid, $5 the resource tracker's port, $6 the registration secret.
const PROBE: &str = r#"#!/bin/bash
cat "$1" >/dev/null 2>&1; echo token=$?
ls "$2" >/dev/null 2>&1; echo appdir=$?
cat "$3/stdout" >/dev/null 2>&1; echo logs=$?
kill -9 "$4" 2>/dev/null; echo kill=$?
cat "$HADOOP_TOKEN_FILE_LOCATION" >/dev/null; echo own=$?
ln -s /etc "$PWD/../planted" 2>/dev/null; echo plant=$?
ln -s /etc "$2/planted" 2>/dev/null; echo plant_other=$?
cat "$6" >/dev/null 2>&1; echo secret=$?
body='{"node_id":"127.0.0.1:9","http_address":"127.0.0.1:9","rack":null,"resource":{"memory":8192,"vCores":8},"containers":[],"version":"x"}'
exec 3<>"/dev/tcp/127.0.0.1/$5"
printf 'POST /fairloom/v1/tracker/register HTTP/1.1
Host: x
Content-Type: application/json
Content-Length: %d
Connection: close

%s' "${#body}" "$body" >&3
echo "register=$(grep -o '"action":"[A-Z]*"' <&3)"
echo "user=$(id -un)"
"#;

extern "C" {
    fn geteuid() -> u32;
}
