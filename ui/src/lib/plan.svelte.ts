// The plan the model presents with `exit_plan_mode` (Gemini CLI 0.61's plan mode), shown in the
// side pane as a rendered document. The user comments on paragraphs or edits the text, then
// either asks for changes (the comments, each quoted with its paragraph, and the edited text go
// back to the model as feedback) or approves it with the mode to execute in. The core decides
// what happens next: it switches the session's mode and the model goes on. The pane stays open,
// read-only, while the approved plan runs.
import * as api from "../api";
import type { ApprovalMode } from "../protocol/ApprovalMode";
import type { ConfirmationQueue } from "./confirmations.svelte";
import type { SessionStore } from "./session.svelte";

export type PlanStatus = "review" | "sending" | "changes_requested" | "approved" | "closed";
/** The modes a plan can be approved to run in (0.61: "Ask first" or "Auto-edit"). */
export type PlanRunMode = Extract<ApprovalMode, "default" | "auto_edit">;

/** Splits markdown into its top-level paragraphs/blocks (blank-line separated, fences kept whole). */
export function planParagraphs(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  for (const line of text.replace(/\r\n/g, "\n").split("\n")) {
    const marker = /^\s{0,3}(```|~~~)/.exec(line)?.[1] ?? null;
    if (fence) {
      current.push(line);
      if (marker === fence) fence = null;
      continue;
    }
    if (marker) fence = marker;
    if (line.trim() === "" && !fence) {
      if (current.length > 0) blocks.push(current.join("\n"));
      current = [];
    } else {
      current.push(line);
    }
  }
  if (current.length > 0) blocks.push(current.join("\n"));
  return blocks;
}

/** The feedback the model hears: each comment under its paragraph quoted, then the edited plan. */
export function planFeedback(paragraphs: string[], comments: Record<number, string>, edited: string | null): string {
  const parts: string[] = [];
  for (const [index, comment] of Object.entries(comments).sort((a, b) => Number(a[0]) - Number(b[0]))) {
    const text = comment.trim();
    const paragraph = paragraphs[Number(index)];
    if (!text || paragraph === undefined) continue;
    const quoted = paragraph
      .split("\n")
      .map((line) => `> ${line}`)
      .join("\n");
    parts.push(`${quoted}\n\n${text}`);
  }
  if (edited !== null) {
    parts.push(`I edited the plan. Update the plan file to this version:\n\n\`\`\`\`markdown\n${edited.trimEnd()}\n\`\`\`\``);
  }
  return parts.join("\n\n");
}

export class PlanStore {
  callId = $state<string | null>(null);
  path = $state("");
  markdown = $state("");
  status = $state<PlanStatus>("review");
  /** Comments by paragraph index. */
  comments = $state<Record<number, string>>({});
  /** The paragraph whose comment box is open. */
  commenting = $state<number | null>(null);
  draft = $state("");
  editing = $state(false);
  /** The user's version of the text, once they edited it; null otherwise. */
  edited = $state<string | null>(null);
  mode = $state<PlanRunMode>("default");
  /** The mode the approved plan runs in. */
  approvedMode = $state<PlanRunMode | null>(null);

  constructor(
    private readonly session: SessionStore,
    private readonly confirmations: ConfirmationQueue,
    private readonly failed: (text: string) => void,
  ) {}

  get open(): boolean {
    return this.callId !== null;
  }

  /** Whether the user can still answer (the core waits for this plan). */
  get answerable(): boolean {
    return this.status === "review" && this.callId !== null && this.confirmations.has(this.callId);
  }

  get paragraphs(): string[] {
    return planParagraphs(this.edited ?? this.markdown);
  }

  get hasFeedback(): boolean {
    return this.edited !== null || Object.values(this.comments).some((c) => c.trim() !== "");
  }

  /** A new plan to review (a revised one replaces the previous). */
  show(callId: string, path: string, markdown: string): void {
    this.callId = callId;
    this.path = path;
    this.markdown = markdown;
    this.status = "review";
    this.comments = {};
    this.commenting = null;
    this.draft = "";
    this.editing = false;
    this.edited = null;
    this.approvedMode = null;
  }

  startComment(index: number): void {
    if (!this.answerable) return;
    this.commenting = index;
    this.draft = this.comments[index] ?? "";
  }

  saveComment(): void {
    if (this.commenting === null) return;
    const next = { ...this.comments };
    if (this.draft.trim()) next[this.commenting] = this.draft;
    else delete next[this.commenting];
    this.comments = next;
    this.commenting = null;
    this.draft = "";
  }

  cancelComment(): void {
    this.commenting = null;
    this.draft = "";
  }

  removeComment(index: number): void {
    const next = { ...this.comments };
    delete next[index];
    this.comments = next;
  }

  /** Toggles the editor; leaving it keeps the text as the user's version if it changed. */
  toggleEdit(): void {
    if (!this.answerable) return;
    if (!this.editing) {
      this.edited ??= this.markdown;
      this.editing = true;
      return;
    }
    this.editing = false;
    if (this.edited === this.markdown) this.edited = null;
    // Comments were on paragraphs of the old text: keep only those still in range.
    const count = this.paragraphs.length;
    this.comments = Object.fromEntries(Object.entries(this.comments).filter(([i]) => Number(i) < count));
  }

  /** Sends the comments and edits back; the model revises the plan. */
  askChanges(): Promise<void> {
    if (this.commenting !== null) this.saveComment();
    if (this.editing) this.toggleEdit();
    const feedback = planFeedback(this.paragraphs, this.comments, this.edited);
    return this.send({ approved: false, feedback: feedback || undefined }, "changes_requested");
  }

  approve(): Promise<void> {
    const mode = this.mode;
    return this.send({ approved: true, approval_mode: mode }, "approved").then(() => {
      if (this.status === "approved") this.approvedMode = mode;
    });
  }

  private async send(approval: { approved: boolean; approval_mode?: PlanRunMode; feedback?: string }, next: PlanStatus): Promise<void> {
    const callId = this.callId;
    if (!callId || !this.answerable) return;
    this.status = "sending";
    // The answer's events can arrive before the call that sent it returns (on a busy machine
    // the model's revised plan was shown first, and then marked "changes requested" here, so it
    // could not be answered): the outcome applies only to the plan that was answered.
    const stillThisOne = () => this.callId === callId && this.status === "sending";
    try {
      await this.session.submit({ type: "answer_plan", call_id: callId, approval });
      this.confirmations.remove(callId);
      if (stillThisOne()) this.status = next;
    } catch (error) {
      if (stillThisOne()) this.status = "review";
      this.failed(`Could not answer the plan: ${api.errorMessage(error)}`);
    }
  }

  /**
   * The turn ended: a plan nobody answered can no longer be (the pane shows it read-only). One
   * whose answer is on its way was answered: `send` sets what came of it.
   */
  turnEnded(): void {
    if (this.status === "review") this.status = "closed";
  }

  close(): void {
    this.callId = null;
  }

  clear(): void {
    this.callId = null;
    this.markdown = "";
    this.path = "";
    this.comments = {};
    this.edited = null;
    this.editing = false;
    this.status = "review";
  }
}
