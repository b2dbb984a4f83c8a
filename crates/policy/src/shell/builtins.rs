//! Builtins that change what later commands run or evaluate their
//! arguments (`let`, `read`, `set`, `shopt`, ...): checks the walk makes on
//! every simple command, kept apart from the walk itself.

use super::analysis::Walker;
use super::words::{arithmetic_is_literal, assignment_name, variable_target_risk};
use super::wrappers::Arg;

impl Walker<'_> {
    /// Builtins that change what later commands run, or that evaluate their
    /// arguments.
    pub(super) fn builtin(&mut self, name: &str, args: &[Arg]) {
        let values: Vec<Option<&str>> = args.iter().map(|a| a.value.as_deref()).collect();
        let has = |flag: &str| {
            values.iter().any(|v| {
                v.is_some_and(|v| v.starts_with('-') && !v.starts_with("--") && v.contains(flag))
            })
        };
        match name {
            "source" | "." | "alias" | "enable" | "fc" | "bind" | "complete" | "compgen" => {
                self.unproven(format!("`{name}` is not analysed"));
            }
            "let"
                if !args
                    .iter()
                    .all(|a| a.value.as_deref().is_some_and(let_is_literal)) =>
            {
                self.unproven("`let` evaluates arithmetic that reads variables");
            }
            "hash" if has("p") => self.unproven("`hash -p` changes what a name runs"),
            "mapfile" | "readarray" if has("C") => {
                self.unproven(format!("`{name} -C` runs a callback"));
            }
            "shopt" => self.shopt(&values),
            "set" => self.set(&values),
            "read" | "unset" | "mapfile" | "readarray" | "getopts" => {
                self.variable_targets(
                    name,
                    args,
                    &["d", "i", "n", "N", "p", "t", "u", "C", "c", "O", "s"],
                );
            }
            "printf" | "wait" => {
                let flag = if name == "printf" { "-v" } else { "-p" };
                if let Some(pos) = values.iter().position(|v| *v == Some(flag)) {
                    self.variable_target(name, args.get(pos + 1));
                }
            }
            "test" | "[" if values.contains(&Some("-v")) => {
                self.unproven("`test -v` evaluates array subscripts");
            }
            _ => {}
        }
    }

    /// Arguments of a builtin that are variable names (options with an
    /// argument, listed in `with_arg`, are skipped).
    fn variable_targets(&mut self, name: &str, args: &[Arg], with_arg: &[&str]) {
        let mut i = 0;
        while i < args.len() {
            match args[i].value.as_deref() {
                Some(v) if v.starts_with('-') && v.len() > 1 => {
                    let last = &v[v.len() - 1..];
                    i += if with_arg.contains(&last) { 2 } else { 1 };
                    continue;
                }
                _ => self.variable_target(name, args.get(i)),
            }
            i += 1;
        }
    }

    fn variable_target(&mut self, name: &str, arg: Option<&Arg>) {
        match arg.map(|a| a.value.as_deref()) {
            Some(Some(target)) => {
                if let Some(why) = variable_target_risk(target) {
                    self.unproven(format!("`{name}` {why}"));
                }
            }
            Some(None) => self.unproven(format!(
                "`{name}` assigns to a variable whose name is not a static word"
            )),
            None => {}
        }
    }

    fn shopt(&mut self, values: &[Option<&str>]) {
        const HARMLESS: &[&str] = &[
            "nullglob",
            "globstar",
            "dotglob",
            "failglob",
            "nocaseglob",
            "nocasematch",
            "lastpipe",
            "inherit_errexit",
        ];
        let sets = values.iter().any(
            |v| matches!(v, Some(v) if v.starts_with('-') && (v.contains('s') || v.contains('u'))),
        );
        if !sets {
            return;
        }
        for v in values {
            match v {
                Some(v) if v.starts_with('-') => {}
                Some(v) if HARMLESS.contains(v) => {}
                Some(v) => self.unproven(format!("`shopt {v}` changes how bash runs commands")),
                None => self.unproven("`shopt` with an option that is not a static word"),
            }
        }
    }

    /// `set`: the options scripts use (`-euxo pipefail`) are harmless; the
    /// others, unknown or dynamic, may change how later commands run.
    fn set(&mut self, values: &[Option<&str>]) {
        const OPTIONS: &[&str] = &[
            "errexit",
            "nounset",
            "xtrace",
            "verbose",
            "pipefail",
            "noclobber",
            "noglob",
        ];
        let mut expect_option = false;
        for v in values {
            let Some(v) = v else {
                if expect_option {
                    self.unproven("`set -o` with an option that is not a static word");
                }
                // A dynamic word could be an option.
                self.unproven("`set` with an argument that is not a static word");
                return;
            };
            if expect_option {
                expect_option = false;
                if !OPTIONS.contains(v) {
                    self.unproven(format!("`set -o {v}` changes how bash runs commands"));
                }
                continue;
            }
            if *v == "--" || *v == "-" || !(v.starts_with('-') || v.starts_with('+')) {
                return;
            }
            for c in v[1..].chars() {
                match c {
                    'e' | 'u' | 'x' | 'v' | 'f' | 'C' => {}
                    'o' => expect_option = true,
                    _ => self.unproven(format!("`set {v}` changes how bash runs commands")),
                }
            }
        }
    }
}

/// `let` arguments are arithmetic expressions (`x=1` assigns, literally).
fn let_is_literal(arg: &str) -> bool {
    let expr = match assignment_name(arg) {
        Some(name) if !name.contains('[') => &arg[arg.find('=').map_or(0, |p| p + 1)..],
        _ => arg,
    };
    arithmetic_is_literal(expr)
}
