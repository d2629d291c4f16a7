//! A state store the RM cannot trust stops it with a message that names what is wrong,
//! rather than starting with applications forgotten (a truncated file), run again (a state
//! it does not know taken for ACCEPTED) or a crash inside the store library (damaged pages).

use std::path::{Path, PathBuf};

use fairloom_config::properties::Properties;
use fairloom_rm::conf::RmConf;
use fairloom_rm::store::{AppRecord, RedbStore, StateStore, UsageRecord};
use fairloom_rm::submission::Submission;

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(name: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("fairloom-store-faults-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Dir(d)
}

fn record(state: &str, final_status: &str) -> AppRecord {
    let id = "application_1_0001";
    AppRecord {
        id: id.to_string(),
        user: "alice".to_string(),
        submission: Submission { application_id: id.to_string(), ..Default::default() },
        queue: "root.default".to_string(),
        submit_time: 1,
        start_time: 1,
        finish_time: 0,
        state: state.to_string(),
        final_status: final_status.to_string(),
        diagnostics: String::new(),
        priority: 0,
        attempts: vec![],
        usage: UsageRecord::default(),
    }
}

/// Starts an RM with recovery on the store in `store`; the error it stops with, if any.
fn start(store: &Path) -> Option<String> {
    let mut site = Properties::new();
    for (k, v) in [
        ("yarn.resourcemanager.webapp.address", "127.0.0.1:0"),
        ("yarn.resourcemanager.resource-tracker.address", "127.0.0.1:0"),
        ("yarn.resourcemanager.scheduler.address", "127.0.0.1:0"),
        ("yarn.resourcemanager.recovery.enabled", "true"),
    ] {
        site.insert(k.to_string(), v.to_string());
    }
    site.insert("yarn.resourcemanager.leveldb-state-store.path".to_string(), store.display().to_string());
    let conf = RmConf::from_site(site, store).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    rt.block_on(async move {
        match fairloom_rm::start(conf).await {
            Ok(handle) => {
                handle.stop().await;
                None
            }
            Err(e) => Some(e.to_string()),
        }
    })
}

fn write(store: &Path, record: &AppRecord) {
    let mut s = RedbStore::open(store).unwrap();
    s.put_app(record).unwrap();
}

#[test]
fn a_known_store_starts_and_an_unknown_state_stops_the_rm() {
    let d = dir("states");
    write(&d.0, &record("RUNNING", "UNDEFINED"));
    assert_eq!(start(&d.0), None, "a store this RM wrote starts");

    for (state, status, named) in [("BOGUS", "UNDEFINED", "state 'BOGUS'"), ("KILLED", "MAYBE", "final status 'MAYBE'")]
    {
        write(&d.0, &record(state, status));
        let e = start(&d.0).expect("refused");
        assert!(e.contains("application_1_0001") && e.contains(named) && e.contains("does not know"), "{e}");
    }
    let mut r = record("RUNNING", "UNDEFINED");
    r.attempts.push(fairloom_rm::store::AttemptRecord {
        number: 1,
        start_time: 1,
        finish_time: 0,
        state: "WANDERING".to_string(),
        am_container: None,
        am_node: None,
        am_node_http: None,
        diagnostics: String::new(),
        counts: true,
    });
    write(&d.0, &r);
    let e = start(&d.0).expect("refused");
    assert!(e.contains("attempt 1 in state 'WANDERING'"), "{e}");
}

#[test]
fn a_truncated_store_stops_the_rm() {
    let d = dir("empty");
    write(&d.0, &record("RUNNING", "UNDEFINED"));
    let file = d.0.join("fairloom-rmstore.redb");
    std::fs::File::create(&file).unwrap(); // truncates to 0 bytes
    let e = start(&d.0).expect("refused");
    assert!(e.contains("fairloom-rmstore.redb") && e.contains("is empty"), "{e}");
}

#[test]
fn a_damaged_store_is_an_error_not_a_crash() {
    let d = dir("damaged");
    {
        let mut s = RedbStore::open(&d.0).unwrap();
        for i in 0..200 {
            let mut r = record("RUNNING", "UNDEFINED");
            r.id = format!("application_1_{i:04}");
            r.diagnostics = "x".repeat(500);
            s.put_app(&r).unwrap();
        }
    }
    let file = d.0.join("fairloom-rmstore.redb");
    let mut bytes = std::fs::read(&file).unwrap();
    // Every page after the first scribbled over: the header says where the tables are,
    // and what is there is not a table.
    for (i, b) in bytes.iter_mut().enumerate().skip(4096) {
        *b = (i * 131 % 251) as u8;
    }
    std::fs::write(&file, &bytes).unwrap();
    let e = start(&d.0).expect("refused");
    // redb asserts on such pages: the panic is caught and named.
    assert!(e.contains("state store") && e.contains("damaged"), "{e}");
}

#[test]
fn a_damaged_header_is_an_error_not_a_crash() {
    let d = dir("header");
    write(&d.0, &record("RUNNING", "UNDEFINED"));
    let file = d.0.join("fairloom-rmstore.redb");
    let mut bytes = std::fs::read(&file).unwrap();
    // Zeroes over the header's root pointers: redb trips over them when the RM's first
    // write transaction commits.
    bytes[256..264].fill(0);
    std::fs::write(&file, &bytes).unwrap();
    let e = start(&d.0).expect("refused");
    assert!(e.contains("state store open") && e.contains("damaged"), "{e}");
}
