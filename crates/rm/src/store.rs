//! The state store: what must survive a restart (applications, their attempts and submission
//! contexts, the RM's epoch). Running containers are not stored; NodeManagers report them
//! when they register again. Behind [`StateStore`] so a networked store can follow.

use std::collections::BTreeMap;
use std::path::Path;

use redb::{Database, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};

use fairloom_protocol::token::MasterKey;

use crate::submission::Submission;

#[derive(Debug, thiserror::Error)]
#[error("state store {what}: {message}")]
pub struct StoreError {
    pub what: &'static str,
    pub message: String,
}

fn err(what: &'static str) -> impl Fn(String) -> StoreError {
    move |message| StoreError { what, message }
}

/// Runs `f`, turning a panic inside redb (it asserts on pages it cannot make sense of) into
/// an error: a damaged store stops the RM with a message, not a crash.
fn unwound<T>(what: &'static str, f: impl FnOnce() -> Result<T, String>) -> Result<T, StoreError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(err(what)),
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            Err(err(what)(format!("the store is damaged ({why}); restore it from a copy or move it aside")))
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    pub number: u32,
    pub start_time: i64,
    pub finish_time: i64,
    /// SCHEDULED, LAUNCHED, RUNNING, FINISHED, FAILED, KILLED.
    pub state: String,
    pub am_container: Option<String>,
    pub am_node: Option<String>,
    pub am_node_http: Option<String>,
    pub diagnostics: String,
    /// Whether its failure counts against `am.max-attempts`.
    #[serde(default = "yes")]
    pub counts: bool,
}

fn yes() -> bool {
    true
}

/// What an application has used, kept with it so that a restart loses none of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageRecord {
    pub memory_seconds: i64,
    pub vcore_seconds: i64,
    /// When its first AM container was allocated (YARN's launchTime).
    pub launch_time: i64,
    pub preempted_memory: i64,
    pub preempted_vcores: i64,
    pub preempted_am: u32,
    pub preempted_non_am: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppRecord {
    /// `application_…`.
    pub id: String,
    pub user: String,
    pub submission: Submission,
    /// The queue the scheduler placed it in.
    pub queue: String,
    pub submit_time: i64,
    pub start_time: i64,
    pub finish_time: i64,
    /// YARN's RMAppState name.
    pub state: String,
    pub final_status: String,
    pub diagnostics: String,
    pub priority: i32,
    pub attempts: Vec<AttemptRecord>,
    #[serde(default)]
    pub usage: UsageRecord,
}

/// What a restarted RM reads back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recovered {
    /// Incremented at every start; container ids made after a restart carry it.
    pub epoch: u32,
    /// The AMRM token master keys (current, and next while one rolls): AMs keep their
    /// tokens across a restart, as YARN's `AMRMTokenSecretManagerState` lets them.
    pub amrm_keys: Option<(MasterKey, Option<MasterKey>)>,
    pub apps: BTreeMap<String, AppRecord>,
}

pub trait StateStore: Send {
    fn name(&self) -> &'static str;
    fn load(&self) -> Result<Recovered, StoreError>;
    fn set_epoch(&mut self, epoch: u32) -> Result<(), StoreError>;
    fn set_amrm_keys(&mut self, current: &MasterKey, next: Option<&MasterKey>) -> Result<(), StoreError>;
    fn put_app(&mut self, app: &AppRecord) -> Result<(), StoreError>;
    /// The usage of several applications in one write (the usage batches): small rows of
    /// their own, read back into the applications' records at load.
    fn put_usage(&mut self, usage: &[(String, UsageRecord)]) -> Result<(), StoreError>;
    /// Whether what is stored outlives the process (a store that keeps nothing need not be
    /// waited for).
    fn durable(&self) -> bool;
    fn remove_app(&mut self, id: &str) -> Result<(), StoreError>;
}

/// Keeps nothing across restarts (recovery disabled).
#[derive(Debug, Default)]
pub struct MemoryStore {
    state: Recovered,
}

impl StateStore for MemoryStore {
    fn name(&self) -> &'static str {
        "org.apache.hadoop.yarn.server.resourcemanager.recovery.NullRMStateStore"
    }
    fn load(&self) -> Result<Recovered, StoreError> {
        Ok(self.state.clone())
    }
    fn set_epoch(&mut self, epoch: u32) -> Result<(), StoreError> {
        self.state.epoch = epoch;
        Ok(())
    }
    fn set_amrm_keys(&mut self, current: &MasterKey, next: Option<&MasterKey>) -> Result<(), StoreError> {
        self.state.amrm_keys = Some((current.clone(), next.cloned()));
        Ok(())
    }
    fn put_app(&mut self, app: &AppRecord) -> Result<(), StoreError> {
        self.state.apps.insert(app.id.clone(), app.clone());
        Ok(())
    }
    fn put_usage(&mut self, usage: &[(String, UsageRecord)]) -> Result<(), StoreError> {
        for (id, u) in usage {
            if let Some(a) = self.state.apps.get_mut(id) {
                a.usage = *u;
            }
        }
        Ok(())
    }
    fn durable(&self) -> bool {
        false
    }
    fn remove_app(&mut self, id: &str) -> Result<(), StoreError> {
        self.state.apps.remove(id);
        Ok(())
    }
}

