// "New conversation in a worktree" (issue 16, item 5): which conversation folders are git
// checkouts (the sidebar offers "New in worktree…" only there) and which are worktrees this app
// created (their entry shows the branch and offers "Review worktree…"), the create dialog, and
// the review panel: the diff against the base branch, then merge or discard, each after the plan
// the backend (gd-worktree) computed and the user confirmed.
//
// The conversation working in a worktree is closed before a merge or discard removes its
// folder: its session (and its tools) must not run in a folder that is going away.
import * as api from "../api";
import type { DiscardPlan } from "../protocol/DiscardPlan";
import type { MergeOutcome } from "../protocol/MergeOutcome";
import type { MergePlan } from "../protocol/MergePlan";
import type { Repo } from "../protocol/Repo";
import type { Worktree } from "../protocol/Worktree";
import type { WorktreeDiff } from "../protocol/WorktreeDiff";
import type { Conversation } from "./conversation.svelte";

/** What the store needs of the app: opening and closing conversations. */
export interface WorktreeHost {
  readonly conversations: readonly Conversation[];
  newConversation(workspace?: string | null): Promise<Conversation>;
  close(conversation: Conversation): Promise<void>;
}

/** A folder's git state, as far as this feature cares. */
export interface FolderGit {
  /** The checkout it is in; null outside git (or when git could not tell). */
  repo: Repo | null;
  /** The worktree it is, when this app created it. */
  worktree: Worktree | null;
}

/** The "New in worktree…" dialog. */
export interface CreateForm {
  folder: string;
  repo: Repo;
  branch: string;
  /** Shown filled with the default (beside the repository); sent only when changed. */
  parent: string;
  defaultParent: string;
  busy: boolean;
  /** The library's sentence when it refused (detached HEAD, existing branch…). */
  error: string | null;
}

/** What the review panel shows: the diff, or a plan waiting for confirmation, or the outcome. */
export type ReviewStep = "diff" | "merge" | "discard" | "done";

export interface Review {
  worktree: Worktree;
  /** The conversation working in it (closed before merging or discarding). */
  conversation: Conversation | null;
  step: ReviewStep;
  diff: WorktreeDiff | null;
  mergePlan: MergePlan | null;
  discardPlan: DiscardPlan | null;
  outcome: MergeOutcome | null;
  /** What happened, for the "done" step. */
  done: string | null;
  busy: boolean;
  error: string | null;
}

/** `<parent of top level>/<name>.worktrees`: gd-worktree's default location, to show it. */
export function defaultParent(topLevel: string): string {
  const trimmed = topLevel.replace(/\/+$/, "");
  const at = trimmed.lastIndexOf("/");
  const name = trimmed.slice(at + 1);
  return `${trimmed.slice(0, Math.max(at, 0)) || "/"}${at > 0 ? "/" : ""}${name}.worktrees`;
}

export class WorktreeStore {
  /** Each folder's git state once known (absent: not asked yet or being asked). */
  folders = $state<Record<string, FolderGit>>({});
  create = $state<CreateForm | null>(null);
  review = $state<Review | null>(null);
  private readonly asking = new Set<string>();

  constructor(private readonly host: WorktreeHost) {}

  /** The checkout `folder` is in, when known and it is one (the action is offered then). */
  repoOf(folder: string | null): Repo | null {
    return folder ? (this.folders[folder]?.repo ?? null) : null;
  }

  /** The worktree `folder` is, when this app created it. */
  worktreeOf(folder: string | null): Worktree | null {
    return folder ? (this.folders[folder]?.worktree ?? null) : null;
  }

  /** Asks git about `folder` once (again after `forget`). Failures count as "not git": no action is offered. */
  async check(folder: string | null): Promise<void> {
    if (!folder || folder in this.folders || this.asking.has(folder)) return;
    this.asking.add(folder);
    let state: FolderGit = { repo: null, worktree: null };
    try {
      const repo = await api.commands.worktreeProbe({ folder });
      state = { repo, worktree: repo ? await api.commands.worktreeOf({ folder }) : null };
    } catch {
      // Not offered; the user can still work in the folder.
    } finally {
      this.asking.delete(folder);
    }
    this.folders = { ...this.folders, [folder]: state };
  }

