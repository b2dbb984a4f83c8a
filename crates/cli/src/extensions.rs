//! `gemini-desktop-cli extensions …`: Gemini CLI 0.61's `gemini extensions`
//! commands with its wording and exit codes, on gd-extensions. Messages go
//! to standard output, errors to standard error with exit code 1 (`enable`
//! fails with the configuration error code, as 0.61's FatalConfigError).

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use gd_core::extensions::security;
use gd_core::launch::home_dir;
use gd_extensions::consent::{INSTALL_WARNING, QUESTION};
use gd_extensions::install::{self, Request, Staged};
use gd_extensions::{Enablement, Loaded};

use crate::args::{ExtensionsCommand, OutputFormat};
use crate::exit;

/// Runs one `extensions` subcommand; returns the exit code.
pub fn run(command: &ExtensionsCommand) -> i32 {
    let Some(home) = home_dir() else {
        eprintln!("Error: no home folder to keep extensions in (HOME is not set).");
        return exit::CONFIG_ERROR;
    };
    let workspace = match std::env::current_dir() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("Error: cannot use the current directory: {e}");
            return exit::INPUT_ERROR;
        }
    };
    match command {
        ExtensionsCommand::List { output_format } => list(&home, &workspace, *output_format),
        ExtensionsCommand::Install {
            source,
            git_ref,
            auto_update,
            pre_release,
            consent,
            skip_settings,
        } => {
            let request = Request {
                source: source.clone(),
                git_ref: git_ref.clone(),
                auto_update: *auto_update,
                pre_release: *pre_release,
                link: false,
            };
            add(&home, &workspace, &request, *consent, *skip_settings)
        }
        ExtensionsCommand::Link { path, consent } => {
            let request = Request {
                source: path.clone(),
                link: true,
                ..Default::default()
            };
            add(&home, &workspace, &request, *consent, true)
        }
        ExtensionsCommand::Uninstall { names, all } => uninstall(&home, &workspace, names, *all),
        ExtensionsCommand::Enable { name, scope } => {
            toggle(&home, &workspace, name, scope.as_deref(), true)
        }
        ExtensionsCommand::Disable { name, scope } => {
            toggle(&home, &workspace, name, Some(scope), false)
        }
        ExtensionsCommand::Update { name, all } => update(&home, &workspace, name.as_deref(), *all),
        ExtensionsCommand::New { path, template } => {
            crate::extensions_new::new(&workspace.join(path), path, template.as_deref())
        }
        ExtensionsCommand::Config {
            name,
            setting,
            scope,
        } => crate::extensions_config::run(
            &home,
            &workspace,
            name.as_deref(),
            setting.as_deref(),
            scope == "workspace",
        ),
        ExtensionsCommand::Validate { path } => {
            crate::extensions_new::validate(&workspace.join(path), path)
        }
    }
}

/// The installed extensions the security settings allow (see
/// `gd_core::extensions::load`).
fn load(home: &Path, workspace: &Path) -> Loaded {
    gd_core::extensions::load(Some(home), workspace)
}

fn list(home: &Path, workspace: &Path, format: Option<OutputFormat>) -> i32 {
    let loaded = load(home, workspace);
    for e in &loaded.errors {
        eprintln!("Warning: Skipping extension: {e}");
    }
    if matches!(format, Some(OutputFormat::Json)) {
        let store = secrets_if_needed(&loaded, home, workspace);
        match serde_json::to_string_pretty(&loaded.infos_with(store.as_deref(), Some(workspace))) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("Error: {e}");
                return exit::GENERAL_ERROR;
            }
        }
    } else {
        println!("{}", gd_extensions::list::text(&loaded.extensions));
    }
    exit::SUCCESS
}

/// The secret store, when an extension has a sensitive setting (a store
/// that cannot be opened is said on standard error; values then show
/// unset).
fn secrets_if_needed(
    loaded: &gd_extensions::Loaded,
    home: &Path,
    workspace: &Path,
) -> Option<std::sync::Arc<dyn gd_auth::SecretStore>> {
    if !gd_core::extensions::has_sensitive_settings(loaded.extensions.iter()) {
        return None;
    }
    gd_core::extensions::secret_store(home, workspace)
        .map_err(|e| eprintln!("Warning: cannot open the secret store: {e}"))
        .ok()
}

/// Asks the consent question on a terminal; refuses without one.
fn ask_consent(text: &str, name: &str) -> Result<(), String> {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{text}");
    let _ = write!(out, "{QUESTION}");
    let _ = out.flush();
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(format!(
            "Installation cancelled for \"{name}\": there is no terminal to answer on. Read the above and run again with --consent to accept it."
        ));
    }
    let mut answer = String::new();
    if stdin.lock().read_line(&mut answer).is_err() {
        return Err(format!("Installation cancelled for \"{name}\"."));
    }
    let answer = answer.trim().to_lowercase();
    if answer.is_empty() || answer == "y" || answer == "yes" {
        Ok(())
    } else {
        Err(format!("Installation cancelled for \"{name}\"."))
    }
}

