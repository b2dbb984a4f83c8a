//! `extensions new` and `extensions validate`: starting an extension and
//! checking it before sharing, with 0.61's messages (standard output for
//! what worked, standard error and exit code 1 for what did not).

use std::path::Path;

use gd_extensions::templates;

use crate::exit;

/// `extensions new <path> [template]`; `shown` is the path as typed.
pub fn new(path: &Path, shown: &str, template: Option<&str>) -> i32 {
    match templates::create(path, template) {
        Ok(()) => {
            match template {
                Some(t) => {
                    println!("Successfully created new extension from template \"{t}\" at {shown}.")
                }
                None => println!("Successfully created new extension at {shown}."),
            }
            println!(
                "You can install this using \"gemini-desktop-cli extensions link {shown}\" to test it out."
            );
            exit::SUCCESS
        }
        Err(error) => {
            eprintln!("Error: {error}");
            exit::GENERAL_ERROR
        }
    }
}

/// `extensions validate <path>`.
pub fn validate(path: &Path, shown: &str) -> i32 {
    let found = match gd_extensions::validate::validate(path) {
        Ok(found) => found,
        Err(error) => {
            eprintln!("Error: {error}");
            return exit::GENERAL_ERROR;
        }
    };
    if !found.warnings.is_empty() {
        eprintln!("Validation warnings:");
        for warning in &found.warnings {
            eprintln!("  - {warning}");
        }
    }
    if !found.errors.is_empty() {
        eprintln!("Validation failed with the following errors:");
        for error in &found.errors {
            eprintln!("  - {error}");
        }
        eprintln!("Extension validation failed.");
        return exit::GENERAL_ERROR;
    }
    println!("Extension {shown} has been successfully validated.");
    exit::SUCCESS
}
