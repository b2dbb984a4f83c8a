// The UI's side of the IPC: the typed client generated from the backend's one command table
// (`protocol/commands.ts`, from src-tauri/src/command_list.rs) plus what it cannot generate:
// Channels made from callbacks, the session's op submission, the plugins' commands (opener,
// events) and turning rejections into readable text. Nothing here names a command by hand
// except the plugins'; adding a backend command needs no edit in this file.
import { Channel, invoke, isTauri } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type { AppInfo } from "./protocol/AppInfo";
import type { AuthErrorReport } from "./protocol/AuthErrorReport";
import type { CommandError } from "./protocol/CommandError";
import { commands } from "./protocol/commands";
import type { Event } from "./protocol/Event";
import type { LoginStage } from "./protocol/LoginStage";
import type { Op } from "./protocol/Op";
import type { SessionInfo } from "./protocol/SessionInfo";

export { commands };

/** True when the page runs inside the Tauri webview (as opposed to a plain browser). */
export function inTauri(): boolean {
  return isTauri();
}

/**
 * The `AppInfo` the app hands the page before its scripts run (`window.__GD_BOOT__`, see
 * src-tauri/src/boot.rs), so that the first screen needs no IPC round trip; null without it.
 */
export function bootInfo(): AppInfo | null {
  const info = (window as { __GD_BOOT__?: unknown }).__GD_BOOT__;
  if (typeof info !== "object" || info === null) return null;
  const { version, commit, workspace } = info as Partial<AppInfo>;
  if (typeof version !== "string" || !(typeof workspace === "string" || workspace === null)) return null;
  return { version, commit: typeof commit === "string" ? commit : "unknown", workspace };
}

/** A Channel delivering each message to `handler`. */
export function channel<T>(handler: (message: T) => void): Channel<T> {
  const channel = new Channel<T>();
  channel.onmessage = handler;
  return channel;
}

/**
 * Starts a session on `workspace` (the window's folder by default); `onEvent` receives its events in order. With `resume` (a
 * stored session's id) the session continues that one: the model sees its history.
 */
export function startSession(onEvent: (event: Event) => void, model?: string, resume?: string, workspace?: string): Promise<SessionInfo> {
  return commands.startSession({ onEvent: channel(onEvent), model: model ?? null, resume: resume ?? null, workspace: workspace ?? null });
}

/** Sends one op to a running session; its answer (if any) arrives as events on the session's channel. */
export function submit(sessionId: string, op: Op): Promise<void> {
  return commands.submit({ sessionId, op });
}

/**
 * Starts "Sign in with Google": the backend opens the browser and resolves with the
 * authorization URL; the stages arrive on `onStage`. Then `authWaitGoogleLogin` resolves with
 * the outcome (or rejects with what to do).
 */
export function authStartGoogleLogin(onStage: (stage: LoginStage) => void): Promise<string> {
  return commands.authStartGoogleLogin({ onProgress: channel(onStage) });
}

/**
 * Calls `handler` with the new workspace path whenever the backend switches folders on its own
 * (a second launch of the app naming a folder; event `workspace-changed`, payload
 * `{ workspace }`, see `src-tauri/src/single_instance.rs`).
 */
export async function onWorkspaceChanged(handler: (workspace: string) => void): Promise<void> {
  await listen<{ workspace: string }>("workspace-changed", (event) => handler(event.payload.workspace));
}

/**
 * Calls `handler` with a session's id when a conversation window closed and hands its running
 * session back to the main window (event `conversation-returned`, see `src-tauri/src/windows.rs`).
 */
export async function onConversationReturned(handler: (sessionId: string) => void): Promise<void> {
  await listen<{ sessionId: string }>("conversation-returned", (event) => handler(event.payload.sessionId));
}

/** Takes a running session over: its events come to `onEvent` from now on (windows.rs). */
export function attachSession(onEvent: (event: Event) => void, sessionId: string): Promise<SessionInfo> {
  return commands.attachSession({ sessionId, onEvent: channel(onEvent) });
}

/**
 * Calls `handler` with a conversation's key when the user clicked the desktop notification about
 * it (event `attention-open`, payload `{ conversation }`, see `src-tauri/src/attention.rs`).
 */
export async function onAttentionOpen(handler: (conversation: number) => void): Promise<void> {
  await listen<{ conversation: number }>("attention-open", (event) => handler(event.payload.conversation));
}

/**
 * Opens `url` in the system browser (the opener plugin's `open_url` command). The UI never
 * navigates its own webview to a link.
 */
export function openExternal(url: string): Promise<void> {
  return invoke("plugin:opener|open_url", { url });
}

/** A sign-in command's rejection as a report (anything else becomes kind `protocol`). */
export function authError(error: unknown): AuthErrorReport {
  if (error && typeof error === "object" && "kind" in error && "message" in error) {
    const e = error as AuthErrorReport;
    return { kind: e.kind, message: String(e.message), url: e.url ?? null, cause: e.cause ?? null, detail: e.detail ?? null };
  }
  return { kind: "protocol", message: errorMessage(error), url: null, cause: null, detail: null };
}

/** A command's rejection as a readable message. */
export function errorMessage(error: unknown): string {
  if (error && typeof error === "object" && "message" in error) {
    return String((error as CommandError).message);
  }
  return String(error);
}