fn add(
    home: &Path,
    workspace: &Path,
    request: &Request,
    consent: bool,
    skip_settings: bool,
) -> i32 {
    if consent {
        println!("You have consented to the following:");
        println!("{INSTALL_WARNING}");
    }
    let staged: Staged = match install::stage(request, workspace, &security(home)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return exit::GENERAL_ERROR;
        }
    };
    if !consent && let Err(e) = ask_consent(&staged.consent_text(), &staged.manifest.name) {
        eprintln!("{e}");
        return exit::GENERAL_ERROR;
    }
    match install::install(home, workspace, &staged) {
        Ok(ext) => {
            if gd_core::extensions::config_enabled(home, workspace)
                && !ext.manifest.settings.is_empty()
            {
                let mut answered = Vec::new();
                if !skip_settings && std::io::stdin().is_terminal() {
                    match prompt_settings(home, workspace, &ext) {
                        Ok(names) => answered = names,
                        Err(e) => {
                            // Installed without the values it asked for would
                            // look done and fail later: undo it.
                            let _ = install::uninstall(home, workspace, ext.name(), None);
                            eprintln!("Installation of \"{}\" cancelled: {e}", ext.name());
                            return exit::GENERAL_ERROR;
                        }
                    }
                }
                warn_missing_settings(workspace, &ext, &answered);
            }
            if request.link {
                println!(
                    "Extension \"{}\" linked successfully and enabled.",
                    ext.name()
                );
            } else {
                println!(
                    "Extension \"{}\" installed successfully and enabled.",
                    ext.name()
                );
            }
            exit::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            exit::GENERAL_ERROR
        }
    }
}

fn uninstall(home: &Path, workspace: &Path, names: &[String], all: bool) -> i32 {
    let mut targets: Vec<String> = if all {
        load(home, workspace)
            .extensions
            .iter()
            .map(|e| e.manifest.name.clone())
            .collect()
    } else {
        let mut seen = Vec::new();
        for n in names {
            if !seen.contains(n) {
                seen.push(n.clone());
            }
        }
        seen
    };
    if targets.is_empty() {
        if all {
            println!("No extensions currently installed.");
            return exit::SUCCESS;
        }
        eprintln!(
            "Please include at least one extension name to uninstall as a positional argument, or use the --all flag."
        );
        return exit::GENERAL_ERROR;
    }
    let loaded = load(home, workspace);
    let store = if gd_core::extensions::has_sensitive_settings(loaded.extensions.iter()) {
        match gd_core::extensions::secret_store(home, workspace) {
            Ok(store) => Some(store),
            Err(e) => {
                eprintln!("Error: cannot open the secret store to remove extension settings: {e}");
                return exit::GENERAL_ERROR;
            }
        }
    } else {
        None
    };
    let mut errors = Vec::new();
    for name in targets.drain(..) {
        match install::uninstall(home, workspace, &name, store.as_deref()) {
            Ok(_) => println!("Extension \"{name}\" successfully uninstalled."),
            Err(e) => errors.push((name, e.to_string())),
        }
    }
    for (name, e) in &errors {
        eprintln!("Failed to uninstall \"{name}\": {e}");
    }
    if errors.is_empty() {
        exit::SUCCESS
    } else {
        exit::GENERAL_ERROR
    }
}

fn toggle(home: &Path, workspace: &Path, name: &str, scope: Option<&str>, enable: bool) -> i32 {
    let fail = if enable {
        exit::CONFIG_ERROR
    } else {
        exit::GENERAL_ERROR
    };
    let folder: PathBuf = match scope.map(str::to_lowercase).as_deref() {
        None | Some("user") => home.to_path_buf(),
        Some("workspace") => workspace.to_path_buf(),
        Some("system") | Some("systemdefaults") => {
            eprintln!("System and SystemDefaults scopes are not supported.");
            return fail;
        }
        Some(other) => {
            eprintln!("Invalid scope: {other}. Please use one of user, workspace.");
            return fail;
        }
    };
    if load(home, workspace).get(name).is_none() {
        eprintln!("Extension with name {name} does not exist.");
        return fail;
    }
    let mut enablement = Enablement::load(home);
    let result = if enable {
        enablement.enable(name, &folder)
    } else {
        enablement.disable(name, &folder)
    };
    if let Err(e) = result {
        eprintln!("Error: cannot write the extension enablement file: {e}");
        return fail;
    }
    let verb = if enable { "enabled" } else { "disabled" };
    match scope {
        Some(scope) => println!("Extension \"{name}\" successfully {verb} for scope \"{scope}\"."),
        None => println!("Extension \"{name}\" successfully {verb} in all scopes."),
    }
    exit::SUCCESS
}

