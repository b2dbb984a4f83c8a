//! Real outputs, printed by the commands run in the sandbox (`examples/sandboxed.rs`, Debian 12,
//! bubblewrap 0.8.0), with the workspace at `/work/main/target/tmp/gdd/ws`, a folder
//! `/work/main/target/tmp/gdd/outside` next to it and the home at `/work/main/target/tmp/gdd/home`.
//! The tests put that tree in a temporary folder and replace the prefix in the outputs.

use super::*;

const D: &str = "/work/main/target/tmp/gdd";

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    /// The workspace (a git folder without hooks yet, no `.gemini`), the outside folder and a
    /// home with a `.ssh`, as when the outputs were printed.
    fn new() -> Self {
        // Not under /tmp: the sandbox's /tmp is its own (and writable), so the outputs' paths
        // must lie elsewhere, as they did. Next to the test binary, in the target folder.
        let dir = tempfile::Builder::new()
            .prefix("gdd-")
            .tempdir_in(crate::test_base::visible_base())
            .unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for d in ["ws/.git/refs", "outside/r/.git", "home/.ssh"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("ws/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(root.join("ws/.git/config"), "[core]\n").unwrap();
        std::fs::write(root.join("ws/a"), "a\n").unwrap();
        std::fs::write(root.join("outside/file"), "orig\n").unwrap();
        Self { _dir: dir, root }
    }

    fn policy(&self, network: Network) -> Policy {
        Policy {
            extra_writable: Vec::new(),
            writable: vec![self.root.join("ws")],
            network,
            home: Some(self.root.join("home")),
        }
    }

    fn denial(&self, output: &str, exit: Option<i32>, network: Network) -> Option<Denial> {
        let output = output.replace(D, &self.root.display().to_string());
        denial(&output, exit, &self.root.join("ws"), &self.policy(network))
    }

    /// `{D}/x` as a path of this tree.
    fn path(&self, p: &str) -> PathBuf {
        PathBuf::from(p.replace(D, &self.root.display().to_string()))
    }
}

/// (what ran, what it printed, its exit status, the paths reported).
const FILES: &[(&str, &str, i32, &[&str])] = &[
    (
        "touch ../outside/x",
        "touch: cannot touch '../outside/x': Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/x"],
    ),
    (
        "touch $O/x",
        "touch: cannot touch '/work/main/target/tmp/gdd/outside/x': Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/x"],
    ),
    (
        "echo hi > $O/x (bash)",
        "bash: line 1: /work/main/target/tmp/gdd/outside/x: Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/x"],
    ),
    (
        "echo hi > ~/x (bash)",
        "bash: line 1: /work/main/target/tmp/gdd/home/x: Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/home/x"],
    ),
    (
        "echo hi > /etc/x (dash)",
        "sh: 1: cannot create /etc/x: Read-only file system",
        2,
        &["/etc/x"],
    ),
    (
        "mkdir $O/d",
        "mkdir: cannot create directory ‘/work/main/target/tmp/gdd/outside/d’: Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/d"],
    ),
    (
        "cp a $O/",
        "cp: cannot create regular file '/work/main/target/tmp/gdd/outside/a': Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/a"],
    ),
    (
        "cp a ../outside/b",
        "cp: cannot create regular file '../outside/b': Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/b"],
    ),
    (
        "mv a $O/a",
        "mv: inter-device move failed: 'a' to '/work/main/target/tmp/gdd/outside/a'; unable to remove target: Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/a"],
    ),
    (
        "ln -s a $O/l",
        "ln: failed to create symbolic link '/work/main/target/tmp/gdd/outside/l': Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/l"],
    ),
    (
        "ln a $O/h",
        "ln: failed to create hard link '/work/main/target/tmp/gdd/outside/h': Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/h"],
    ),
    (
        "python3 open($O/p, 'w')",
        "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nOSError: [Errno 30] Read-only file system: '/work/main/target/tmp/gdd/outside/p'",
        1,
        &["/work/main/target/tmp/gdd/outside/p"],
    ),
    (
        "python3 open('../outside/p', 'w')",
        "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nOSError: [Errno 30] Read-only file system: '../outside/p'",
        1,
        &["/work/main/target/tmp/gdd/outside/p"],
    ),
    (
        "python3 os.mkdir('/usr/x')",
        "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nOSError: [Errno 30] Read-only file system: '/usr/x'",
        1,
        &["/usr/x"],
    ),
    (
        "node fs.writeFileSync($O/n)",
        "node:fs:2380\n    return binding.writeFileUtf8(\n                   ^\n\nError: EROFS: read-only file system, open '/work/main/target/tmp/gdd/outside/n'\n    at Object.writeFileSync (node:fs:2380:20)\n    at [eval]:1:15\n    at runScriptInThisContext (node:internal/vm:209:10)\n    at node:internal/process/execution:118:14\n    at [eval]-wrapper:6:24\n    at runScript (node:internal/process/execution:101:62)\n    at evalScript (node:internal/process/execution:133:3)\n    at node:internal/main/eval_string:51:3 {\n  errno: -30,\n  code: 'EROFS',\n  syscall: 'open',\n  path: '/work/main/target/tmp/gdd/outside/n'\n}\n\nNode.js v20.20.2",
        1,
        &["/work/main/target/tmp/gdd/outside/n"],
    ),
    (
        "node fs.mkdirSync('/opt/n')",
        "node:fs:1386\n  const result = binding.mkdir(\n                         ^\n\nError: EROFS: read-only file system, mkdir '/opt/n'\n    at Object.mkdirSync (node:fs:1386:26)\n    at [eval]:1:15\n  errno: -30,\n  code: 'EROFS',\n  syscall: 'mkdir',\n  path: '/opt/n'\n}\n\nNode.js v20.20.2",
        1,
        &["/opt/n"],
    ),
    (
        "echo x > .git/hooks/pre-commit (a protected part)",
        "bash: line 1: .git/hooks/pre-commit: Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/ws/.git/hooks/pre-commit"],
    ),
    (
        "echo x > .gemini/settings.json (a protected part)",
        "bash: line 1: .gemini/settings.json: Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/ws/.gemini/settings.json"],
    ),
    (
        "git config core.fsmonitor x (its config is a mount point)",
        "error: could not write config file .git/config: Device or resource busy",
        4,
        &["/work/main/target/tmp/gdd/ws/.git/config"],
    ),
    (
        "git init in $O",
        "/work/main/target/tmp/gdd/outside/.git: Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/.git"],
    ),
    (
        "rm $O/file",
        "rm: cannot remove '/work/main/target/tmp/gdd/outside/file': Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/file"],
    ),
    (
        "tee $O/t",
        "tee: /work/main/target/tmp/gdd/outside/t: Read-only file system\nx",
        1,
        &["/work/main/target/tmp/gdd/outside/t"],
    ),
    (
        "sed -i s/o/x/ $O/file",
        "sed: couldn't open temporary file /work/main/target/tmp/gdd/outside/sedAjm8hM: Read-only file system",
        4,
        &["/work/main/target/tmp/gdd/outside/sedAjm8hM"],
    ),
    (
        "dd of=$O/dd",
        "dd: failed to open '/work/main/target/tmp/gdd/outside/dd': Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/dd"],
    ),
    (
        "chmod 600 $O/file",
        "chmod: changing permissions of '/work/main/target/tmp/gdd/outside/file': Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/file"],
    ),
    (
        "touch '$O/with space'",
        "touch: cannot touch '/work/main/target/tmp/gdd/outside/with space': Read-only file system",
        1,
        &["/work/main/target/tmp/gdd/outside/with space"],
    ),
    (
        "git commit -am two in a repository outside",
        "fatal: Unable to create '/work/main/target/tmp/gdd/outside/r/.git/index.lock': Read-only file system",
        128,
        &["/work/main/target/tmp/gdd/outside/r/.git/index.lock"],
    ),
    (
        "git clone into $O/clone",
        "fatal: could not create work tree dir '/work/main/target/tmp/gdd/outside/clone': Read-only file system",
        128,
        &["/work/main/target/tmp/gdd/outside/clone"],
    ),
    (
        "cargo (rustup) with HOME read-only: the path is on the line before the cause",
        "error: could not create home directory: '/work/main/target/tmp/gdd/home/.rustup'\n\nCaused by:\n    Read-only file system (os error 30)\n\nStack backtrace:\n   0: <E as anyhow::context::ext::StdError>::ext_context\n   1: rustup::utils::ensure_dir_exists",
        1,
        &["/work/main/target/tmp/gdd/home/.rustup"],
    ),
];