  /** Forgets what is known of `folders` (they changed: created, merged, discarded). */
  forget(...folders: string[]): void {
    const next = { ...this.folders };
    for (const folder of folders) delete next[folder];
    this.folders = next;
  }

  /** Opens the "New in worktree…" dialog for `folder` (a git checkout). */
  openCreate(folder: string | null): void {
    const repo = this.repoOf(folder);
    if (!folder || !repo) return;
    const parent = defaultParent(repo.top_level);
    this.create = { folder, repo, branch: "", parent, defaultParent: parent, busy: false, error: null };
  }

  /**
   * Creates the worktree the dialog describes and opens a conversation on it. A refusal stays
   * in the dialog as the library's sentence, and nothing else happens.
   */
  async submitCreate(): Promise<void> {
    const form = this.create;
    if (!form || form.busy) return;
    this.create = { ...form, busy: true, error: null };
    const parent = form.parent.trim();
    let worktree: Worktree;
    try {
      worktree = await api.commands.worktreeCreate({
        folder: form.folder,
        branch: form.branch.trim() || null,
        parent: parent && parent !== form.defaultParent ? parent : null,
      });
    } catch (error) {
      if (this.create) this.create = { ...this.create, busy: false, error: api.errorMessage(error) };
      return;
    }
    this.create = null;
    this.folders = { ...this.folders, [worktree.path]: { repo: form.repo, worktree } };
    const conversation = await this.host.newConversation(worktree.path);
    for (const warning of worktree.warnings) conversation.chat.addNotice("warning", warning);
  }

  /** Opens the review panel on `conversation`'s worktree and loads its diff. */
  async openReview(conversation: Conversation): Promise<void> {
    const worktree = this.worktreeOf(conversation.workspace);
    if (!worktree) return;
    this.review = {
      worktree,
      conversation,
      step: "diff",
      diff: null,
      mergePlan: null,
      discardPlan: null,
      outcome: null,
      done: null,
      busy: true,
      error: null,
    };
    await this.run(async (r) => {
      r.diff = await api.commands.worktreeDiff({ path: r.worktree.path });
    });
  }

  /** Back from a plan to the diff (reloaded: the agent may have changed files meanwhile). */
  async showDiff(): Promise<void> {
    await this.run(async (r) => {
      r.step = "diff";
      r.diff = await api.commands.worktreeDiff({ path: r.worktree.path });
    });
  }

  /** Plans the merge and shows the plan. */
  async planMerge(): Promise<void> {
    await this.run(async (r) => {
      r.mergePlan = await api.commands.worktreePlanMerge({ path: r.worktree.path });
      r.step = "merge";
    });
  }

  /** Commits everything in the worktree (the plan's "uncommitted changes" blocker), then plans again. */
  async commitAll(): Promise<void> {
    await this.run(async (r) => {
      await api.commands.worktreeCommitAll({ path: r.worktree.path, message: "" });
      r.mergePlan = await api.commands.worktreePlanMerge({ path: r.worktree.path });
    });
  }

  /** Plans the discard and shows what will be lost. */
  async planDiscard(): Promise<void> {
    await this.run(async (r) => {
      r.discardPlan = await api.commands.worktreePlanDiscard({ path: r.worktree.path });
      r.step = "discard";
    });
  }

  /**
   * Merges as the shown plan says: the conversation is closed first (its session must stop
   * before the folder goes). A refusal (e.g. something changed since the plan) shows its
   * sentence with a fresh plan.
   */
  async confirmMerge(): Promise<void> {
    const plan = this.review?.mergePlan;
    if (!plan) return;
    await this.run(async (r) => {
      await this.closeConversation(r);
      try {
        r.outcome = await api.commands.worktreeMerge({ path: r.worktree.path, plan, keepWorktree: false });
      } catch (error) {
        await this.replan(() => api.commands.worktreePlanMerge({ path: r.worktree.path }).then((p) => (r.mergePlan = p)));
        throw error;
      }
      const how = { fast_forward: "fast-forwarded", merge_commit: "merged with a merge commit", up_to_date: "already in" }[r.outcome.kind];
      r.done = `${r.worktree.branch}: ${how} ${r.worktree.base}${r.outcome.removed_worktree ? "; the worktree and its branch were removed" : ""}.`;
      r.step = "done";
      this.forget(r.worktree.path, r.worktree.base_checkout);
    });
  }

