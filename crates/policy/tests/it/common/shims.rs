//! The recording shims: one small `/bin/sh` (dash) script per command name
//! the corpus and the fuzzer use. Each appends a record to `$GD_TRACE` and
//! then does nothing harmful; the wrappers (`sudo`, `env`, `find -exec`,
//! ...) then run their inner command through the same shims, as the real
//! ones would, so the commands they start are recorded too.
//!
//! The shims are dash scripts on purpose: bash would read `$BASH_ENV` and
//! trace the shim's own lines into the record.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Byte that starts a shim record in the trace file (ASCII GS).
pub const SHIM_MARK: char = '\u{1d}';

/// Commands that only record themselves. Names of bash builtins are here too
/// because real systems have `/bin/echo`, `/bin/kill`, ... and `exec`,
/// `env`, `xargs` or `find -exec` run those.
pub const PLAIN: &[&str] = &[
    "touch",
    "rm",
    "cat",
    "ls",
    "id",
    "curl",
    "wget",
    "x",
    "y",
    "z",
    "git",
    "npm",
    "make",
    "python",
    "python3",
    "node",
    "chmod",
    "chown",
    "cp",
    "mv",
    "mkdir",
    "rmdir",
    "ln",
    "dd",
    "tee",
    "head",
    "tail",
    "grep",
    "sed",
    "awk",
    "sort",
    "uniq",
    "wc",
    "cut",
    "tr",
    "date",
    "whoami",
    "uname",
    "hostname",
    "ps",
    "sleep",
    "yes",
    "seq",
    "basename",
    "dirname",
    "readlink",
    "realpath",
    "tar",
    "gzip",
    "ssh",
    "scp",
    "nc",
    "base64",
    "diff",
    "patch",
    "less",
    "vi",
    "perl",
    "ruby",
    "crontab",
    "su",
    "shutdown",
    "reboot",
    "mkfs",
    "chattr",
    "systemctl",
    "apt",
    "pip",
    "cargo",
    "docker",
    "kubectl",
    "open",
    "xdg-open",
    "foo",
    "bar",
    "baz",
    "p1",
    "p2",
    "p3",
    "payload",
    "evil",
    "pwned",
    "ok",
    "echo",
    "printf",
    "true",
    "false",
    "test",
    "[",
    "kill",
    "pwd",
    "which",
    "file",
    "stat",
    "du",
    "df",
    "free",
    "more",
    "man",
    "jq",
    "zip",
    "unzip",
    "openssl",
    "gpg",
    "at",
    "batch",
    "watch",
    "script",
    "install",
    "rsync",
    "ftp",
    "telnet",
    "socat",
    "ncat",
    "npx",
    "yarn",
    "go",
    "rustc",
    "gcc",
    "cc",
];

/// The wrappers and what their shim does after recording itself.
const WRAPPERS: &[(&str, &str)] = &[
    // Skip options, run the rest.
    ("sudo", SKIP_OPTIONS_EXEC),
    ("doas", SKIP_OPTIONS_EXEC),
    ("nohup", SKIP_OPTIONS_EXEC),
    ("stdbuf", SKIP_OPTIONS_EXEC),
    ("setsid", SKIP_OPTIONS_EXEC),
    (
        "nice",
        "if [ \"$1\" = -n ]; then shift 2; fi\nwhile [ $# -gt 0 ]; do case \"$1\" in -*) shift;; *) break;; esac; done\n[ $# -gt 0 ] && exec \"$@\"\nexit 0\n",
    ),
    (
        "timeout",
        "while [ $# -gt 0 ]; do case \"$1\" in -k|-s) shift 2;; -*) shift;; *) break;; esac; done\nshift\n[ $# -gt 0 ] && exec \"$@\"\nexit 0\n",
    ),
    (
        "env",
        "while [ $# -gt 0 ]; do case \"$1\" in -u) shift 2;; -i|-|-0) shift;; -*) shift;; *=*) export \"$1\"; shift;; *) break;; esac; done\n[ $# -gt 0 ] && exec \"$@\"\nexit 0\n",
    ),
    // The real xargs: it only runs what PATH (the shims) has.
    ("xargs", "exec /usr/bin/xargs \"$@\"\n"),
    // -exec/-execdir/-ok/-okdir CMD ... ; or + : run CMD once with {} = ./found.
    ("find", FIND),
    // sh is dash on Debian; here it is bash (which reads $BASH_ENV and so is
    // traced). The analysis treats `sh -c` like `bash -c`.
    ("sh", "exec bash \"$@\"\n"),
    ("dash", "exec bash \"$@\"\n"),
    ("zsh", "exec bash \"$@\"\n"),
];

const SKIP_OPTIONS_EXEC: &str = "while [ $# -gt 0 ]; do case \"$1\" in -u|-g) shift 2;; --) shift; break;; -*) shift;; *) break;; esac; done\n[ $# -gt 0 ] && exec \"$@\"\nexit 0\n";

const FIND: &str = r#"while [ $# -gt 0 ]; do
  case "$1" in
    -exec|-execdir|-ok|-okdir)
      shift
      set -- "$@" ";END;"
      while [ "$1" != ";END;" ]; do
        case "$1" in
          ";"|"+") shift; while [ "$1" != ";END;" ]; do shift; done;;
          "{}") set -- "$@" ./found; shift;;
          *) set -- "$@" "$1"; shift;;
        esac
      done
      shift
      [ $# -gt 0 ] && "$@"
      exit 0;;
    *) shift;;
  esac
done
exit 0
"#;

/// Writes the shims into `dir` (which becomes the whole `PATH`), plus a
/// `bash` link to the real bash.
pub fn install(dir: &Path, real_bash: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    for name in PLAIN {
        write_shim(dir, name, "exit 0\n")?;
    }
    for (name, body) in WRAPPERS {
        write_shim(dir, name, body)?;
    }
    std::os::unix::fs::symlink(real_bash, dir.join("bash"))?;
    Ok(())
}

fn write_shim(dir: &Path, name: &str, body: &str) -> std::io::Result<()> {
    // `$*` joins the arguments with spaces: the record keeps the name exact
    // and the arguments readable (they are only shown in reports).
    let text = format!("#!/bin/sh\nprintf '\\035%s %s\\n' '{name}' \"$*\" >>\"$GD_TRACE\"\n{body}");
    let path = dir.join(name);
    fs::write(&path, text)?;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
}
