use super::*;
use crate::Network;

/// Not under /tmp (the sandbox's own /tmp replaces the host's there): next to the test binary.
fn tmp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("gdm-")
        .tempdir_in(crate::test_base::visible_base())
        .unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

fn plan_of(policy: &Policy) -> Plan {
    plan(policy, &Environment::default()).unwrap()
}

fn position(plan: &Plan, kind: Kind, dest: &Path) -> usize {
    plan.mounts
        .iter()
        .position(|m| m.kind == kind && m.dest == dest)
        .unwrap_or_else(|| panic!("no {kind:?} at {} in {:#?}", dest.display(), plan.mounts))
}

#[test]
fn mounts_are_in_depth_order_with_the_stronger_rule_last() {
    let (_d, root) = tmp();
    let home = root.join("home");
    for d in [".ssh", ".gemini/tmp/ws", "proj"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::write(home.join(".netrc"), "machine x").unwrap();
    let inner = home.join(".gemini/tmp/ws");
    let policy = Policy {
        extra_writable: Vec::new(),
        writable: vec![home.clone(), inner.clone()],
        network: Network::None,
        home: Some(home.clone()),
    };
    let plan = plan_of(&policy);
    let depths: Vec<usize> = plan.mounts.iter().map(|m| depth(&m.dest)).collect();
    assert!(
        depths.windows(2).all(|w| w[0] <= w[1]),
        "{:#?}",
        plan.mounts
    );
    // The home writable, its secrets hidden after it; the folder inside a hidden one after that.
    let w = position(&plan, Kind::Writable, &home);
    let ssh = position(&plan, Kind::HiddenDir, &home.join(".ssh"));
    let netrc = position(&plan, Kind::HiddenFile, &home.join(".netrc"));
    let gemini = position(&plan, Kind::HiddenDir, &home.join(".gemini"));
    let back = position(&plan, Kind::Writable, &inner);
    assert!(w < ssh && w < netrc && gemini < back);
    // home/.gemini is both a protected part of the home and hidden: hidden wins (last).
    assert!(position(&plan, Kind::Protected, &home.join(".gemini")) < gemini);
    // /dev, /proc and /tmp come before anything deeper.
    assert_eq!(
        plan.mounts[..3].iter().map(|m| m.kind).collect::<Vec<_>>(),
        vec![Kind::System; 3]
    );
    assert_eq!(
        plan.kind_at(&home.join(".ssh/id_rsa")).map(|k| k.0),
        Some(Kind::HiddenDir)
    );
    assert_eq!(
        plan.kind_at(&inner.join("x")).map(|k| k.0),
        Some(Kind::Writable)
    );
    assert_eq!(
        plan.kind_at(&inner.join(".gemini/x")).map(|k| k.0),
        Some(Kind::Protected)
    );
    assert_eq!(
        plan.kind_at(&home.join("proj/x")).map(|k| k.0),
        Some(Kind::Writable)
    );
    assert_eq!(plan.kind_at(Path::new("/etc/passwd")), None);
}

#[test]
fn nothing_inside_a_hidden_folder_shows_it_unless_a_writable_folder_brings_it_back() {
    let (_d, root) = tmp();
    let home = root.join("home");
    // A repository inside the hidden ~/.gemini, reached from a writable worktree elsewhere:
    // its git folder's parts would show the hidden folder's contents, so they are dropped.
    std::fs::create_dir_all(home.join(".gemini/x/.git/hooks")).unwrap();
    std::fs::create_dir_all(root.join("ws")).unwrap();
    let policy = Policy {
        extra_writable: Vec::new(),
        writable: vec![root.join("ws")],
        network: Network::None,
        home: Some(home.clone()),
    };
    let plan = plan_of(&policy);
    assert!(
        !plan
            .mounts
            .iter()
            .any(|m| m.dest.starts_with(home.join(".gemini")) && m.kind != Kind::HiddenDir)
    );
}

#[test]
fn writable_folders_must_be_absolute_existing_folders_outside_the_kernels() {
    let (_d, root) = tmp();
    std::fs::write(root.join("file"), "").unwrap();
    for (path, why) in [
        (PathBuf::from("relative"), "absolute"),
        (root.join("missing"), "No such file"),
        (root.join("file"), "must be a folder"),
        (PathBuf::from("/proc/self"), "never writable"),
        (PathBuf::from("/dev"), "never writable"),
        (PathBuf::from("/sys/kernel"), "never writable"),
    ] {
        let policy = Policy {
            writable: vec![path.clone()],
            ..Policy::default()
        };
        let err = plan(&policy, &Environment::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(why), "{}: {err}", path.display());
    }
}

#[test]
fn a_writable_folder_at_a_protected_part_stays_read_only_one_inside_it_is_writable() {
    let (_d, root) = tmp();
    std::fs::create_dir_all(root.join(".git/hooks/sub")).unwrap();
    std::fs::create_dir_all(root.join(".gemini")).unwrap();
    let policy = Policy {
        writable: vec![
            root.clone(),
            root.join(".git/hooks/sub"),
            root.join(".gemini"),
        ],
        ..Policy::default()
    };
    let plan = plan_of(&policy);
    assert_eq!(
        plan.kind_at(&root.join(".git/hooks/sub/x")).map(|k| k.0),
        Some(Kind::Writable)
    );
    assert_eq!(
        plan.kind_at(&root.join(".git/hooks/x")).map(|k| k.0),
        Some(Kind::Protected)
    );
    assert_eq!(
        plan.kind_at(&root.join(".gemini/x")).map(|k| k.0),
        Some(Kind::Protected)
    );
    // The writable folder at .gemini brings nothing of its own back: its .gemini (inside a
    // read-only part) is read-only anyway.
    assert!(!plan.mounts.iter().any(|m| m.kind == Kind::Writable
        && m.dest.starts_with(root.join(".gemini"))
        && m.dest != root.join(".gemini")));
    assert_eq!(
        plan.kind_at(&root.join(".git/objects")).map(|k| k.0),
        Some(Kind::Writable)
    );
}

#[test]
fn the_whole_filesystem_writable_keeps_sys_dev_and_proc_fresh() {
    let policy = Policy {
        writable: vec![PathBuf::from("/")],
        home: Some(PathBuf::from("/nonexistent")),
        ..Policy::default()
    };
    let plan = plan_of(&policy);
    assert_eq!(
        plan.mounts[0],
        Mount {
            kind: Kind::Writable,
            src: "/".into(),
            dest: "/".into()
        }
    );
    assert!(position(&plan, Kind::System, Path::new("/proc")) > 0);
    assert_eq!(
        plan.kind_at(Path::new("/sys/kernel")).map(|k| k.0),
        Some(Kind::Protected)
    );
}

#[test]
fn a_folder_named_through_a_link_is_mounted_at_that_name_only_where_the_link_is_hidden() {
    let (_d, root) = tmp();
    let ws = root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let home = root.join("home");
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    // A plain link: it resolves inside the sandbox as well; nothing more.
    std::os::unix::fs::symlink(&ws, root.join("link")).unwrap();
    let policy = Policy {
        extra_writable: Vec::new(),
        writable: vec![root.join("link")],
        network: Network::None,
        home: Some(home.clone()),
    };
    let plan = plan_of(&policy);
    assert!(
        !plan
            .mounts
            .iter()
            .any(|m| m.dest.starts_with(root.join("link")))
    );
    // A link inside a hidden folder: bound at the name, with the protected parts moved along.
    let link = home.join(".gemini/link");
    std::os::unix::fs::symlink(&ws, &link).unwrap();
    let policy = Policy {
        extra_writable: Vec::new(),
        writable: vec![link.clone()],
        network: Network::None,
        home: Some(home.clone()),
    };
    let plan = plan_of(&policy);
    let at = position(&plan, Kind::Writable, &link);
    assert_eq!(plan.mounts[at].src, ws);
    assert!(position(&plan, Kind::Protected, &link.join(".gemini")) > at);
    assert!(position(&plan, Kind::HiddenDir, &home.join(".gemini")) < at);
}

#[test]
fn missing_protected_parts_are_listed_once() {
    let (_d, root) = tmp();
    let policy = Policy {
        writable: vec![root.clone(), root.clone()],
        ..Policy::default()
    };
    let plan = plan_of(&policy);
    assert_eq!(
        plan.missing,
        vec![
            (root.join(".gemini"), Entry::Dir),
            (root.join(".git"), Entry::Dir)
        ]
    );
    assert_eq!(plan.mounts.iter().filter(|m| m.dest == root).count(), 1);
}

#[test]
fn a_link_in_the_hosts_tmp_is_mounted_at_its_name_too() {
    let (_d, root) = tmp();
    let ws = root.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let host_tmp = tempfile::tempdir().unwrap();
    let link = host_tmp.path().join("link");
    std::os::unix::fs::symlink(&ws, &link).unwrap();
    let policy = Policy {
        writable: vec![link.clone()],
        home: Some("/nonexistent".into()),
        ..Policy::default()
    };
    let plan = plan_of(&policy);
    let at = position(&plan, Kind::Writable, &link);
    assert!(position(&plan, Kind::System, Path::new("/tmp")) < at);
    assert!(position(&plan, Kind::Protected, &link.join(".gemini")) > at);
}

#[test]
fn the_real_homes_secrets_are_hidden_whatever_home_says() {
    let (_d, root) = tmp();
    let policy = Policy {
        home: Some(root.join("fake-home")),
        ..Policy::default()
    };
    let plan = plan_of(&policy);
    let real = passwd_home().expect("this user has a home in the user database");
    for rel in hidden::HOME_SECRETS {
        let Ok(path) = std::fs::canonicalize(real.join(rel)) else {
            continue;
        };
        assert!(
            plan.kind_at(&path)
                .is_some_and(|(k, _)| matches!(k, Kind::HiddenDir | Kind::HiddenFile)),
            "{} not hidden",
            path.display()
        );
    }
}
