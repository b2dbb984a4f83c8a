//! Asking on the terminal: one line, optionally without echo (a sensitive
//! extension setting must not show on the screen or stay in the scrollback).

use std::io::{self, BufRead, Write};

/// Prints `message` and reads one line from standard input (without its
/// line end). `hidden`: the terminal does not echo what is typed; echo is
/// restored before returning, whatever happens.
pub fn ask(message: &str, hidden: bool) -> io::Result<String> {
    // Echo goes off before the prompt shows: what is typed as soon as it
    // appears (or typed ahead) is never echoed.
    let _echo = if hidden { EchoOff::new() } else { None };
    let mut out = io::stdout();
    write!(out, "{message}")?;
    out.flush()?;
    let mut line = String::new();
    io::stdin().lock().read_line(&mut line)?;
    if hidden {
        // The Enter the user typed was not echoed either.
        writeln!(out)?;
    }
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}

/// Terminal echo turned off until dropped.
struct EchoOff {
    #[cfg(unix)]
    saved: libc::termios,
}

impl EchoOff {
    /// `None` when standard input is not a terminal (nothing to turn off).
    #[cfg(unix)]
    fn new() -> Option<EchoOff> {
        // SAFETY: tcgetattr/tcsetattr only read and write the termios
        // struct we own, for file descriptor 0.
        unsafe {
            let mut saved: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut saved) != 0 {
                return None;
            }
            let mut quiet = saved;
            quiet.c_lflag &= !libc::ECHO;
            if libc::tcsetattr(0, libc::TCSANOW, &quiet) != 0 {
                return None;
            }
            Some(EchoOff { saved })
        }
    }

    #[cfg(not(unix))]
    fn new() -> Option<EchoOff> {
        None
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: restores the attributes read in `new` for descriptor 0.
        unsafe {
            libc::tcsetattr(0, libc::TCSANOW, &self.saved);
        }
    }
}
