//! The ResourceManager's configuration: yarn-site.xml with YARN's keys and defaults, and the
//! scheduler's own file beside it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use fairloom_config::properties::{parse_site_xml, Properties};

use crate::access::AccessPolicy;

pub use fairloom_scheduler::factory::{SchedulerKind, CAPACITY_CLASS, FAIR_CLASS};

pub mod keys {
    pub const HOSTNAME: &str = "yarn.resourcemanager.hostname";
    pub const WEBAPP_ADDRESS: &str = "yarn.resourcemanager.webapp.address";
    pub const TRACKER_ADDRESS: &str = "yarn.resourcemanager.resource-tracker.address";
    pub const SCHEDULER_ADDRESS: &str = "yarn.resourcemanager.scheduler.address";
    pub const SCHEDULER_CLASS: &str = "yarn.resourcemanager.scheduler.class";
    pub const NM_HEARTBEAT_MS: &str = "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms";
    pub const NM_EXPIRY_MS: &str = "yarn.nm.liveness-monitor.expiry-interval-ms";
    pub const AM_EXPIRY_MS: &str = "yarn.am.liveness-monitor.expiry-interval-ms";
    pub const AM_MAX_ATTEMPTS: &str = "yarn.resourcemanager.am.max-attempts";
    pub const RECOVERY: &str = "yarn.resourcemanager.recovery.enabled";
    pub const STORE_CLASS: &str = "yarn.resourcemanager.store.class";
    /// YARN's embedded store's directory; fairloom keeps its redb file there.
    pub const LEVELDB_PATH: &str = "yarn.resourcemanager.leveldb-state-store.path";
    pub const MAX_COMPLETED_APPS: &str = "yarn.resourcemanager.max-completed-applications";
    pub const CLUSTER_ID: &str = "yarn.resourcemanager.cluster-id";
    pub const FAIR_ALLOCATION_FILE: &str = "yarn.scheduler.fair.allocation.file";
    pub const HADOOP_TMP_DIR: &str = "hadoop.tmp.dir";
    pub const AMRM_KEY_ROLLING_SECS: &str = "yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs";
    pub const CONTAINER_KEY_ROLLING_SECS: &str =
        "yarn.resourcemanager.container-tokens.master-key-rolling-interval-secs";
    pub const NM_TOKEN_KEY_ROLLING_SECS: &str = "yarn.resourcemanager.nm-tokens.master-key-rolling-interval-secs";
    /// How long a container token is good for, from its allocation.
    pub const CONTAINER_EXPIRY_MS: &str = "yarn.resourcemanager.rm.container-allocation.expiry-interval-ms";
    pub const NODES_INCLUDE: &str = "yarn.resourcemanager.nodes.include-path";
    pub const NODES_EXCLUDE: &str = "yarn.resourcemanager.nodes.exclude-path";
    pub const SIGNATURE_SECRET_FILE: &str = "hadoop.http.authentication.signature.secret.file";
    /// fairloom's own: a secret the RM and its NodeManagers share (a file only they read);
    /// with it, a registration must prove it knows it.
    pub const REGISTRATION_SECRET_FILE: &str = "fairloom.nodemanager.registration-secret.file";
    pub const AUTH_TOKEN_VALIDITY_SECS: &str = "hadoop.http.authentication.token.validity";
    /// fairloom's own: connections one address may hold open on the web port (0: no cap).
    pub const WEB_CONNECTIONS_PER_PEER: &str = "fairloom.webapp.max-connections-per-peer";
    /// The same on the resource-tracker and AM ports (default: half the port's share).
    pub const TRACKER_CONNECTIONS_PER_PEER: &str = "fairloom.resource-tracker.max-connections-per-peer";
    pub const SCHEDULER_CONNECTIONS_PER_PEER: &str = "fairloom.scheduler.max-connections-per-peer";
    /// fairloom's own: how many nodes that left (LOST, DECOMMISSIONED, SHUTDOWN) the RM
    /// keeps listing; past it, the longest silent are forgotten. YARN keeps every one, and
    /// an NM on an ephemeral port is a new node at each restart.
    pub const MAX_INACTIVE_NODES: &str = "fairloom.resourcemanager.max-inactive-nodes";
}

