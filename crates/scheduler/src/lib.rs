pub mod fair_share;
pub mod ids;
pub mod policy;
