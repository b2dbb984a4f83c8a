//! What a sandboxed command can still do, against the real bubblewrap: write in its workspace,
//! use git there (a repository and a linked worktree), run Python and a C compiler, read the
//! system, reach the host with the network granted; and the process properties it runs with.

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

use gd_sandbox::{Network, Policy};
use support::{Fixture, PYTHON, exists};

/// Runs `script`; asserts it succeeded and returns its output.
fn works(f: &Fixture, policy: &Policy, cwd: &Path, script: &str) -> String {
    let run = support::run(policy, cwd, script, &f.env());
    assert_eq!(
        run.code,
        Some(0),
        "`{script}` failed in the sandbox:\n{}",
        run.output
    );
    run.output
}

#[test]
fn writes_inside_the_workspace_work() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    works(
        &f,
        &f.policy(),
        &f.ws,
        "mkdir -p a/b && echo hi > a/b/c && mv a/b/c a/d && ln -s d a/e && ln a/d a/f && cat a/e",
    );
    assert_eq!(std::fs::read_to_string(f.ws.join("a/d")).unwrap(), "hi\n");
    works(
        &f,
        &f.policy(),
        &f.ws,
        &format!("{PYTHON} -c 'open(\"py.txt\", \"w\").write(\"from python\")'"),
    );
    assert_eq!(
        std::fs::read_to_string(f.ws.join("py.txt")).unwrap(),
        "from python"
    );
    // The private /tmp is writable, TMPDIR points there, and it is not the host's.
    let out = works(
        &f,
        &f.policy(),
        &f.ws,
        "echo t > \"$TMPDIR/gd-sandbox-private\" && cat /tmp/gd-sandbox-private && ls -A /tmp",
    );
    assert_eq!(out, "t\ngd-sandbox-private\n");
    assert!(!exists(Path::new("/tmp/gd-sandbox-private")));
}

#[test]
fn git_add_commit_and_status_work() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    // The user's repository (`git init` itself is refused in the sandbox: escapes.rs).
    support::git(&f.ws, &["init", "-q", "-b", "main"]);
    works(
        &f,
        &f.policy(),
        &f.ws,
        "echo a > a && git add a && git -c user.name=t -c user.email=t@t commit -qm one && git status --short",
    );
    // Again (its hooks and config are read-only throughout).
    let out = works(
        &f,
        &f.policy(),
        &f.ws,
        "echo b > b && git add b && git commit -qm two && git status && git log --oneline | wc -l && git gc -q && git branch x && git tag t",
    );
    assert!(
        out.contains("nothing to commit") && out.contains("2\n"),
        "{out}"
    );
    // Seen from the host: both commits, and the branch and tag made inside.
    let log = std::process::Command::new("git")
        .args(["log", "--oneline", "x"])
        .current_dir(&f.ws)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&log.stdout).lines().count(),
        2,
        "{log:?}"
    );
}