const APPS: TableDefinition<&str, &[u8]> = TableDefinition::new("apps");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const SECRETS: TableDefinition<&str, &[u8]> = TableDefinition::new("secrets");
/// Applications' usage written since their record was (newer than the record's).
const USAGE: TableDefinition<&str, &[u8]> = TableDefinition::new("usage");
const AMRM_KEYS: &str = "amrm-master-keys";

/// An embedded store in one redb file: each write is a committed transaction, so a record
/// is on disk before the RM acts on it.
pub struct RedbStore {
    db: Database,
}

impl RedbStore {
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| err("open")(format!("{}: {e}", dir.display())))?;
        let path = dir.join("fairloom-rmstore.redb");
        // redb would take an empty file for a new store: a store cut to nothing (a full disk,
        // a careless copy) would then start the RM with every application forgotten.
        if std::fs::metadata(&path).is_ok_and(|m| m.len() == 0) {
            return Err(err("open")(format!(
                "{} is empty: the store was truncated or never written; move it aside to start with an empty state",
                path.display()
            )));
        }
        // redb reads a damaged header or page when the file is opened or at the first commit;
        // both are inside `unwound`.
        let db = unwound("open", || {
            let db = Database::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            // Create the tables so a first load finds them (a store from before the usage
            // table gains it here).
            let tx = db.begin_write().map_err(|e| e.to_string())?;
            tx.open_table(APPS).map_err(|e| e.to_string())?;
            tx.open_table(META).map_err(|e| e.to_string())?;
            tx.open_table(SECRETS).map_err(|e| e.to_string())?;
            tx.open_table(USAGE).map_err(|e| e.to_string())?;
            tx.commit().map_err(|e| e.to_string())?;
            Ok(db)
        })?;
        // It holds the AMRM master keys: readable by the RM's user only.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| err("open")(format!("{}: {e}", path.display())))?;
        Ok(Self { db })
    }

    /// Reads every table back; [`StateStore::load`] wraps it so a damaged page that makes
    /// redb panic is an error that names the store.
    fn load_tables(&self) -> Result<Recovered, StoreError> {
        let e = err("load");
        let tx = self.db.begin_read().map_err(|x| e(x.to_string()))?;
        let meta = tx.open_table(META).map_err(|x| e(x.to_string()))?;
        let epoch = meta.get("epoch").map_err(|x| e(x.to_string()))?.map(|v| v.value()).unwrap_or(0) as u32;
        let secrets = tx.open_table(SECRETS).map_err(|x| e(x.to_string()))?;
        let amrm_keys = match secrets.get(AMRM_KEYS).map_err(|x| e(x.to_string()))? {
            Some(v) => Some(serde_json::from_slice(v.value()).map_err(|x| e(format!("{AMRM_KEYS}: {x}")))?),
            None => None,
        };
        let table = tx.open_table(APPS).map_err(|x| e(x.to_string()))?;
        let mut apps = BTreeMap::new();
        for row in table.iter().map_err(|x| e(x.to_string()))? {
            let (k, v) = row.map_err(|x| e(x.to_string()))?;
            let record: AppRecord =
                serde_json::from_slice(v.value()).map_err(|x| e(format!("application {}: {x}", k.value())))?;
            apps.insert(k.value().to_string(), record);
        }
        let usage = tx.open_table(USAGE).map_err(|x| e(x.to_string()))?;
        for row in usage.iter().map_err(|x| e(x.to_string()))? {
            let (k, v) = row.map_err(|x| e(x.to_string()))?;
            let u: UsageRecord =
                serde_json::from_slice(v.value()).map_err(|x| e(format!("usage of {}: {x}", k.value())))?;
            if let Some(a) = apps.get_mut(k.value()) {
                a.usage = u;
            }
        }
        Ok(Recovered { epoch, amrm_keys, apps })
    }

    fn write(
        &self,
        what: &'static str,
        f: impl FnOnce(&redb::WriteTransaction) -> Result<(), String>,
    ) -> Result<(), StoreError> {
        unwound(what, || {
            let tx = self.db.begin_write().map_err(|e| e.to_string())?;
            f(&tx)?;
            tx.commit().map_err(|e| e.to_string())
        })
    }
}

