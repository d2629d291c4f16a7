//! The scenario runner: `fairloom scenario run|check` over the format of
//! docs/scenario-format.md.

pub mod compare;
mod expect;
mod format;
mod observe;
pub mod random;
mod runner;

pub use runner::{run_text, state_at, Failure, Outcome, Run};

/// The verdict of `scenario check` on one file: `Ok(())` or the first mismatches.
pub fn check(outcome: &Outcome) -> Result<(), Vec<String>> {
    match &outcome.result {
        Err(Failure::Config { .. }) if outcome.expect_config_error => Ok(()),
        Err(Failure::Config { message, .. }) => Err(vec![format!("configuration error: {message}")]),
        Err(Failure::Scenario { step, message }) => Err(vec![format!("steps[{step}]: {message}")]),
        Err(Failure::Unsupported { message }) => Err(vec![format!("not supported: {message}")]),
        Err(Failure::Document { message, line, column }) => {
            let at = match (line, column) {
                (Some(l), Some(c)) => format!(" at line {l}, column {c}"),
                (Some(l), None) => format!(" at line {l}"),
                _ => String::new(),
            };
            Err(vec![format!("malformed scenario{at}: {message}")])
        }
        Ok(_) if outcome.expect_config_error => {
            Err(vec!["expect_error: expected the configuration to fail, but it loaded".to_string()])
        }
        Ok(run) => {
            let mut failures = run.step_failures.clone();
            for (obs, expect) in run.observations.iter().zip(&run.expectations) {
                if let Some(expect) = expect {
                    let label = obs["label"].as_str().unwrap_or("?");
                    expect::compare(expect, Some(obs), &format!("observe[{label}]"), &mut failures);
                }
            }
            if failures.is_empty() {
                Ok(())
            } else {
                Err(failures)
            }
        }
    }
}