#[test]
fn a_linked_worktree_commits_and_its_main_repository_stays_protected() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let main = f.root.join("main");
    support::repo(&main);
    let wt = f.root.join("wt");
    support::git(
        &main,
        &["worktree", "add", "-q", "-b", "topic", wt.to_str().unwrap()],
    );
    let hooks_before: Vec<_> = std::fs::read_dir(main.join(".git/hooks"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let config = std::fs::read_to_string(main.join(".git/config")).unwrap();
    let policy = Policy {
        extra_writable: Vec::new(),
        writable: vec![wt.clone()],
        network: Network::None,
        home: Some(f.home.clone()),
    };
    let out = works(
        &f,
        &policy,
        &wt,
        "echo change >> README && git add README && git commit -qm 'in the worktree' && git status --short && git log --oneline -1",
    );
    assert!(out.contains("in the worktree"), "{out}");
    for script in [
        "echo x > \"$(git rev-parse --git-common-dir)/hooks/pre-commit\"",
        "git config core.fsmonitor 'touch /tmp/x'",
        "echo x >> \"$(git rev-parse --git-common-dir)/config\"",
        "echo 'gitdir: /tmp' > .git",
        "echo /tmp > \"$(git rev-parse --git-dir)/commondir\"",
        "mv \"$(git rev-parse --git-common-dir)/hooks\" /tmp/x",
    ] {
        let run = support::run(&policy, &wt, script, &f.env());
        assert!(run.failed(), "`{script}` succeeded:\n{}", run.output);
    }
    let hooks_after: Vec<_> = std::fs::read_dir(main.join(".git/hooks"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(hooks_before, hooks_after);
    assert_eq!(
        std::fs::read_to_string(main.join(".git/config")).unwrap(),
        config
    );
    // The main checkout itself is not writable.
    let run = support::run(
        &policy,
        &wt,
        &format!("echo x > {}/README", main.display()),
        &f.env(),
    );
    assert!(run.failed());
    // And the commit is there, seen from the host.
    let log = std::process::Command::new("git")
        .args(["log", "--oneline", "topic"])
        .current_dir(&main)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&log.stdout).contains("in the worktree"),
        "{log:?}"
    );
}

#[test]
fn a_workspace_in_the_hosts_tmp_works_and_its_neighbours_are_not_there() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(dir.path().join("neighbour"), "n").unwrap();
    let policy = Policy {
        writable: vec![ws.clone()],
        ..f.policy()
    };
    let out = works(&f, &policy, &ws, "echo ok > f && cat f && ls -A ..");
    assert_eq!(out, "ok\nws\n", "the private /tmp shows only the workspace");
}

#[test]
fn a_c_compiler_and_the_system_headers_work() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    std::fs::write(
        f.ws.join("hello.c"),
        "#include <stdio.h>\nint main(void) { puts(\"hello from c\"); return 0; }\n",
    )
    .unwrap();
    let out = works(&f, &f.policy(), &f.ws, "cc -o hello hello.c && ./hello");
    assert_eq!(out, "hello from c\n");
}

#[test]
fn the_system_is_readable() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let out = works(
        &f,
        &f.policy(),
        &f.ws,
        "cat /etc/os-release && ls /usr/bin >/dev/null && id -u",
    );
    assert!(out.contains("ID="), "{out}");
}

#[test]
fn with_the_network_the_hosts_loopback_is_reachable() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut got = String::new();
        stream.read_to_string(&mut got).unwrap();
        stream.write_all(b"").unwrap();
        got
    });
    let policy = Policy {
        network: Network::All,
        ..f.policy()
    };
    works(
        &f,
        &policy,
        &f.ws,
        &format!(
            "{PYTHON} -c 'import socket; s=socket.create_connection((\"127.0.0.1\", {port}), 5); s.sendall(b\"hello\"); s.close()'"
        ),
    );
    assert_eq!(server.join().unwrap(), "hello");
}

#[test]
fn a_writable_folder_inside_a_hidden_one_is_visible_and_writable() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let inner = f.home.join(".gemini/tmp/project");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::write(inner.join("existing"), "e").unwrap();
    let policy = Policy {
        writable: vec![inner.clone()],
        ..f.policy()
    };
    let out = works(
        &f,
        &policy,
        &inner,
        "cat existing && echo n > new && ls -A \"$HOME/.gemini\"",
    );
    assert_eq!(out, "etmp\n");
    assert_eq!(std::fs::read_to_string(inner.join("new")).unwrap(), "n\n");
    // The rest of the hidden folder stays hidden.
    let run = support::run(
        &policy,
        &inner,
        "cat \"$HOME/.gemini/oauth_creds.json\"",
        &f.env(),
    );
    assert!(run.failed() && !run.output.contains("refresh"), "{run:?}");
}