#[derive(Debug, thiserror::Error)]
pub enum ConfError {
    #[error("{file}: {message}")]
    File { file: String, message: String },
    #[error("{key}: {message}")]
    Key { key: String, message: String },
}

/// `DIR/yarn-site.xml`'s properties; none when the file is absent. A directory that does not
/// exist is an error: a mistyped `--conf` must not start a daemon on every default.
pub fn read_site(dir: &Path) -> Result<Properties, ConfError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(ConfError::File { file: dir.display().to_string(), message: "not a directory".into() }),
        Err(e) => {
            let message = if e.kind() == std::io::ErrorKind::NotFound {
                "no such configuration directory".to_string()
            } else {
                e.to_string()
            };
            return Err(ConfError::File { file: dir.display().to_string(), message });
        }
    }
    let path = dir.join("yarn-site.xml");
    let file = || path.display().to_string();
    match std::fs::read_to_string(&path) {
        Ok(text) => parse_site_xml(&text).map_err(|e| ConfError::File { file: file(), message: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Properties::new()),
        Err(e) => Err(ConfError::File { file: file(), message: e.to_string() }),
    }
}

/// Everything the RM reads at start.
#[derive(Debug, Clone)]
pub struct RmConf {
    /// yarn-site.xml (the scheduler reads its own keys from it).
    pub site: Properties,
    pub webapp: SocketAddr,
    pub tracker: SocketAddr,
    pub scheduler_address: SocketAddr,
    pub scheduler: SchedulerKind,
    /// The allocation file's text (Fair), or capacity-scheduler.xml's (Capacity), with its name.
    pub scheduler_file: Option<(String, String)>,
    pub nm_heartbeat_ms: u64,
    pub nm_expiry_ms: i64,
    pub am_expiry_ms: i64,
    pub am_max_attempts: u32,
    pub recovery: bool,
    /// Where the state store lives.
    pub state_dir: PathBuf,
    pub max_completed_apps: usize,
    /// Nodes that left and are still listed, at most.
    pub max_inactive_nodes: usize,
    pub cluster_id: String,
    /// `yarn.acl.enable`, `yarn.admin.acl` and the static group mapping.
    pub access: AccessPolicy,
    /// Master-key rolling intervals (ms) of AMRM, container and NM tokens.
    pub amrm_key_rolling_ms: i64,
    pub container_key_rolling_ms: i64,
    pub nm_token_key_rolling_ms: i64,
    pub container_expiry_ms: i64,
    /// Which nodes may register (`nodes.include-path`, `exclude-path`), as read at start.
    pub hosts: HostLists,
    /// The web's `hadoop.auth` cookie secret: the file's bytes when one is configured, else
    /// random and rolled every `auth_token_validity_ms`.
    pub signature_secret: Option<Vec<u8>>,
    pub auth_token_validity_ms: i64,
    /// The NodeManagers' registration secret, when there is one.
    pub registration_secret: Option<Vec<u8>>,
    /// Connections one address may hold open on the web port; 0 for no cap.
    pub web_connections_per_peer: usize,
    /// On the resource-tracker and AM ports; `None`: half the port's share.
    pub tracker_connections_per_peer: Option<usize>,
    pub scheduler_connections_per_peer: Option<usize>,
}

/// Hadoop's include and exclude host lists (`HostsFileReader`): names separated by
/// whitespace, `#` to the end of the line a comment. An empty include list lets every host in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostLists {
    pub include_path: Option<PathBuf>,
    pub exclude_path: Option<PathBuf>,
    pub include: std::collections::BTreeSet<String>,
    pub exclude: std::collections::BTreeSet<String>,
}

