// Pending tool confirmations, answered in the order they arrived. This queue is the only record
// of which calls wait for the user: the dock shows its first entry, and a tool card shows
// "Awaiting approval" while its call is in here (core's `tool_call_state` says the rest).
import * as api from "../api";
import type { ConfirmationDetails } from "../protocol/ConfirmationDetails";
import type { ConfirmationOutcome } from "../protocol/ConfirmationOutcome";
import type { SessionStore } from "./session.svelte";

export class Confirmation {
  /** Edit confirmations: the right pane is an editor holding `edited`. */
  editing = $state(false);
  edited = $state("");
  /** An answer is on its way to the core. */
  answering = $state(false);
  constructor(
    readonly callId: string,
    readonly name: string,
    readonly details: ConfirmationDetails,
  ) {}

  startEditing(): void {
    if (this.details.type !== "edit") return;
    this.edited = this.details.proposed;
    this.editing = true;
  }

  stopEditing(): void {
    this.editing = false;
    this.edited = "";
  }
}

/** What a confirmation card answers through: its conversation's session, queue and folder. */
export interface ConfirmationContext {
  readonly session: SessionStore;
  readonly confirmations: ConfirmationQueue;
  readonly workspace: string | null;
  /** The previews of "always allow and save" (absent: it saves without one). */
  readonly policies?: import("./policies.svelte").PolicyStore;
}

export class ConfirmationQueue {
  items = $state.raw<Confirmation[]>([]);

  constructor(
    private readonly session: SessionStore,
    /** Says in the conversation that an answer could not be sent. */
    private readonly failed: (text: string) => void,
  ) {}

  get current(): Confirmation | null {
    return this.items[0] ?? null;
  }

  /** Whether call `callId` waits for the user's answer. */
  has(callId: string): boolean {
    return this.items.some((c) => c.callId === callId);
  }

  add(callId: string, name: string, details: ConfirmationDetails): void {
    if (this.items.some((c) => c.callId === callId)) return;
    this.items = [...this.items, new Confirmation(callId, name, details)];
  }

  remove(callId: string): void {
    if (this.items.some((c) => c.callId === callId)) {
      this.items = this.items.filter((c) => c.callId !== callId);
    }
  }

  clear(): void {
    if (this.items.length > 0) this.items = [];
  }

  /** Answers a confirmation (the current one unless given); it leaves the queue once sent. */
  async answer(outcome: ConfirmationOutcome, confirmation = this.current): Promise<void> {
    if (!this.session.info || !confirmation || confirmation.answering) return;
    let content: string | null = null;
    if (outcome === "proceed_once" && confirmation.editing) outcome = "modify_with_editor";
    if (outcome === "modify_with_editor") content = confirmation.edited;
    confirmation.answering = true;
    try {
      await this.session.submit({ type: "confirm_tool", call_id: confirmation.callId, outcome, content });
      this.remove(confirmation.callId);
    } catch (error) {
      confirmation.answering = false;
      this.failed(`Could not answer the confirmation: ${api.errorMessage(error)}`);
    }
  }

  approve(c?: Confirmation): Promise<void> {
    return this.answer("proceed_once", c ?? this.current);
  }

  reject(c?: Confirmation): Promise<void> {
    return this.answer("cancel", c ?? this.current);
  }
}

/** A short one-line summary of a confirmation (for the queue list). */
export function summarize(details: ConfirmationDetails): string {
  switch (details.type) {
    case "edit":
      return `${details.is_new_file ? "Create" : "Edit"} ${details.file_name}`;
    case "execute":
      return `Run ${details.command}`;
    case "mcp":
      return `${details.server_name}: ${details.tool_display_name || details.tool_name}`;
    case "info":
      return details.title || "Fetch";
  }
}
