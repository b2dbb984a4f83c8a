//! The UI's typed IPC client, generated from the command table (`command_list.rs`), and the
//! checks that keep the table honest.
//!
//! `cargo test -p gemini-desktop` writes `ui/src/protocol/commands.ts` (next to the ts-rs types,
//! so scripts/test.sh's drift check covers it): one function per command, in camelCase, taking
//! one object keyed by the camelCase argument names (`Option` arguments are optional keys) and
//! calling `invoke("<snake_name>", args)`. Argument and result types are the ts-rs names of the
//! Rust types, whose files are exported at the same time. The other tests fail when the
//! capability does not grant exactly the table's commands (through build.rs's generated
//! `app-commands` set), or when a table
//! entry does not match its function's signature, so the table cannot drift from the code.

use std::collections::{BTreeMap, BTreeSet};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use ts_rs::{Config, Dependency, TS, TypeVisitor};

/// The TypeScript side of one argument or result type.
struct TsType {
    /// As written in TypeScript, e.g. `Array<SessionSummary>`.
    ts: String,
    /// An `Option` argument: its key may be omitted.
    optional: bool,
    /// A `tauri::ipc::Channel` argument (`Channel` from `@tauri-apps/api/core`).
    channel: bool,
    /// The exportable types it may name, for the imports.
    deps: Vec<Dependency>,
    /// Writes those types' files (with their own dependencies).
    export: fn(&Config),
}

/// Zero-sized stand-in for a type, for the method-resolution dispatch below ("autoref
/// specialisation"): `(&&&Probe::<T>::new()).ts_type(cfg)` picks the `Channel<_>` impl, else the
/// `Option<_>` impl, else the plain `TS` impl, without overlapping impls.
struct Probe<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> Probe<T> {
    fn new() -> Self {
        Self(PhantomData)
    }
}

trait ChannelArg {
    fn ts_type(&self, cfg: &Config) -> TsType;
}
trait OptionArg {
    fn ts_type(&self, cfg: &Config) -> TsType;
}
trait PlainArg {
    fn ts_type(&self, cfg: &Config) -> TsType;
}

impl<T: TS + 'static> ChannelArg for &&Probe<tauri::ipc::Channel<T>> {
    fn ts_type(&self, cfg: &Config) -> TsType {
        TsType {
            ts: format!("Channel<{}>", T::name(cfg)),
            channel: true,
            ..plain::<T>(cfg)
        }
    }
}

impl<T: TS + 'static> OptionArg for &Probe<Option<T>> {
    fn ts_type(&self, cfg: &Config) -> TsType {
        TsType {
            optional: true,
            ..plain::<Option<T>>(cfg)
        }
    }
}

impl<T: TS + 'static> PlainArg for Probe<T> {
    fn ts_type(&self, cfg: &Config) -> TsType {
        plain::<T>(cfg)
    }
}

fn plain<T: TS + 'static>(cfg: &Config) -> TsType {
    TsType {
        ts: T::name(cfg),
        optional: false,
        channel: false,
        deps: named::<T>(cfg, false),
        export: |cfg| {
            named::<T>(cfg, true);
        },
    }
}

/// The exportable types `T` names: itself, or the ones inside a wrapper (`Vec`, `Option`,
/// maps...), recursively; with `export`, also writes their files (with their dependencies).
fn named<T: TS + 'static>(cfg: &Config, export: bool) -> Vec<Dependency> {
    struct Named<'a> {
        cfg: &'a Config,
        export: bool,
        found: Vec<Dependency>,
    }
    impl TypeVisitor for Named<'_> {
        fn visit<U: TS + 'static + ?Sized>(&mut self) {
            match Dependency::from_ty::<U>(self.cfg) {
                Some(dep) => {
                    if self.export {
                        U::export_all(self.cfg).unwrap_or_else(|e| panic!("exporting a type: {e}"));
                    }
                    self.found.push(dep);
                }
                None => U::visit_generics(self),
            }
        }
    }
    let mut named = Named {
        cfg,
        export,
        found: Vec::new(),
    };
    named.visit::<T>();
    named.found
}

