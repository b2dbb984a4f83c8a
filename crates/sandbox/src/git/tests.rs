use super::*;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@e")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@e")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

fn repo(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    fs::write(dir.join("f"), "f").unwrap();
    git(dir, &["add", "f"]);
    git(dir, &["commit", "-qm", "one"]);
}

fn tmp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

fn parts_of(root: &Path) -> Parts {
    let mut parts = Parts::default();
    protect_root(root, None, true, &mut parts).unwrap();
    parts
}

#[test]
fn a_plain_folder_gets_an_empty_read_only_gemini_and_git() {
    let (_d, root) = tmp();
    let parts = parts_of(&root);
    assert_eq!(
        parts.protected,
        vec![root.join(".gemini"), root.join(".git")]
    );
    assert_eq!(
        parts.missing,
        vec![
            (root.join(".gemini"), Entry::Dir),
            (root.join(".git"), Entry::Dir)
        ]
    );
    assert!(parts.writable.is_empty());
}

#[test]
fn a_folder_that_is_not_a_workspace_gets_nothing_created() {
    let (_d, root) = tmp();
    let mut parts = Parts::default();
    protect_root(&root, None, false, &mut parts).unwrap();
    assert_eq!(parts, Parts::default());
}

#[test]
fn a_repository_keeps_hooks_and_config_read_only_and_the_rest_writable() {
    let (_d, root) = tmp();
    repo(&root);
    fs::create_dir(root.join(".gemini")).unwrap();
    let parts = parts_of(&root);
    let g = root.join(".git");
    assert_eq!(parts.writable, vec![g.clone()]);
    assert_eq!(
        parts.protected,
        vec![root.join(".gemini"), g.join("hooks"), g.join("config")]
    );
    assert!(parts.missing.is_empty());
    // Without a hooks folder: created empty first.
    fs::remove_dir_all(g.join("hooks")).unwrap();
    assert_eq!(parts_of(&root).missing, vec![(g.join("hooks"), Entry::Dir)]);
}

#[test]
fn a_linked_worktree_opens_its_git_folders_but_not_their_pointers() {
    let (_d, root) = tmp();
    let main = root.join("main");
    repo(&main);
    let wt = root.join("wt");
    git(
        &main,
        &["worktree", "add", "-q", "-b", "topic", wt.to_str().unwrap()],
    );
    let parts = parts_of(&wt);
    let common = main.join(".git");
    let x = common.join("worktrees/wt");
    let writable: std::collections::BTreeSet<_> = parts.writable.iter().cloned().collect();
    assert_eq!(
        writable,
        [x.clone(), common.clone(), common.join("worktrees")]
            .into_iter()
            .collect()
    );
    for p in [
        wt.join(".git"),
        x.join("commondir"),
        x.join("gitdir"),
        common.join("hooks"),
        common.join("config"),
    ] {
        assert!(
            parts.protected.contains(&p),
            "{} in {:?}",
            p.display(),
            parts.protected
        );
    }
    // The main repository's own worktree list keeps its pointers read-only too.
    let parts = parts_of(&main);
    assert!(parts.protected.contains(&x.join("commondir")) && parts.writable.contains(&x));
}

#[test]
fn a_git_file_that_does_not_prove_where_it_points_opens_nothing() {
    let (_d, root) = tmp();
    let other = root.join("other");
    repo(&other);
    let ws = root.join("ws");
    fs::create_dir(&ws).unwrap();
    // Planted by an earlier command: another repository's git folder.
    fs::write(
        ws.join(".git"),
        format!("gitdir: {}\n", other.join(".git").display()),
    )
    .unwrap();
    let parts = parts_of(&ws);
    assert!(parts.writable.is_empty(), "{:?}", parts.writable);
    assert!(parts.protected.contains(&ws.join(".git")));
    // Another checkout's linked worktree folder: its gitdir names that checkout, not this one.
    let wt = root.join("wt");
    git(
        &other,
        &["worktree", "add", "-q", "-b", "t", wt.to_str().unwrap()],
    );
    fs::write(
        ws.join(".git"),
        format!("gitdir: {}\n", other.join(".git/worktrees/wt").display()),
    )
    .unwrap();
    assert!(parts_of(&ws).writable.is_empty());
    // Garbage.
    fs::write(ws.join(".git"), "gitdir:\n").unwrap();
    assert!(parts_of(&ws).writable.is_empty());
    fs::write(ws.join(".git"), [0xffu8, 0xfe, 0]).unwrap();
    assert!(parts_of(&ws).writable.is_empty());
}

#[test]
fn a_hooks_path_inside_the_workspace_is_protected_and_created() {
    let (_d, root) = tmp();
    repo(&root);
    git(&root, &["config", "core.hooksPath", ".husky/_"]);
    let parts = parts_of(&root);
    assert!(
        parts.protected.contains(&root.join(".husky/_")),
        "{:?}",
        parts.protected
    );
    assert!(parts.writable.contains(&root.join(".husky")));
    assert_eq!(
        parts.missing,
        vec![
            (root.join(".gemini"), Entry::Dir),
            (root.join(".husky"), Entry::Dir),
            (root.join(".husky/_"), Entry::Dir)
        ]
    );
}

