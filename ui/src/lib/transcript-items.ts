// Transcript entries (lib/transcript.ts) → the chat's item objects, so the resumed chat and the
// history transcript render stored messages with the live chat's components.
import { type EditDetails, FooterItem, type Item, ModelItem, NoticeItem, ThoughtItem, ToolItem, UserItem } from "./chat.svelte";
import type { DecidedBy } from "../protocol/DecidedBy";
import type { Entry } from "./transcript";
import { sandboxUse } from "./sandbox";
import { recordedRun } from "./subagents.svelte";

export interface TranscriptItems {
  /** In order. */
  items: Item[];
  /** The stored message each item came from (`seq`), parallel to `items`. */
  seqs: number[];
  /** Prompt items by stored message id (a rewind names the prompt). */
  prompts: Map<string, UserItem>;
  /** Tool cards by call id. */
  tools: Map<string, ToolItem>;
}

export function transcriptItems(entries: Entry[], workspace: string | null): TranscriptItems {
  const out: TranscriptItems = { items: [], seqs: [], prompts: new Map(), tools: new Map() };
  for (const entry of entries) {
    let item: Item;
    switch (entry.kind) {
      case "user": {
        const user = new UserItem(entry.text);
        out.prompts.set(entry.messageId, user);
        item = user;
        break;
      }
      case "model": {
        const model = new ModelItem();
        model.text = entry.text;
        model.streaming = false;
        item = model;
        break;
      }
      case "thought":
        item = new ThoughtItem(entry.subject, entry.description);
        break;
      case "tool": {
        const tool = new ToolItem(entry.callId, entry.name, entry.args, workspace, entry.mcp);
        tool.state = entry.state;
        tool.status = entry.state;
        tool.display = entry.display;
        tool.error = entry.error;
        tool.durationMs = entry.durationMs;
        if (entry.output !== null) tool.output = entry.output;
        tool.exitCode = entry.exitCode;
        tool.declined = entry.declined;
        // Stored as the live event carried it: the edit's ConfirmationDetails.
        tool.diff = (entry.diff ?? null) as EditDetails | null;
        tool.decidedBy = (entry.decidedBy ?? null) as DecidedBy | null;
        tool.sandbox = sandboxUse(entry.sandbox);
        // A subagent's run, nested again from its recorded events (collapsed, final status).
        if (entry.subagent) tool.subagent = recordedRun(entry.callId, entry.subagent, workspace);
        out.tools.set(entry.callId, tool);
        item = tool;
        break;
      }
      case "notice": {
        const notice = new NoticeItem(entry.level, entry.text);
        if (entry.retryPrompt) notice.retryPrompt = entry.retryPrompt;
        item = notice;
        break;
      }
      case "footer":
        item = new FooterItem(entry.status, { ...entry.usage }, entry.routed);
        break;
    }
    out.items.push(item);
    out.seqs.push(entry.seq);
  }
  return out;
}
