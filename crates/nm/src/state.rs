//! What a NodeManager keeps across its own restarts (YARN's NM state store), in one file
//! written whole at every change: its port, so it comes back as the same node; the RM's keys;
//! and every container it launched, until the RM has acknowledged its end.
//!
//! At start the file says what the last run left: with recovery
//! (`yarn.nodemanager.recovery.enabled`) the containers still running are taken back and
//! watched until they exit; without it they are killed. Either way their ends are reported to
//! the RM, so no process is left behind and no application waits for one.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use fairloom_protocol::token::MasterKey;

use crate::container::Ctr;

/// The file's contents.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NmState {
    /// The port the node listened on (its id is `host:port`).
    pub port: Option<u16>,
    pub container_keys: Vec<MasterKey>,
    pub nm_keys: Vec<MasterKey>,
    pub containers: Vec<Ctr>,
    /// The session of its last registration: what lets it take its node back at once.
    #[serde(default)]
    pub session: String,
}

/// Where the state lives; writes are serialized, each one whole (a temporary file renamed).
pub struct Store {
    path: PathBuf,
    lock: Mutex<()>,
}

#[derive(Debug, thiserror::Error)]
#[error("NodeManager state {path}: {message}")]
pub struct StateError {
    pub path: String,
    pub message: String,
}

impl Store {
    /// The store in `dir` (created, readable by this user only).
    pub fn open(dir: &Path) -> Result<Self, StateError> {
        let err = |e: std::io::Error| StateError { path: dir.display().to_string(), message: e.to_string() };
        std::fs::create_dir_all(dir).map_err(err)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(err)?;
        Ok(Self { path: dir.join("state.json"), lock: Mutex::new(()) })
    }

    /// What the last run left, if anything. A file that cannot be read is an error: starting
    /// as if nothing ran could leave its containers behind.
    pub fn load(&self) -> Result<Option<NmState>, StateError> {
        let err = |message: String| StateError { path: self.path.display().to_string(), message };
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| err(e.to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(err(e.to_string())),
        }
    }

    /// Write `state` whole: to a temporary file (the keys are in it: this user's only), then
    /// renamed over the old one, so a crash leaves one or the other.
    pub fn save(&self, state: &NmState) -> Result<(), StateError> {
        let _one_at_a_time = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let err = |e: String| StateError { path: self.path.display().to_string(), message: e };
        let bytes = serde_json::to_vec(state).map_err(|e| err(e.to_string()))?;
        let tmp = self.path.with_extension("json.tmp");
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| err(e.to_string()))?;
        f.write_all(&bytes).and_then(|_| f.sync_data()).map_err(|e| err(e.to_string()))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| err(e.to_string()))
    }
}

/// When process `pid` started, in clock ticks since boot (`/proc/PID/stat`'s 22nd field):
/// with the pid, what tells a process from a later one that reused its pid.
pub fn start_ticks(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split(' ');
    let state = fields.next()?;
    if state == "Z" {
        return None;
    }
    // `rest` starts at field 3 (the state); field 22 is 19 further on.
    fields.nth(18)?.parse().ok()
}

/// Whether the process that led a container's group is still that process.
pub fn still_running(pgid: i32, ticks: Option<u64>) -> bool {
    ticks.is_some() && start_ticks(pgid) == ticks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_known_by_its_pid_and_start_time() {
        let me = std::process::id() as i32;
        let t = start_ticks(me);
        assert!(t.is_some());
        assert!(still_running(me, t));
        assert!(!still_running(me, t.map(|x| x + 1)), "same pid, another start: another process");
        assert!(!still_running(me, None));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        child.wait().unwrap();
        assert!(start_ticks(pid).is_none(), "reaped");
    }

    #[test]
    fn the_state_is_written_whole_and_read_back() {
        let dir = std::env::temp_dir().join(format!("fairloom-nm-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = Store::open(&dir).unwrap();
        assert!(s.load().unwrap().is_none());
        let st =
            NmState { port: Some(4242), container_keys: vec![MasterKey::new(3, vec![1, 2])], ..Default::default() };
        s.save(&st).unwrap();
        let back = s.load().unwrap().unwrap();
        assert_eq!(back.port, Some(4242));
        assert_eq!(back.container_keys, st.container_keys);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(dir.join("state.json")).unwrap().permissions().mode() & 0o777, 0o600);
        std::fs::write(dir.join("state.json"), "{not json").unwrap();
        assert!(s.load().is_err(), "a damaged file is not taken for an empty one");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
