//! The daemons' logs (`fairloom rm`, `nm`, `up`): one line per event through `tracing`, to
//! stderr and, when a log directory is configured, appended to a file there as well.
//!
//! Which events pass: `RUST_LOG` when set, else yarn-site's `fairloom.log.level`, else `info`,
//! in the same syntax (`info`, `warn,fairloom_rm=debug`). The directory: `--log-dir`, else
//! `YARN_LOG_DIR`, else `HADOOP_LOG_DIR`, as Hadoop's daemon scripts choose theirs.

use std::fs::OpenOptions;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use clap::Args;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::writer::MakeWriterExt;
use tracing_subscriber::prelude::*;

use fairloom_config::properties::Properties;

/// The yarn-site key that sets the level when `RUST_LOG` does not.
pub const LEVEL_KEY: &str = "fairloom.log.level";

#[derive(Args, Clone, Default)]
pub struct LogArgs {
    /// Also append the log to a file in this directory (default: $YARN_LOG_DIR, then
    /// $HADOOP_LOG_DIR; neither: stderr only).
    #[arg(long, value_name = "DIR")]
    log_dir: Option<PathBuf>,
}

/// Which events pass, and where the text comes from (for the error message).
fn filter(site: &Properties) -> Result<Targets> {
    let (what, text) = match std::env::var("RUST_LOG") {
        Ok(v) if !v.trim().is_empty() => ("RUST_LOG", v),
        _ => match site.get(LEVEL_KEY) {
            Some(v) => (LEVEL_KEY, v.clone()),
            None => ("the default", "info".to_string()),
        },
    };
    let bad = |why: String| anyhow!("{what} '{text}' is not a log level or filter: {why}");
    // Targets takes a bare word as a module name; here a bare word must be a level, so that
    // a typo ("wran") is an error rather than a filter that passes nothing.
    for directive in text.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let level = directive.rsplit_once('=').map_or(directive, |(_, l)| l);
        level
            .parse::<tracing_subscriber::filter::LevelFilter>()
            .map_err(|_| bad(format!("'{level}' is not one of off, error, warn, info, debug, trace")))?;
    }
    text.trim().parse::<Targets>().map_err(|e| bad(e.to_string()))
}

fn directory(args: &LogArgs) -> Option<PathBuf> {
    args.log_dir.clone().or_else(|| {
        ["YARN_LOG_DIR", "HADOOP_LOG_DIR"]
            .iter()
            .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()).map(PathBuf::from))
    })
}

/// Start logging for daemon `role` (`resourcemanager`, `nodemanager`, `up`); the file it
/// appends to, when there is one.
pub fn init(role: &str, args: &LogArgs, site: &Properties) -> Result<Option<PathBuf>> {
    let targets = filter(site)?;
    let stderr = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_target(true);
    let Some(dir) = directory(args) else {
        tracing_subscriber::registry().with(stderr.with_filter(targets)).try_init().context("logging")?;
        return Ok(None);
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("log directory {}", dir.display()))?;
    let path = dir.join(format!("fairloom-{role}.log"));
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open the log file {}", path.display()))?;
    // Each event is formatted whole and written once, so lines of concurrent events stay whole.
    let both = std::io::stderr.and(Arc::new(file));
    let layer = tracing_subscriber::fmt::layer().with_writer(both).with_target(true);
    tracing_subscriber::registry().with(layer.with_filter(targets)).try_init().context("logging")?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_from_yarn_site_and_a_bad_one_named() {
        // RUST_LOG is left alone by the test runner; only assert when it is unset.
        if std::env::var("RUST_LOG").is_ok() {
            return;
        }
        let mut site = Properties::new();
        assert!(filter(&site).is_ok());
        site.insert(LEVEL_KEY.to_string(), "warn,fairloom_rm=debug".to_string());
        assert!(filter(&site).is_ok());
        site.insert(LEVEL_KEY.to_string(), "loud".to_string());
        let e = filter(&site).unwrap_err().to_string();
        assert!(e.contains(LEVEL_KEY) && e.contains("loud"), "{e}");
    }
}
