//! `fairloom explain app ID --rm URL`: why an application of a running RM waits, with the
//! numbers behind the reason and its queue's status (from `/ws/v1/cluster/apps/ID/explain`).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use clap::{Args, Subcommand};
use serde_json::Value;

use crate::outln;

#[derive(Subcommand)]
pub enum ExplainCommand {
    /// Why an application is waiting (ACCEPTED, or RUNNING with asks outstanding).
    App(ExplainAppArgs),
}

#[derive(Args)]
pub struct ExplainAppArgs {
    /// The application id (application_TS_N).
    id: String,
    #[command(flatten)]
    rm: crate::rm_target::RmTarget,
    /// Print the RM's JSON answer instead.
    #[arg(long)]
    json: bool,
}

fn res(v: &Value) -> String {
    format!("<memory:{}, vCores:{}>", v["memory"], v["vCores"])
}

pub fn run(command: &ExplainCommand) -> Result<ExitCode> {
    let ExplainCommand::App(args) = command;
    let url = format!("{}/ws/v1/cluster/apps/{}/explain", args.rm.url()?, args.id);
    let agent = ureq::AgentBuilder::new().timeout(Duration::from_secs(10)).build();
    let body: Value = match agent.get(&url).call() {
        Ok(r) => r.into_json().context("the RM's answer is not JSON")?,
        Err(ureq::Error::Status(code, r)) => {
            let e: Value = r.into_json().unwrap_or(Value::Null);
            let msg = e["RemoteException"]["message"].as_str().unwrap_or("(no message)").to_string();
            return Err(anyhow!("HTTP {code}: {msg}"));
        }
        Err(e) => return Err(anyhow!("{url}: {e}")),
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&body)?);
        return Ok(ExitCode::SUCCESS);
    }
    let e = &body["explain"];
    outln!(
        "{} ({}, user {}, queue {})",
        e["id"].as_str().unwrap_or("?"),
        e["state"].as_str().unwrap_or("?"),
        e["user"].as_str().unwrap_or("?"),
        e["queue"].as_str().unwrap_or("?")
    );
    match e["wait"].as_object() {
        None => outln!(
            "not waiting: the scheduler records no reason (it is running with nothing outstanding, or it has ended)"
        ),
        Some(w) => {
            outln!("waiting: {}", w["reason"].as_str().unwrap_or(""));
            outln!("  kind: {}", w["kind"].as_str().unwrap_or(""));
            for pair in w["numbers"].as_array().into_iter().flatten() {
                outln!("  {}: {}", pair[0].as_str().unwrap_or(""), pair[1].as_str().unwrap_or(""));
            }
            outln!("  what would end it: {}", w["remedy"].as_str().unwrap_or(""));
        }
    }
    let q = &e["queueStatus"];
    if q.is_object() {
        outln!("queue {}:", q["name"].as_str().unwrap_or("?"));
        outln!(
            "  used {}, fair share {}, steady fair share {}",
            res(&q["used"]),
            res(&q["fairShare"]),
            res(&q["steadyFairShare"])
        );
        outln!("  max {}, demand {}", res(&q["maxResources"]), res(&q["demand"]));
        outln!("  AM used {} of {}", res(&q["amUsed"]), res(&q["amLimit"]));
        let max_apps = if q["maxApps"].is_null() { "unlimited".to_string() } else { q["maxApps"].to_string() };
        outln!("  apps: {} active, {} pending, max running {max_apps}", q["activeApps"], q["pendingApps"]);
    }
    Ok(ExitCode::SUCCESS)
}
