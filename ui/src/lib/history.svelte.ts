// The history browser's state: the stored sessions grouped by workspace and day, full-text
// search, the open transcript (read page by page as it scrolls), and the actions on a session
// (resume, rename, delete, export). All IPC goes through api.ts; the components only render.
import * as api from "../api";
import type { GeminiCliSessionInfo } from "../protocol/GeminiCliSessionInfo";
import type { SearchHit } from "../protocol/SearchHit";
import type { SessionSummary } from "../protocol/SessionSummary";
import type { StoredMessage } from "../protocol/StoredMessage";
import type { Page } from "../protocol/Page";
import type { PageFrom } from "../protocol/PageFrom";
import { Checkpoint, type RestoreChoice } from "./checkpoints.svelte";
import { markdown } from "./markdown-loader.svelte";
import { hitTerms } from "./transcript-mark";

/** Start and end of a matched word in a search snippet (gd-store's highlight markers). */
const MARK_START = "\u0002";
const MARK_END = "\u0003";

/** A piece of a search snippet, matched or not; rendered as text, never as HTML. */
export interface Span {
  text: string;
  hit: boolean;
}

/** Splits a marked snippet into spans; stray or unbalanced markers are dropped. */
export function snippetSpans(snippet: string): Span[] {
  const out: Span[] = [];
  let hit = false;
  let current = "";
  const flush = () => {
    if (current) {
      const last = out[out.length - 1];
      if (last && last.hit === hit) last.text += current;
      else out.push({ text: current, hit });
    }
    current = "";
  };
  for (const ch of snippet) {
    if (ch === MARK_START) {
      flush();
      hit = true;
    } else if (ch === MARK_END) {
      flush();
      hit = false;
    } else {
      current += ch;
    }
  }
  flush();
  return out;
}

export interface DayGroup {
  label: string;
  sessions: SessionSummary[];
}

export interface WorkspaceGroup {
  workspace: string;
  days: DayGroup[];
}

/** "Today", "Yesterday" or the date, in the user's locale. */
export function dayLabel(ms: number, now = Date.now()): string {
  const day = new Date(ms);
  const today = new Date(now);
  const start = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const diff = Math.round((start(today) - start(day)) / 86_400_000);
  if (diff === 0) return "Today";
  if (diff === 1) return "Yesterday";
  return day.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
}

/**
 * Sessions (newest first) grouped by workspace, workspaces ordered by their newest session,
 * then by day. The current workspace comes first.
 */
export function groupSessions(sessions: SessionSummary[], current: string | null, now = Date.now()): WorkspaceGroup[] {
  const groups = new Map<string, WorkspaceGroup>();
  for (const s of sessions) {
    let group = groups.get(s.workspace);
    if (!group) {
      group = { workspace: s.workspace, days: [] };
      groups.set(s.workspace, group);
    }
    const label = dayLabel(s.updated_ms, now);
    let day = group.days[group.days.length - 1];
    if (!day || day.label !== label) {
      day = { label, sessions: [] };
      group.days.push(day);
    }
    day.sessions.push(s);
  }
  const all = [...groups.values()];
  const mine = all.findIndex((g) => g.workspace === current);
  if (mine > 0) all.unshift(...all.splice(mine, 1));
  return all;
}

/** Messages kept in the transcript at once; scrolling further drops the other end. */
export const TRANSCRIPT_WINDOW = 150;
/** Messages per transcript page. */
export const TRANSCRIPT_PAGE = 40;
/** Longer messages are shown cut (their start), so a page stays small whatever is stored. */
export const TRANSCRIPT_MAX_BYTES = 16 * 1024;

/** An open transcript: a window of consecutive messages of one session. */
export class Transcript {
  messages = $state.raw<StoredMessage[]>([]);
  hasBefore = $state(false);
  hasAfter = $state(false);
  loading = $state(false);
  error = $state<string | null>(null);
  /** The message to scroll to and mark (a search hit), once. */
  focusSeq = $state<number | null>(null);
  /** The hit's words, marked inside that message. */
  focusTerms = $state.raw<string[]>([]);
  /** The session's edits that have a checkpoint, by tool call id (their Restore action). */
  checkpoints = $state.raw<Map<string, Checkpoint>>(new Map());