  /** Discards as the shown plan says, after closing the conversation. */
  async confirmDiscard(): Promise<void> {
    const plan = this.review?.discardPlan;
    if (!plan) return;
    await this.run(async (r) => {
      await this.closeConversation(r);
      try {
        await api.commands.worktreeDiscard({ path: r.worktree.path, plan });
      } catch (error) {
        await this.replan(() => api.commands.worktreePlanDiscard({ path: r.worktree.path }).then((p) => (r.discardPlan = p)));
        throw error;
      }
      r.done = `The worktree ${r.worktree.path} and its branch ${r.worktree.branch} were discarded.`;
      r.step = "done";
      this.forget(r.worktree.path);
    });
  }

  /** After a refusal, the conversation is gone but the worktree stays: work in it again. */
  async reopen(): Promise<void> {
    const r = this.review;
    if (!r) return;
    this.review = null;
    await this.host.newConversation(r.worktree.path);
  }

  closeReview(): void {
    if (!this.review?.busy) this.review = null;
  }

  /** Closes the conversation working in the worktree; when it is the window's last, one on the base checkout takes its place (closing the last opens a fresh one on the same folder, which is about to go). */
  private async closeConversation(r: Review): Promise<void> {
    const conversation = r.conversation;
    if (!conversation || !this.host.conversations.includes(conversation)) return;
    if (this.host.conversations.length === 1) await this.host.newConversation(r.worktree.base_checkout);
    await this.host.close(conversation);
    r.conversation = null;
  }

  /** Fetches a new plan after a refusal; a failure to plan is left to the refusal's message. */
  private async replan(plan: () => Promise<unknown>): Promise<void> {
    try {
      await plan();
    } catch {
      // The refusal says what is wrong.
    }
  }

  /** Runs a step of the review with `busy` set and its error shown. */
  private async run(step: (r: Review) => Promise<void>): Promise<void> {
    const review = this.review;
    if (!review) return;
    review.busy = true;
    review.error = null;
    try {
      await step(review);
    } catch (error) {
      review.error = api.errorMessage(error);
    } finally {
      review.busy = false;
    }
  }
}

/** One file's part of a unified patch, its lines classed for colouring. */
export interface PatchLine {
  text: string;
  kind: "add" | "del" | "hunk" | "meta" | "context";
}

/**
 * Splits git's unified patch into each file's part, keyed by its new path (`b/…` of the
 * `diff --git` line; quoted names unquoted the simple way). A part whose path cannot be read
 * is keyed by its position, so it still shows under the file of that rank.
 */
export function splitPatch(patch: string): { byPath: Map<string, PatchLine[]>; inOrder: PatchLine[][] } {
  const byPath = new Map<string, PatchLine[]>();
  const inOrder: PatchLine[][] = [];
  let current: PatchLine[] | null = null;
  for (const text of patch.replace(/\n$/, "").split("\n")) {
    if (text.startsWith("diff --git ")) {
      current = [];
      inOrder.push(current);
      const match = /^diff --git (?:"?a\/.*?"?) "?b\/(.*?)"?$/.exec(text);
      if (match?.[1]) byPath.set(match[1], current);
    }
    if (!current) continue;
    const kind: PatchLine["kind"] = text.startsWith("@@")
      ? "hunk"
      : text.startsWith("+++") || text.startsWith("---") || text.startsWith("diff --git") || /^(index|new file|deleted file|similarity|rename|old mode|new mode|Binary)/.test(text)
        ? "meta"
        : text.startsWith("+")
          ? "add"
          : text.startsWith("-")
            ? "del"
            : "context";
    current.push({ text, kind });
  }
  return { byPath, inOrder };
}
