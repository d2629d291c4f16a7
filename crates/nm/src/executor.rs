//! Who a container runs as (YARN's container executors).
//!
//! - The default executor (`DefaultContainerExecutor`) runs every container as the
//!   NodeManager's own user: containers of different users can read each other's files and
//!   signal each other's processes. That is YARN's behaviour too, and the docs say so.
//! - The Linux container executor (`LinuxContainerExecutor`, the NodeManager running as root)
//!   runs each container as the submitting user, or as
//!   `yarn.nodemanager.linux-container-executor.nonsecure-mode.local-user` when
//!   `…nonsecure-mode.limit-users` is true (YARN's default), after the checks of YARN's
//!   `container-executor.cfg` (`banned.users`, `min.user.id`, `allowed.system.users`), with the
//!   application's directories owned by that user and closed to others. Where YARN has a setuid
//!   binary, fairloom's root NodeManager drops to the user itself between fork and exec.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::path::Path;

pub const DEFAULT_CLASS: &str = "org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor";
pub const LINUX_CLASS: &str = "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor";

pub mod keys {
    pub const CLASS: &str = "yarn.nodemanager.container-executor.class";
    pub const LIMIT_USERS: &str = "yarn.nodemanager.linux-container-executor.nonsecure-mode.limit-users";
    pub const LOCAL_USER: &str = "yarn.nodemanager.linux-container-executor.nonsecure-mode.local-user";
    pub const USER_PATTERN: &str = "yarn.nodemanager.linux-container-executor.nonsecure-mode.user-pattern";
    /// In container-executor.cfg: the NodeManager's group, which owns the user directories.
    pub const GROUP: &str = "yarn.nodemanager.linux-container-executor.group";
    pub const BANNED: &str = "banned.users";
    pub const MIN_UID: &str = "min.user.id";
    pub const ALLOWED: &str = "allowed.system.users";
}

/// container-executor's defaults.
const DEFAULT_BANNED: [&str; 4] = ["yarn", "mapred", "hdfs", "bin"];
const DEFAULT_MIN_UID: u32 = 1000;

/// How containers are run.
#[derive(Debug, Clone, Default)]
pub enum Executor {
    /// As the NodeManager's user.
    #[default]
    Default,
    Linux(Linux),
}

#[derive(Debug, Clone)]
pub struct Linux {
    limit_users: bool,
    local_user: String,
    banned: Vec<String>,
    min_uid: u32,
    allowed: Vec<String>,
    /// The group that owns user directories (the NodeManager's).
    group: u32,
}

/// A local account a container runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// Its supplementary groups (its primary one among them).
    pub groups: Vec<u32>,
    pub home: String,
    /// The group that owns its directories with it.
    pub dir_group: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExecutorError(pub String);

fn err(m: impl Into<String>) -> ExecutorError {
    ExecutorError(m.into())
}

