//! Escape attempts against the real bubblewrap, from a workspace `W` with a folder `O` next to
//! it and a fake home: every one must fail (non-zero exit) and leave the host as it was.
//! Skipped only with `GD_SANDBOX_TESTS=skip`; a machine where the sandbox cannot start fails.

mod support;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;

use support::{Fixture, PYTHON, exists};

/// Runs `script` in the fixture's sandbox; asserts it failed and returns its output.
fn refused(f: &Fixture, script: &str) -> String {
    let run = f.run(script);
    assert!(
        run.failed(),
        "`{script}` succeeded in the sandbox:\n{}",
        run.output
    );
    eprintln!("$ {script}\n[exit {:?}] {}", run.code, run.output);
    run.output
}

#[test]
fn writing_outside_the_workspace_fails() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let out = refused(&f, "touch \"$O/x\"");
    assert!(out.contains("Read-only file system"), "{out}");
    assert!(!exists(&f.outside.join("x")));
}

#[test]
fn writing_in_home_fails() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    refused(&f, "echo x > \"$HOME/x\"");
    assert!(!exists(&f.home.join("x")));
}

#[test]
fn a_symlink_in_the_workspace_does_not_lead_out() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    refused(&f, "ln -s \"$O\" \"$W/link\" && echo x > \"$W/link/x\"");
    assert!(!exists(&f.outside.join("x")));
    // Planted before, by the user: the same.
    let f = Fixture::new();
    std::os::unix::fs::symlink(&f.outside, f.ws.join("link")).unwrap();
    refused(&f, "echo x > link/x");
    assert!(!exists(&f.outside.join("x")));
}

#[test]
fn proc_self_root_and_dotdot_do_not_lead_out() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    refused(&f, "echo x > \"/proc/self/root$O/x\"");
    refused(&f, "echo x > /proc/1/root\"$O\"/x");
    refused(&f, "echo x > \"$W/../outside/x\"");
    refused(&f, "cd .. && echo x > outside/x");
    assert!(!exists(&f.outside.join("x")));
}

#[test]
fn a_hard_link_across_mounts_fails() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let out = refused(
        &f,
        "ln \"$O/file\" \"$W/hard\" && echo changed >> \"$W/hard\"",
    );
    assert!(out.contains("Invalid cross-device link"), "{out}");
    assert!(!exists(&f.ws.join("hard")));
    assert_eq!(
        std::fs::read_to_string(f.outside.join("file")).unwrap(),
        "original\n"
    );
}

#[test]
fn the_workspace_and_its_parent_cannot_be_renamed() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let out = refused(&f, "mv \"$W\" \"$W-2\"");
    assert!(out.contains("busy") || out.contains("Read-only"), "{out}");
    refused(&f, "mv \"$W/..\" \"$ROOT-2\"");
    refused(&f, "cd / && mv \"$ROOT\" \"$ROOT-2\"");
    assert!(f.ws.is_dir() && !exists(&f.root.with_file_name("x-2")));
    assert!(!exists(Path::new(&format!("{}-2", f.ws.display()))));
    assert!(!exists(Path::new(&format!("{}-2", f.root.display()))));
}

#[test]
fn mounting_fails() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    std::fs::create_dir(f.ws.join("m")).unwrap();
    let out = refused(&f, "mount -t tmpfs none \"$W/m\"");
    assert!(
        out.contains("permission denied") || out.contains("not permitted"),
        "{out}"
    );
    // A bind of the outside folder over the workspace, then a write.
    refused(&f, "mount --bind \"$O\" \"$W/m\" && touch \"$W/m/x\"");
    refused(&f, "umount /proc");
    assert!(!exists(&f.outside.join("x")));
}

#[test]
fn new_namespaces_fail() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    for script in [
        "unshare -U true",
        "unshare -r true",
        "unshare -m true",
        "unshare -n true",
    ] {
        let out = refused(&f, script);
        assert!(out.contains("Operation not permitted"), "{script}: {out}");
    }
    // clone(CLONE_NEWUSER) directly.
    refused(
        &f,
        &format!(
            "{PYTHON} -c 'import ctypes,os,sys; l=ctypes.CDLL(None,use_errno=True); \
             sys.exit(0 if l.syscall({}, 0x10000011, 0,0,0,0) >= 0 else 1)'",
            libc::SYS_clone
        ),
    );
}

