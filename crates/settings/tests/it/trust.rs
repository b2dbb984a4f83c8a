//! Trusted folders on real files, by Gemini CLI 0.61's rules (checked by
//! running it): folder and parent rules, the most specific rule wins,
//! DO_NOT_TRUST, the environment overrides, the setting that turns the
//! feature off, and what a broken file reports.

use std::fs;
use std::path::{Path, PathBuf};

use gd_settings::trust::{TrustSource, TrustedFolders, folder_trust_enabled, workspace_trust};
use gd_settings::{LoadOptions, TrustLevel, WorkspaceTrust};

struct Tree {
    _dir: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
}

impl Tree {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        fs::create_dir_all(home.join(".gemini")).unwrap();
        for d in ["projects/app/src", "projects/lib", "projects/apple"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        Self {
            _dir: dir,
            home,
            root,
        }
    }

    fn p(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn rules(&self, rules: &[(&str, &str)]) {
        let map: serde_json::Map<_, _> = rules
            .iter()
            .map(|(p, l)| {
                (
                    self.p(p).to_string_lossy().into_owned(),
                    serde_json::json!(l),
                )
            })
            .collect();
        fs::write(
            self.home.join(".gemini/trustedFolders.json"),
            serde_json::to_string_pretty(&map).unwrap(),
        )
        .unwrap();
    }

    fn user_settings(&self, text: &str) {
        fs::write(self.home.join(".gemini/settings.json"), text).unwrap();
    }

    fn check_env(&self, workspace: &str, env: &[(&str, &str)]) -> WorkspaceTrust {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let get = move |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        workspace_trust(&LoadOptions {
            home: Some(self.home.clone()),
            workspace: self.p(workspace),
            env: &get,
            workspace_trusted: false,
        })
        .unwrap()
    }

    fn check(&self, workspace: &str) -> Option<bool> {
        self.check_env(workspace, &[]).trusted
    }
}

#[test]
fn no_rule_means_undecided_and_untrusted() {
    let t = Tree::new();
    let trust = t.check_env("projects/app", &[]);
    assert_eq!(trust.trusted, None);
    assert!(trust.enabled && !trust.is_trusted());
    assert_eq!(trust.file, Some(t.home.join(".gemini/trustedFolders.json")));
}

#[test]
fn a_trusted_folder_covers_itself_and_its_subfolders_only() {
    let t = Tree::new();
    t.rules(&[("projects/app", "TRUST_FOLDER")]);
    assert_eq!(t.check("projects/app"), Some(true));
    assert_eq!(t.check("projects/app/src"), Some(true));
    assert_eq!(
        t.check("projects/apple"),
        None,
        "a name prefix is not a parent"
    );
    assert_eq!(t.check("projects"), None);
    let trust = t.check_env("projects/app/src", &[]);
    assert_eq!(trust.source, Some(TrustSource::File));
    assert_eq!(
        trust.rule.unwrap().path,
        t.p("projects/app").to_string_lossy()
    );
}

#[test]
fn trust_parent_trusts_the_parent_folder() {
    let t = Tree::new();
    t.rules(&[("projects/app", "TRUST_PARENT")]);
    assert_eq!(t.check("projects/app"), Some(true));
    assert_eq!(t.check("projects/lib"), Some(true));
    assert_eq!(t.check("home"), None);
}

#[test]
fn the_most_specific_rule_wins() {
    let t = Tree::new();
    t.rules(&[
        ("projects", "TRUST_FOLDER"),
        ("projects/app", "DO_NOT_TRUST"),
    ]);
    assert_eq!(t.check("projects/lib"), Some(true));
    assert_eq!(t.check("projects/app"), Some(false));
    assert_eq!(t.check("projects/app/src"), Some(false));
    t.rules(&[
        ("projects", "DO_NOT_TRUST"),
        ("projects/app", "TRUST_FOLDER"),
    ]);
    assert_eq!(t.check("projects/app/src"), Some(true));
    assert_eq!(t.check("projects/lib"), Some(false));
    // A TRUST_PARENT rule counts by the length of the path written.
    t.rules(&[
        ("projects", "DO_NOT_TRUST"),
        ("projects/app/src", "TRUST_PARENT"),
    ]);
    assert_eq!(t.check("projects/app"), Some(true));
}

#[test]
fn symlinked_workspaces_resolve_to_the_real_folder() {
    let t = Tree::new();
    t.rules(&[("projects/app", "TRUST_FOLDER")]);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(t.p("projects/app"), t.p("link")).unwrap();
        assert_eq!(t.check("link"), Some(true));
    }
}

