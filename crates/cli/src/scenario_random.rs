//! `fairloom scenario random`: write seeded random scenarios (fairloom_sim::scenario::random)
//! for comparing fairloom with YARN's own schedulers.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use fairloom_sim::scenario::random::{generate_detailed, SchedulerKind};

use crate::outln;

#[derive(clap::Args)]
pub struct RandomArgs {
    /// The scheduler the scenarios configure: fair or capacity
    #[arg(long, value_parser = ["fair", "capacity"])]
    scheduler: String,
    /// The first seed; file i uses seed + i
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How many files to write
    #[arg(long, default_value_t = 1)]
    count: u64,
    /// The directory to write random-<scheduler>-<seed>.json into (created if missing)
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: &RandomArgs) -> Result<ExitCode> {
    let kind: SchedulerKind = args.scheduler.parse().map_err(|e: String| anyhow!(e))?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    let (mut repaired, mut anomalies) = (0, 0);
    for i in 0..args.count {
        let seed = args.seed.checked_add(i).ok_or_else(|| anyhow!("seed {} + {i} overflows", args.seed))?;
        let generated = generate_detailed(kind, seed);
        let path = args.out.join(format!("{}.json", generated.name));
        std::fs::write(&path, &generated.text).with_context(|| format!("cannot write {}", path.display()))?;
        repaired += usize::from(generated.repairs.changed() > 0);
        for a in &generated.repairs.anomalies {
            eprintln!("fairloom: {}: {a}", generated.name);
            anomalies += 1;
        }
    }
    outln!(
        "wrote {} files to {} ({repaired} with steps dropped or trimmed by the validity check)",
        args.count,
        args.out.display()
    );
    Ok(if anomalies == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