  constructor(readonly session: SessionSummary) {}

  /** Reads which of the session's edits have a checkpoint; `restorer` restores one. */
  async loadCheckpoints(restorer: (checkpoint: Checkpoint, choice: RestoreChoice) => Promise<void>): Promise<void> {
    try {
      const list = await api.commands.historyCheckpoints({ sessionId: this.session.id });
      const byCall = new Map<string, Checkpoint>();
      for (const info of list) {
        if (info.call_id && !byCall.has(info.call_id)) byCall.set(info.call_id, Checkpoint.fromInfo(info, restorer));
      }
      this.checkpoints = byCall;
    } catch {
      // Without them the transcript reads the same, just without Restore actions.
      this.checkpoints = new Map();
    }
  }

  /**
   * A page of this session's transcript (long messages cut, see TRANSCRIPT_MAX_BYTES), once the
   * Markdown renderer and the code languages it uses are loaded (markdown-loader.svelte.ts): the
   * answers show formatted at once, and a search hit is marked in their final DOM.
   */
  private async page(from: PageFrom): Promise<Page> {
    const [page, renderer] = await Promise.all([
      api.commands.historyPage({ sessionId: this.session.id, from, limit: TRANSCRIPT_PAGE, maxBytes: TRANSCRIPT_MAX_BYTES }),
      markdown.load().catch(() => null),
    ]);
    await renderer?.loadLanguagesOf(page.messages.map((m) => m.text));
    return page;
  }

  async load(from: PageFrom): Promise<void> {
    this.loading = true;
    this.error = null;
    try {
      const page = await this.page(from);
      this.messages = page.messages;
      this.hasBefore = page.has_before;
      this.hasAfter = page.has_after;
    } catch (error) {
      this.error = `Could not read the transcript: ${api.errorMessage(error)}`;
    } finally {
      this.loading = false;
    }
  }

  /** Loads the page before the first message shown; false when there is none (or busy). */
  async loadBefore(): Promise<boolean> {
    const first = this.messages[0];
    if (this.loading || !this.hasBefore || !first) return false;
    this.loading = true;
    try {
      const page = await this.page({ from: "before", seq: first.seq });
      const all = [...page.messages, ...this.messages];
      this.hasBefore = page.has_before;
      if (all.length > TRANSCRIPT_WINDOW) {
        this.messages = all.slice(0, TRANSCRIPT_WINDOW);
        this.hasAfter = true;
      } else {
        this.messages = all;
      }
      return page.messages.length > 0;
    } catch (error) {
      this.error = `Could not read the transcript: ${api.errorMessage(error)}`;
      return false;
    } finally {
      this.loading = false;
    }
  }

  /** Loads the page after the last message shown; false when there is none (or busy). */
  async loadAfter(): Promise<boolean> {
    const last = this.messages[this.messages.length - 1];
    if (this.loading || !this.hasAfter || !last) return false;
    this.loading = true;
    try {
      const page = await this.page({ from: "after", seq: last.seq });
      const all = [...this.messages, ...page.messages];
      this.hasAfter = page.has_after;
      if (all.length > TRANSCRIPT_WINDOW) {
        this.messages = all.slice(all.length - TRANSCRIPT_WINDOW);
        this.hasBefore = true;
      } else {
        this.messages = all;
      }
      return page.messages.length > 0;
    } catch (error) {
      this.error = `Could not read the transcript: ${api.errorMessage(error)}`;
      return false;
    } finally {
      this.loading = false;
    }
  }
}

export interface HistoryActions {
  /** The workspace the window works on (listed first; Gemini CLI sessions are its). */
  workspace: () => string | null;
  /** Continues a stored session in the chat. */
  resume: (session: SessionSummary) => Promise<void>;
  /**
   * Restores a checkpoint of a stored session's edit (resuming the session when the conversation
   * is restored too); the answer shows on `checkpoint`.
   */
  restore: (session: SessionSummary, checkpoint: Checkpoint, choice: RestoreChoice) => Promise<void>;
}

