//! Commands whose arguments are a command: `env rm x` runs `rm x`,
//! `bash -c 'rm x'` runs `rm x`, `find . -exec rm {} ;` runs `rm`. Each
//! wrapper's options are read as the program reads them; an option this
//! module does not know could take an argument and shift where the inner
//! command starts, so it makes the analysis unproven instead of guessing.

use super::words::{assignment_name, is_risky_variable};

/// One argument: its static value (`None` when bash may expand it).
#[derive(Debug, Clone)]
pub(super) struct Arg {
    pub value: Option<String>,
    pub start: usize,
    pub end: usize,
}

/// What a wrapper does with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Effect {
    /// `args[start..end]` is a command that runs.
    Inner { start: usize, end: usize },
    /// The command runs `echo` (`xargs` without a command).
    Implicit(&'static str),
    /// `args[..]` (joined with spaces) is shell code that runs.
    Code(Vec<usize>),
    /// What runs cannot be known statically.
    Unproven(String),
}

/// Shells whose `-c` argument is code.
const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash",
];

/// The effects of running `name` with `args` (empty for a plain command).
pub(super) fn effects(name: &str, args: &[Arg]) -> Vec<Effect> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let mut out = Vec::new();
    match base {
        "eval" => out.push(Effect::Code((0..args.len()).collect())),
        "exec" => inner_after(args, &["c", "l"], &["a"], &[], &mut out),
        "command" => inner_after(args, &["p", "v", "V"], &[], &[], &mut out),
        "builtin" | "nohup" => inner_after(args, &[], &[], &[], &mut out),
        "time" => inner_after(args, &["p"], &[], &[], &mut out),
        "setsid" => inner_after(
            args,
            &["c", "f", "w"],
            &[],
            &["ctty", "fork", "wait"],
            &mut out,
        ),
        "nice" => nice(args, &mut out),
        "stdbuf" => inner_after(args, &[], &["i", "o", "e"], &[], &mut out),
        "timeout" => timeout(args, &mut out),
        "env" => env(args, &mut out),
        "sudo" | "doas" => sudo(args, &mut out),
        "xargs" => xargs(args, &mut out),
        "find" => find(args, &mut out),
        "trap" => trap(args, &mut out),
        "su" | "runuser" => su(args, &mut out),
        "watch" => out.push(Effect::Unproven(
            "`watch` runs its arguments through `sh -c`".to_owned(),
        )),
        "coproc" => out.push(Effect::Unproven("`coproc` is not analysed".to_owned())),
        b if SHELLS.contains(&b) => shell(args, &mut out),
        "busybox" => inner_after(args, &[], &[], &[], &mut out),
        _ => {}
    }
    out
}

/// Reads options (`flags` without an argument, `with_arg` taking one, either
/// attached `-oL` or separate `-o L`; `long` options without an argument,
/// long options with `=`), then the inner command starts.
fn inner_after(
    args: &[Arg],
    flags: &[&str],
    with_arg: &[&str],
    long: &[&str],
    out: &mut Vec<Effect>,
) {
    match skip_options(args, 0, flags, with_arg, long) {
        Ok(i) if i < args.len() => out.push(Effect::Inner {
            start: i,
            end: args.len(),
        }),
        Ok(_) => {}
        Err(why) => out.push(Effect::Unproven(why)),
    }
}

/// The index of the first operand after the options from `i`.
fn skip_options(
    args: &[Arg],
    mut i: usize,
    flags: &[&str],
    with_arg: &[&str],
    long: &[&str],
) -> Result<usize, String> {
    while let Some(arg) = args.get(i) {
        let Some(value) = arg.value.as_deref() else {
            return Err("a wrapper's option is not a static word".to_owned());
        };
        if value == "--" {
            return Ok(i + 1);
        }
        if let Some(name) = value.strip_prefix("--") {
            let name = name.split('=').next().unwrap_or(name);
            if value.contains('=') || long.contains(&name) {
                i += 1;
                continue;
            }
            return Err(format!("unknown wrapper option `{value}`"));
        }
        let Some(cluster) = value.strip_prefix('-').filter(|c| !c.is_empty()) else {
            return Ok(i);
        };
        let mut takes_next = false;
        for (pos, c) in cluster.char_indices() {
            let c = &cluster[pos..pos + c.len_utf8()];
            if with_arg.contains(&c) {
                // The rest of the cluster is the argument, or the next word.
                takes_next = pos + c.len() == cluster.len();
                break;
            }
            if !flags.contains(&c) {
                return Err(format!("unknown wrapper option `{value}`"));
            }
        }
        i += if takes_next { 2 } else { 1 };
    }
    Ok(i)
}

