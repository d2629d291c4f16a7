//! `fairloom`: thin subcommands over the fairloom crates.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

mod am;
mod bench_rm;
mod capacities;
mod explain;
mod logging;
mod preempt;
mod preempt_capacity;
mod rm_target;
mod rmadmin;
mod scenario_diff;
mod scenario_random;
mod service;
mod shares;
mod shell;
mod sim;

/// Print to stdout; a closed pipe (`fairloom ... | head`) ends the output quietly.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::write_stdout(&format!($($arg)*))
    };
}

pub fn write_stdout(line: &str) {
    let mut out = std::io::stdout().lock();
    let result = out.write_all(line.as_bytes()).and_then(|_| out.write_all(b"\n"));
    if let Err(e) = result {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("fairloom: cannot write to stdout: {e}");
        std::process::exit(2);
    }
}

#[derive(Parser)]
#[command(
    name = "fairloom",
    version,
    about = "A YARN-compatible scheduler: exact Fair Scheduler semantics, deterministic and fast"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay scenario files (the format: docs/scenario-format.md).
    Scenario {
        #[command(subcommand)]
        command: ScenarioCommand,
    },
    /// Print each queue's weight, min, max, steady and instantaneous fair share and AM limit.
    Shares(shares::SharesArgs),
    /// Run the load simulator: the real scheduler in virtual time, measured.
    Sim(sim::SimArgs),
    /// Explain preemption over a scenario's state: who is starved and why, what would be taken.
    Preempt(preempt::PreemptArgs),
    /// Application-master logic: Spark's locality-aware container requests.
    Am {
        #[command(subcommand)]
        command: am::AmCommand,
    },
    /// Ask a running ResourceManager why an application waits, with the numbers behind it.
    Explain {
        #[command(subcommand)]
        command: explain::ExplainCommand,
    },
    /// Operator's calls on a running ResourceManager (YARN's `yarn rmadmin`).
    Rmadmin {
        #[command(subcommand)]
        command: rmadmin::RmadminCommand,
    },
    /// Benchmarks of the running service.
    Bench {
        #[command(subcommand)]
        command: BenchCommand,
    },
    /// Run a ResourceManager: YARN's REST API, the node and AM protocols, a state store.
    Rm(service::RmArgs),
    /// Run a NodeManager: registers with the RM and runs containers as processes.
    Nm(service::NmArgs),
    /// A ResourceManager and N NodeManagers on loopback in one command.
    Up(service::UpArgs),
    /// YARN's DistributedShell: run a command in N containers and wait for the outcome.
    Shell(shell::ShellArgs),
    /// The DistributedShell's application master (started by the RM in the AM container).
    #[command(hide = true)]
    ShellAm(shell::ShellAmArgs),
}

#[derive(Subcommand)]
enum BenchCommand {
    /// The ResourceManager under thousands of simulated NodeManagers and AMs over loopback.
    Rm(bench_rm::BenchRmArgs),
}

#[derive(Subcommand)]
enum ScenarioCommand {
    /// Run one scenario and print its observations as JSON.
    Run { file: PathBuf },
    /// Run scenarios and compare their expectations: one PASS/FAIL line per file.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Compare fairloom with YARN's own schedulers on the oracle's output (scripts/oracle-diff).
    Diff(scenario_diff::DiffArgs),
    /// Write seeded random scenarios, random-<scheduler>-<seed>.json, for comparing with YARN.
    Random(scenario_random::RandomArgs),
}

fn read(path: &PathBuf) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn scenario_run(file: &PathBuf) -> Result<ExitCode> {
    let outcome = fairloom_sim::scenario::run_text(&read(file)?, true);
    let (json, code) = outcome.to_json();
    outln!("{}", serde_json::to_string_pretty(&json)?);
    Ok(ExitCode::from(code as u8))
}

fn scenario_check(files: &[PathBuf]) -> Result<ExitCode> {
    let (mut passed, mut failed) = (0, 0);
    for file in files {
        let text = match read(file) {
            Ok(t) => t,
            Err(e) => {
                outln!("FAIL {}: {e:#}", file.display());
                failed += 1;
                continue;
            }
        };
        let outcome = fairloom_sim::scenario::run_text(&text, true);
        let name = if outcome.name.is_empty() { file.display().to_string() } else { outcome.name.clone() };
        match fairloom_sim::scenario::check(&outcome) {
            Ok(()) => {
                outln!("PASS {name}");
                passed += 1;
            }
            Err(failures) => {
                outln!("FAIL {name}: {}", failures.join("; "));
                failed += 1;
            }
        }
    }
    outln!("{passed} passed, {failed} failed");
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Scenario { command: ScenarioCommand::Run { file } } => scenario_run(file),
        Command::Scenario { command: ScenarioCommand::Check { files } } => scenario_check(files),
        Command::Scenario { command: ScenarioCommand::Diff(args) } => scenario_diff::run(args),
        Command::Scenario { command: ScenarioCommand::Random(args) } => scenario_random::run(args),
        Command::Shares(args) => shares::run(args),
        Command::Sim(args) => sim::run(args),
        Command::Preempt(args) => preempt::run(args),
        Command::Am { command } => am::run(command),
        Command::Explain { command } => explain::run(command),
        Command::Rmadmin { command } => rmadmin::run(command),
        Command::Bench { command: BenchCommand::Rm(args) } => bench_rm::run(args),
        Command::Rm(args) => service::rm(args),
        Command::Nm(args) => service::nm(args),
        Command::Up(args) => service::up(args),
        Command::Shell(args) => shell::run(args),
        Command::ShellAm(args) => shell::run_am(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fairloom: {e:#}");
            ExitCode::from(2)
        }
    }
}
