//! Load for a running fairloom ResourceManager, as `fairloom bench rm` applies it: thousands
//! of simulated NodeManagers heartbeat the RM over loopback (one keep-alive connection each),
//! applications are submitted over REST, and their simulated AMs ask, receive and release
//! containers through the AM protocol; a reader times REST reads meanwhile. [`bench`] runs
//! it all against an RM started in this process and returns the figures; [`in_process`] runs
//! the same cluster and applications in the simulator for comparison.
//!
//! The simulated parties speak the same wire protocols as fairloom's real NodeManager and
//! application masters, so what the RM does for them is what it does in production; they
//! run no processes (a container is a deadline).

mod bench;
mod cluster;
mod conn;
mod latency;
pub mod soak;

pub use bench::{bench, in_process, BenchSpec, Figures, InProcess, SoakFigures, SoakSpec};

/// What stopped the load.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// The RM answered something other than what the call expects.
    #[error("{0}")]
    Http(String),
    #[error("the ResourceManager: {0}")]
    Rm(String),
    #[error("the in-process simulator: {0}")]
    Sim(String),
    #[error("registering {node}: {source}")]
    Register { node: String, source: Box<LoadError> },
    #[error("only {registered} of {nodes} nodes registered within 120 s")]
    SlowRegistration { registered: u64, nodes: usize },
}