fn nice(args: &[Arg], out: &mut Vec<Effect>) {
    // `nice -5 cmd` is an old spelling of `-n 5`.
    let mut i = 0;
    if let Some(v) = args.first().and_then(|a| a.value.as_deref())
        && v.len() > 1
        && v[1..].chars().all(|c| c.is_ascii_digit())
        && v.starts_with('-')
    {
        i = 1;
    }
    match skip_options(args, i, &[], &["n"], &[]) {
        Ok(i) if i < args.len() => out.push(Effect::Inner {
            start: i,
            end: args.len(),
        }),
        Ok(_) => {}
        Err(why) => out.push(Effect::Unproven(why)),
    }
}

fn timeout(args: &[Arg], out: &mut Vec<Effect>) {
    match skip_options(
        args,
        0,
        &["v"],
        &["k", "s"],
        &["preserve-status", "foreground", "verbose"],
    ) {
        // The first operand is the duration.
        Ok(i) if i + 1 < args.len() => out.push(Effect::Inner {
            start: i + 1,
            end: args.len(),
        }),
        Ok(_) => {}
        Err(why) => out.push(Effect::Unproven(why)),
    }
}

fn env(args: &[Arg], out: &mut Vec<Effect>) {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(value) = arg.value.as_deref() else {
            out.push(Effect::Unproven(
                "an `env` argument is not a static word".to_owned(),
            ));
            return;
        };
        match value {
            "-" | "-i" | "-0" | "-v" | "--ignore-environment" | "--null" | "--debug" => i += 1,
            "-u" | "-C" | "--unset" | "--chdir" => i += 2,
            "--" => {
                i += 1;
                break;
            }
            v if v.starts_with("-S") || v.starts_with("--split-string") => {
                out.push(Effect::Unproven(
                    "`env -S` splits a string into a command".to_owned(),
                ));
                return;
            }
            v if v.starts_with("--unset=") || v.starts_with("--chdir=") => i += 1,
            v if v.starts_with("-u") || v.starts_with("-C") => i += 1,
            v if v.starts_with('-') => {
                out.push(Effect::Unproven(format!("unknown `env` option `{v}`")));
                return;
            }
            _ => break,
        }
    }
    // NAME=value assignments, then the command.
    while let Some(value) = args.get(i).and_then(|a| a.value.as_deref()) {
        let Some(name) = assignment_name(value) else {
            break;
        };
        if is_risky_variable(name) {
            out.push(Effect::Unproven(format!(
                "`env` sets `{name}`, which changes what commands run"
            )));
        }
        i += 1;
    }
    if i < args.len() {
        out.push(Effect::Inner {
            start: i,
            end: args.len(),
        });
    }
}

fn sudo(args: &[Arg], out: &mut Vec<Effect>) {
    for arg in args {
        match arg.value.as_deref() {
            Some("--") => break,
            Some("-s" | "-i" | "--shell" | "--login") => out.push(Effect::Unproven(
                "`sudo -s`/`-i` runs its arguments through a shell".to_owned(),
            )),
            _ => {}
        }
    }
    let flags = [
        "b", "E", "H", "k", "K", "n", "P", "S", "A", "B", "N", "s", "i", "e", "l", "v",
    ];
    let with_arg = ["u", "g", "C", "D", "h", "p", "r", "t", "T", "U", "R"];
    let long = [
        "background",
        "preserve-env",
        "set-home",
        "reset-timestamp",
        "remove-timestamp",
        "non-interactive",
        "preserve-groups",
        "stdin",
        "askpass",
        "bell",
        "shell",
        "login",
        "edit",
        "list",
        "validate",
    ];
    match skip_options(args, 0, &flags, &with_arg, &long) {
        Ok(mut i) => {
            while let Some(value) = args.get(i).and_then(|a| a.value.as_deref()) {
                let Some(name) = assignment_name(value) else {
                    break;
                };
                if is_risky_variable(name) {
                    out.push(Effect::Unproven(format!(
                        "`sudo` sets `{name}`, which changes what commands run"
                    )));
                }
                i += 1;
            }
            if i < args.len() {
                out.push(Effect::Inner {
                    start: i,
                    end: args.len(),
                });
            }
        }
        Err(why) => out.push(Effect::Unproven(why)),
    }
}