/// `key=value` lines, `#` comments (container-executor.cfg).
pub fn parse_cfg(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

impl Executor {
    /// From yarn-site (`site` lookups) and container-executor.cfg's text (none: its
    /// defaults). The Linux executor needs the NodeManager to run as root.
    pub fn from_conf(site: impl Fn(&str) -> Option<String>, cfg: Option<&str>) -> Result<Self, ExecutorError> {
        let class = site(keys::CLASS).map(|c| c.trim().to_string());
        match class.as_deref() {
            None | Some(DEFAULT_CLASS) => return Ok(Self::Default),
            Some(LINUX_CLASS) => {}
            Some(other) => {
                return Err(err(format!(
                    "{}: not supported: '{other}' (fairloom has {DEFAULT_CLASS} and {LINUX_CLASS})",
                    keys::CLASS
                )))
            }
        }
        if let Some(p) = site(keys::USER_PATTERN).filter(|p| p != fairloom_model::user::USER_PATTERN) {
            return Err(err(format!(
                "{}: not supported: a pattern other than YARN's default ('{p}')",
                keys::USER_PATTERN
            )));
        }
        // SAFETY: geteuid has no preconditions and no effects.
        if unsafe { libc::geteuid() } != 0 {
            return Err(err(format!(
                "{LINUX_CLASS} needs the NodeManager to run as root (it starts each container as its user)"
            )));
        }
        let limit_users = match site(keys::LIMIT_USERS).map(|v| v.trim().to_ascii_lowercase()) {
            None => true,
            Some(v) if v == "true" => true,
            Some(v) if v == "false" => false,
            Some(v) => return Err(err(format!("{}: '{v}' is not true or false", keys::LIMIT_USERS))),
        };
        let cfg = parse_cfg(cfg.unwrap_or(""));
        let list = |k: &str| -> Option<Vec<String>> {
            cfg.get(k).map(|v| v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect())
        };
        let min_uid = match cfg.get(keys::MIN_UID) {
            None => DEFAULT_MIN_UID,
            Some(v) => {
                v.parse().map_err(|_| err(format!("Illegal value of {v} for {} in configuration", keys::MIN_UID)))?
            }
        };
        let group = match cfg.get(keys::GROUP) {
            None => unsafe { libc::getegid() },
            Some(g) => group_id(g).ok_or_else(|| err(format!("Can't get group information for {g}")))?,
        };
        Ok(Self::Linux(Linux {
            limit_users,
            local_user: site(keys::LOCAL_USER).unwrap_or_else(|| "nobody".to_string()),
            banned: list(keys::BANNED).unwrap_or_else(|| DEFAULT_BANNED.iter().map(|s| s.to_string()).collect()),
            min_uid,
            allowed: list(keys::ALLOWED).unwrap_or_default(),
            group,
        }))
    }

    /// The account a container of `submitter` runs as; `None` with the default executor.
    pub fn run_as(&self, submitter: &str) -> Result<Option<RunAs>, ExecutorError> {
        let Self::Linux(l) = self else { return Ok(None) };
        let name = if l.limit_users { l.local_user.as_str() } else { submitter };
        let Some((uid, gid, home)) = lookup_user(name) else {
            return Err(err(format!("User {name} not found")));
        };
        // container-executor's check_user, in its order.
        if uid == 0 {
            return Err(err("Running as root is not allowed"));
        }
        if uid < l.min_uid && !l.allowed.iter().any(|a| a == name) {
            return Err(err(format!(
                "Requested user {name} is not whitelisted and has id {uid},which is below the minimum allowed {}",
                l.min_uid
            )));
        }
        if l.banned.iter().any(|b| b == name) {
            return Err(err(format!("Requested user {name} is banned")));
        }
        Ok(Some(RunAs { name: name.to_string(), uid, gid, groups: group_list(name, gid), home, dir_group: l.group }))
    }
}

/// `name`'s uid, primary gid and home directory, from the system's user database.
pub fn lookup_user(name: &str) -> Option<(u32, u32, String)> {
    let c = CString::new(name).ok()?;
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwnam_r fills `pwd` with pointers into `buf`, both alive while read here.
    let rc = unsafe { libc::getpwnam_r(c.as_ptr(), &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() {
        return None;
    }
    // SAFETY: pw_dir points into `buf` as a NUL-terminated string (or is null).
    let home = if pwd.pw_dir.is_null() {
        String::new()
    } else {
        unsafe { std::ffi::CStr::from_ptr(pwd.pw_dir) }.to_string_lossy().into_owned()
    };
    Some((pwd.pw_uid, pwd.pw_gid, home))
}

fn group_id(name: &str) -> Option<u32> {
    let c = CString::new(name).ok()?;
    let mut grp: libc::group = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    let mut out: *mut libc::group = std::ptr::null_mut();
    // SAFETY: getgrnam_r fills `grp` with pointers into `buf`; only the gid is read.
    let rc = unsafe { libc::getgrnam_r(c.as_ptr(), &mut grp, buf.as_mut_ptr(), buf.len(), &mut out) };
    (rc == 0 && !out.is_null()).then_some(grp.gr_gid)
}

/// Every group `name` is in (read before the fork: the lookup is not safe between fork and
/// exec).
fn group_list(name: &str, gid: u32) -> Vec<u32> {
    let Ok(c) = CString::new(name) else { return vec![gid] };
    let mut n: libc::c_int = 64;
    loop {
        let mut groups = vec![0 as libc::gid_t; n as usize];
        let asked = n;
        // SAFETY: getgrouplist writes at most `n` gids into `groups` and sets `n`.
        let rc = unsafe { libc::getgrouplist(c.as_ptr(), gid, groups.as_mut_ptr(), &mut n) };
        if rc >= 0 {
            groups.truncate(n as usize);
            return groups;
        }
        if n <= asked {
            n = asked * 2;
        }
        if n > 65536 {
            return vec![gid];
        }
    }
}

impl RunAs {
    /// Whether this user may read `path`: every directory on the way searchable and the
    /// file readable, by its mode bits as they apply to this uid and these groups. (Root's
    /// NodeManager could read anything; what it links or unpacks for a container must be
    /// what the container's user could read.)
    pub fn may_read(&self, path: &Path) -> bool {
        let Ok(path) = path.canonicalize() else { return false };
        let allows = |m: &std::fs::Metadata, bit: u32| {
            use std::os::unix::fs::MetadataExt;
            let mode = m.mode();
            if m.uid() == self.uid {
                mode & (bit << 6) != 0
            } else if self.groups.contains(&m.gid()) || m.gid() == self.gid {
                mode & (bit << 3) != 0
            } else {
                mode & bit != 0
            }
        };
        for dir in path.ancestors().skip(1) {
            match std::fs::metadata(dir) {
                Ok(m) if allows(&m, 0o1) => {}
                _ => return false,
            }
        }
        std::fs::metadata(&path).is_ok_and(|m| allows(&m, 0o4))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k: &str| map.get(k).cloned()
    }

    #[test]
    fn the_default_runs_as_the_node_and_other_executors_are_refused() {
        let e = Executor::from_conf(site(&[]), None).unwrap();
        assert!(e.run_as("alice").unwrap().is_none());
        let e = Executor::from_conf(site(&[(keys::CLASS, "x.DockerContainerExecutor")]), None).unwrap_err();
        assert!(e.0.contains("not supported"), "{e}");
    }

    #[test]
    fn container_executor_cfg_checks() {
        if unsafe { libc::geteuid() } != 0 {
            let e = Executor::from_conf(site(&[(keys::CLASS, LINUX_CLASS)]), None).unwrap_err();
            assert!(e.0.contains("needs the NodeManager to run as root"), "{e}");
            return;
        }
        let lce = |limit: &str, cfg: &str| {
            Executor::from_conf(site(&[(keys::CLASS, LINUX_CLASS), (keys::LIMIT_USERS, limit)]), Some(cfg)).unwrap()
        };
        // limit-users (YARN's default): everyone runs as nobody, checked as nobody is.
        let e = lce("true", "min.user.id=0");
        assert_eq!(e.run_as("alice").unwrap().unwrap().name, "nobody");
        let e = lce("false", "");
        assert_eq!(e.run_as("root").unwrap_err().0, "Running as root is not allowed");
        assert_eq!(e.run_as("no-such-user-x").unwrap_err().0, "User no-such-user-x not found");
        assert_eq!(
            e.run_as("daemon").unwrap_err().0,
            "Requested user daemon is not whitelisted and has id 1,which is below the minimum allowed 1000"
        );
        let e = lce("false", "allowed.system.users=daemon,bin\nmin.user.id=1000 # default");
        assert!(e.run_as("daemon").unwrap().is_some());
        assert_eq!(e.run_as("bin").unwrap_err().0, "Requested user bin is banned");
        let bad = Executor::from_conf(site(&[(keys::CLASS, LINUX_CLASS)]), Some("min.user.id=lots")).unwrap_err();
        assert_eq!(bad.0, "Illegal value of lots for min.user.id in configuration");
    }
}
