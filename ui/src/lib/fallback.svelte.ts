// The quota-fallback prompt of one conversation: core's `fallback_requested` (the model ran out
// of quota and another could take over) waits here for the user's answer, sent back as
// `answer_fallback`. Core never switches models without it.
import type { Event } from "../protocol/Event";
import type { FallbackChoice } from "../protocol/FallbackChoice";
import type { SessionStore } from "./session.svelte";

export type FallbackRequest = Extract<Event, { type: "fallback_requested" }>;

export class FallbackStore {
  /** The prompt waiting for an answer, if any. */
  request = $state<FallbackRequest | null>(null);
  /** An answer is on its way (the buttons are disabled meanwhile). */
  answering = $state(false);

  constructor(
    private readonly session: SessionStore,
    private readonly notice: (text: string) => void,
  ) {}

  show(event: FallbackRequest): void {
    this.request = event;
    this.answering = false;
  }

  /** The turn ended (answered, cancelled or failed): nothing waits any more. */
  clear(): void {
    this.request = null;
    this.answering = false;
  }

  async answer(choice: FallbackChoice): Promise<void> {
    if (!this.request || this.answering) return;
    this.answering = true;
    try {
      await this.session.submit({ type: "answer_fallback", choice });
      this.request = null;
    } catch (error) {
      this.notice(`Could not answer the model prompt: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.answering = false;
    }
  }
}
