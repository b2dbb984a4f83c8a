use super::*;
use std::ffi::OsStr;
use std::io::{Read, Seek};

fn strings(args: &[OsString]) -> Vec<String> {
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

fn line(network: Network) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let policy = Policy {
        extra_writable: Vec::new(),
        writable: vec![root.clone()],
        network,
        home: Some(home),
    };
    let plan = mounts::plan(&policy, &Environment::default()).unwrap();
    strings(&command_line(
        &plan,
        network,
        7,
        Path::new("sh"),
        &["-c".into(), "echo hi".into()],
        &root,
    ))
}

#[test]
fn the_command_line_has_the_namespaces_the_mounts_and_the_command_last() {
    let args = line(Network::None);
    assert_eq!(
        &args[..7],
        [
            "--unshare-all",
            "--die-with-parent",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/",
            "/"
        ]
    );
    assert_eq!(
        &args[7..13],
        ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    );
    assert!(
        !args
            .iter()
            .any(|a| a == "--share-net" || a == "--new-session")
    );
    let tail: Vec<&str> = args[args.len() - 4..].iter().map(String::as_str).collect();
    assert_eq!(tail, ["--", "sh", "-c", "echo hi"]);
    let find = |s: &str| args.iter().position(|a| a == s).unwrap();
    assert_eq!(args[find("--seccomp") + 1], "7");
    assert_eq!(
        args[find("--setenv") + 1..find("--setenv") + 3],
        ["TMPDIR", "/tmp"]
    );
    // Every read-only remount after every mount.
    let last_mount = args
        .iter()
        .rposition(|a| ["--bind", "--ro-bind", "--tmpfs"].contains(&a.as_str()))
        .unwrap();
    let first_remount = find("--remount-ro");
    assert!(first_remount > last_mount);
    assert!(args.iter().any(|a| a.ends_with("home/.ssh")));
}

#[test]
fn the_network_adds_share_net_only() {
    let with = line(Network::All);
    assert_eq!(&with[..2], ["--unshare-all", "--share-net"]);
    let without = line(Network::None);
    assert_eq!(with.len(), without.len() + 1);
}

#[test]
fn a_relative_working_folder_or_no_program_is_refused() {
    let bwrap = Path::new("/usr/bin/bwrap");
    let err = prepare(
        bwrap,
        &Policy::default(),
        Path::new("sh"),
        &[],
        Path::new("rel"),
    )
    .unwrap_err();
    assert!(err.to_string().contains("absolute"), "{err}");
    let err = prepare(
        bwrap,
        &Policy::default(),
        Path::new(""),
        &[],
        Path::new("/"),
    )
    .unwrap_err();
    assert!(err.to_string().contains("no program"), "{err}");
}

#[test]
fn prepare_creates_the_missing_protected_parts() {
    let dir = tempfile::tempdir().unwrap();
    let bwrap = Path::new("/usr/bin/bwrap");
    let policy = Policy {
        writable: vec![dir.path().to_path_buf()],
        ..Policy::default()
    };
    let prepared = prepare(bwrap, &policy, Path::new("true"), &[], dir.path()).unwrap();
    assert!(dir.path().join(".gemini").is_dir());
    assert_eq!(prepared.program(), Path::new("/usr/bin/bwrap"));
    assert_eq!(
        prepared.args().last().map(OsString::as_os_str),
        Some(OsStr::new("true"))
    );
}

#[test]
fn the_seccomp_descriptor_is_sealed_rewound_and_close_on_exec() {
    let program = seccomp::bytes();
    let fd = seccomp_fd(&program).unwrap();
    let raw = fd.as_raw_fd();
    assert!(raw >= 3);
    // SAFETY: fcntl on an owned descriptor.
    let flags = unsafe { libc::fcntl(raw, libc::F_GETFD) };
    assert_ne!(flags & libc::FD_CLOEXEC, 0);
    let mut file = std::fs::File::from(fd);
    let mut read = Vec::new();
    file.read_to_end(&mut read).unwrap();
    assert_eq!(read, program);
    file.rewind().unwrap();
    assert!(
        std::io::Write::write_all(&mut file, b"x").is_err(),
        "sealed against writes"
    );
}