#[test]
fn submodule_git_folders_and_checkout_pointers_are_protected() {
    let (_d, root) = tmp();
    let sub = root.join("subrepo");
    repo(&sub);
    let ws = root.join("ws");
    repo(&ws);
    git(
        &ws,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            sub.to_str().unwrap(),
            "lib/sub",
        ],
    );
    let parts = parts_of(&ws);
    let m = ws.join(".git/modules/lib/sub");
    for p in [m.join("hooks"), m.join("config"), ws.join("lib/sub/.git")] {
        assert!(
            parts.protected.contains(&p),
            "{} in {:?}",
            p.display(),
            parts.protected
        );
    }
    for p in [
        ws.join(".git/modules"),
        ws.join(".git/modules/lib"),
        m.clone(),
        ws.join("lib"),
        ws.join("lib/sub"),
    ] {
        assert!(
            parts.writable.contains(&p),
            "{} in {:?}",
            p.display(),
            parts.writable
        );
    }
    // The submodule's checkout as a workspace of its own: its git folder is proven by
    // core.worktree.
    let parts = parts_of(&ws.join("lib/sub"));
    assert!(parts.writable.contains(&m), "{:?}", parts.writable);
    assert!(parts.protected.contains(&m.join("hooks")));
}

#[test]
fn symbolic_links_in_protected_parts_refuse_the_command() {
    let (_d, root) = tmp();
    repo(&root);
    fs::create_dir(root.join("githooks")).unwrap();
    fs::remove_dir_all(root.join(".git/hooks")).unwrap();
    std::os::unix::fs::symlink("../githooks", root.join(".git/hooks")).unwrap();
    let err = protect_root(&root, None, true, &mut Parts::default()).unwrap_err();
    assert!(
        err.to_string().contains(".git/hooks") && err.to_string().contains("core.hooksPath"),
        "{err}"
    );

    let (_d, root) = tmp();
    std::os::unix::fs::symlink("/tmp", root.join(".gemini")).unwrap();
    assert!(protect_root(&root, None, true, &mut Parts::default()).is_err());

    let (_d, root) = tmp();
    let real = root.join("real");
    repo(&real);
    let ws = root.join("ws");
    fs::create_dir(&ws).unwrap();
    std::os::unix::fs::symlink(real.join(".git"), ws.join(".git")).unwrap();
    assert!(protect_root(&ws, None, true, &mut Parts::default()).is_err());
}

#[test]
fn worktree_config_is_created_only_when_git_reads_it() {
    let (_d, root) = tmp();
    repo(&root);
    assert!(
        !parts_of(&root)
            .protected
            .contains(&root.join(".git/config.worktree"))
    );
    git(&root, &["config", "extensions.worktreeConfig", "true"]);
    let parts = parts_of(&root);
    assert!(
        parts
            .missing
            .contains(&(root.join(".git/config.worktree"), Entry::File))
    );
}

#[test]
fn config_values_are_read_like_git() {
    let text = "[core]\n\trepositoryformatversion = 0\n\tHooksPath = \"a b\" ; comment\n[remote \"origin\"]\n\thooksPath = no\n[Core] hookspath = last # c\n[extensions]\n\tworktreeConfig\n";
    assert_eq!(
        config_value(text, "core", "hookspath").as_deref(),
        Some("last")
    );
    assert_eq!(
        config_value("[core]\nhooksPath = \"a b\" ; x\n", "core", "hooksPath").as_deref(),
        Some("a b")
    );
    assert_eq!(
        config_value("[core]\nhooksPath = a\\\"b\n", "core", "hookspath").as_deref(),
        Some("a\"b")
    );
    assert_eq!(
        config_value(text, "extensions", "worktreeconfig").as_deref(),
        Some("")
    );
    assert_eq!(config_value(text, "core", "worktree"), None);
    assert_eq!(config_value("", "core", "x"), None);
    assert_eq!(config_value("[core", "core", "x"), None);
}

#[test]
fn normalize_is_lexical() {
    assert_eq!(
        normalize(Path::new("/a/b/../c/./d")),
        PathBuf::from("/a/c/d")
    );
    assert_eq!(normalize(Path::new("/../..")), PathBuf::from("/"));
}

#[test]
fn a_bare_repository_keeps_its_hooks_and_config_read_only() {
    let (_d, root) = tmp();
    let bare = root.join("bare.git");
    fs::create_dir(&bare).unwrap();
    git(&bare, &["init", "-q", "--bare"]);
    let parts = parts_of(&bare);
    for p in [bare.join("hooks"), bare.join("config")] {
        assert!(
            parts.protected.contains(&p),
            "{} in {:?}",
            p.display(),
            parts.protected
        );
    }
}