#[test]
fn ptrace_fails() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    // The parent (bubblewrap's init in the PID namespace), and pid 1.
    let script = format!(
        "{PYTHON} -c 'import ctypes,os,sys; l=ctypes.CDLL(None,use_errno=True); \
         r=l.ptrace(16, os.getppid(), 0, 0); e=ctypes.get_errno(); print(\"ptrace\", r, e); \
         sys.exit(0 if r == 0 else 1)'"
    );
    let out = refused(&f, &script);
    assert!(out.contains("ptrace -1 1"), "EPERM: {out}");
    // The debuggers, where installed: each must fail on ptrace itself.
    for (tool, script) in [
        ("strace", "strace -f -o /dev/null true"),
        ("strace", "strace -p 1"),
        ("gdb", "gdb -batch -p 1"),
    ] {
        if !Path::new("/usr/bin").join(tool).exists() {
            eprintln!("{tool} is not installed: `{script}` not tried");
            continue;
        }
        let out = refused(&f, script);
        assert!(out.contains("Operation not permitted"), "{script}: {out}");
    }
}

#[test]
fn secrets_in_home_cannot_be_read() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let out = refused(&f, "cat \"$HOME/.ssh/id_rsa\"");
    assert!(!out.contains(support::SSH_KEY), "{out}");
    let out = refused(&f, "cat \"$HOME/.gemini/oauth_creds.json\"");
    assert!(!out.contains("refresh"), "{out}");
    // Not even listed; and nothing can be put there.
    let run =
        f.run("ls -A \"$HOME/.ssh\" \"$HOME/.gemini\"; echo k >> \"$HOME/.ssh/authorized_keys\"");
    assert!(
        run.failed() && !run.output.contains("id_rsa") && !run.output.contains("oauth"),
        "{run:?}"
    );
    assert!(!exists(&f.home.join(".ssh/authorized_keys")));
}

#[test]
fn git_hooks_and_config_stay_read_only() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    support::repo(&f.ws);
    let config = std::fs::read_to_string(f.ws.join(".git/config")).unwrap();
    refused(
        &f,
        "echo 'touch /tmp/pwned' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    );
    refused(
        &f,
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config",
    );
    refused(&f, "git config core.hooksPath /tmp");
    refused(&f, "rm .git/config && echo x > .git/config");
    // Renaming the git folder away to fill a new one: its folder is a mount point.
    let out = refused(
        &f,
        "mv .git .git-old && mkdir -p .git/hooks && echo x > .git/hooks/pre-commit",
    );
    assert!(out.contains("busy"), "{out}");
    refused(&f, "mv .git/hooks .git/hooks-old");
    assert!(!exists(&f.ws.join(".git/hooks/pre-commit")));
    assert!(!exists(&f.ws.join(".git-old")));
    assert_eq!(
        std::fs::read_to_string(f.ws.join(".git/config")).unwrap(),
        config
    );
}

#[test]
fn a_repository_without_hooks_folder_gets_an_empty_read_only_one() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    support::repo(&f.ws);
    std::fs::remove_dir_all(f.ws.join(".git/hooks")).unwrap();
    refused(&f, "mkdir -p .git/hooks; echo x > .git/hooks/pre-commit");
    assert!(f.ws.join(".git/hooks").is_dir());
    assert!(!exists(&f.ws.join(".git/hooks/pre-commit")));
}

#[test]
fn a_planted_git_file_opens_no_other_repository() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let other = f.outside.join("other");
    support::repo(&other);
    // Left by an earlier command in the workspace: "this is a worktree of that repository".
    std::fs::write(
        f.ws.join(".git"),
        format!("gitdir: {}\n", other.join(".git").display()),
    )
    .unwrap();
    let refs = std::fs::read_to_string(other.join(".git/refs/heads/main")).unwrap();
    refused(&f, "echo x > \"$O/other/.git/refs/heads/main\"");
    refused(
        &f,
        "git update-ref refs/heads/main HEAD~0 && git commit --allow-empty -qm x",
    );
    refused(&f, "echo 'gitdir: /tmp' > .git");
    assert_eq!(
        std::fs::read_to_string(other.join(".git/refs/heads/main")).unwrap(),
        refs
    );
}

