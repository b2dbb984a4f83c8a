// The notices a turn leaves in the conversation, worded once: the live chat (chat.svelte.ts) adds
// them as the events come, and a reopened conversation (transcript.ts) rebuilds them from the
// turn's stored end (core's `TurnEndRecord`: its status and the events that left a notice), so
// both read the same.
import type { Event } from "../protocol/Event";
import type { TurnNotice } from "../protocol/TurnNotice";
import type { TurnStatus } from "../protocol/TurnStatus";

export type NoticeLevel = "error" | "warning" | "info";

export interface NoticeText {
  level: NoticeLevel;
  text: string;
}

/** The notice an event of a turn shows, if it shows one. */
export function eventNotice(event: Event): NoticeText | null {
  switch (event.type) {
    case "loop_detected":
      return { level: "warning", text: `Loop detected, the turn was stopped: ${event.detail}` };
    case "warning":
      return { level: "warning", text: event.message };
    case "error":
      return { level: "error", text: `${event.message}${event.status !== null ? ` (HTTP ${event.status})` : ""}` };
    case "finished":
      return event.message ? { level: "warning", text: event.message } : null;
    case "retrying":
      return {
        level: "info",
        text:
          `Retrying (attempt ${event.attempt} of ${event.max_attempts}) in ` +
          `${Math.max(1, Math.round(event.delay_ms / 1000))} s: ${event.reason}`,
      };
    default:
      return null;
  }
}

/** A failed turn's error notice, once the turn is over. */
export function failedText(error: string | null): string {
  return error === null ? "The turn failed." : `The turn failed: ${error}`;
}

/**
 * The notice the end of a turn adds (a failed turn's is its error notice, reworded with
 * `failedText`); `loopReported`: a `loop_detected` event already said why it stopped.
 */
export function statusNotice(status: TurnStatus, loopReported: boolean): NoticeText | null {
  switch (status) {
    case "cancelled":
      return { level: "info", text: "Cancelled." };
    case "declined":
      return { level: "info", text: "You declined; tell the agent what to do instead." };
    case "failed":
      return { level: "error", text: failedText(null) };
    case "turn_limit_reached":
      return { level: "warning", text: "Stopped: the turn reached its limit of model requests. Send a message to continue." };
    case "loop_detected":
      return loopReported ? null : { level: "warning", text: "Loop detected, the turn was stopped." };
    case "completed":
      return null;
  }
}

/** A stored notice: its words, whether a Retry belongs to it, and the message it showed after. */
export interface StoredNotice extends NoticeText {
  failed: boolean;
  /** Shown after the recorded message of this `seq` (null: at the turn's end). */
  afterSeq: number | null;
}

/** A stored turn's notices, as the live chat showed them; the status notice (if any) last. */
export function turnEndNotices(status: TurnStatus, notices: TurnNotice[]): StoredNotice[] {
  const out: (StoredNotice & { error: boolean })[] = notices.flatMap((n) => {
    const shown = eventNotice(n.event);
    return shown ? [{ ...shown, failed: false, error: n.event.type === "error", afterSeq: n.after_seq ?? null }] : [];
  });
  const plain = () => out.map(({ level, text, failed, afterSeq }) => ({ level, text, failed, afterSeq }));
  if (status === "failed") {
    // As live: the turn's last error notice says the turn failed, else a notice of its own.
    const error = out.filter((n) => n.error).pop();
    if (error) {
      error.text = failedText(error.text);
      error.failed = true;
      return plain();
    }
  }
  const end = statusNotice(status, notices.some((n) => n.event.type === "loop_detected"));
  if (end) out.push({ ...end, failed: status === "failed", error: false, afterSeq: null });
  return plain();
}
