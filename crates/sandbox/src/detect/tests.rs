use super::*;

const NO_USERNS: &str = "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.\n";

fn facts() -> HostFacts {
    HostFacts::default()
}

#[test]
fn user_namespaces_turned_off_by_sysctl() {
    let why = classify(
        NO_USERNS,
        &HostFacts {
            unprivileged_userns_clone: Some(0),
            ..facts()
        },
    );
    assert!(
        why.reason.contains("kernel.unprivileged_userns_clone = 0"),
        "{why}"
    );
    assert!(
        why.reason.contains("bwrap said: \"bwrap: No permissions"),
        "{why}"
    );
    assert!(
        why.fix
            .contains("sudo sysctl -w kernel.unprivileged_userns_clone=1"),
        "{why}"
    );

    let enospc = "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)";
    let why = classify(
        enospc,
        &HostFacts {
            max_user_namespaces: Some(0),
            ..facts()
        },
    );
    assert!(why.reason.contains("user.max_user_namespaces = 0"), "{why}");
    assert!(
        why.fix.contains("sysctl -w user.max_user_namespaces="),
        "{why}"
    );
}

#[test]
fn ubuntus_apparmor_restriction() {
    for stderr in [
        "bwrap: setting up uid map: Permission denied",
        "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted",
    ] {
        let why = classify(
            stderr,
            &HostFacts {
                apparmor_restrict_unprivileged_userns: Some(1),
                ..facts()
            },
        );
        assert!(
            why.reason.contains("AppArmor") && why.reason.contains(stderr),
            "{why}"
        );
        assert!(
            why.fix.contains("apparmor_parser")
                && why.fix.contains("apparmor_restrict_unprivileged_userns=0"),
            "{why}"
        );
    }
}

#[test]
fn a_container_without_the_capability() {
    for stderr in [
        "bwrap: Creating new namespace failed: Operation not permitted",
        "bwrap: Can't mount proc on /newroot/proc: Operation not permitted",
        NO_USERNS,
    ] {
        let why = classify(
            stderr,
            &HostFacts {
                in_container: true,
                ..facts()
            },
        );
        assert!(why.reason.contains("container"), "{why}");
        assert!(
            why.fix.contains("--privileged") && why.fix.contains("turn the sandbox off knowingly"),
            "{why}"
        );
    }
    // Not known to be a container: still said, with the same fix.
    let why = classify(
        "bwrap: Creating new namespace failed: Operation not permitted",
        &facts(),
    );
    assert!(why.reason.contains("was refused"), "{why}");
}

#[test]
fn anything_else_quotes_bwrap_trimmed() {
    let why = classify(
        "\n  bwrap: execvp sh: No such file or directory \n",
        &facts(),
    );
    assert!(
        why.reason
            .contains("bwrap said: \"bwrap: execvp sh: No such file or directory\"."),
        "{why}"
    );
    assert!(
        why.fix
            .contains("bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all"),
        "{why}"
    );
    let long = "x".repeat(2000);
    let why = classify(&long, &facts());
    assert!(why.reason.len() < 700 && why.reason.contains('…'), "{why}");
    // The sysctl is not blamed for an unrelated failure.
    let why = classify(
        "bwrap: Unknown option --foo",
        &HostFacts {
            unprivileged_userns_clone: Some(0),
            ..facts()
        },
    );
    assert!(why.reason.contains("could not start"), "{why}");
}

#[test]
fn a_missing_bwrap_is_not_installed() {
    let why = Sandbox::detect_with(Path::new("/nonexistent/bwrap")).unwrap_err();
    assert!(
        why.reason.contains("not installed at /nonexistent/bwrap"),
        "{why}"
    );
    assert!(
        why.fix.contains("sudo apt install bubblewrap") && why.fix.contains("dnf"),
        "{why}"
    );
}

/// A script standing in for bubblewrap.
fn fake(body: &str) -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bwrap");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, path)
}

/// `detect_with`, again while the fresh script is "busy" (another test thread forked while it
/// was open for writing: ETXTBSY until that child execs).
fn detect_fake(bwrap: &Path) -> Result<Sandbox, Unavailable> {
    for _ in 0..50 {
        match Sandbox::detect_with(bwrap) {
            Err(why) if why.reason.contains("Text file busy") => {
                std::thread::sleep(Duration::from_millis(20))
            }
            other => return other,
        }
    }
    Sandbox::detect_with(bwrap)
}

#[test]
fn a_failing_bwrap_is_classified_with_its_words() {
    let (_dir, bwrap) = fake("echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1");
    let why = detect_fake(&bwrap).unwrap_err();
    assert!(
        why.reason.contains("setting up uid map: Permission denied"),
        "{why}"
    );
    assert!(!why.fix.is_empty());
}

#[test]
fn a_bwrap_that_runs_nothing_does_not_pass() {
    let (_dir, bwrap) = fake("exit 0");
    let why = detect_fake(&bwrap).unwrap_err();
    assert!(
        why.reason
            .contains("did not report running under the sandbox"),
        "{why}"
    );
}

#[test]
fn the_real_bwrap_passes_unless_told_to_skip() {
    if std::env::var("GD_SANDBOX_TESTS").as_deref() == Ok("skip") {
        return;
    }
    let sandbox = Sandbox::detect().unwrap_or_else(|why| panic!("{why}"));
    assert!(sandbox.bwrap().is_absolute());
    // Cached: the same answer, without a second trial.
    assert_eq!(Sandbox::detect().unwrap().bwrap(), sandbox.bwrap());
}
