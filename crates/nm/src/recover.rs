//! A NodeManager's start after an earlier run: what that run left in the state file is taken
//! back (recovery on: running containers are watched until they exit, as YARN's
//! RecoveredContainerLaunch does) or killed (recovery off), and every ended container not yet
//! acknowledged is reported again at registration. No process of the last run is left alone.

use fairloom_protocol::exit;
use fairloom_protocol::ContainerState;

use crate::container::{self, exit_file, signal_group, Ctr, LOST};
use crate::state::{still_running, NmState};
use crate::Node;

/// Take back (or kill) what `prev` recorded, into `node`'s table.
pub(crate) fn take_back(node: &Node, prev: NmState, recovery: bool) {
    {
        let mut keys = node.guard.keys.lock().unwrap_or_else(|p| p.into_inner());
        // Its last session lets it take its node back at once, recovering or not.
        keys.session = prev.session;
        if recovery {
            keys.container = fairloom_protocol::token::KnownKeys::from_keys(prev.container_keys);
            keys.nm = fairloom_protocol::token::KnownKeys::from_keys(prev.nm_keys);
        }
    }
    let now = crate::now_ms();
    let (mut watched, mut killed, mut ended) = (0, 0, 0);
    for mut c in prev.containers {
        if let Ok(id) = c.id.parse::<fairloom_model::ContainerId>() {
            // Its token must not start it a second time.
            node.guard.started_before(id, c.token_expiry);
        }
        if c.state == ContainerState::Complete {
            if !c.acknowledged {
                insert(node, c);
            }
            continue;
        }
        let alive = c.pgid.is_some_and(|pg| still_running(pg, c.start_ticks));
        match (alive, recovery, c.kill_status) {
            (true, true, None) => {
                let (id, pgid, ticks, file) = (c.id.clone(), c.pgid.unwrap_or(0), c.start_ticks, exit_file(&c));
                tracing::info!("Recovered container {id} (process group {pgid}): watching it until it exits");
                c.state = ContainerState::Running;
                insert(node, c);
                container::watch(node.table.clone(), id, pgid, ticks, file, node.env.clone());
                watched += 1;
            }
            (true, _, kill) => {
                // Being killed when the node went down, or not to be taken back: it goes now.
                if let Some(pg) = c.pgid {
                    signal_group(pg, libc::SIGKILL);
                }
                c.state = ContainerState::Complete;
                c.finish_time = now;
                c.exit_status = kill.unwrap_or(exit::ABORTED);
                if kill.is_none() {
                    c.diagnostics = "Container killed: its NodeManager restarted without recovery (yarn.nodemanager.recovery.enabled is false)".to_string();
                }
                tracing::warn!("Killed container {} left by the last run: {}", c.id, c.diagnostics);
                insert(node, c);
                killed += 1;
            }
            (false, _, kill) => {
                // It ended while the node was down: its script says how, unless it was killed.
                if let Some(pg) = c.pgid {
                    signal_group(pg, libc::SIGKILL);
                }
                let code = container::read_exit_code(&exit_file(&c));
                c.state = ContainerState::Complete;
                c.finish_time = now;
                c.exit_status = kill.or(code).unwrap_or(LOST);
                if kill.is_none() && c.exit_status == LOST {
                    c.diagnostics = format!("Container exited with a non-zero exit code {LOST}");
                } else if kill.is_none() && c.exit_status != 0 {
                    c.diagnostics = format!("Exception from container-launch. Exit code: {}", c.exit_status);
                }
                insert(node, c);
                ended += 1;
            }
        }
    }
    if watched + killed + ended > 0 {
        tracing::info!("From the last run: {watched} containers taken back, {killed} killed, {ended} ended meanwhile");
    }
    node.env.save(&node.table);
}

fn insert(node: &Node, c: Ctr) {
    if let Ok(mut t) = node.table.lock() {
        t.insert(c.id.clone(), c);
    }
}
