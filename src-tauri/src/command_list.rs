// The app's IPC commands, declared once: `module::command(argument: Type, ...) -> Ok type;`.
//
// This file is not a module: it is one `app_commands!` invocation that is `include!`d where the
// list is needed, each place defining `app_commands!` for its own job:
// - src/lib.rs turns it into `tauri::generate_handler![...]`;
// - build.rs turns it into tauri-build's command list (an `allow-<command>` permission each;
//   the IPC layer rejects a command no capability grants) and into the `app-commands`
//   permission set that capabilities/default.json grants;
// - src/command_client.rs (tests) writes the UI's typed client ui/src/protocol/commands.ts and
//   checks that the capability grants exactly these commands and that each entry matches its
//   function's signature.
// Adding a command: write the `#[tauri::command]` function, add its line here, run
// `cargo test -p gemini-desktop`. Nothing else lists it.
//
// Arguments are the ones the UI sends (not the injected `State`, `AppHandle`, `WebviewWindow`),
// named in snake_case as in Rust (the UI sends camelCase); an `Option` argument may be omitted.
// The return type is the `Ok` type (the error is the module's `CommandError` or, for `signin`,
// `AuthErrorReport`); no return type means nothing is returned.
app_commands! {
    commands::app_info() -> AppInfo;
    // The About view: version, commit and signed updates.
    updates::update_status() -> UpdateStatus;
    updates::update_check() -> UpdateCheck;
    updates::update_install() -> UpdateDone;
    updates::app_restart();
    first_paint::ui_ready();
    commands::open_workspace(path: Option<String>) -> Option<String>;
    // A folder picked in the native dialog (an extension to install).
    commands::choose_folder(title: String) -> Option<String>;
    // Calling the user back when a conversation needs them (notification, urgency hint, badge).
    attention::attention_notify(request: AttentionRequest, pending: u32);
    attention::attention_clear(pending: u32);

    // The agent session: started with a channel for its events, then driven by ops.
    commands::start_session(on_event: Channel<Event>, model: Option<String>, resume: Option<String>, workspace: Option<String>) -> SessionInfo;
    commands::submit(session_id: String, op: Op);
    commands::stop_session(session_id: String);
    // An edit confirmation's diff of the user's own version of a proposal.
    commands::diff_texts(original: Option<String>, proposed: String) -> SideBySideDiff;
    // A conversation in a window of its own, and back (its session keeps running).
    windows::conversation_window(session_id: String, title: String);
    windows::attach_session(session_id: String, on_event: Channel<Event>) -> SessionInfo;
    windows::close_conversation_window();
    // What GTK draws itself (drop-down lists) follows the app's theme.
    windows::set_window_theme(theme: Option<String>);

    // Settings and trust (gd-core's settings screen).
    settings::trust_status() -> TrustInfo;
    settings::trust_folder(level: TrustLevel) -> TrustInfo;
    settings::settings_get() -> SettingsView;
    settings::settings_set(scope: SettingsScope, key: String, value: Option<serde_json::Value>) -> SettingsView;
    settings::settings_add_mcp_server(scope: SettingsScope, server: NewMcpServer) -> SettingsView;

    // Sign-in (gd-auth).
    signin::auth_status() -> AuthStatus;
    signin::auth_validate_api_key(key: String) -> ApiKeyCheck;
    signin::auth_set_api_key(key: String) -> ApiKeyCheck;
    signin::auth_set_vertex(input: VertexInput) -> AuthStatus;
    signin::auth_start_google_login(on_progress: Channel<LoginStage>) -> String;
    signin::auth_wait_google_login() -> LoginOutcome;
    signin::auth_cancel_google_login();
    signin::auth_submit_login_code(code: String);
    signin::auth_list_projects() -> Vec<CloudProject>;
    signin::auth_pick_project(project: Option<String>) -> CodeAssistSetup;
    signin::auth_retry_setup() -> CodeAssistSetup;
    signin::auth_select_method(method: AuthMethod) -> AuthStatus;
    signin::auth_sign_out(method: Option<AuthMethod>) -> SignOutReport;

    // The history browser (gd-store).
    history::history_list(workspace: Option<String>, after: Option<ListCursor>, limit: Option<u32>) -> Vec<SessionSummary>;
    history::history_search(text: String, workspace: Option<String>, limit: Option<u32>, offset: Option<u32>) -> Vec<SearchHit>;
    history::history_page(session_id: String, from: PageFrom, limit: Option<u32>, max_bytes: Option<u32>) -> Page;
    history::history_message(message_id: String) -> Option<StoredMessage>;
    history::history_rename(session_id: String, title: String);
    history::history_delete(session_id: String) -> bool;
    history::history_export(session_id: String, format: String, path: Option<String>) -> String;
    history::history_last_session(workspace: String) -> Option<SessionSummary>;
    history::history_gemini_cli_sessions(workspace: Option<String>) -> Vec<GeminiCliSessionInfo>;
    history::history_import_gemini_cli(file: String, workspace: String) -> String;
    history::history_checkpoints(session_id: String) -> Vec<CheckpointInfo>;

    // The context picker (gd-workspace-index).
    picker::picker_open() -> PickerInfo;
    picker::picker_list_dir(root: usize, path: String, show_ignored: bool) -> Vec<Entry>;
    picker::picker_search(query: String, on_update: Channel<SearchUpdate>);
    picker::picker_estimate(paths: Vec<String>) -> SelectionEstimate;
    picker::picker_watch(on_event: Channel<IndexEvent>);

    // "New conversation in a worktree" (gd-worktree).
    worktrees::worktree_probe(folder: String) -> Option<Repo>;
    worktrees::worktree_create(folder: String, branch: Option<String>, parent: Option<String>) -> Worktree;
    worktrees::worktree_of(folder: String) -> Option<Worktree>;
    worktrees::worktree_diff(path: String) -> WorktreeDiff;
    worktrees::worktree_plan_merge(path: String) -> MergePlan;
    worktrees::worktree_commit_all(path: String, message: String) -> String;
    worktrees::worktree_merge(path: String, plan: MergePlan, keep_worktree: Option<bool>) -> MergeOutcome;
    worktrees::worktree_plan_discard(path: String) -> DiscardPlan;
    worktrees::worktree_discard(path: String, plan: DiscardPlan);

    // The policy editor (gd-core's policy_editor): rules of the user's and a trusted workspace's files.
    policies::policy_save_rule(workspace: String, tier: PolicyTier, path: Option<String>, line: Option<u32>, rule: PolicyRuleFields) -> SavedPolicyRule;
    policies::policy_delete_rule(workspace: String, tier: PolicyTier, path: String, line: u32);
}