fn xargs(args: &[Arg], out: &mut Vec<Effect>) {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(value) = arg.value.as_deref() else {
            out.push(Effect::Unproven(
                "an `xargs` option is not a static word".to_owned(),
            ));
            return;
        };
        if value == "--" {
            i += 1;
            break;
        }
        if let Some(long) = value.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            let with_arg = [
                "arg-file",
                "delimiter",
                "eof",
                "replace",
                "max-lines",
                "max-args",
                "max-procs",
                "max-chars",
                "process-slot-var",
            ];
            let flags = [
                "null",
                "no-run-if-empty",
                "verbose",
                "interactive",
                "exit",
                "open-tty",
                "show-limits",
            ];
            if long.contains('=') || flags.contains(&name) {
                i += 1;
            } else if with_arg.contains(&name) {
                i += 2;
            } else {
                out.push(Effect::Unproven(format!(
                    "unknown `xargs` option `{value}`"
                )));
                return;
            }
            continue;
        }
        let Some(cluster) = value.strip_prefix('-').filter(|c| !c.is_empty()) else {
            break;
        };
        let mut step = 1;
        for (pos, c) in cluster.char_indices() {
            match c {
                '0' | 'r' | 't' | 'p' | 'x' | 'o' => {}
                // Optional argument, attached only.
                'e' | 'i' | 'l' => break,
                'a' | 'd' | 'E' | 'I' | 'L' | 'n' | 'P' | 's' => {
                    if pos + 1 == cluster.len() {
                        step = 2;
                    }
                    break;
                }
                _ => {
                    out.push(Effect::Unproven(format!(
                        "unknown `xargs` option `{value}`"
                    )));
                    return;
                }
            }
        }
        i += step;
    }
    if i < args.len() {
        out.push(Effect::Inner {
            start: i,
            end: args.len(),
        });
    } else {
        out.push(Effect::Implicit("echo"));
    }
}

fn find(args: &[Arg], out: &mut Vec<Effect>) {
    let mut i = 0;
    while i < args.len() {
        let value = args[i].value.as_deref();
        if matches!(value, Some("-exec" | "-execdir" | "-ok" | "-okdir")) {
            let start = i + 1;
            let end =
                (start..args.len()).find(|&j| matches!(args[j].value.as_deref(), Some(";" | "+")));
            match end {
                Some(end) if end > start => {
                    out.push(Effect::Inner { start, end });
                    i = end;
                }
                _ => {
                    out.push(Effect::Unproven(
                        "`find -exec` without a command ended by `;` or `+`".to_owned(),
                    ));
                    return;
                }
            }
        } else if value.is_none() {
            // `find . $action rm` could become `-exec`.
            out.push(Effect::Unproven(
                "a `find` argument is not a static word".to_owned(),
            ));
            return;
        }
        i += 1;
    }
}

fn trap(args: &[Arg], out: &mut Vec<Effect>) {
    let mut i = 0;
    match args.first().map(|a| a.value.as_deref()) {
        None => return,
        Some(Some("-l" | "-p" | "-lp" | "-pl")) => return,
        Some(Some("--")) => i = 1,
        _ => {}
    }
    let Some(action) = args.get(i) else { return };
    match action.value.as_deref() {
        // `trap - SIG` resets; `trap SIG` (one argument) too.
        Some("-") => {}
        Some(_) if args.len() == i + 1 => {}
        Some(_) => out.push(Effect::Code(vec![i])),
        None => out.push(Effect::Unproven(
            "`trap` code is not a static string".to_owned(),
        )),
    }
}

fn su(args: &[Arg], out: &mut Vec<Effect>) {
    for (i, arg) in args.iter().enumerate() {
        match arg.value.as_deref() {
            Some("-c" | "--command") => match args.get(i + 1) {
                Some(code) if code.value.is_some() => out.push(Effect::Code(vec![i + 1])),
                _ => out.push(Effect::Unproven(
                    "`su -c` code is not a static string".to_owned(),
                )),
            },
            Some(v) if v.starts_with("--command=") || v.starts_with("-c") && v.len() > 2 => {
                out.push(Effect::Unproven(
                    "`su -c` code is not analysed in this spelling".to_owned(),
                ));
            }
            None => out.push(Effect::Unproven(
                "an `su` argument is not a static word".to_owned(),
            )),
            _ => {}
        }
    }
}

