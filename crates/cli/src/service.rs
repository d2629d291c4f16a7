//! `fairloom rm`, `fairloom nm` and `fairloom up`: the ResourceManager and NodeManagers as
//! services, alone or together on loopback.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;

use fairloom_config::properties::Properties;
use fairloom_nm::executor::Executor;
use fairloom_nm::NmConf;
use fairloom_protocol::Res;
use fairloom_rm::conf::{keys, RmConf};

use crate::logging::{self, LogArgs};

#[derive(Args)]
pub struct RmArgs {
    /// The directory with yarn-site.xml and the scheduler's file.
    #[arg(long)]
    conf: PathBuf,
    #[command(flatten)]
    log: LogArgs,
}

#[derive(Args)]
pub struct NmArgs {
    /// The RM's resource-tracker address.
    #[arg(long, value_name = "HOST:PORT")]
    rm: String,
    /// What the node offers, e.g. "8192 mb, 8 vcores".
    #[arg(long, default_value = "8192 mb, 8 vcores")]
    resource: String,
    /// Local and log dirs go under it.
    #[arg(long)]
    dir: PathBuf,
    /// Where its web server (REST and container management) listens.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    #[arg(long)]
    rack: Option<String>,
    /// yarn-site.xml's directory, for yarn.nodemanager.sleep-delay-before-sigkill.ms.
    #[arg(long)]
    conf: Option<PathBuf>,
    #[command(flatten)]
    log: LogArgs,
}

#[derive(Args)]
pub struct UpArgs {
    /// How many NodeManagers.
    #[arg(long, default_value_t = 2)]
    nodes: u32,
    /// A configuration directory (yarn-site.xml, fair-scheduler.xml or capacity-scheduler.xml);
    /// without it, a built-in one: the Fair Scheduler, YARN's ports on 127.0.0.1, recovery on.
    #[arg(long)]
    conf: Option<PathBuf>,
    /// The state directory (RM store, NodeManagers' local and log dirs).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Each NodeManager's resource.
    #[arg(long, default_value = "8192 mb, 8 vcores")]
    resource: String,
    #[command(flatten)]
    log: LogArgs,
}

/// "8192 mb, 8 vcores" (the order and the separators are free).
pub fn parse_resource(text: &str) -> Result<Res> {
    let mut mem = None;
    let mut vcores = None;
    for part in text.split(',') {
        let part = part.trim().to_ascii_lowercase();
        let (num, unit) = part.split_at(part.find(|c: char| !c.is_ascii_digit()).unwrap_or(part.len()));
        let n: i64 = num.trim().parse().map_err(|_| anyhow!("--resource '{text}': '{part}' has no number"))?;
        match unit.trim() {
            "mb" => mem = Some(n),
            "gb" => mem = Some(n * 1024),
            "vcores" | "vcore" => vcores = Some(n),
            other => bail!("--resource '{text}': unknown unit '{other}' (mb, gb, vcores)"),
        }
    }
    match (mem, vcores) {
        (Some(m), Some(v)) if m > 0 && v > 0 => Ok(Res::new(m, v)),
        _ => bail!("--resource '{text}': give memory and vcores, e.g. \"8192 mb, 8 vcores\""),
    }
}

fn site(conf: Option<&Path>) -> Result<Properties> {
    Ok(conf.map(fairloom_rm::conf::read_site).transpose()?.unwrap_or_default())
}

fn kill_delay(site: &Properties) -> Result<u64> {
    let key = "yarn.nodemanager.sleep-delay-before-sigkill.ms";
    site.get(key).map(|v| v.trim().parse().map_err(|_| anyhow!("{key}: '{v}' is not a number"))).unwrap_or(Ok(250))
}

fn flag(site: &Properties, key: &str, default: bool) -> Result<bool> {
    match site.get(key).map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(default),
        Some(v) if v == "true" => Ok(true),
        Some(v) if v == "false" => Ok(false),
        Some(v) => bail!("{key}: '{v}' is not true or false"),
    }
}

