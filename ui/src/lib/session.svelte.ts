// The running session as the UI knows it: which one (or why there is none), its model and
// approval mode, and whether a turn runs. Every op for the session goes through `submit`, so
// the other stores never hold a session id of their own and never talk to an old session.
import * as api from "../api";
import type { ApprovalMode } from "../protocol/ApprovalMode";
import type { ModelChoice } from "../protocol/ModelChoice";
import type { Op } from "../protocol/Op";
import type { SandboxState } from "../protocol/SandboxState";
import type { SessionInfo } from "../protocol/SessionInfo";

export type ConnectionState = "connecting" | "connected" | "busy" | "disconnected";

/** An op was given while no session runs (it was not sent). */
export class NoSessionError extends Error {
  constructor() {
    super("No session is running");
  }
}

export class SessionStore {
  /** The session; null while starting, after a failed start, or after sign-out. */
  info = $state.raw<SessionInfo | null>(null);
  connecting = $state(true);
  /** Why there is no session (start_session failed), shown in the composer and on Send. */
  disconnectedReason = $state<string | null>(null);
  model = $state("");
  models = $state.raw<ModelChoice[]>([]);
  approvalMode = $state<ApprovalMode>("default");
  /**
   * Whether the session's commands run in the sandbox (`turn_context`): the approval switch
   * says it next to YOLO, the chat says when it cannot start. Null until core said.
   */
  sandbox = $state.raw<SandboxState | null>(null);
  /** A turn (or a `/compress`) is running: from Send until it is answered. */
  busy = $state(false);

  /**
   * Bumped whenever the session is replaced or dropped: a late answer or event that carries an
   * older generation belongs to a session that is gone and is ignored.
   */
  private generation = 0;

  get id(): string | null {
    return this.info?.session_id ?? null;
  }

  get connection(): ConnectionState {
    if (this.info) return this.busy ? "busy" : "connected";
    return this.connecting ? "connecting" : "disconnected";
  }

  get canSend(): boolean {
    return this.info !== null && !this.busy;
  }

  /** Why Send is disabled (its tooltip), or "" when it is enabled. */
  get sendBlockedReason(): string {
    if (this.info) return this.busy ? "Wait for the current turn to finish, or stop it (Esc)" : "";
    if (this.connecting) return "Agent not connected yet: starting…";
    return `Agent not connected: ${this.disconnectedReason ?? "unknown reason"}`;
  }

  /** Forgets the session (its later events are ignored); returns it. */
  drop(): SessionInfo | null {
    const old = this.info;
    this.generation++;
    this.info = null;
    return old;
  }

  /** A new session is being started: returns its generation (see `isCurrent`). */
  starting(): number {
    this.generation++;
    this.info = null;
    this.busy = false;
    this.connecting = true;
    this.disconnectedReason = null;
    this.models = [];
    this.sandbox = null;
    return this.generation;
  }

  /** Whether `generation` is still the session shown (nothing replaced it since). */
  isCurrent(generation: number): boolean {
    return generation === this.generation;
  }

  /** The session of `generation` started. */
  started(info: SessionInfo): void {
    this.info = info;
    this.connecting = false;
    this.model = info.model;
    this.approvalMode = info.approval_mode;
  }

  /** There is no session, for `reason` (start failed, signed out). */
  disconnected(reason: string): void {
    this.connecting = false;
    this.disconnectedReason = reason;
  }

  /**
   * The session's approval mode, model and sandbox now (`turn_context`: once after it is
   * configured, and after every change); they count from the next tool call and model request.
   * (`sandbox` is optional here: a core from before the sandbox does not send it.)
   */
  turnContext(context: { approval_mode: ApprovalMode; model: string; sandbox?: SandboxState }): void {
    this.approvalMode = context.approval_mode;
    this.model = context.model;
    this.sandbox = context.sandbox ?? null;
  }

  /** Sends `op` to the current session (rejects with `NoSessionError` without one). */
  submit(op: Op): Promise<void> {
    const id = this.id;
    if (!id) return Promise.reject(new NoSessionError());
    return api.submit(id, op);
  }
}