impl StateStore for RedbStore {
    fn name(&self) -> &'static str {
        "fairloom.RedbRMStateStore"
    }

    fn load(&self) -> Result<Recovered, StoreError> {
        unwound("load", || self.load_tables().map_err(|e| e.message))
    }

    fn set_epoch(&mut self, epoch: u32) -> Result<(), StoreError> {
        self.write("epoch", |tx| {
            let mut t = tx.open_table(META).map_err(|e| e.to_string())?;
            t.insert("epoch", epoch as u64).map_err(|e| e.to_string())?;
            Ok(())
        })
    }

    fn set_amrm_keys(&mut self, current: &MasterKey, next: Option<&MasterKey>) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(&(current, next)).map_err(|e| err("keys")(e.to_string()))?;
        self.write("keys", |tx| {
            let mut t = tx.open_table(SECRETS).map_err(|e| e.to_string())?;
            t.insert(AMRM_KEYS, bytes.as_slice()).map_err(|e| e.to_string())?;
            Ok(())
        })
    }

    fn put_app(&mut self, app: &AppRecord) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(app).map_err(|e| err("write")(e.to_string()))?;
        self.write("write", |tx| {
            let mut t = tx.open_table(APPS).map_err(|e| e.to_string())?;
            t.insert(app.id.as_str(), bytes.as_slice()).map_err(|e| e.to_string())?;
            // The record carries the usage as of now: an older usage row must not override it.
            let mut u = tx.open_table(USAGE).map_err(|e| e.to_string())?;
            u.remove(app.id.as_str()).map_err(|e| e.to_string())?;
            Ok(())
        })
    }

    fn put_usage(&mut self, usage: &[(String, UsageRecord)]) -> Result<(), StoreError> {
        let rows = usage
            .iter()
            .map(|(id, u)| serde_json::to_vec(u).map(|b| (id.as_str(), b)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| err("usage")(e.to_string()))?;
        self.write("usage", |tx| {
            let mut t = tx.open_table(USAGE).map_err(|e| e.to_string())?;
            for (id, bytes) in &rows {
                t.insert(*id, bytes.as_slice()).map_err(|e| e.to_string())?;
            }
            Ok(())
        })
    }

    fn durable(&self) -> bool {
        true
    }

    fn remove_app(&mut self, id: &str) -> Result<(), StoreError> {
        self.write("remove", |tx| {
            let mut t = tx.open_table(APPS).map_err(|e| e.to_string())?;
            t.remove(id).map_err(|e| e.to_string())?;
            let mut u = tx.open_table(USAGE).map_err(|e| e.to_string())?;
            u.remove(id).map_err(|e| e.to_string())?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str) -> AppRecord {
        AppRecord {
            id: id.to_string(),
            user: "alice".to_string(),
            submission: Submission { application_id: id.to_string(), ..Default::default() },
            queue: "root.default".to_string(),
            submit_time: 1,
            start_time: 1,
            finish_time: 0,
            state: "ACCEPTED".to_string(),
            final_status: "UNDEFINED".to_string(),
            diagnostics: String::new(),
            priority: 0,
            attempts: vec![],
            usage: UsageRecord { memory_seconds: 7, ..Default::default() },
        }
    }

    #[test]
    fn redb_keeps_apps_and_epoch_across_opens() {
        let dir = std::env::temp_dir().join(format!("fairloom-store-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let mut s = RedbStore::open(&dir).unwrap();
            assert_eq!(s.load().unwrap(), Recovered::default());
            s.set_epoch(3).unwrap();
            s.set_amrm_keys(&MasterKey::new(7, b"secret".to_vec()), None).unwrap();
            s.put_app(&record("application_1_0001")).unwrap();
            s.put_app(&record("application_1_0002")).unwrap();
            s.remove_app("application_1_0001").unwrap();
            let newer = UsageRecord { memory_seconds: 99, launch_time: 5, ..Default::default() };
            s.put_usage(&[("application_1_0002".to_string(), newer), ("application_1_0001".to_string(), newer)])
                .unwrap();
        }
        let s = RedbStore::open(&dir).unwrap();
        let r = s.load().unwrap();
        assert_eq!(r.epoch, 3);
        assert_eq!(r.amrm_keys, Some((MasterKey::new(7, b"secret".to_vec()), None)));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("fairloom-rmstore.redb")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the store holds keys: its user's only");
        assert_eq!(r.apps.keys().collect::<Vec<_>>(), vec!["application_1_0002"]);
        let mut expected = record("application_1_0002");
        expected.usage = UsageRecord { memory_seconds: 99, launch_time: 5, ..Default::default() };
        assert_eq!(r.apps["application_1_0002"], expected, "the newer usage row wins over the record's");
        drop(s);
        // A record written after a usage row carries the newer usage itself.
        let mut s = RedbStore::open(&dir).unwrap();
        s.put_app(&record("application_1_0002")).unwrap();
        assert_eq!(s.load().unwrap().apps["application_1_0002"], record("application_1_0002"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