/// The NodeManager's yarn-site keys: its kill delay, recovery (`up` recovers by default, as
/// its RM does) and container executor, whose `container-executor.cfg` is read from the
/// configuration directory (YARN keeps it beside the binary's configuration).
fn nm_conf(site: &Properties, conf_dir: Option<&Path>, base: NmConf, recovery_default: bool) -> Result<NmConf> {
    let cfg_path = conf_dir.map(|d| d.join("container-executor.cfg"));
    let cfg = match &cfg_path {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => bail!("{}: {e}", p.display()),
        },
        None => None,
    };
    let executor = Executor::from_conf(|k| site.get(k).cloned(), cfg.as_deref())?;
    Ok(NmConf {
        kill_delay_ms: kill_delay(site)?,
        recovery: flag(site, "yarn.nodemanager.recovery.enabled", recovery_default)?,
        supervised: flag(site, "yarn.nodemanager.recovery.supervised", false)?,
        state_dir: site.get("yarn.nodemanager.recovery.dir").map(PathBuf::from),
        executor,
        registration_secret: fairloom_rm::conf::secret_file(site, keys::REGISTRATION_SECRET_FILE)?,
        acl_enabled: flag(site, "yarn.acl.enable", false)?,
        ..base
    })
}

/// `up`'s registration secret: the configured one, else one it makes in its state directory
/// (readable by its user only) and keeps, so that nothing but its own NodeManagers registers.
fn up_secret(site: &mut Properties, dir: &Path) -> Result<()> {
    if site.contains_key(keys::REGISTRATION_SECRET_FILE) {
        return Ok(());
    }
    let path = dir.join("registration-secret");
    if !path.exists() {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let secret = fairloom_protocol::token::to_hex(&fairloom_rm::random_bytes(32));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| f.write_all(secret.as_bytes()))
            .with_context(|| path.display().to_string())?;
    }
    site.insert(keys::REGISTRATION_SECRET_FILE.to_string(), path.display().to_string());
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().context("tokio runtime")
}

/// Wait for Ctrl-C or SIGTERM.
async fn stopped() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => {}
    }
}

fn print_rm(rm: &fairloom_rm::RmHandle) {
    println!("fairloom ResourceManager");
    println!("  web UI:           http://{}/cluster", rm.webapp);
    println!("  REST API:         http://{}/ws/v1/cluster", rm.webapp);
    println!("  resource tracker: {}", rm.tracker);
    println!("  scheduler (AMs):  {}", rm.scheduler);
}

pub fn rm(args: &RmArgs) -> Result<ExitCode> {
    let conf = RmConf::from_dir(&args.conf)?;
    logging::init("resourcemanager", &args.log, &conf.site)?;
    runtime()?.block_on(async {
        let rm = fairloom_rm::start(conf).await?;
        print_rm(&rm);
        stopped().await;
        rm.stop().await;
        Ok(ExitCode::SUCCESS)
    })
}