#[test]
fn refused_writes_name_their_paths() {
    let tree = Tree::new();
    for (what, output, exit, want) in FILES {
        let got = tree.denial(output, Some(*exit), Network::None);
        let want: Vec<PathBuf> = want.iter().map(|p| tree.path(p)).collect();
        let got = got.unwrap_or_else(|| panic!("{what}: no denial read from {output:?}"));
        assert_eq!(got.paths, want, "{what}");
        assert!(!got.network, "{what}");
        assert!(
            !got.evidence.is_empty() && got.evidence.lines().count() <= 4,
            "{what}: {:?}",
            got.evidence
        );
    }
}

#[test]
fn the_evidence_is_the_refusal_line() {
    let tree = Tree::new();
    let got = tree.denial(FILES[14].1, Some(1), Network::None).unwrap();
    assert_eq!(
        got.evidence,
        format!(
            "Error: EROFS: read-only file system, open '{}/outside/n'",
            tree.root.display()
        )
    );
}

/// (what ran, what it printed, its exit status): with no network, each is a network denial.
const NETWORK: &[(&str, &str, i32)] = &[
    (
        "curl http://127.0.0.1:8080/",
        "curl: (7) Failed to connect to 127.0.0.1 port 8080 after 0 ms: Couldn't connect to server",
        7,
    ),
    (
        "curl https://example.com/",
        "curl: (6) Could not resolve host: example.com",
        6,
    ),
    (
        "curl http://93.184.216.34/",
        "curl: (7) Failed to connect to 93.184.216.34 port 80 after 0 ms: Couldn't connect to server",
        7,
    ),
    (
        "python3 urllib 127.0.0.1",
        "  File \"/usr/lib/python3.11/socket.py\", line 836, in create_connection\n    sock.connect(sa)\nConnectionRefusedError: [Errno 111] Connection refused\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n    raise URLError(err)\nurllib.error.URLError: <urlopen error [Errno 111] Connection refused>",
        1,
    ),
    (
        "python3 urllib example.com",
        "  File \"/usr/lib/python3.11/socket.py\", line 962, in getaddrinfo\n    for res in _socket.getaddrinfo(host, port, family, type, proto, flags):\n               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\nsocket.gaierror: [Errno -3] Temporary failure in name resolution\n\nDuring handling of the above exception, another exception occurred:\n\nurllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>",
        1,
    ),
    (
        "python3 sendto 10.255.255.53:53",
        "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nOSError: [Errno 101] Network is unreachable",
        1,
    ),
    (
        "node fetch('http://example.com')",
        "Error: getaddrinfo EAI_AGAIN example.com\n    at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:122:26) {\n  errno: -3001,\n  code: 'EAI_AGAIN',\n  syscall: 'getaddrinfo',\n  hostname: 'example.com'\n}",
        1,
    ),
    (
        "node http.get 127.0.0.1:8080",
        "Error: connect ECONNREFUSED 127.0.0.1:8080\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1611:16) {\n  errno: -111,\n  code: 'ECONNREFUSED',\n  syscall: 'connect',\n  address: '127.0.0.1',\n  port: 8080\n}",
        1,
    ),
    (
        "bash /dev/tcp/127.0.0.1/8080",
        "bash: connect: Connection refused\nbash: line 1: /dev/tcp/127.0.0.1/8080: Connection refused",
        1,
    ),
    (
        "git clone https://github.com/…",
        "fatal: unable to access 'https://github.com/octocat/Hello-World.git/': Could not resolve host: github.com",
        128,
    ),
    (
        "ssh git@github.com",
        "ssh: Could not resolve hostname github.com: Temporary failure in name resolution",
        255,
    ),
    (
        "npm view left-pad",
        "npm error code EAI_AGAIN\nnpm error syscall getaddrinfo\nnpm error errno EAI_AGAIN\nnpm error request to https://registry.npmjs.org/left-pad failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org\nnpm error Log files were not written due to an error writing to the directory: /work/main/target/tmp/gdd/home/.npm/_logs\nnpm error You can rerun the command with `--loglevel=verbose` to see the logs in your terminal",
        1,
    ),
    (
        "cargo fetch",
        "    Updating crates.io index\nerror: failed to get `left-pad` as a dependency of package `c v0.1.0 (/work/main/target/tmp/gdd/ws/c)`\n\nCaused by:\n  download of config.json failed\n\nCaused by:\n  failed to download from `https://index.crates.io/config.json`\n\nCaused by:\n  [6] Could not resolve hostname (Could not resolve host: index.crates.io)",
        101,
    ),
    (
        "pip3 download requests",
        "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f8402d3add0>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/requests/\nERROR: Could not find a version that satisfies the requirement requests (from versions: none)\nERROR: No matching distribution found for requests",
        1,
    ),
];