/// `bash [options] [-c code | script] [args]`.
fn shell(args: &[Arg], out: &mut Vec<Effect>) {
    let mut i = 0;
    let mut has_c = false;
    let mut login = false;
    while let Some(arg) = args.get(i) {
        let Some(value) = arg.value.as_deref() else {
            out.push(Effect::Unproven(
                "a shell option is not a static word".to_owned(),
            ));
            return;
        };
        if value == "--" || value == "-" {
            i += 1;
            break;
        }
        if let Some(long) = value.strip_prefix("--") {
            login |= matches!(long, "login" | "rcfile" | "init-file");
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        let Some(cluster) = value.strip_prefix(['-', '+']).filter(|c| !c.is_empty()) else {
            break;
        };
        has_c |= value.starts_with('-') && cluster.contains('c');
        login |= value.starts_with('-') && (cluster.contains('l') || cluster.contains('i'));
        // `-o option` / `-O shopt` take the next word.
        i += if cluster.ends_with(['o', 'O']) { 2 } else { 1 };
    }
    if login {
        out.push(Effect::Unproven(
            "a login shell runs the profile scripts".to_owned(),
        ));
    }
    if !has_c {
        out.push(Effect::Unproven(
            "a shell runs a script file or its standard input".to_owned(),
        ));
        return;
    }
    match args.get(i) {
        Some(code) if code.value.is_some() => out.push(Effect::Code(vec![i])),
        Some(_) => out.push(Effect::Unproven(
            "the code of `-c` is not a static string".to_owned(),
        )),
        None => out.push(Effect::Unproven("`-c` without code".to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Arg> {
        words
            .iter()
            .map(|w| Arg {
                value: (!w.starts_with('$')).then(|| (*w).to_owned()),
                start: 0,
                end: 0,
            })
            .collect()
    }

    fn inner(name: &str, words: &[&str]) -> Vec<Effect> {
        effects(name, &args(words))
    }

    #[test]
    fn options_before_the_inner_command() {
        assert_eq!(
            inner("env", &["-i", "-u", "X", "A=1", "rm", "x"]),
            [Effect::Inner { start: 4, end: 6 }]
        );
        assert_eq!(
            inner("timeout", &["-s", "KILL", "5", "rm", "x"]),
            [Effect::Inner { start: 3, end: 5 }]
        );
        assert_eq!(
            inner("xargs", &["-0", "-n", "1", "rm"]),
            [Effect::Inner { start: 3, end: 4 }]
        );
        assert_eq!(inner("xargs", &["-0"]), [Effect::Implicit("echo")]);
        assert_eq!(
            inner("stdbuf", &["-oL", "grep", "x"]),
            [Effect::Inner { start: 1, end: 3 }]
        );
        assert_eq!(
            inner("/usr/bin/sudo", &["-u", "root", "rm", "x"]),
            [Effect::Inner { start: 2, end: 4 }]
        );
        assert_eq!(
            inner("nice", &["-10", "rm"]),
            [Effect::Inner { start: 1, end: 2 }]
        );
    }

    #[test]
    fn unknown_options_and_dynamic_words_are_unproven() {
        for (name, words) in [
            ("timeout", &["--frobnicate", "5", "rm"][..]),
            ("env", &["-S", "rm x"]),
            ("env", &["$opt", "rm"]),
            ("env", &["PATH=.", "ls"]),
            ("find", &[".", "-exec", "rm", "{}"]),
            ("find", &[".", "$x", "rm"]),
            ("bash", &["-c", "$code"]),
            ("trap", &["$code", "EXIT"]),
            ("sudo", &["-s", "rm"]),
        ] {
            let e = inner(name, words);
            assert!(
                e.iter().any(|e| matches!(e, Effect::Unproven(_))),
                "{name} {words:?}: {e:?}"
            );
        }
    }

    #[test]
    fn shells_and_code() {
        assert_eq!(inner("bash", &["-c", "rm x"]), [Effect::Code(vec![1])]);
        assert_eq!(
            inner("sh", &["-o", "errexit", "-ec", "rm x", "arg0"]),
            [Effect::Code(vec![3])]
        );
        assert!(matches!(
            &inner("bash", &["script.sh"])[..],
            [Effect::Unproven(_)]
        ));
        assert!(
            inner("bash", &["-lc", "rm x"])
                .iter()
                .any(|e| matches!(e, Effect::Unproven(_)))
        );
        assert_eq!(inner("eval", &["a", "b"]), [Effect::Code(vec![0, 1])]);
        assert_eq!(inner("trap", &["rm x", "EXIT"]), [Effect::Code(vec![0])]);
        assert_eq!(inner("trap", &["-", "EXIT"]), []);
        assert_eq!(
            inner("find", &[".", "-exec", "rm", "{}", ";", "-ok", "ls", "+"]),
            [
                Effect::Inner { start: 2, end: 4 },
                Effect::Inner { start: 6, end: 7 }
            ]
        );
    }
}
