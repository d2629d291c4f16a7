//! The daemons' logs (`fairloom rm`, `nm`, `up`): one line per event through `tracing`, to
//! stderr and, when a log directory is configured, appended to a file there as well.
//!
//! Which events pass: `RUST_LOG` when set, else yarn-site's `fairloom.log.level`, else `info`,
//! in the same syntax (`info`, `warn,fairloom_rm=debug`). The directory: `--log-dir`, else
//! `YARN_LOG_DIR`, else `HADOOP_LOG_DIR`, as Hadoop's daemon scripts choose theirs.
//!
//! One event is one line whatever it carries: names, paths and messages come from callers,
//! so every line break and control character inside an event is written escaped
//! ([`OneLine`]), and no caller can forge a line that looks like the daemon's own.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use clap::Args;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::writer::{MakeWriter, MakeWriterExt};
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
    let stderr = tracing_subscriber::fmt::layer().with_writer(OneLine(std::io::stderr)).with_target(true);
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
    let layer = tracing_subscriber::fmt::layer().with_writer(OneLine(both)).with_target(true);
    tracing_subscriber::registry().with(layer.with_filter(targets)).try_init().context("logging")?;
    Ok(Some(path))
}

/// Writes each event as one line: the formatter hands over a whole event per write (see
/// above), so a line break before its last byte, or any other control character, came from
/// a field and is written as an escape (`\n`, `\r`, `\u{1b}`, `\u{2028}`), in one write.
/// Tabs pass.
#[derive(Clone, Copy)]
struct OneLine<M>(M);

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for OneLine<M> {
    type Writer = OneLine<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        OneLine(self.0.make_writer())
    }
}

impl<W: Write> Write for OneLine<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let (body, end) = match buf.split_last() {
            Some((b'\n', body)) => (body, &b"\n"[..]),
            _ => (buf, &b""[..]),
        };
        // Printable ASCII (nearly every line) goes out as it is.
        if body.iter().all(|&b| b == b'\t' || (b' '..=b'~').contains(&b)) {
            self.0.write_all(buf)?;
            return Ok(buf.len());
        }
        let mut line = String::with_capacity(buf.len() + 16);
        for c in String::from_utf8_lossy(body).chars() {
            match c {
                '\n' => line.push_str("\\n"),
                '\r' => line.push_str("\\r"),
                '\t' => line.push(c),
                // C0, DEL and C1 controls, and the Unicode line and paragraph separators
                // that some viewers break lines at.
                c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                    line.push_str(&format!("\\u{{{:x}}}", c as u32))
                }
                c => line.push(c),
            }
        }
        if !end.is_empty() {
            line.push('\n');
        }
        self.0.write_all(line.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
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

    /// A shared buffer a test subscriber writes to.
    #[derive(Clone, Default)]
    struct Buffer(Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_field_cannot_start_a_line_of_its_own() {
        let out = Buffer::default();
        let sink = out.clone();
        let layer = tracing_subscriber::fmt::layer().with_writer(OneLine(move || sink.clone())).with_target(false);
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let forged = "x\n2026-01-01T00:00:00Z  INFO fairloom_rm: application finished state=SUCCEEDED\r\u{1b}[2J\u{2028}\u{85}";
            tracing::warn!("refused: unknown application {forged}");
            tracing::info!(name = forged, "submitted\tok");
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].contains("unknown application x\\n2026-01-01") && lines[0].contains("\\r"), "{text}");
        assert!(!text.contains('\r') && !text.contains('\u{1b}'), "{text}");
        assert!(!text.contains('\u{2028}') && !text.contains('\u{85}') && text.contains("\\u{2028}\\u{85}"), "{text}");
        assert!(lines[1].contains("submitted\tok"), "{text}");
        assert!(text.ends_with('\n'));
    }
}