#[test]
fn network_refusals_count_without_the_network() {
    let tree = Tree::new();
    for (what, output, exit) in NETWORK {
        let got = tree.denial(output, Some(*exit), Network::None);
        let got = got.unwrap_or_else(|| panic!("{what}: no denial read from {output:?}"));
        assert!(got.network, "{what}");
        assert!(got.paths.is_empty(), "{what}: {:?}", got.paths);
        assert!(!got.evidence.is_empty(), "{what}");
    }
}

#[test]
fn network_messages_say_nothing_when_the_network_was_given() {
    let tree = Tree::new();
    for (what, output, exit) in NETWORK {
        assert_eq!(
            tree.denial(output, Some(*exit), Network::All),
            None,
            "{what}"
        );
    }
}

#[test]
fn a_success_is_never_a_denial() {
    let tree = Tree::new();
    for (what, output, _, _) in FILES {
        assert_eq!(tree.denial(output, Some(0), Network::None), None, "{what}");
    }
    for (what, output, _) in NETWORK {
        assert_eq!(tree.denial(output, Some(0), Network::None), None, "{what}");
    }
}

#[test]
fn a_killed_command_is_read_too() {
    let tree = Tree::new();
    let got = tree.denial(FILES[0].1, None, Network::None).unwrap();
    assert_eq!(
        got.paths,
        vec![tree.path("/work/main/target/tmp/gdd/outside/x")]
    );
}

