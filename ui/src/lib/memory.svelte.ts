// The context files in the system instruction (GEMINI.md and its imports) and the memory view.
// The session reports them with `memory_loaded` (at start and after every refresh or addition),
// so this store only keeps the last report and sends the two memory ops.
import * as api from "../api";
import type { Event } from "../protocol/Event";
import type { MemoryFileNode } from "../protocol/MemoryFileNode";
import type { SessionStore } from "./session.svelte";

export class MemoryStore {
  /** The last `memory_loaded`; null until the session reported it. */
  loaded = $state.raw<{ files: MemoryFileNode[]; chars: number } | null>(null);
  /** The memory view is open (`/memory` or `/memory show`). */
  open = $state(false);

  constructor(
    private readonly session: SessionStore,
    /** Says what happened in the conversation (a failure, "Remembered: …"). */
    private readonly notice: (level: "error" | "info", text: string) => void,
  ) {}

  clear(): void {
    this.loaded = null;
  }

  handle(event: Extract<Event, { type: "memory_loaded" }>): void {
    this.loaded = { files: event.files, chars: event.chars };
  }

  /** Reads the context files again (the view updates on `memory_loaded`). */
  async refresh(): Promise<boolean> {
    if (!this.session.info) return false;
    try {
      await this.session.submit({ type: "refresh_memory" });
      return true;
    } catch (error) {
      this.notice("error", `Could not refresh the memory: ${api.errorMessage(error)}`);
      return false;
    }
  }

  /** Saves a fact to ~/.gemini/GEMINI.md; the memory is refreshed after it. */
  async add(text: string): Promise<boolean> {
    if (!this.session.info) return false;
    try {
      await this.session.submit({ type: "add_memory", text });
      this.notice("info", `Remembered: ${text}`);
      return true;
    } catch (error) {
      this.notice("error", `Could not add the memory: ${api.errorMessage(error)}`);
      return false;
    }
  }
}