/// One command of the table.
struct Command {
    module: &'static str,
    name: &'static str,
    /// `(snake_case name, Rust type as written, TS type)`.
    args: Vec<(&'static str, &'static str, TsType)>,
    /// The `Ok` type as written (`None`: nothing).
    ret: Option<(&'static str, TsType)>,
}

/// The command table, with each type's TypeScript side.
fn table(cfg: &Config) -> Vec<Command> {
    // The names the table's types are written with.
    #[allow(unused_imports)]
    use {
        crate::attention::AttentionRequest,
        crate::commands::AppInfo,
        crate::history::GeminiCliSessionInfo,
        crate::picker::PickerInfo,
        crate::updates::{UpdateCheck, UpdateDone, UpdateStatus},
        gd_auth::api_key::ApiKeyCheck,
        gd_auth::code_assist::CodeAssistSetup,
        gd_auth::{
            AuthMethod, AuthStatus, CloudProject, LoginOutcome, LoginStage, SignOutReport,
            VertexInput,
        },
        gd_protocol::*,
        gd_store::{ListCursor, Page, PageFrom, SearchHit, SessionSummary, StoredMessage},
        gd_workspace_index::{Entry, IndexEvent, SearchUpdate, SelectionEstimate},
        gd_worktree::{DiscardPlan, MergeOutcome, MergePlan, Repo, Worktree, WorktreeDiff},
        std::collections::BTreeMap,
        tauri::ipc::Channel,
    };

    macro_rules! app_commands {
        ($($module:ident :: $name:ident ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)?;)*) => {
            vec![$(Command {
                module: stringify!($module),
                name: stringify!($name),
                args: vec![$((
                    stringify!($arg),
                    stringify!($ty),
                    (&&&Probe::<$ty>::new()).ts_type(cfg),
                )),*],
                ret: None$(.or(Some((stringify!($ret), Probe::<$ret>::new().ts_type(cfg)))))?,
            }),*]
        };
    }
    include!("command_list.rs")
}

fn camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `ident` occurs in `ts` as a whole identifier.
fn names(ts: &str, ident: &str) -> bool {
    ts.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .any(|word| word == ident)
}

/// A module's source: `src/<module>.rs`, or a folder's `src/<module>/mod.rs`.
fn module_file(module: &str) -> PathBuf {
    let src = manifest_dir().join("src");
    [
        src.join(format!("{module}.rs")),
        src.join(module).join("mod.rs"),
    ]
    .into_iter()
    .find(|file| file.is_file())
    .unwrap_or_else(|| panic!("no source file for module `{module}`"))
}

