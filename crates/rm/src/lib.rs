#![recursion_limit = "256"]
//! fairloom's ResourceManager: the scheduler core in one event loop ([`service`]), YARN's
//! REST API and the node and AM protocols over HTTP ([`http`]), and a state store that lets
//! a restarted RM lose no application ([`store`]).

pub mod access;
pub mod conf;
pub mod core;
pub mod dao;
pub mod error;
pub mod explain;
pub mod http;
pub mod metrics;
pub mod queues;
pub mod secrets;
pub mod service;
pub mod store;
pub mod submission;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use tokio::net::TcpListener;
use tokio::sync::watch;

use fairloom_serve::Limits;

use crate::conf::RmConf;
use crate::core::Core;
use crate::service::{wall_ms, LoopClient, Snapshot};
use crate::store::{MemoryStore, RedbStore, StateStore};

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The cause is in the message, and so not also a `source` (a chain printed whole
    /// would say it twice).
    #[error("cannot listen on {addr} ({what}): {error}")]
    Bind { what: &'static str, addr: SocketAddr, error: std::io::Error },
    #[error(transparent)]
    Rm(#[from] error::RmError),
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error("cannot start the event loop: {0}")]
    Thread(std::io::Error),
}

/// A running ResourceManager; dropping it does not stop it, [`RmHandle::stop`] does.
pub struct RmHandle {
    pub webapp: SocketAddr,
    pub tracker: SocketAddr,
    pub scheduler: SocketAddr,
    stop: Arc<AtomicBool>,
    shutdown: watch::Sender<bool>,
    loop_thread: Option<std::thread::JoinHandle<()>>,
    servers: Vec<tokio::task::JoinHandle<()>>,
}

impl RmHandle {
    /// Stop serving and end the loop.
    pub async fn stop(mut self) {
        tracing::info!("ResourceManager stopping");
        let _ = self.shutdown.send(true);
        for s in self.servers.drain(..) {
            let _ = s.await;
        }
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.loop_thread.take() {
            let _ = tokio::task::spawn_blocking(move || t.join()).await;
        }
    }
}

/// `n` bytes from the system's randomness ([`fairloom_protocol::token::random_bytes`]).
pub fn random_bytes(n: usize) -> Vec<u8> {
    // No randomness means no secret worth the name: nothing can go on safely.
    fairloom_protocol::token::random_bytes(n).unwrap_or_else(|e| panic!("getrandom failed: {e}"))
}

async fn bind(what: &'static str, addr: SocketAddr) -> Result<TcpListener, StartError> {
    TcpListener::bind(addr).await.map_err(|error| StartError::Bind { what, addr, error })
}

/// Start the RM: open the store (recovering when `yarn.resourcemanager.recovery.enabled`),
/// bind the three addresses (port 0 picks a free one; the handle tells which), serve.
pub async fn start(mut conf: RmConf) -> Result<RmHandle, StartError> {
    let web = bind("webapp", conf.webapp).await?;
    let tracker = bind("resource-tracker", conf.tracker).await?;
    let sched = bind("scheduler", conf.scheduler_address).await?;
    let asked = conf.webapp;
    let local = |l: &TcpListener, what| l.local_addr().map_err(|error| StartError::Bind { what, addr: asked, error });
    conf.webapp = local(&web, "webapp")?;
    conf.tracker = local(&tracker, "resource-tracker")?;
    conf.scheduler_address = local(&sched, "scheduler")?;
    let store: Box<dyn StateStore> =
        if conf.recovery { Box::new(RedbStore::open(&conf.state_dir)?) } else { Box::new(MemoryStore::default()) };
    let (webapp, tracker_addr, scheduler_addr) = (conf.webapp, conf.tracker, conf.scheduler_address);
    // Each port's share of the descriptors: the tracker's (one connection per NM) the most,
    // the web's the least. One address may take 64 of the web's (anyone may connect there)
    // and half of the others' (one host runs many AMs, and under `up` every NM).
    let files = fairloom_serve::raise_open_files_limit();
    let limits = |eighths, per_peer: Option<usize>| {
        let max = fairloom_serve::connection_share(files, eighths, 8);
        Limits::new(max).per_peer(per_peer.unwrap_or(max / 2))
    };
    let (web_limits, tracker_limits, sched_limits) = (
        limits(1, Some(conf.web_connections_per_peer)),
        limits(4, conf.tracker_connections_per_peer),
        limits(2, conf.scheduler_connections_per_peer),
    );
    let web_secret = http::auth::WebSecret::new(
        conf.signature_secret.clone(),
        conf.auth_token_validity_ms,
        Box::new(|| random_bytes(32)),
        wall_ms(),
    );
    let core = Core::new(conf, store, Box::new(|| random_bytes(fairloom_protocol::token::KEY_BYTES)), wall_ms())?;
    tracing::info!(
        scheduler = core.sched.kind().name(),
        webapp = %webapp,
        resource_tracker = %tracker_addr,
        scheduler_address = %scheduler_addr,
        store = core.store.name(),
        recovery = core.conf.recovery,
        acl = core.conf.access.enabled,
        epoch = core.epoch,
        "ResourceManager started"
    );
    let shared = Arc::new(RwLock::new(Arc::new(Snapshot::of(&core, None))));
    let (tx, rx) = std::sync::mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let loop_stop = stop.clone();
    let loop_shared = shared.clone();
    let metrics = Arc::new(metrics::RmMetrics::new());
    let loop_metrics = metrics.clone();
    let loop_thread = std::thread::Builder::new()
        .name("rm-event-loop".to_string())
        .spawn(move || {
            let run = std::panic::AssertUnwindSafe(|| service::run(core, rx, loop_shared, loop_stop, loop_metrics));
            if std::panic::catch_unwind(run).is_err() {
                // A failed loop with listeners still answering would look healthy and do
                // nothing: the process ends, to be started again on its stored state.
                tracing::error!("the ResourceManager's event loop failed (see the panic above): exiting");
                std::process::exit(70);
            }
        })
        .map_err(StartError::Thread)?;
    let ctx = http::Ctx { rm: LoopClient { tx, shared }, web: Arc::new(web_secret), metrics };
    let (shutdown, watcher) = watch::channel(false);
    let mut servers = Vec::new();
    for (name, listener, router, limits) in [
        ("webapp", web, http::web_router(ctx.clone()), web_limits),
        ("resource-tracker", tracker, http::tracker_router(ctx.clone()), tracker_limits),
        ("scheduler", sched, http::am_router(ctx), sched_limits),
    ] {
        tracing::debug!(port = name, max_connections = limits.max_connections, per_peer = ?limits.per_peer, "serving");
        let mut w = watcher.clone();
        servers.push(tokio::spawn(fairloom_serve::serve(name, listener, router, limits, async move {
            let _ = w.wait_for(|s| *s).await;
        })));
    }
    Ok(RmHandle {
        webapp,
        tracker: tracker_addr,
        scheduler: scheduler_addr,
        stop,
        shutdown,
        loop_thread: Some(loop_thread),
        servers,
    })
}