pub fn nm(args: &NmArgs) -> Result<ExitCode> {
    let site = site(args.conf.as_deref())?;
    logging::init("nodemanager", &args.log, &site)?;
    let base = NmConf {
        rm: args.rm.clone(),
        resource: parse_resource(&args.resource)?,
        dir: args.dir.clone(),
        listen: args.listen,
        rack: args.rack.clone(),
        kill_delay_ms: 250,
        heartbeat_ms: 1000,
        recovery: false,
        supervised: false,
        state_dir: None,
        executor: Executor::Default,
        registration_secret: None,
        acl_enabled: false,
    };
    let conf = nm_conf(&site, args.conf.as_deref(), base, false)?;
    runtime()?.block_on(async {
        let nm = fairloom_nm::start(conf).await?;
        println!("fairloom NodeManager {} (web http://{}) reporting to {}", nm.node_id, nm.http, args.rm);
        let by_rm = tokio::select! {
            _ = stopped() => false,
            _ = nm.shut_down_by_rm() => true,
        };
        nm.stop().await;
        if by_rm {
            eprintln!("fairloom: the ResourceManager shut this NodeManager down (see its log for why)");
            return Ok(ExitCode::from(1));
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The built-in configuration of `fairloom up`.
fn default_site(dir: &Path) -> Properties {
    let mut p = Properties::new();
    for (k, v) in [
        (keys::SCHEDULER_CLASS, fairloom_rm::conf::FAIR_CLASS),
        ("yarn.scheduler.fair.user-as-default-queue", "false"),
        (keys::RECOVERY, "true"),
        (keys::WEBAPP_ADDRESS, "127.0.0.1:8088"),
        (keys::TRACKER_ADDRESS, "127.0.0.1:8031"),
        (keys::SCHEDULER_ADDRESS, "127.0.0.1:8030"),
    ] {
        p.insert(k.to_string(), v.to_string());
    }
    p.insert(keys::LEVELDB_PATH.to_string(), dir.join("rmstore").display().to_string());
    p
}

pub fn up(args: &UpArgs) -> Result<ExitCode> {
    let dir = args.dir.clone().unwrap_or_else(|| std::env::temp_dir().join("fairloom-up"));
    std::fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
    let resource = parse_resource(&args.resource)?;
    let conf = match &args.conf {
        Some(c) => {
            let mut site = site(Some(c))?;
            // `up` recovers by default and keeps its store in its state directory.
            site.entry(keys::RECOVERY.to_string()).or_insert_with(|| "true".to_string());
            site.entry(keys::LEVELDB_PATH.to_string()).or_insert_with(|| dir.join("rmstore").display().to_string());
            up_secret(&mut site, &dir)?;
            RmConf::from_site(site, c)?
        }
        None => {
            let mut site = default_site(&dir);
            up_secret(&mut site, &dir)?;
            RmConf::from_site(site, &dir)?
        }
    };
    let log_file = logging::init("up", &args.log, &conf.site)?;
    let heartbeat_ms = conf.nm_heartbeat_ms;
    let site = conf.site.clone();
    runtime()?.block_on(async {
        let rm = fairloom_rm::start(conf).await?;
        let mut nms = Vec::new();
        for i in 0..args.nodes {
            let base = NmConf {
                rm: rm.tracker.to_string(),
                resource,
                dir: dir.join(format!("nm-{i}")),
                listen: "127.0.0.1:0".parse().expect("literal"),
                rack: None,
                kill_delay_ms: 250,
                heartbeat_ms,
                recovery: true,
                supervised: false,
                state_dir: None,
                executor: Executor::Default,
                registration_secret: None,
                acl_enabled: false,
            };
            // Each node keeps its own state (yarn.nodemanager.recovery.dir would be shared).
            let nm_conf = nm_conf(&site, args.conf.as_deref(), base, true)?;
            let nm = fairloom_nm::start(NmConf { state_dir: None, ..nm_conf }).await?;
            nms.push(nm);
        }
        print_rm(&rm);
        for nm in &nms {
            println!("  NodeManager:      {} (http://{}/ws/v1/node)", nm.node_id, nm.http);
        }
        println!("  state directory:  {}", dir.display());
        if let Some(f) = &log_file {
            println!("  log file:         {}", f.display());
        }
        println!("Ctrl-C stops everything.");
        stopped().await;
        println!("stopping: NodeManagers kill their containers, then the ResourceManager stops");
        for nm in nms {
            nm.stop().await;
        }
        rm.stop().await;
        Ok(ExitCode::SUCCESS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_read_like_the_allocation_file() {
        assert_eq!(parse_resource("8192 mb, 8 vcores").unwrap(), Res::new(8192, 8));
        assert_eq!(parse_resource("4 vcores,2 gb").unwrap(), Res::new(2048, 4));
        assert!(parse_resource("8192 mb").is_err());
        assert!(parse_resource("lots mb, 1 vcores").is_err());
        assert!(parse_resource("1 tb, 1 vcores").is_err());
    }
}