#[test]
fn a_hidden_folder_inside_a_writable_one_stays_hidden() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    // The whole home writable: its secrets stay hidden, and nothing can be put there.
    let policy = Policy {
        writable: vec![f.home.clone()],
        ..f.policy()
    };
    works(&f, &policy, &f.home, "echo ok > notes.txt");
    assert!(f.home.join("notes.txt").exists());
    for script in [
        "cat .ssh/id_rsa",
        "echo k >> .ssh/authorized_keys",
        "cat .gemini/oauth_creds.json",
        "mv .ssh .ssh-old",
        "rm -r .ssh",
    ] {
        let run = support::run(&policy, &f.home, script, &f.env());
        assert!(run.failed(), "`{script}` succeeded: {}", run.output);
        assert!(!run.output.contains("BEGIN OPENSSH") && !run.output.contains("refresh"));
    }
    assert_eq!(
        std::fs::read_to_string(f.home.join(".ssh/id_rsa")).unwrap(),
        support::SSH_KEY
    );
    assert!(!exists(&f.home.join(".ssh/authorized_keys")));
}

#[test]
fn a_folder_named_through_a_symlink_is_writable_at_both_names_and_still_protected() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    support::repo(&f.ws);
    let link = f.root.join("link");
    std::os::unix::fs::symlink(&f.ws, &link).unwrap();
    let policy = Policy {
        writable: vec![link.clone()],
        ..f.policy()
    };
    works(
        &f,
        &policy,
        &link,
        "echo a > via-link && echo b > \"$W/via-real\" && git status --short",
    );
    assert!(f.ws.join("via-link").exists() && f.ws.join("via-real").exists());
    for script in [
        "echo x > .git/hooks/pre-commit",
        "echo x > \"$W/.git/hooks/pre-commit\"",
        "echo x > .gemini/settings.json",
    ] {
        let run = support::run(&policy, &link, script, &f.env());
        assert!(run.failed(), "`{script}` succeeded");
    }
    assert!(!exists(&f.ws.join(".git/hooks/pre-commit")));

    // A link the sandbox hides (inside the hidden ~/.gemini): bound at that name as well.
    let hidden_link = f.home.join(".gemini/link");
    std::os::unix::fs::symlink(&f.ws, &hidden_link).unwrap();
    let policy = Policy {
        writable: vec![hidden_link.clone()],
        ..f.policy()
    };
    works(
        &f,
        &policy,
        &hidden_link,
        "echo c > via-hidden-link && ls -A \"$HOME/.gemini\"",
    );
    assert!(f.ws.join("via-hidden-link").exists());
    for script in [
        "echo x > .git/hooks/pre-commit",
        "echo x > .gemini/settings.json",
        "cat \"$HOME/.gemini/oauth_creds.json\"",
    ] {
        let run = support::run(&policy, &hidden_link, script, &f.env());
        assert!(run.failed(), "`{script}` succeeded");
    }
    assert!(!exists(&f.ws.join(".git/hooks/pre-commit")));
}

#[test]
fn the_command_runs_with_no_new_privileges_no_capabilities_and_the_filter() {
    let _s = sandbox_or_skip!();
    let f = Fixture::new();
    let out = works(
        &f,
        &f.policy(),
        &f.ws,
        "grep -E '^(NoNewPrivs|Seccomp|CapEff|CapBnd):' /proc/self/status",
    );
    assert!(out.contains("NoNewPrivs:\t1"), "{out}");
    assert!(out.contains("Seccomp:\t2"), "filter mode: {out}");
    assert!(
        out.contains("CapEff:\t0000000000000000") && out.contains("CapBnd:\t0000000000000000"),
        "{out}"
    );
    // The filter's descriptor is not left to the command: 0, 1, 2 and ls's own.
    let out = works(&f, &f.policy(), &f.ws, "ls /proc/self/fd | wc -l");
    assert_eq!(out.trim(), "4");
}

#[test]
fn one_prepared_command_can_be_spawned_twice() {
    let s = sandbox_or_skip!();
    let f = Fixture::new();
    let prepared = s
        .prepare(&f.policy(), Path::new("/bin/true"), &[], &f.ws)
        .unwrap();
    for _ in 0..2 {
        let mut command = std::process::Command::new(prepared.program());
        command.args(prepared.args());
        prepared.configure(&mut command);
        assert!(command.status().unwrap().success());
    }
}