/// The text of `commands.ts`.
fn render(commands: &[Command]) -> String {
    // TS name -> import path (relative to ui/src/protocol, without extension).
    let mut imports = BTreeMap::new();
    let mut channel = false;
    let mut body = String::new();
    for command in commands {
        let types = command
            .args
            .iter()
            .map(|(_, _, ts)| ts)
            .chain(command.ret.iter().map(|(_, ts)| ts));
        for ts in types {
            channel |= ts.channel;
            for dep in &ts.deps {
                if names(&ts.ts, &dep.ts_name) {
                    let path = dep.output_path.with_extension("");
                    imports.insert(
                        dep.ts_name.clone(),
                        path.to_string_lossy().replace('\\', "/"),
                    );
                }
            }
        }
        let ret = command
            .ret
            .as_ref()
            .map_or("void", |(_, ts)| ts.ts.as_str());
        let file = module_file(command.module);
        let file = file.strip_prefix(manifest_dir()).unwrap_or(&file);
        body.push_str(&format!(
            "  /** `{}` (src-tauri/{}). */\n",
            command.name,
            file.display()
        ));
        if command.args.is_empty() {
            body.push_str(&format!(
                "  {}(): Promise<{ret}> {{\n    return invoke(\"{}\");\n  }},\n",
                camel(command.name),
                command.name
            ));
        } else {
            let fields: Vec<String> = command
                .args
                .iter()
                .map(|(name, _, ts)| {
                    let optional = if ts.optional { "?" } else { "" };
                    format!("{}{optional}: {}", camel(name), ts.ts)
                })
                .collect();
            // A command whose arguments may all be omitted can be called without them.
            let default = if command.args.iter().all(|(_, _, ts)| ts.optional) {
                " = {}"
            } else {
                ""
            };
            body.push_str(&format!(
                "  {}(args: {{ {} }}{default}): Promise<{ret}> {{\n    return invoke(\"{}\", args);\n  }},\n",
                camel(command.name),
                fields.join("; "),
                command.name
            ));
        }
    }
    let mut out = String::from(
        "// Generated from src-tauri/src/command_list.rs by `cargo test -p gemini-desktop` \
         (src-tauri/src/command_client.rs). Do not edit this file manually.\n",
    );
    if channel {
        out.push_str("import { invoke, type Channel } from \"@tauri-apps/api/core\";\n");
    } else {
        out.push_str("import { invoke } from \"@tauri-apps/api/core\";\n");
    }
    for (name, path) in &imports {
        out.push_str(&format!("import type {{ {name} }} from \"./{path}\";\n"));
    }
    out.push_str(
        "\n/**\n * Every IPC command of the app, typed. A session is driven by `submit` (any `Op`; the \
         answers\n * arrive as `Event`s on the channel given to `startSession`); the others are \
         app-level.\n * Rejections carry a `CommandError` (`AuthErrorReport` for the `auth*` \
         commands).\n */\nexport const commands = {\n",
    );
    out.push_str(&body);
    out.push_str("};\n");
    out
}

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Where ts-rs writes the UI's types (`TS_RS_EXPORT_DIR`, set by .cargo/config.toml).
fn export_dir() -> PathBuf {
    manifest_dir()
        .join("..")
        .join("ui")
        .join("src")
        .join("protocol")
}

#[test]
fn the_ui_client_is_generated_from_the_table() {
    let cfg = Config::from_env().with_out_dir(export_dir());
    let commands = table(&cfg);
    for command in &commands {
        for (_, _, ts) in &command.args {
            (ts.export)(&cfg);
        }
        if let Some((_, ts)) = &command.ret {
            (ts.export)(&cfg);
        }
    }
    let text = render(&commands);
    let path = export_dir().join("commands.ts");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&path, text).expect("write ui/src/protocol/commands.ts");
    }
}

/// The capability grants the app's commands only through the generated `app-commands` set (no
/// command by name), and that set, written by build.rs, is exactly the table.
#[test]
fn the_capability_grants_exactly_the_table() {
    let commands = table(&Config::default());
    let wanted: BTreeSet<String> = commands
        .iter()
        .map(|c| format!("allow-{}", c.name.replace('_', "-")))
        .collect();
    assert_eq!(wanted.len(), commands.len(), "a command is listed twice");

    let path = manifest_dir().join("capabilities").join("default.json");
    let capability: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let granted: Vec<&str> = capability["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    assert!(granted.contains(&"app-commands"), "{granted:?}");
    let by_name: Vec<_> = granted.iter().filter(|p| p.starts_with("allow-")).collect();
    assert!(
        by_name.is_empty(),
        "capabilities/default.json grants commands by name ({by_name:?}): add them to \
         src/command_list.rs instead"
    );

    let set = std::fs::read_to_string(manifest_dir().join("permissions/app-commands.toml"))
        .expect("build.rs writes permissions/app-commands.toml");
    let listed: BTreeSet<String> = set
        .lines()
        .filter_map(|line| line.trim().strip_prefix('"'))
        .filter_map(|line| line.strip_suffix("\","))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        listed, wanted,
        "permissions/app-commands.toml is not the table"
    );
}

/// `ts` with whitespace removed and paths cut to their last segment (`std::path::X` -> `X`).
fn normalise_type(ts: &str) -> String {
    let compact: String = ts.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out = String::new();
    let mut word = String::new();
    let mut chars = compact.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            word.clear();
        } else if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            out.push_str(&word);
            word.clear();
            out.push(c);
        }
    }
    out + &word
}

/// Arguments the command macro injects rather than reads from the UI's payload.
fn injected(ty: &str) -> bool {
    ["State<", "AppHandle", "WebviewWindow", "Window<", "Window"]
        .iter()
        .any(|prefix| ty.starts_with(prefix))
}

