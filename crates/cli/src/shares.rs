use std::process::ExitCode;

use anyhow::Result;

#[derive(clap::Args)]
pub struct SharesArgs {}

pub fn run(_args: &SharesArgs) -> Result<ExitCode> {
    anyhow::bail!("not written yet")
}
