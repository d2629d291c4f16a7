//! Drivers of the fairloom scheduler in virtual time. For now: the scenario runner.

pub mod scenario;
