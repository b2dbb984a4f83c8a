//! Runs one command in the sandbox, in the current folder, as the app would:
//!
//! ```text
//! cargo run -p gd-sandbox --example sandboxed -- [-w FOLDER]... [--net] [--home FOLDER] -- PROGRAM [ARGS...]
//! ```
//!
//! `-w` adds a writable folder, `--net` gives the host's network, `--home` names the home
//! folder whose secrets are hidden. Prints the command's output and exits with its status;
//! with `--print SECCOMP_FILE`, prints bubblewrap's command line instead (the seccomp program
//! written to SECCOMP_FILE, read on descriptor 3), for running it by hand or under hyperfine.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use gd_sandbox::{Network, Policy, Sandbox};

fn main() -> ExitCode {
    let mut policy = Policy::default();
    let mut print: Option<PathBuf> = None;
    let mut args = std::env::args_os().skip(1);
    let mut command: Vec<OsString> = Vec::new();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("-w") => policy.writable.extend(args.next().map(PathBuf::from)),
            Some("--net") => policy.network = Network::All,
            Some("--home") => policy.home = args.next().map(PathBuf::from),
            Some("--print") => print = args.next().map(PathBuf::from),
            Some("--") => {
                command.extend(args.by_ref());
            }
            _ => {
                eprintln!(
                    "usage: sandboxed [-w FOLDER]... [--net] [--home FOLDER] [--print FILE] -- PROGRAM [ARGS...]"
                );
                return ExitCode::from(2);
            }
        }
    }
    let Some((program, rest)) = command.split_first() else {
        eprintln!("no command");
        return ExitCode::from(2);
    };
    let sandbox = match Sandbox::detect() {
        Ok(s) => s,
        Err(why) => {
            eprintln!("{why}");
            return ExitCode::from(3);
        }
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let prepared = match sandbox.prepare(&policy, program.as_ref(), rest, &cwd) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(3);
        }
    };
    if let Some(file) = print {
        return print_command_line(&prepared, &file);
    }
    let mut cmd = Command::new(prepared.program());
    cmd.args(prepared.args());
    prepared.configure(&mut cmd);
    match cmd.status() {
        Ok(status) => match status.code() {
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => ExitCode::from(
                128u8.saturating_add(u8::try_from(status.signal().unwrap_or(0)).unwrap_or(0)),
            ),
        },
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(3)
        }
    }
}

/// bubblewrap's command line as shell words, with the seccomp program in `file` on fd 3.
fn print_command_line(prepared: &gd_sandbox::Prepared, file: &std::path::Path) -> ExitCode {
    let program = gd_sandbox::seccomp_program();
    if let Err(e) = std::fs::write(file, program) {
        eprintln!("{}: {e}", file.display());
        return ExitCode::from(3);
    }
    let mut words = vec![quote(&prepared.program().as_os_str().to_string_lossy())];
    let mut args = prepared.args().iter();
    while let Some(arg) = args.next() {
        words.push(quote(&arg.to_string_lossy()));
        if arg == "--seccomp" {
            args.next();
            words.push("3".to_owned());
        }
    }
    words.push(format!("3<{}", quote(&file.to_string_lossy())));
    println!("{}", words.join(" "));
    ExitCode::SUCCESS
}

fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