/// Failures that are not the sandbox's: nothing reported.
const NOT_THE_SANDBOX: &[(&str, &str, i32)] = &[
    (
        "./build.sh not executable (in the workspace)",
        "bash: line 1: ./build.sh: Permission denied",
        126,
    ),
    (
        "ls /nope",
        "ls: cannot access '/nope': No such file or directory",
        2,
    ),
    (
        "unshare -r true (refused, but no path and nothing to grant)",
        "unshare: unshare failed: Operation not permitted",
        1,
    ),
    ("getent hosts example.com (prints nothing)", "", 2),
    (
        "os.rename('a', '../outside/a') (another errno)",
        "OSError: [Errno 18] Invalid cross-device link: 'a' -> '../outside/a'",
        1,
    ),
    (
        "a write into a hidden folder (no grant shows it)",
        "bash: line 1: /work/main/target/tmp/gdd/home/.ssh/x: Read-only file system",
        1,
    ),
    (
        "the kernel's files",
        "bash: line 1: /proc/sys/kernel/x: Read-only file system",
        1,
    ),
    (
        "a write inside the workspace that failed otherwise",
        "cp: cannot create regular file 'a': Permission denied",
        1,
    ),
    (
        "mv a $O/a, refused, the workspace's own name only",
        "mv: cannot move 'a' to 'b': Device or resource busy",
        1,
    ),
    (
        "the private /tmp",
        "touch: cannot touch '/tmp/x': Permission denied",
        1,
    ),
    (
        "systemctl --user status (no session bus inside; the network would not help)",
        "Failed to connect to bus: No medium found",
        1,
    ),
    (
        "docker ps (no daemon here; its socket would be hidden anyway)",
        "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?",
        1,
    ),
    (
        "docker ps on a socket nothing listens on (refused)",
        "Cannot connect to the Docker daemon at unix:///work/main/target/tmp/gdd/outside/d.sock. Is the docker daemon running?",
        1,
    ),
];

