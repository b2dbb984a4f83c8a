// "New conversation in a worktree" (issue 16, item 5) in the sidebar, against a fake of the
// worktree_* commands (window.__gdExtraIPC): offered only on git folders; creating one opens a
// conversation there; a refusal is git's sentence and nothing else; the review panel lists the
// diff; merge and discard show the plan, close the conversation (its session stops) before the
// command runs, and hand back the plan shown; a stale plan is planned again.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { after, before, test } from "node:test";
import { screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const REPO = "/home/dev/project";
const PARENT = "/home/dev/project.worktrees";

/**
 * The page's fake of the worktree commands: `/home/dev/project` (and below) is a git checkout
 * on `main`, anything else is not; branch `taken` exists. `window.__wt` holds what the test
 * may change: the merge plans answered in turn, the discard failing once as stale.
 */
function fakeWorktrees() {
  const repo = { top_level: "/home/dev/project", branch: "main", head: "a1b2c3d4e5", dirty: true, uncommitted_files: 2 };
  const made = {};
  const worktree = (branch) => ({
    path: `/home/dev/project.worktrees/${branch}`,
    branch,
    base: "main",
    base_checkout: "/home/dev/project",
    repo: "/home/dev/project",
    head: "f00dfeed00",
    warnings: [],
  });
  const files = [
    { path: "src/lib.rs", old_path: null, status: "modified", additions: 3, deletions: 1, binary: false },
    { path: "notes.md", old_path: null, status: "added", additions: 2, deletions: 0, binary: false },
  ];
  const patch = [
    "diff --git a/notes.md b/notes.md",
    "new file mode 100644",
    "index 0000000..1111111",
    "--- /dev/null",
    "+++ b/notes.md",
    "@@ -0,0 +1,2 @@",
    "+# Notes",
    "+written in the worktree",
    "diff --git a/src/lib.rs b/src/lib.rs",
    "index 2222222..3333333 100644",
    "--- a/src/lib.rs",
    "+++ b/src/lib.rs",
    "@@ -1,3 +1,5 @@",
    " pub fn a() {}",
    "-pub fn b() {}",
    "+pub fn b() -> u32 {",
    "+    42",
    "+}",
    "",
  ].join("\n");
  const mergePlan = (wt, blockers) => ({
    worktree: wt,
    base: "main",
    base_checkout: "/home/dev/project",
    base_head: "a1b2c3d4e5",
    branch_head: wt.head,
    kind: "fast_forward",
    commits: [{ id: "f00dfeed00", subject: "Add notes" }],
    files,
    conflicts: [],
    uncommitted: blockers.length ? ["notes.md"] : [],
    blockers,
  });
  const uncommitted = {
    kind: "worktree_uncommitted",
    message: "The worktree has 1 uncommitted file (notes.md): commit it first, only commits are merged.",
  };
  window.__wt = { committed: false, staleOnce: true };
  window.__gdExtraIPC = (cmd, args) => {
    switch (cmd) {
      case "worktree_probe":
        return args.folder === "/home/dev/project" || args.folder.startsWith("/home/dev/project.worktrees/") ? repo : null;
      case "worktree_of":
        return made[args.folder] ?? null;
      case "worktree_create": {
        if (args.branch === "taken") throw { kind: "input", message: "A branch named “taken” already exists: choose another name." };
        const wt = { ...worktree(args.branch ?? "gemini-worktree-1"), warnings: ["The repository has uncommitted changes: the worktree starts from the last commit."] };
        made[wt.path] = { ...wt, warnings: [] };
        return wt;
      }
      case "worktree_diff":
        return { base: "main", fork_point: "a1b2c3d4e5", files, patch };
      case "worktree_plan_merge":
        return mergePlan(made[args.path], window.__wt.committed ? [] : [uncommitted]);
      case "worktree_commit_all":
        window.__wt.committed = true;
        return "c0ffee0000";
      case "worktree_merge":
        return { kind: "fast_forward", base_head: "f00dfeed00", removed_worktree: true, deleted_branch: true, warnings: [] };
      case "worktree_plan_discard":
        return {
          worktree: made[args.path],
          uncommitted: window.__wt.staleOnce ? ["notes.md"] : ["notes.md", "late.txt"],
          commits: [{ id: "f00dfeed00", subject: "Add notes" }],
          branch_head: "f00dfeed00",
          state: window.__wt.staleOnce ? "tree1" : "tree2",
        };
      case "worktree_discard":
        if (window.__wt.staleOnce) {
          window.__wt.staleOnce = false;
          throw { kind: "input", message: "Something changed since this was shown (files of the worktree changed): review it again and confirm." };
        }
        return null;
      default:
        return undefined;
    }
  };
}

/** axe-core's serious and critical findings (and contrast) on the page, as readable lines. */
async function audit(app) {
  await app.page.evaluate(AXE);
  return app.page.evaluate(async () => {
    // @ts-ignore axe is the injected global
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations
      .filter((v) => v.id === "color-contrast" || v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
}

const items = (app) => app.page.locator(sel("conversation-item"));
const folders = (app) => items(app).evaluateAll((els) => els.map((el) => el.dataset.folder));

/** Opens the app on the repository and creates the worktree `branch` through the sidebar. */
async function withWorktree(branch = "feature-x") {
  const app = await env.open({ init: [fakeWorktrees] });
  await app.tid("new-worktree").click();
  assert.equal(await app.tid("worktree-parent-input").inputValue(), PARENT);
  await app.tid("worktree-branch-input").fill(branch);
  const from = app.calls.length;
  await app.tid("worktree-create-submit").click();
  const start = await app.waitForCall("start_session", () => true, { from });
  return { app, start };
}

test("offered only when the shown folder is a git checkout", async () => {
  const plain = await env.open({ init: [fakeWorktrees], config: { appInfo: { version: "0.1.0", workspace: "/home/dev/notes" } } });
  const probe = await plain.waitForCall("worktree_probe");
  assert.deepEqual(probe.args, { folder: "/home/dev/notes" });
  // The answer (null) is in once the folder's entry has no branch line and the button is absent.
  await plain.page.waitForFunction(() => document.querySelector('[data-testid="conversation-item"]'));
  assert.equal(await plain.tid("new-worktree").count(), 0);
  assert.equal(plain.callsOf("worktree_of").length, 0, "no worktree lookup outside git");
  await plain.close();

  const git = await env.open({ init: [fakeWorktrees] });
  await git.tid("new-worktree").waitFor();
  await git.waitForCall("worktree_of", (a) => a.folder === REPO);
  assert.equal(await git.tid("worktree-branch").count(), 0, "the repository itself is not one of our worktrees");
  await git.close();
});

test("New in worktree: creates the branch beside the repository and opens a conversation on it", async () => {
  const { app, start } = await withWorktree("feature-x");
  const create = app.callsOf("worktree_create")[0];
  assert.deepEqual(create.args, { folder: REPO, branch: "feature-x", parent: null });
  assert.equal(start.args.workspace, `${PARENT}/feature-x`);
  await app.page.waitForFunction(() => document.querySelectorAll('[data-testid="conversation-item"]').length === 2);
  assert.deepEqual(await folders(app), [REPO, `${PARENT}/feature-x`]);
  await waitForText(app.page, sel("worktree-branch"), "⎇ feature-x");
  // Only the worktree's entry shows a branch, and the create warning reached its chat.
  assert.equal(await items(app).nth(0).getByTestId("worktree-branch").count(), 0);
  await waitForText(app.page, sel("notice"), /starts from the last commit/);
  assert.equal(await app.tid("worktree-create").count(), 0);
  await app.close();
});

test("a refusal (an existing branch) is shown as git's sentence and nothing else happens", async () => {
  const app = await env.open({ init: [fakeWorktrees] });
  await app.tid("new-worktree").click();
  await app.tid("worktree-branch-input").fill("taken");
  await app.tid("worktree-parent-input").fill("/srv/trees");
  await app.tid("worktree-create-submit").click();
  await waitForText(app.page, sel("worktree-error"), "A branch named “taken” already exists: choose another name.");
  await app.page.screenshot({ path: screenshotPath("worktree-create-refused.png") });
  const create = app.callsOf("worktree_create")[0];
  assert.deepEqual(create.args, { folder: REPO, branch: "taken", parent: "/srv/trees" });
  assert.equal(app.callsOf("start_session").length, 1);
  assert.equal(await items(app).count(), 1);
  await app.close();
});

test("review lists the diff; merge shows the plan, commits first, closes the conversation, then merges with that plan", async () => {
  const { app } = await withWorktree("feature-x");
  const entry = items(app).nth(1);
  await entry.getByTestId("worktree-review").click();
  const files = app.tid("worktree-diff-file");
  await app.page.waitForFunction(() => document.querySelectorAll('[data-testid="worktree-diff-file"]').length === 2);
  assert.deepEqual(await files.evaluateAll((els) => els.map((el) => `${el.dataset.status} ${el.dataset.path}`)), ["modified src/lib.rs", "added notes.md"]);
  assert.match(await files.nth(0).innerText(), /\+3\s+−1/);
  // Each file shows its own part of the patch, added and removed lines classed for colour.
  assert.deepEqual(await files.nth(0).locator("pre .add").allInnerTexts(), ["+pub fn b() -> u32 {", "+    42", "+}"]);
  assert.deepEqual(await files.nth(0).locator("pre .del").allInnerTexts(), ["-pub fn b() {}"]);
  assert.deepEqual(await files.nth(1).locator("pre .add").allInnerTexts(), ["+# Notes", "+written in the worktree"]);
  await app.page.screenshot({ path: screenshotPath("worktree-review.png") });
  assert.deepEqual(await audit(app), [], "the review panel passes axe");

  // The plan: blocked by uncommitted changes, so no confirm, but "Commit all changes first".
  await app.tid("worktree-merge").click();
  await app.tid("worktree-plan").waitFor();
  await waitForText(app.page, sel("worktree-blocker"), /uncommitted file \(notes\.md\)/);
  assert.equal(await app.tid("worktree-confirm").count(), 0);
  await app.tid("worktree-commit-all").click();
  await app.waitForCall("worktree_commit_all", (a) => a.path === `${PARENT}/feature-x`);
  await app.tid("worktree-confirm").waitFor();
  assert.equal(await app.tid("worktree-blocker").count(), 0);
  assert.match(await app.tid("worktree-plan-kind").innerText(), /Fast-forward/);
  assert.match(await app.tid("worktree-plan").innerText(), /Add notes/);
  await app.page.screenshot({ path: screenshotPath("worktree-merge-plan.png") });
  assert.deepEqual(await audit(app), [], "the merge plan passes axe");

  const from = app.calls.length;
  await app.tid("worktree-confirm").click();
  const merge = await app.waitForCall("worktree_merge", () => true, { from });
  const stop = await app.waitForCall("stop_session", () => true, { from });
  assert.deepEqual(stop.args, { sessionId: "s2" });
  assert.ok(app.calls.indexOf(stop) < app.calls.indexOf(merge), "the session stops before the merge");
  const plan = app.callsOf("worktree_plan_merge").length;
  assert.equal(plan, 2);
  assert.equal(merge.args.path, `${PARENT}/feature-x`);
  assert.equal(merge.args.keepWorktree, false);
  assert.deepEqual(merge.args.plan.blockers, []);
  assert.equal(merge.args.plan.branch_head, "f00dfeed00");
  await waitForText(app.page, sel("worktree-done"), /feature-x: fast-forwarded main; the worktree and its branch were removed\./);
  assert.deepEqual(await folders(app), [REPO]);
  await app.close();
});

test("discard shows what is lost, closes the conversation, and a stale plan is shown again", async () => {
  const { app } = await withWorktree("spike");
  await items(app).nth(1).getByTestId("worktree-review").click();
  await app.tid("worktree-discard").click();
  const plan = app.tid("worktree-plan");
  await waitForText(app.page, sel("worktree-plan"), /1 uncommitted file will be lost/);
  assert.match(await plan.innerText(), /notes\.md/);
  assert.match(await plan.innerText(), /1 commit main does not have will be lost/);

  const from = app.calls.length;
  await app.tid("worktree-confirm").click();
  // Stale: the sentence, and the new plan (late.txt appeared).
  await waitForText(app.page, sel("worktree-error"), /Something changed since this was shown/);
  await waitForText(app.page, sel("worktree-plan"), /2 uncommitted files will be lost/);
  const stop = await app.waitForCall("stop_session", () => true, { from });
  assert.deepEqual(stop.args, { sessionId: "s2" });
  const first = await app.waitForCall("worktree_discard", () => true, { from });
  assert.ok(app.calls.indexOf(stop) < app.calls.indexOf(first), "the session stops before the discard");
  assert.equal(first.args.plan.state, "tree1");
  // Its conversation is closed already: it can be opened again on the worktree.
  await app.tid("worktree-reopen").waitFor();
  assert.deepEqual(await folders(app), [REPO]);

  // Confirm the new plan: it is the one handed back.
  await app.tid("worktree-confirm").click();
  const second = await app.waitForCall("worktree_discard", (a) => a.plan.state === "tree2", { from });
  assert.deepEqual(second.args.plan.uncommitted, ["notes.md", "late.txt"]);
  await waitForText(app.page, sel("worktree-done"), /spike were discarded/);
  assert.deepEqual(await folders(app), [REPO]);
  assert.equal(app.callsOf("stop_session").length, 1, "one session stopped");
  await app.close();
});
