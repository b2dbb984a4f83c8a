// Topics as chapters (Gemini CLI 0.61's `update_topic`): the conversation's chapters, derived
// from its `update_topic` calls, so a live chat and a resumed one (whose calls come back from the
// history with their arguments) show the same chapters. A call starts a chapter when its title
// differs from the current one (0.61's rule); a call without a new title only updates the intent.
import type { Item, ToolItem } from "./chat.svelte";

export const TOPIC_TOOL = "update_topic";

export interface Chapter {
  /** The `update_topic` call's item, where the chapter heading sits. */
  itemId: number;
  title: string;
  summary: string | null;
  intent: string | null;
}

/** 0.61's sanitising: trimmed, line breaks as spaces; empty means absent. */
function clean(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const text = value.trim().replace(/[\r\n]+/g, " ");
  return text === "" ? null : text;
}

/** Whether a topic call counts: it ran or is running (not refused, failed or cancelled). */
function counts(item: ToolItem): boolean {
  return !item.declined && item.status !== "error" && item.status !== "cancelled" && item.state !== "error" && item.state !== "cancelled";
}

/** The chapters of a conversation, in order. */
export function chaptersOf(items: readonly Item[]): Chapter[] {
  const chapters: Chapter[] = [];
  let current: string | null = null;
  for (const item of items) {
    if (item.kind !== "tool" || item.name !== TOPIC_TOOL || !counts(item)) continue;
    const args = (item.args ?? {}) as Record<string, unknown>;
    const title = clean(args.title);
    if (title === null || title === current) continue;
    current = title;
    chapters.push({ itemId: item.id, title, summary: clean(args.summary), intent: clean(args.strategic_intent) });
  }
  return chapters;
}