impl HostLists {
    /// The lists `site` names, read now (what `refreshNodes` does again).
    pub fn read(site: &Properties) -> Result<Self, ConfError> {
        let path = |k: &str| site.get(k).map(|v| v.trim()).filter(|v| !v.is_empty()).map(PathBuf::from);
        let (include_path, exclude_path) = (path(keys::NODES_INCLUDE), path(keys::NODES_EXCLUDE));
        Ok(Self {
            include: include_path.as_deref().map(read_hosts).transpose()?.unwrap_or_default(),
            exclude: exclude_path.as_deref().map(read_hosts).transpose()?.unwrap_or_default(),
            include_path,
            exclude_path,
        })
    }

    /// The same files read again.
    pub fn reread(&self) -> Result<Self, ConfError> {
        let mut site = Properties::new();
        for (k, p) in [(keys::NODES_INCLUDE, &self.include_path), (keys::NODES_EXCLUDE, &self.exclude_path)] {
            if let Some(p) = p {
                site.insert(k.to_string(), p.display().to_string());
            }
        }
        Self::read(&site)
    }

    /// YARN's `NodesListManager.isValidNode`: by host name or its address, never the port.
    pub fn allows(&self, host: &str, ip: Option<&str>) -> bool {
        let listed =
            |set: &std::collections::BTreeSet<String>| set.contains(host) || ip.is_some_and(|i| set.contains(i));
        (self.include.is_empty() || listed(&self.include)) && !listed(&self.exclude)
    }

    /// In neither list while the include list names some hosts: YARN shuts such a node down
    /// rather than decommissioning it.
    pub fn untracked(&self, host: &str, ip: Option<&str>) -> bool {
        let listed =
            |set: &std::collections::BTreeSet<String>| set.contains(host) || ip.is_some_and(|i| set.contains(i));
        !self.include.is_empty() && !listed(&self.include) && !listed(&self.exclude)
    }
}

fn read_hosts(path: &Path) -> Result<std::collections::BTreeSet<String>, ConfError> {
    let file = || path.display().to_string();
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("xml")) {
        return Err(ConfError::File {
            file: file(),
            message: "not supported: the XML hosts file (graceful decommissioning); give host names one per line"
                .to_string(),
        });
    }
    let text = std::fs::read_to_string(path).map_err(|e| ConfError::File { file: file(), message: e.to_string() })?;
    Ok(text
        .lines()
        .flat_map(|line| line.split_whitespace().take_while(|w| !w.starts_with('#')))
        .map(str::to_string)
        .collect())
}

/// YARN refuses a rolling interval that does not leave two activation delays (an expiry and a
/// half each) between rolls.
fn rolling(site: &Properties, key: &str, expiry_key: &str, expiry_ms: i64) -> Result<i64, ConfError> {
    let secs: i64 = number(site, key, 86_400)?;
    let ms = secs.saturating_mul(1000);
    if ms <= crate::secrets::activation_delay(expiry_ms).saturating_mul(2) {
        return Err(bad(key, format!("{key} should be more than 3 X {expiry_key}")));
    }
    Ok(ms)
}

/// The secret in the file `key` names (Hadoop's way: the file's text, trimmed), if it names
/// one; a file that cannot be read or holds nothing is an error.
pub fn secret_file(site: &Properties, key: &str) -> Result<Option<Vec<u8>>, ConfError> {
    let Some(path) = site.get(key).map(|p| p.trim()).filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let bytes = std::fs::read(path).map_err(|e| bad(key, format!("Could not read secret file: {path}: {e}")))?;
    let secret: Vec<u8> = String::from_utf8_lossy(&bytes).trim().as_bytes().to_vec();
    if secret.is_empty() {
        return Err(bad(key, format!("No secret in secret file: {path}")));
    }
    Ok(Some(secret))
}

fn bad(key: &str, message: impl Into<String>) -> ConfError {
    ConfError::Key { key: key.to_string(), message: message.into() }
}

