//! `fairloom rmadmin`: the operator's calls on a running ResourceManager that YARN makes with
//! `yarn rmadmin` (here over REST; they need `yarn.admin.acl`).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, Result};
use clap::{Args, Subcommand};
use serde_json::Value;

use crate::outln;

#[derive(Subcommand)]
pub enum RmadminCommand {
    /// YARN's `-refreshNodes`: read the include and exclude host lists again; running nodes
    /// they no longer allow are decommissioned.
    RefreshNodes(RmadminArgs),
}

#[derive(Args)]
pub struct RmadminArgs {
    #[command(flatten)]
    rm: crate::rm_target::RmTarget,
    /// Who asks (Hadoop's pseudo authentication); must be in yarn.admin.acl.
    #[arg(long)]
    user: Option<String>,
}

pub fn run(command: &RmadminCommand) -> Result<ExitCode> {
    let RmadminCommand::RefreshNodes(args) = command;
    let user = args.user.clone().or_else(|| std::env::var("USER").ok()).unwrap_or_else(|| "dr.who".to_string());
    let rm = args.rm.url()?;
    let url = format!("{rm}/ws/v1/cluster/admin/refresh-nodes");
    let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(30)).build();
    match agent.post(&url).query("user.name", &user).call() {
        Ok(r) => {
            let body: Value = r.into_json()?;
            let left: Vec<&str> =
                body["decommissioned"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            if left.is_empty() {
                outln!("Nodes refreshed: every running node is still allowed");
            } else {
                outln!("Nodes refreshed: decommissioned {}", left.join(", "));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(ureq::Error::Status(code, r)) => {
            let body: Value = r.into_json().unwrap_or(Value::Null);
            let msg = body["RemoteException"]["message"].as_str().unwrap_or("(no message)");
            Err(anyhow!("refreshNodes refused (HTTP {code}): {msg}"))
        }
        Err(e) => Err(anyhow!("cannot reach the ResourceManager at {rm}: {e}")),
    }
}