#[test]
fn a_hooks_path_in_the_workspace_stays_read_only() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    support::repo(&f.ws);
    // husky's layout, not installed yet: the folder does not exist.
    support::git(&f.ws, &["config", "core.hooksPath", ".husky/_"]);
    refused(
        &f,
        "mkdir -p .husky/_ && echo 'touch /tmp/x' > .husky/_/pre-commit",
    );
    refused(
        &f,
        "mv .husky .husky-old && mkdir -p .husky/_ && echo x > .husky/_/pre-commit",
    );
    assert!(f.ws.join(".husky/_").is_dir());
    assert!(!exists(&f.ws.join(".husky/_/pre-commit")));
    // The rest of .husky is the project's, and writable.
    let run = f.run("echo 'npm test' > .husky/pre-commit");
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn a_submodules_git_folder_stays_protected() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let sub = f.outside.join("sub");
    support::repo(&sub);
    support::repo(&f.ws);
    support::git(
        &f.ws,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            sub.to_str().unwrap(),
            "lib",
        ],
    );
    let config = std::fs::read_to_string(f.ws.join(".git/modules/lib/config")).unwrap();
    refused(
        &f,
        "echo '[core] fsmonitor = touch /tmp/x' >> .git/modules/lib/config",
    );
    refused(&f, "echo x > .git/modules/lib/hooks/post-checkout");
    refused(&f, "mv .git/modules .git/modules-old");
    refused(&f, "echo 'gitdir: /tmp' > lib/.git");
    assert_eq!(
        std::fs::read_to_string(f.ws.join(".git/modules/lib/config")).unwrap(),
        config
    );
    // Its objects are still writable: a commit in the submodule works.
    let run = f.run("cd lib && echo y > y && git add y && git commit -qm y");
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn gemini_settings_cannot_be_created() {
    let _s = sandbox_or_skip!();
    // Without a .gemini folder: an empty one is made on the host, read-only inside.
    let f = Fixture::new();
    refused(&f, "mkdir -p .gemini && echo '{}' > .gemini/settings.json");
    assert!(f.ws.join(".gemini").is_dir());
    assert!(!exists(&f.ws.join(".gemini/settings.json")));
    refused(
        &f,
        "rmdir .gemini && mkdir .gemini && echo '{}' > .gemini/settings.json",
    );
    refused(&f, "mv .gemini .gemini-old");
    // With one.
    let f = Fixture::new();
    std::fs::create_dir(f.ws.join(".gemini")).unwrap();
    std::fs::write(f.ws.join(".gemini/settings.json"), "{\"a\":1}").unwrap();
    refused(&f, "echo '{}' > .gemini/settings.json");
    refused(&f, "echo '{}' > .gemini/other.json");
    assert_eq!(
        std::fs::read_to_string(f.ws.join(".gemini/settings.json")).unwrap(),
        "{\"a\":1}"
    );
    assert!(!exists(&f.ws.join(".gemini/other.json")));
}

#[test]
fn a_symlinked_protected_part_refuses_the_command() {
    let s = sandbox_or_skip!();
    let f = Fixture::new();
    std::fs::create_dir(f.ws.join("decoy")).unwrap();
    std::os::unix::fs::symlink("decoy", f.ws.join(".gemini")).unwrap();
    let err = s
        .prepare(&f.policy(), Path::new("/bin/true"), &[], &f.ws)
        .expect_err("a symlinked .gemini cannot be protected");
    assert!(err.to_string().contains("symbolic link"), "{err}");
}

#[test]
fn the_hosts_loopback_is_out_of_reach() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let out = refused(
        &f,
        &format!(
            "{PYTHON} -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 5).sendall(b\"hi\")'"
        ),
    );
    assert!(out.contains("Connection refused"), "{out}");
    let out = refused(&f, &format!("bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}'"));
    assert!(out.contains("Connection refused"), "{out}");
    refused(&f, &format!("curl -sS -m 5 http://127.0.0.1:{port}/"));
    assert!(listener.accept().is_err(), "the listener got a connection");
}

#[test]
fn names_do_not_resolve_and_nothing_leaves() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    refused(&f, "getent hosts example.com");
    refused(&f, "getent ahosts example.org");
    let out = refused(&f, "curl -sS -m 5 http://example.com/");
    assert!(out.contains("Could not resolve host"), "{out}");
    // Not even a datagram to the configured name server (or anywhere off the box).
    let out = refused(
        &f,
        &format!(
            "{PYTHON} -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"x\", (\"10.255.255.53\", 53))'"
        ),
    );
    assert!(out.contains("Network is unreachable"), "{out}");
}

