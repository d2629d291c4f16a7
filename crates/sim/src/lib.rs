//! Drivers of the fairloom scheduler in virtual time: the scenario runner and the load
//! simulator.

pub mod load;
pub mod scenario;