export class HistoryBrowser {
  open = $state(false);
  sessions = $state.raw<SessionSummary[]>([]);
  /** More sessions than listed exist (the list pages on). */
  hasMore = $state(false);
  cliSessions = $state.raw<GeminiCliSessionInfo[]>([]);
  listError = $state<string | null>(null);
  query = $state("");
  hits = $state.raw<SearchHit[] | null>(null);
  searchError = $state<string | null>(null);
  transcript = $state<Transcript | null>(null);
  /** Deleting the open session awaits confirmation. */
  confirmingDelete = $state(false);
  /** The rename field is open, with this text. */
  renaming = $state<string | null>(null);
  /** What the last action on the open session did (an export's path) or why it failed. */
  status = $state<{ level: "info" | "error"; text: string } | null>(null);

  private searchSeq = 0;
  private searchTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly actions: HistoryActions) {}

  get groups(): WorkspaceGroup[] {
    return groupSessions(this.sessions, this.actions.workspace());
  }

  async show(): Promise<void> {
    this.open = true;
    await this.refresh();
  }

  close(): void {
    this.open = false;
    this.transcript = null;
    this.confirmingDelete = false;
    this.renaming = null;
    this.status = null;
  }

  async refresh(): Promise<void> {
    this.listError = null;
    try {
      const sessions = await api.commands.historyList({ workspace: null, after: null, limit: 100 });
      this.sessions = sessions;
      this.hasMore = sessions.length === 100;
    } catch (error) {
      this.listError = `Could not read the session history: ${api.errorMessage(error)}`;
    }
    const workspace = this.actions.workspace();
    try {
      this.cliSessions = workspace ? (await api.commands.historyGeminiCliSessions({ workspace })).filter((s) => !s.imported) : [];
    } catch {
      // Gemini CLI's own sessions are optional; our history is listed anyway.
      this.cliSessions = [];
    }
  }

  async more(): Promise<void> {
    const last = this.sessions[this.sessions.length - 1];
    if (!last) return;
    try {
      const next = await api.commands.historyList({ workspace: null, after: { updated_ms: last.updated_ms, id: last.id }, limit: 100 });
      this.sessions = [...this.sessions, ...next];
      this.hasMore = next.length === 100;
    } catch (error) {
      this.listError = `Could not read the session history: ${api.errorMessage(error)}`;
    }
  }

  /** The search box changed: search shortly after typing stops (empty: back to the list). */
  setQuery(text: string): void {
    this.query = text;
    if (this.searchTimer) clearTimeout(this.searchTimer);
    if (!text.trim()) {
      this.searchSeq++;
      this.hits = null;
      this.searchError = null;
      return;
    }
    this.searchTimer = setTimeout(() => void this.search(), 150);
  }

  async search(): Promise<void> {
    const text = this.query.trim();
    const seq = ++this.searchSeq;
    if (!text) return;
    try {
      const hits = await api.commands.historySearch({ text, workspace: null, limit: 50, offset: 0 });
      if (seq !== this.searchSeq) return;
      this.hits = hits;
      this.searchError = null;
    } catch (error) {
      if (seq !== this.searchSeq) return;
      this.hits = [];
      this.searchError = `Search failed: ${api.errorMessage(error)}`;
    }
  }

  /**
   * Opens a session's transcript at its start, or around a message (a search hit, whose words
   * `terms` are marked in it).
   */
  async openSession(session: SessionSummary, seq: number | null = null, terms: string[] = []): Promise<void> {
    this.confirmingDelete = false;
    this.renaming = null;
    this.status = null;
    const transcript = new Transcript(session);
    this.transcript = transcript;
    await Promise.all([
      transcript.load(seq === null ? { from: "start" } : { from: "around", seq }),
      transcript.loadCheckpoints((checkpoint, choice) => this.restore(transcript, checkpoint, choice)),
    ]);
    transcript.focusTerms = terms;
    transcript.focusSeq = seq;
  }

  /**
   * Restores an edit's checkpoint from the open transcript. A restored conversation removed the
   * edit's turn from the session: the transcript is read again (its end), and the result stays
   * in the status line since the edit's message is gone.
   */
  private async restore(transcript: Transcript, checkpoint: Checkpoint, choice: RestoreChoice): Promise<void> {
    this.status = null;
    await this.actions.restore(transcript.session, checkpoint, choice);
    await checkpoint.settled();
    if (checkpoint.phase !== "restored" || !choice.conversation || this.transcript !== transcript) return;
    this.status = { level: "info", text: checkpoint.result ?? "Restored." };
    await transcript.load({ from: "end" });
    void this.refresh();
  }

  async openHit(hit: SearchHit): Promise<void> {
    const session =
      this.sessions.find((s) => s.id === hit.session_id) ??
      ({
        id: hit.session_id,
        workspace: hit.workspace,
        title: hit.session_title,
        created_ms: hit.created_ms,
        updated_ms: hit.created_ms,
        model: null,
        message_count: 0,
        tokens: { prompt: 0, output: 0, cached: 0, thoughts: 0, tool: 0, total: 0 },
        source: "gemini-desktop",
        origin: null,
      } satisfies SessionSummary);
    const matched = snippetSpans(hit.snippet)
      .filter((s) => s.hit)
      .map((s) => s.text);
    await this.openSession(session, hit.seq, hitTerms(matched, this.query));
  }

  /** Opens one of Gemini CLI's sessions: imported into the history (its file is not touched). */
  async openCliSession(cli: GeminiCliSessionInfo): Promise<void> {
    const workspace = this.actions.workspace();
    if (!workspace) return;
    try {
      const id = await api.commands.historyImportGeminiCli({ file: cli.file, workspace });
      await this.refresh();
      const session = this.sessions.find((s) => s.id === id);
      if (session) await this.openSession(session);
    } catch (error) {
      this.listError = `Could not read the Gemini CLI session: ${api.errorMessage(error)}`;
    }
  }

  async resume(): Promise<void> {
    const session = this.transcript?.session;
    if (!session) return;
    this.close();
    await this.actions.resume(session);
  }

  startRename(): void {
    this.renaming = this.transcript?.session.title ?? "";
  }

  async rename(): Promise<void> {
    const transcript = this.transcript;
    const title = (this.renaming ?? "").trim();
    if (!transcript || !title) return;
    try {
      await api.commands.historyRename({ sessionId: transcript.session.id, title });
      this.renaming = null;
      const renamed = { ...transcript.session, title };
      this.sessions = this.sessions.map((s) => (s.id === renamed.id ? renamed : s));
      const next = new Transcript(renamed);
      next.messages = transcript.messages;
      next.hasBefore = transcript.hasBefore;
      next.hasAfter = transcript.hasAfter;
      this.transcript = next;
    } catch (error) {
      this.status = { level: "error", text: `Could not rename: ${api.errorMessage(error)}` };
    }
  }

  async delete(): Promise<void> {
    const transcript = this.transcript;
    if (!transcript) return;
    this.confirmingDelete = false;
    try {
      await api.commands.historyDelete({ sessionId: transcript.session.id });
      this.sessions = this.sessions.filter((s) => s.id !== transcript.session.id);
      if (this.hits) this.hits = this.hits.filter((h) => h.session_id !== transcript.session.id);
      this.transcript = null;
    } catch (error) {
      this.status = { level: "error", text: `Could not delete: ${api.errorMessage(error)}` };
    }
  }

  async export(format: "markdown" | "json"): Promise<void> {
    const transcript = this.transcript;
    if (!transcript) return;
    try {
      const path = await api.commands.historyExport({ sessionId: transcript.session.id, format, path: null });
      this.status = { level: "info", text: `Exported to ${path}` };
    } catch (error) {
      this.status = { level: "error", text: `Could not export: ${api.errorMessage(error)}` };
    }
  }
}
