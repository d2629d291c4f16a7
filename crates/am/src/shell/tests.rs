use std::borrow::Cow;

use fairloom_protocol::am::{AllocateResponse, AmCommand, Container, FinalStatus, NmToken, NodeReport};
use fairloom_protocol::token::Token;
use fairloom_protocol::{ContainerState, ContainerStatus, Res};

use super::{redirected, Heard, ShellAm};

fn token(kind: &'static str, service: &str) -> Token {
    Token { identifier: vec![1], password: vec![2], kind: Cow::Borrowed(kind), service: service.to_string() }
}

fn container(id: &str, node: &str) -> Container {
    Container {
        id: id.to_string(),
        node_id: node.to_string(),
        node_http_address: format!("{node}-http"),
        resource: Res::new(1024, 1),
        priority: 0,
        token: Some(token("ContainerToken", node)),
    }
}

fn done(id: &str, exit_status: i32) -> ContainerStatus {
    ContainerStatus {
        container_id: id.to_string(),
        state: ContainerState::Complete,
        exit_status,
        diagnostics: String::new(),
        resource: Res::new(1024, 1),
        priority: 0,
        creation_time: 0,
        finish_time: 0,
    }
}

fn response(response_id: i64) -> AllocateResponse {
    AllocateResponse {
        response_id,
        am_command: None,
        allocated: Vec::new(),
        completed: Vec::new(),
        preemption: None,
        headroom: Res::new(0, 0),
        updated_nodes: Vec::new(),
        num_cluster_nodes: 2,
        nm_tokens: Vec::new(),
        amrm_token: None,
    }
}

fn nm_token(node: &str) -> NmToken {
    NmToken { node_id: node.to_string(), token: token("NMToken", node) }
}

/// Hears `resp`, starts every launch as `ok` says, settles; returns the launched and
/// released ids.
fn step(am: &mut ShellAm, resp: AllocateResponse, ok: impl Fn(&str) -> bool) -> (Vec<String>, Vec<String>) {
    let Heard::Work { launches, releases, rest } = am.heard(resp) else { panic!("not work") };
    let ids = launches.iter().map(|l| l.container.id.clone()).collect();
    for l in launches {
        let started = ok(&l.container.id);
        am.started(l, started);
    }
    am.settle(rest);
    (ids, releases)
}

#[test]
fn asks_once_launches_what_it_needs_and_gives_back_the_rest() {
    let mut am = ShellAm::new(2, Res::new(1024, 1), "echo hi");
    let first = am.request();
    assert_eq!(first.asks.len(), 1);
    assert_eq!(first.asks[0].num_containers, 2);
    let mut r = response(1);
    r.nm_tokens = vec![nm_token("n1")];
    r.allocated = vec![container("c1", "n1"), container("c2", "n1"), container("c3", "n1")];
    let (launched, released) = step(&mut am, r, |_| true);
    assert_eq!(launched, ["c1", "c2"]);
    assert_eq!(released, ["c3"]);
    // The ask is not sent again while nothing changed.
    let next = am.request();
    assert!(next.asks.is_empty());
    assert_eq!(next.response_id, 1);
    let mut r = response(2);
    r.completed = vec![done("c1", 0), done("c2", 0)];
    step(&mut am, r, |_| true);
    assert!(am.done());
    let fin = am.finish();
    assert_eq!(fin.final_status, FinalStatus::Succeeded);
    assert_eq!(fin.diagnostics, "");
}

#[test]
fn a_lost_container_is_asked_for_again_and_a_failed_one_fails_the_app() {
    let mut am = ShellAm::new(2, Res::new(1024, 1), "false");
    let mut r = response(1);
    r.nm_tokens = vec![nm_token("n1"), nm_token("n2")];
    r.allocated = vec![container("c1", "n1"), container("c2", "n2")];
    step(&mut am, r, |_| true);
    let mut r = response(2);
    r.completed = vec![done("c1", fairloom_model::exit::PREEMPTED), done("c2", 3)];
    step(&mut am, r, |_| true);
    assert!(!am.done());
    let again = am.request();
    assert_eq!(again.asks[0].num_containers, 1, "one more for the preempted container");
    let mut r = response(3);
    r.allocated = vec![container("c3", "n1")];
    step(&mut am, r, |_| true);
    // Its node goes away: that container is lost as well.
    let mut r = response(4);
    r.updated_nodes = vec![NodeReport { node_id: "n1".into(), http_address: String::new(), state: "LOST".into() }];
    step(&mut am, r, |_| true);
    assert_eq!(am.request().asks[0].num_containers, 1);
    assert_eq!(am.running().count(), 0);
    let mut r = response(5);
    r.allocated = vec![container("c4", "n2")];
    step(&mut am, r, |_| true);
    let mut r = response(6);
    r.completed = vec![done("c4", 0)];
    step(&mut am, r, |_| true);
    assert!(am.done());
    let fin = am.finish();
    assert_eq!(fin.final_status, FinalStatus::Failed);
    assert_eq!(fin.diagnostics, "Diagnostics., total=2, completed=2, allocated=4, failed=1; c2 exited with 3");
}

#[test]
fn a_start_that_fails_or_a_missing_nm_token_counts_as_a_failed_container() {
    let mut am = ShellAm::new(2, Res::new(1024, 1), "true");
    let mut r = response(1);
    r.nm_tokens = vec![nm_token("n1")];
    r.allocated = vec![container("c1", "n1"), container("c2", "n9")];
    let (launched, _) = step(&mut am, r, |id| id != "c1");
    assert_eq!(launched, ["c1"], "c2 has no NM token: not launched");
    assert!(am.done(), "both count as failed");
    assert!(am.finish().diagnostics.ends_with("c2 exited with -1; c1 exited with -1"), "{}", am.finish().diagnostics);
    assert!(am.take_log().iter().any(|l| l.contains("no container or NM token for c2")));
}

#[test]
fn a_resync_keeps_the_running_containers_and_sends_the_ask_again() {
    let mut am = ShellAm::new(1, Res::new(1024, 1), "sleep 1");
    let mut r = response(7);
    r.nm_tokens = vec![nm_token("n1")];
    r.allocated = vec![container("c1", "n1")];
    step(&mut am, r, |_| true);
    assert!(am.request().asks.is_empty());
    let mut r = response(8);
    r.am_command = Some(AmCommand::AmResync);
    assert!(matches!(am.heard(r), Heard::Resync));
    am.resynced(vec![container("c1", "n1")]);
    let again = am.request();
    assert_eq!((again.response_id, again.asks.len()), (0, 1));
    assert_eq!(am.running().map(|(c, t)| (c.id.as_str(), t.is_some())).collect::<Vec<_>>(), [("c1", true)]);
    let mut r = response(9);
    r.am_command = Some(AmCommand::AmShutdown);
    assert!(matches!(am.heard(r), Heard::Shutdown));
}

#[test]
fn every_command_of_a_list_writes_to_the_log_files() {
    let dir = std::env::temp_dir().join(format!("fairloom-shell-redirect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for command in ["echo a; echo b >&2; echo c # a comment", "(echo a); echo c; echo b 1>&2"] {
        let line = redirected(command).replace("<LOG_DIR>", dir.to_str().unwrap());
        let status = std::process::Command::new("/bin/bash").arg("-c").arg(&line).status().unwrap();
        assert!(status.success(), "{line}");
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
        assert_eq!((read("stdout"), read("stderr")), ("a\nc\n".to_string(), "b\n".to_string()), "{command}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