#[test]
fn terminal_input_cannot_be_injected() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let out = refused(
        &f,
        &format!(
            "{PYTHON} -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); \
             r=l.ioctl(0, 0x5412, b\"x\"); print(\"ioctl\", r, ctypes.get_errno()); sys.exit(r != 0)'"
        ),
    );
    assert!(out.contains("ioctl -1 1"), "EPERM, not ENOTTY: {out}");
}

#[test]
fn the_caller_can_kill_everything_by_process_group() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    // The marker is spelled differently in the script, so only the sleepers hold it.
    let pid = std::process::id();
    let marker = format!("gdsbkill{pid}");
    let script = format!(
        "m=gdsbkill; {PYTHON} -c 'import time; time.sleep(300)' \"${{m}}{pid}\" & \
         setsid {PYTHON} -c 'import time; time.sleep(300)' \"${{m}}{pid}\" & \
         echo started; wait"
    );
    let mut child = support::spawn(&f.policy(), &f.ws, &script, &f.env());
    let mut out = child.stdout.take().unwrap();
    let mut line = [0u8; 8];
    out.read_exact(&mut line).unwrap();
    let found = wait_for(|| processes_with(&marker).len() == 2);
    assert!(
        found,
        "both sleepers started: {:?}",
        processes_with(&marker)
    );
    // SAFETY: killpg has no memory-safety preconditions.
    unsafe {
        libc::killpg(child.id() as i32, libc::SIGKILL);
    }
    child.wait().unwrap();
    // Including the one that left the group with setsid: its PID namespace ended.
    assert!(
        wait_for(|| processes_with(&marker).is_empty()),
        "{:?}",
        processes_with(&marker)
    );
}

#[test]
fn background_children_die_with_the_command() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let pid = std::process::id();
    let marker = format!("gdsbbg{pid}");
    let run = f.run(&format!(
        "m=gdsbbg; nohup {PYTHON} -c 'import time; open(\"started\", \"w\"); time.sleep(300)' \"${{m}}{pid}\" >/dev/null 2>&1 & \
         while [ ! -e started ]; do sleep 0.05; done; echo $!"
    ));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(f.ws.join("started").exists(), "the background child ran");
    assert!(
        wait_for(|| processes_with(&marker).is_empty()),
        "{:?}",
        processes_with(&marker)
    );
}

/// Polls `check` for up to 5 s.
fn wait_for(check: impl Fn() -> bool) -> bool {
    for _ in 0..500 {
        if check() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// Live processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'));
        if !zombie && String::from_utf8_lossy(&cmdline).contains(marker) {
            out.push(pid);
        }
    }
    out
}

#[test]
fn a_workspace_without_git_cannot_become_a_repository_with_hooks() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    refused(
        &f,
        "git init -q . && mkdir -p .git/hooks && echo 'touch /tmp/pwned' > .git/hooks/pre-commit",
    );
    // What is left on the host is the empty, read-only-inside `.git` the sandbox made: no
    // repository (git skips it), no hook.
    assert!(!exists(&f.ws.join(".git/hooks")));
    assert!(!exists(&f.ws.join(".git/HEAD")));
    assert_eq!(std::fs::read_dir(f.ws.join(".git")).unwrap().count(), 0);
}

#[test]
fn an_extra_writable_folder_is_writable_and_gets_nothing_created() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let mut policy = f.policy();
    policy.extra_writable.push(f.outside.clone());
    let run = support::run(&policy, &f.ws, "echo x > \"$O/made\"", &f.env());
    assert!(!run.failed(), "{}", run.output);
    assert!(exists(&f.outside.join("made")));
    assert!(!exists(&f.outside.join(".gemini")) && !exists(&f.outside.join(".git")));
    // Its existing protected parts stay protected.
    support::repo(&f.outside);
    let run = support::run(
        &policy,
        &f.ws,
        "echo evil > \"$O/.git/hooks/pre-commit\"",
        &f.env(),
    );
    assert!(run.failed(), "{}", run.output);
    assert!(!exists(&f.outside.join(".git/hooks/pre-commit")));
}