/// `host:port` from `key`, defaulting to `${yarn.resourcemanager.hostname}:default_port`
/// (YARN binds 0.0.0.0 by default; fairloom binds loopback unless told otherwise).
fn address(site: &Properties, key: &str, default_port: u16) -> Result<SocketAddr, ConfError> {
    let host = site.get(keys::HOSTNAME).map(String::as_str).unwrap_or("127.0.0.1");
    let host = if host == "localhost" { "127.0.0.1" } else { host };
    let text = site.get(key).cloned().unwrap_or_else(|| format!("{host}:{default_port}"));
    let text = text.replace("${yarn.resourcemanager.hostname}", host).replace("localhost", "127.0.0.1");
    text.parse().map_err(|_| bad(key, format!("'{text}' is not an IP address and port")))
}

fn number<T: std::str::FromStr>(site: &Properties, key: &str, default: T) -> Result<T, ConfError> {
    match site.get(key) {
        None => Ok(default),
        Some(v) => v.trim().parse().map_err(|_| bad(key, format!("'{v}' is not a number"))),
    }
}

fn optional<T: std::str::FromStr>(site: &Properties, key: &str) -> Result<Option<T>, ConfError> {
    site.get(key).map(|v| v.trim().parse().map_err(|_| bad(key, format!("'{v}' is not a number")))).transpose()
}

fn boolean(site: &Properties, key: &str, default: bool) -> Result<bool, ConfError> {
    match site.get(key).map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(default),
        Some(v) if v == "true" => Ok(true),
        Some(v) if v == "false" => Ok(false),
        Some(v) => Err(bad(key, format!("'{v}' is not true or false"))),
    }
}

impl RmConf {
    /// Read `DIR/yarn-site.xml` (absent: every default) and the scheduler's file.
    pub fn from_dir(dir: &Path) -> Result<Self, ConfError> {
        Self::from_site(read_site(dir)?, dir)
    }