#[test]
fn environment_overrides_win_over_the_file() {
    let t = Tree::new();
    t.rules(&[
        ("projects/app", "DO_NOT_TRUST"),
        ("projects/lib", "TRUST_FOLDER"),
    ]);
    let trust = t.check_env("projects/app", &[("GEMINI_CLI_TRUST_WORKSPACE", "true")]);
    assert_eq!(
        (trust.trusted, trust.source),
        (Some(true), Some(TrustSource::Env))
    );
    let trust = t.check_env("projects/lib", &[("GEMINI_CLI_TRUST_WORKSPACE", "false")]);
    assert_eq!(
        (trust.trusted, trust.source),
        (Some(false), Some(TrustSource::Env))
    );
    let trust = t.check_env("projects/lib", &[("GEMINI_RESTRICTED_MODE", "true")]);
    assert_eq!(trust.trusted, Some(false));
    // Another file.
    let other = t.root.join("other-trust.json");
    fs::write(
        &other,
        format!(
            "{{\"{}\": \"TRUST_FOLDER\"}}",
            t.p("projects/app").display()
        ),
    )
    .unwrap();
    let path = other.to_string_lossy().into_owned();
    let trust = t.check_env(
        "projects/app",
        &[("GEMINI_CLI_TRUSTED_FOLDERS_PATH", &path)],
    );
    assert_eq!(trust.trusted, Some(true));
    assert_eq!(trust.file, Some(other));
}

#[test]
fn the_setting_turns_it_off_but_only_outside_the_workspace() {
    let t = Tree::new();
    t.rules(&[("projects/app", "DO_NOT_TRUST")]);
    // A workspace cannot trust itself.
    fs::create_dir_all(t.p("projects/app/.gemini")).unwrap();
    fs::write(
        t.p("projects/app/.gemini/settings.json"),
        r#"{"security": {"folderTrust": {"enabled": false}}}"#,
    )
    .unwrap();
    assert_eq!(t.check("projects/app"), Some(false));
    t.user_settings(r#"{"security": {"folderTrust": {"enabled": false}}}"#);
    let trust = t.check_env("projects/app", &[]);
    assert_eq!(
        (trust.trusted, trust.source, trust.enabled),
        (Some(true), Some(TrustSource::Disabled), false)
    );
    // Off: the environment still decides when it says so.
    let trust = t.check_env("projects/app", &[("GEMINI_CLI_TRUST_WORKSPACE", "false")]);
    assert_eq!((trust.trusted, trust.enabled), (Some(false), false));
    let none = |_: &str| None;
    let opts = LoadOptions {
        home: Some(t.home.clone()),
        workspace: t.p("projects/app"),
        env: &none,
        workspace_trusted: false,
    };
    assert!(!folder_trust_enabled(&opts).unwrap());
}

#[test]
fn a_broken_file_names_the_file_and_line() {
    let t = Tree::new();
    let file = t.home.join(".gemini/trustedFolders.json");
    fs::write(
        &file,
        "{\n  \"/a\": \"TRUST_FOLDER\",\n  \"/b\": \"TRUST_FOLDR\"\n}",
    )
    .unwrap();
    let err = TrustedFolders::load(&file).unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}:3:", file.display())), "{err}");
    assert!(
        err.contains("TRUST_FOLDR") && err.contains("TRUST_PARENT"),
        "{err}"
    );
    fs::write(&file, "{\n  \"/a\": \n}").unwrap();
    let err = TrustedFolders::load(&file).unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}:3:", file.display())), "{err}");
    fs::write(&file, "[]").unwrap();
    assert!(
        TrustedFolders::load(&file)
            .unwrap_err()
            .to_string()
            .contains("must be a JSON object")
    );
    // Comments are fine (Gemini CLI strips them too).
    fs::write(&file, "{\n  // mine\n  \"/a\": \"TRUST_FOLDER\"\n}").unwrap();
    assert_eq!(TrustedFolders::load(&file).unwrap().rules.len(), 1);
}

#[test]
fn setting_a_level_keeps_other_rules_and_comments_and_is_private() {
    let t = Tree::new();
    let file = t.home.join("new/.gemini/trustedFolders.json");
    TrustedFolders::set(&file, &t.p("projects/app"), TrustLevel::TrustParent).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let rules = TrustedFolders::load(&file).unwrap().rules;
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0].level, TrustLevel::TrustParent);
    assert_eq!(rules[0].effective_path(), t.p("projects"));

    let text = "{\n  // work\n  \"/srv/x\": \"TRUST_FOLDER\"\n}\n";
    fs::write(&file, text).unwrap();
    TrustedFolders::set(&file, &t.p("projects/lib/../app"), TrustLevel::DoNotTrust).unwrap();
    let written = fs::read_to_string(&file).unwrap();
    assert_eq!(
        written,
        format!(
            "{{\n  // work\n  \"/srv/x\": \"TRUST_FOLDER\",\n  \"{}\": \"DO_NOT_TRUST\"\n}}\n",
            t.p("projects/app").display()
        )
    );
    // A broken file is not overwritten.
    fs::write(&file, "{ broken").unwrap();
    assert!(TrustedFolders::set(&file, Path::new("/x"), TrustLevel::TrustFolder).is_err());
    assert_eq!(fs::read_to_string(&file).unwrap(), "{ broken");
}