/// A function's arguments the UI sends, `(name, type)`, and its `Ok` type (`None`: nothing).
type Signature = (Vec<(String, String)>, Option<String>);

/// The signature of `fn name` in `source`, types normalised by [`normalise_type`].
fn signature(source: &str, name: &str) -> Option<Signature> {
    let start = [format!("pub fn {name}"), format!("pub async fn {name}")]
        .iter()
        .filter_map(|head| {
            source.match_indices(head.as_str()).find_map(|(at, _)| {
                let next = source[at + head.len()..].chars().next()?;
                (next == '(' || next == '<').then_some(at + head.len())
            })
        })
        .min()?;
    let rest = &source[start..];
    let open = rest.find('(')?;
    // The closing parenthesis of the argument list.
    let mut depth = 0;
    let mut close = None;
    for (i, c) in rest[open..].char_indices() {
        match c {
            '(' | '<' => depth += 1,
            ')' | '>' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    let mut args = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in rest[open + 1..close].chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            args.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    args.push(current);
    let args = args
        .iter()
        .filter_map(|arg| {
            let (name, ty) = arg.split_once(':')?;
            let ty = normalise_type(ty);
            (!injected(&ty)).then(|| (name.trim().to_owned(), ty))
        })
        .collect();
    let tail = &rest[close + 1..];
    let tail = &tail[..tail.find('{')?];
    let ret = tail.trim().strip_prefix("->").map(|ret| {
        let ret = normalise_type(ret);
        match ret.strip_prefix("Result<") {
            // `Result<T, E>`: the `Ok` type, up to the top-level comma.
            Some(inner) => {
                let mut depth = 0;
                let end = inner
                    .char_indices()
                    .find(|&(_, c)| {
                        match c {
                            '<' => depth += 1,
                            '>' => depth -= 1,
                            _ => {}
                        }
                        c == ',' && depth == 0
                    })
                    .map_or(inner.len(), |(i, _)| i);
                inner[..end].to_owned()
            }
            None => ret,
        }
    });
    let ret = ret.filter(|ret| ret != "()");
    Some((args, ret))
}

#[test]
fn every_entry_matches_its_function() {
    let mut problems = Vec::new();
    for command in table(&Config::default()) {
        let file = module_file(command.module);
        let source = std::fs::read_to_string(&file).unwrap();
        let Some((args, ret)) = signature(&source, command.name) else {
            problems.push(format!(
                "no `pub fn {}` in {}",
                command.name,
                file.display()
            ));
            continue;
        };
        let listed: Vec<(String, String)> = command
            .args
            .iter()
            .map(|(name, ty, _)| ((*name).to_owned(), normalise_type(ty)))
            .collect();
        if args != listed {
            problems.push(format!(
                "{}: the function takes {args:?}, the table lists {listed:?}",
                command.name
            ));
        }
        let listed_ret = command.ret.as_ref().map(|(ty, _)| normalise_type(ty));
        if ret != listed_ret {
            problems.push(format!(
                "{}: the function returns {ret:?}, the table lists {listed_ret:?}",
                command.name
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_signature_reader_sees_through_generics_and_results() {
    let source = "pub async fn x<R: Runtime>(app: AppHandle<R>, state: State<'_, AppState>, \
                  a: Option<String>, b: std::collections::BTreeMap<String, u32>) -> \
                  Result<Vec<Y>, E> {}";
    let (args, ret) = signature(source, "x").unwrap();
    assert_eq!(
        args,
        vec![
            ("a".to_owned(), "Option<String>".to_owned()),
            ("b".to_owned(), "BTreeMap<String,u32>".to_owned())
        ]
    );
    assert_eq!(ret.as_deref(), Some("Vec<Y>"));
    let (args, ret) = signature("pub fn y(state: State<'_, S>) {}", "y").unwrap();
    assert!(args.is_empty());
    assert_eq!(ret, None);
    assert_eq!(
        camel("history_gemini_cli_sessions"),
        "historyGeminiCliSessions"
    );
}