#[test]
fn other_failures_are_not_denials() {
    let tree = Tree::new();
    for (what, output, exit) in NOT_THE_SANDBOX {
        assert_eq!(
            tree.denial(output, Some(*exit), Network::None),
            None,
            "{what}"
        );
    }
}

#[test]
fn any_input_is_read_without_panicking() {
    let tree = Tree::new();
    let policy = tree.policy(Network::None);
    let cwd = tree.root.join("ws");
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let alphabet: Vec<char> = "ab/ .~'\"‘’“”`:;,()<>\n\r\tİıßé漢\u{0}Read-only file system: Permission denied EROFS [Errno 30] "
        .chars()
        .collect();
    for _ in 0..3000 {
        let mut s = String::new();
        for _ in 0..(seed % 200) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            s.push(alphabet[(seed % alphabet.len() as u64) as usize]);
        }
        let _ = denial(&s, Some(1), &cwd, &policy);
    }
    let long = "x".repeat(100_000) + ": Read-only file system";
    let _ = denial(&long, Some(1), &cwd, &policy);
    let _ = denial("'/a", Some(1), Path::new("/"), &Policy::default());
    let _ = denial(
        "touch: cannot touch 'x': Read-only file system",
        Some(1),
        Path::new("relative"),
        &Policy::default(),
    );
}

#[test]
fn without_a_usable_policy_the_writable_folders_alone_decide() {
    // A writable folder that no longer exists: the mounts cannot be computed.
    let policy = Policy {
        writable: vec![PathBuf::from("/nonexistent/ws")],
        ..Policy::default()
    };
    let got = denial(
        "touch: cannot touch '/etc/x': Read-only file system",
        Some(1),
        Path::new("/nonexistent/ws"),
        &policy,
    );
    assert_eq!(got.map(|d| d.paths), Some(vec![PathBuf::from("/etc/x")]));
    let got = denial(
        "bash: line 1: .gemini/x: Read-only file system",
        Some(1),
        Path::new("/nonexistent/ws"),
        &policy,
    );
    assert_eq!(
        got.map(|d| d.paths),
        Some(vec![PathBuf::from("/nonexistent/ws/.gemini/x")])
    );
    let got = denial(
        "bash: line 1: y: Read-only file system",
        Some(1),
        Path::new("/nonexistent/ws"),
        &policy,
    );
    assert_eq!(got, None);
}

#[test]
fn a_host_folder_under_tmp_that_the_private_tmp_hides_is_a_refusal() {
    // The workspace outside /tmp, a folder of the host's /tmp the command wanted.
    let ws = tempfile::tempdir_in("/var/tmp").unwrap();
    let host_tmp = tempfile::Builder::new()
        .prefix("gd-denial-")
        .tempdir_in("/tmp")
        .unwrap();
    let policy = Policy {
        writable: vec![ws.path().to_path_buf()],
        ..Policy::default()
    };
    let target = host_tmp.path().join("out.txt");
    let output = format!(
        "touch: cannot touch '{}': No such file or directory",
        target.display()
    );
    let got = denial(&output, Some(1), ws.path(), &policy).expect("a refusal");
    assert_eq!(got.paths, vec![target.clone()]);
    assert!(got.evidence.contains("No such file or directory"));

    // Missing on the host too, or not under /tmp: just a missing file.
    let output = "touch: cannot touch '/tmp/gd-no-such-folder-at-all/x': No such file or directory";
    assert_eq!(denial(output, Some(1), ws.path(), &policy), None);
    let output = format!(
        "cat: {}: No such file or directory",
        ws.path().join("missing").display()
    );
    assert_eq!(denial(&output, Some(1), ws.path(), &policy), None);
    // Granted already (an extra writable folder): nothing more to ask.
    let granted = Policy {
        extra_writable: vec![host_tmp.path().to_path_buf()],
        ..policy
    };
    let output = format!(
        "touch: cannot touch '{}': No such file or directory",
        target.display()
    );
    assert_eq!(denial(&output, Some(1), ws.path(), &granted), None);
}