fn update(home: &Path, workspace: &Path, name: Option<&str>, all: bool) -> i32 {
    let loaded = load(home, workspace);
    let names: Vec<String> = match (name, all) {
        (Some(n), _) => vec![n.to_owned()],
        (None, true) => loaded
            .extensions
            .iter()
            .filter(|e| e.install.is_some())
            .map(|e| e.manifest.name.clone())
            .collect(),
        (None, false) => {
            eprintln!("Either an extension name or --all must be provided");
            return exit::GENERAL_ERROR;
        }
    };
    if let Some(n) = name
        && loaded.get(n).is_none()
    {
        if loaded.extensions.is_empty() {
            eprintln!("Extension \"{n}\" not found.\n\nNo extensions installed.");
        } else {
            let installed: Vec<String> = loaded
                .extensions
                .iter()
                .map(|e| format!("{} ({})", e.manifest.name, e.manifest.version))
                .collect();
            eprintln!(
                "Extension \"{n}\" not found.\n\nInstalled extensions:\n{}\n\nRun \"gemini-desktop-cli extensions list\" for details.",
                installed.join("\n")
            );
        }
        return exit::GENERAL_ERROR;
    }

    let mut updated = Vec::new();
    let mut code = exit::SUCCESS;
    for n in &names {
        let mut consent = |text: &str| ask_consent(text, n).is_ok();
        match install::update(home, workspace, n, &security(home), &mut consent) {
            Ok(u) if u.from_version != u.to_version => updated.push(u),
            Ok(_) => {
                if !all {
                    println!("Extension \"{n}\" is already up to date.");
                }
            }
            Err(e) => {
                eprintln!("{e}");
                code = exit::GENERAL_ERROR;
            }
        }
    }
    if all && updated.is_empty() && code == exit::SUCCESS {
        println!("No extensions to update.");
    }
    for u in &updated {
        println!(
            "Extension \"{}\" successfully updated: {} \u{2192} {}.",
            u.name, u.from_version, u.to_version
        );
    }
    code
}

/// `-e/--extensions` and `-l/--list-extensions` of a run: limits the run
/// to the named extensions (0.61's override: named ones are used even if
/// disabled, `none` uses none, an unknown name is reported and skipped);
/// `-l` lists the installed ones and ends the run (`Some(exit code)`).
pub fn only_these(names: &[String], list: bool) -> Option<i32> {
    if !names.is_empty() {
        gd_core::extensions::limit_to(names);
    }
    let workspace = std::env::current_dir().ok()?;
    let loaded = gd_core::extensions::load(home_dir().as_deref(), &workspace);
    for name in names.iter().filter(|n| !n.eq_ignore_ascii_case("none")) {
        if loaded.get_ignoring_case(name).is_none() {
            eprintln!("Extension not found: {name}");
        }
    }
    if !list {
        return None;
    }
    println!("Installed extensions:");
    for ext in &loaded.extensions {
        println!("- {}", ext.name());
    }
    Some(exit::SUCCESS)
}

/// Asks for each of a newly installed extension's settings on the terminal
/// (0.61's prompt: its name, then its description; a sensitive one without
/// echo) and keeps the answers: plain ones in its `.env`, sensitive ones in
/// the secret store. An empty answer leaves a setting unset.
fn prompt_settings(
    home: &Path,
    workspace: &Path,
    ext: &gd_extensions::Extension,
) -> Result<Vec<String>, String> {
    let mut values = std::collections::HashMap::new();
    for setting in &ext.manifest.settings {
        let message = match &setting.description {
            Some(d) => format!("? {}\n{d} › ", setting.name),
            None => format!("? {} › ", setting.name),
        };
        let answer = crate::prompt::ask(&message, setting.sensitive).map_err(|e| e.to_string())?;
        if !answer.is_empty() {
            values.insert(setting.env_var.clone(), answer);
        }
    }
    let wants_store = ext
        .manifest
        .settings
        .iter()
        .any(|d| d.sensitive && values.contains_key(&d.env_var));
    let store = if wants_store {
        Some(gd_core::extensions::secret_store(home, workspace)?)
    } else {
        None
    };
    let id = ext.id();
    gd_extensions::settings::save_install_values(
        &gd_extensions::settings::Owner::of(ext, &id),
        &values,
        store.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    Ok(values.into_keys().collect())
}

/// 0.61's warning after an install that left settings without a value
/// (not asked: `--skip-settings` or no terminal; or answered empty).
/// `answered` are the settings just given; plain values already in the
/// extension's `.env` count as set.
fn warn_missing_settings(workspace: &Path, ext: &gd_extensions::Extension, answered: &[String]) {
    let plain = ext.setting_values(None, Some(workspace));
    let missing: Vec<&str> = ext
        .manifest
        .settings
        .iter()
        .filter(|d| !answered.contains(&d.env_var) && !plain.contains_key(&d.env_var))
        .map(|d| d.name.as_str())
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "Extension \"{name}\" has missing settings: {}. Please run \"gemini-desktop-cli extensions config {name} [setting-name]\" to configure them.",
            missing.join(", "),
            name = ext.name(),
        );
    }
}