    /// The configuration `site` gives, with relative files looked up in `dir`.
    pub fn from_site(site: Properties, dir: &Path) -> Result<Self, ConfError> {
        let scheduler = SchedulerKind::from_site(&site).map_err(|e| bad(keys::SCHEDULER_CLASS, e.message))?;
        let file_name = match scheduler {
            SchedulerKind::Fair => {
                site.get(keys::FAIR_ALLOCATION_FILE).cloned().unwrap_or_else(|| "fair-scheduler.xml".to_string())
            }
            SchedulerKind::Capacity => "capacity-scheduler.xml".to_string(),
        };
        let path = dir.join(&file_name);
        // The default file may be absent (every queue default); one named explicitly may not.
        let named = scheduler == SchedulerKind::Fair && site.contains_key(keys::FAIR_ALLOCATION_FILE);
        let scheduler_file = match std::fs::read_to_string(&path) {
            Ok(text) => Some((path.display().to_string(), text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && named => {
                return Err(bad(keys::FAIR_ALLOCATION_FILE, format!("{} does not exist", path.display())));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(ConfError::File { file: path.display().to_string(), message: e.to_string() }),
        };
        let tmp = site.get(keys::HADOOP_TMP_DIR).cloned().unwrap_or_else(|| "/tmp/hadoop-fairloom".to_string());
        let state_dir = site
            .get(keys::LEVELDB_PATH)
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(tmp).join("yarn/system/rmstore"));
        let am_max_attempts: u32 = number(&site, keys::AM_MAX_ATTEMPTS, 2)?;
        if am_max_attempts == 0 {
            return Err(bad(keys::AM_MAX_ATTEMPTS, "must be at least 1"));
        }
        let nm_expiry_ms = number(&site, keys::NM_EXPIRY_MS, 600_000)?;
        let am_expiry_ms = number(&site, keys::AM_EXPIRY_MS, 600_000)?;
        let validity_secs: i64 = number(&site, keys::AUTH_TOKEN_VALIDITY_SECS, 36_000)?;
        if validity_secs <= 0 {
            return Err(bad(keys::AUTH_TOKEN_VALIDITY_SECS, "must be a positive number of seconds"));
        }
        Ok(Self {
            webapp: address(&site, keys::WEBAPP_ADDRESS, 8088)?,
            tracker: address(&site, keys::TRACKER_ADDRESS, 8031)?,
            scheduler_address: address(&site, keys::SCHEDULER_ADDRESS, 8030)?,
            scheduler,
            scheduler_file,
            nm_heartbeat_ms: number(&site, keys::NM_HEARTBEAT_MS, 1000)?,
            nm_expiry_ms,
            am_expiry_ms,
            amrm_key_rolling_ms: rolling(&site, keys::AMRM_KEY_ROLLING_SECS, keys::AM_EXPIRY_MS, am_expiry_ms)?,
            container_key_rolling_ms: rolling(
                &site,
                keys::CONTAINER_KEY_ROLLING_SECS,
                keys::NM_EXPIRY_MS,
                nm_expiry_ms,
            )?,
            nm_token_key_rolling_ms: rolling(&site, keys::NM_TOKEN_KEY_ROLLING_SECS, keys::NM_EXPIRY_MS, nm_expiry_ms)?,
            container_expiry_ms: number(&site, keys::CONTAINER_EXPIRY_MS, 600_000)?,
            hosts: HostLists::read(&site)?,
            signature_secret: secret_file(&site, keys::SIGNATURE_SECRET_FILE)?,
            registration_secret: secret_file(&site, keys::REGISTRATION_SECRET_FILE)?,
            web_connections_per_peer: number(&site, keys::WEB_CONNECTIONS_PER_PEER, 64)?,
            tracker_connections_per_peer: optional(&site, keys::TRACKER_CONNECTIONS_PER_PEER)?,
            scheduler_connections_per_peer: optional(&site, keys::SCHEDULER_CONNECTIONS_PER_PEER)?,
            auth_token_validity_ms: validity_secs.saturating_mul(1000),
            am_max_attempts,
            recovery: boolean(&site, keys::RECOVERY, false)?,
            state_dir,
            max_completed_apps: number(&site, keys::MAX_COMPLETED_APPS, 1000)?,
            max_inactive_nodes: number(&site, keys::MAX_INACTIVE_NODES, 10_000)?,
            cluster_id: site.get(keys::CLUSTER_ID).cloned().unwrap_or_else(|| "fairloom".to_string()),
            access: AccessPolicy::from_site(&site)
                .map_err(|e| ConfError::File { file: "yarn-site.xml".into(), message: e })?,
            site,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(pairs: &[(&str, &str)]) -> Properties {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_configuration_directory_or_named_file_that_is_not_there_is_an_error() {
        let e = RmConf::from_dir(Path::new("/no/such/dir")).unwrap_err().to_string();
        assert_eq!(e, "/no/such/dir: no such configuration directory");
        let dir = std::env::temp_dir().join(format!("fairloom-conf-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("yarn-site.xml");
        std::fs::write(&file, "<configuration/>").unwrap();
        let e = RmConf::from_dir(&file).unwrap_err().to_string();
        assert!(e.ends_with("yarn-site.xml: not a directory"), "{e}");
        // A directory without yarn-site.xml or the default allocation file: every default.
        std::fs::remove_file(&file).unwrap();
        assert!(RmConf::from_dir(&dir).is_ok());
        let named = site(&[(keys::SCHEDULER_CLASS, FAIR_CLASS), (keys::FAIR_ALLOCATION_FILE, "pools.xml")]);
        let e = RmConf::from_site(named.clone(), &dir).unwrap_err().to_string();
        assert!(
            e.starts_with("yarn.scheduler.fair.allocation.file: ") && e.ends_with("pools.xml does not exist"),
            "{e}"
        );
        std::fs::write(dir.join("pools.xml"), "<allocations/>").unwrap();
        assert!(RmConf::from_site(named, &dir).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn defaults_are_yarns() {
        let c = RmConf::from_site(Properties::new(), Path::new("/nonexistent")).unwrap();
        assert_eq!(c.webapp.port(), 8088);
        assert_eq!(c.tracker.port(), 8031);
        assert_eq!(c.scheduler_address.port(), 8030);
        assert_eq!(c.scheduler, SchedulerKind::Capacity);
        assert_eq!(c.am_max_attempts, 2);
        assert_eq!(c.nm_expiry_ms, 600_000);
        assert!(!c.recovery);
    }

    #[test]
    fn an_unknown_scheduler_class_is_a_start_up_error() {
        let e = RmConf::from_site(site(&[(keys::SCHEDULER_CLASS, "x.Y")]), Path::new("/")).unwrap_err();
        assert!(e.to_string().contains("unknown scheduler class 'x.Y'"), "{e}");
        let e = RmConf::from_site(site(&[(keys::AM_MAX_ATTEMPTS, "two")]), Path::new("/")).unwrap_err();
        assert!(e.to_string().contains(keys::AM_MAX_ATTEMPTS), "{e}");
    }

    #[test]
    fn key_rolling_leaves_two_activation_delays() {
        let e = RmConf::from_site(site(&[(keys::NM_TOKEN_KEY_ROLLING_SECS, "1800")]), Path::new("/")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{0}: {0} should be more than 3 X {1}", keys::NM_TOKEN_KEY_ROLLING_SECS, keys::NM_EXPIRY_MS)
        );
        let ok = site(&[(keys::NM_EXPIRY_MS, "1000"), (keys::CONTAINER_KEY_ROLLING_SECS, "4")]);
        assert_eq!(RmConf::from_site(ok, Path::new("/")).unwrap().container_key_rolling_ms, 4000);
        let e = RmConf::from_site(
            site(&[(keys::AM_EXPIRY_MS, "2000"), (keys::AMRM_KEY_ROLLING_SECS, "6")]),
            Path::new("/"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("should be more than 3 X yarn.am.liveness-monitor.expiry-interval-ms"), "{e}");
    }

    #[test]
    fn host_lists_as_hadoop_reads_them() {
        let dir = std::env::temp_dir().join(format!("fairloom-hosts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let inc = dir.join("include");
        std::fs::write(&inc, "# the cluster\nnode1 node2\t10.0.0.3 # rack 2\n\n  node4\n").unwrap();
        let exc = dir.join("exclude");
        std::fs::write(&exc, "node2\n").unwrap();
        let s = site(&[(keys::NODES_INCLUDE, inc.to_str().unwrap()), (keys::NODES_EXCLUDE, exc.to_str().unwrap())]);
        let h = HostLists::read(&s).unwrap();
        assert_eq!(h.include.iter().map(String::as_str).collect::<Vec<_>>(), ["10.0.0.3", "node1", "node2", "node4"]);
        assert!(h.allows("node1", None));
        assert!(!h.allows("node2", None), "excluded wins");
        assert!(h.allows("n3.example", Some("10.0.0.3")), "by address");
        assert!(!h.allows("node9", None));
        assert!(h.untracked("node9", None) && !h.untracked("node2", None));
        assert!(HostLists::default().allows("anything", None));
        std::fs::write(&inc, "node9\n").unwrap();
        assert!(h.reread().unwrap().allows("node9", None));
        let missing = site(&[(keys::NODES_INCLUDE, "/no/such/file")]);
        assert!(HostLists::read(&missing).unwrap_err().to_string().contains("/no/such/file"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn addresses_follow_the_hostname() {
        let c = RmConf::from_site(
            site(&[(keys::HOSTNAME, "127.0.0.2"), (keys::WEBAPP_ADDRESS, "${yarn.resourcemanager.hostname}:9000")]),
            Path::new("/"),
        )
        .unwrap();
        assert_eq!(c.webapp.to_string(), "127.0.0.2:9000");
        assert_eq!(c.tracker.to_string(), "127.0.0.2:8031");
    }
}
