//! Shared code of the differential tests (`bash_differential.rs`) and the
//! fuzz target (`shell_fuzz.rs`): run a command with real bash, record every
//! command bash ran, and compare with the analysis and the policy decision.

#![allow(dead_code)] // each test target uses a different part

pub mod analysis;
pub mod check;
pub mod corpus;
pub mod sandbox;
pub mod shims;
pub mod trace;
