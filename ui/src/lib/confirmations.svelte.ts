// Pending tool confirmations, answered in the order they arrived.
import type { ConfirmationDetails } from "../protocol/ConfirmationDetails";

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

export class ConfirmationQueue {
  items = $state.raw<Confirmation[]>([]);

  get current(): Confirmation | null {
    return this.items[0] ?? null;
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
