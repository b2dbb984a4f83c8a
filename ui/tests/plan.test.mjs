// Plan mode's side pane (a plan presented with exit_plan_mode: comment on paragraphs, edit the
// text, ask for changes, approve with a mode) and the live todo checklist (write_todos).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const PLAN = "# Plan\n\nChange the greeting in hello.txt.\n\nThen run the tests.\n\n```sh\ncargo test\n```\n";
const PATH = "/home/dev/.cache/gemini-desktop/tmp/project/s1/plans/greeting.md";

const planDetails = (plan = PLAN) => ({ type: "exit_plan_mode", title: "Plan Approval", plan_path: PATH, plan });
const presented = (id, plan) => [E.toolRequest(id, "exit_plan_mode", { plan_filename: "greeting.md" }), E.confirmation(id, "exit_plan_mode", planDetails(plan))];

/** Opens the app, sends a prompt and presents a plan in a running turn. */
async function withPlan(id = "p1", plan = PLAN, options = {}) {
  const app = await env.open(options);
  await app.sendPrompt("plan it");
  await app.emitAll([E.turnStarted(), ...presented(id, plan)]);
  await app.tid("plan-pane").waitFor();
  return app;
}

describe("plan pane", () => {
  test("shows the plan as paragraphs, not in the confirmation dock", async () => {
    const app = await withPlan();
    const paragraphs = app.tid("plan-paragraph");
    assert.equal(await paragraphs.count(), 4);
    assert.equal(await paragraphs.nth(0).getAttribute("data-index"), "0");
    assert.match(await paragraphs.nth(1).innerText(), /Change the greeting/);
    // A fenced block stays one paragraph, blank lines and all.
    assert.match(await paragraphs.nth(3).innerText(), /cargo test/);
    assert.equal(await app.tid("confirmation").count(), 0, "plans are answered in the pane");
    assert.equal(await app.tid("plan-ask-changes").isDisabled(), true, "nothing to send yet");
    // The dock's keys do not answer a plan: Ctrl+Enter in the prompt box sends nothing.
    await app.tid("prompt-input").press("Control+Enter");
    assert.equal(app.opsOf("confirm_tool").length + app.opsOf("answer_plan").length, 0);
    await app.page.locator(sel("plan-pane")).screenshot({ path: screenshotPath("plan-pane-light.png") });
    await app.close();
  });

  test("comments on paragraphs go back quoted with their paragraph", async () => {
    const app = await withPlan();
    await app.tid("plan-paragraph").nth(2).click();
    await app.tid("plan-comment-input").fill("Run only the unit tests.");
    await app.tid("plan-comment-save").click();
    const saved = app.tid("plan-comment");
    assert.equal(await saved.count(), 1);
    assert.equal(await saved.getAttribute("data-index"), "2");
    assert.match(await saved.innerText(), /Run only the unit tests\./);
    // A second comment, saved with Ctrl+Enter.
    await app.tid("plan-paragraph").nth(1).click();
    await app.tid("plan-comment-input").fill("Say hi there.");
    await app.tid("plan-comment-input").press("Control+Enter");
    assert.equal(await app.tid("plan-comment").count(), 2);

    await app.tid("plan-ask-changes").click();
    const call = await app.waitForOp("answer_plan");
    assert.equal(call.args.call_id, "p1");
    assert.equal(call.args.approval.approved, false);
    assert.equal(
      call.args.approval.feedback,
      "> Change the greeting in hello.txt.\n\nSay hi there.\n\n> Then run the tests.\n\nRun only the unit tests.",
    );
    // Answered: read-only, no buttons; the pane says so.
    await app.page.waitForSelector(`${sel("plan-pane")}[data-status="changes_requested"]`);
    assert.equal(await app.tid("plan-approve").count(), 0);
    await app.close();
  });

  test("edits go back as the user's version of the plan", async () => {
    const app = await withPlan();
    await app.tid("plan-edit").click();
    const editor = app.tid("plan-editor");
    assert.equal(await editor.inputValue(), PLAN);
    await editor.fill("# Plan\n\nChange the greeting.\n");
    await app.tid("plan-edit").click();
    // Back to the document: the edited text, two paragraphs.
    assert.equal(await app.tid("plan-paragraph").count(), 2);
    await app.tid("plan-ask-changes").click();
    const call = await app.waitForOp("answer_plan");
    assert.equal(call.args.approval.approved, false);
    assert.match(call.args.approval.feedback, /I edited the plan\. Update the plan file to this version:\n\n````markdown\n# Plan\n\nChange the greeting\.\n````/);
    await app.close();
  });

  test("approve with Auto-edit: the mode goes with it and the pane stays, approved", async () => {
    const app = await withPlan();
    await app.tid("plan-approve-mode").selectOption("auto_edit");
    await app.tid("plan-approve").click();
    const call = await app.waitForOp("answer_plan");
    assert.deepEqual(call.args.approval, { approved: true, approval_mode: "auto_edit" });
    await app.page.waitForSelector(`${sel("plan-pane")}[data-status="approved"]`);
    assert.match(await app.tid("plan-status").innerText(), /Approved · Auto-edit/);
    // The plan runs: the tool answers, an edit follows; the pane is still there, read-only.
    await app.emitAll([E.toolResponse("p1", "exit_plan_mode", "success", "Plan approved")]);
    assert.equal(await app.tid("plan-pane").count(), 1);
    assert.equal(await app.tid("plan-paragraph").nth(1).getAttribute("aria-disabled"), "true");
    await app.tid("plan-paragraph").nth(1).click({ force: true });
    assert.equal(await app.tid("plan-comment-input").count(), 0, "no comments once approved");
    await app.close();
  });

  test("approve defaults to Ask first", async () => {
    const app = await withPlan();
    await app.tid("plan-approve").click();
    const call = await app.waitForOp("answer_plan");
    assert.deepEqual(call.args.approval, { approved: true, approval_mode: "default" });
    await app.close();
  });

  test("dark theme: the pane and its comments use the theme's colours", async () => {
    const app = await withPlan("p1", PLAN, { colorScheme: "dark" });
    await app.tid("plan-paragraph").nth(1).click();
    await app.tid("plan-comment-input").fill("Say hi there.");
    await app.tid("plan-comment-save").click();
    const [pane, body] = await app.page.evaluate(() => [
      getComputedStyle(document.querySelector('[data-testid="plan-pane"]')).backgroundColor,
      getComputedStyle(document.body).backgroundColor,
    ]);
    // A dark surface (not the light theme's white).
    const channels = pane.match(/\d+/g).slice(0, 3).map(Number);
    assert.ok(channels.every((c) => c < 100), `dark pane background: ${pane} (body ${body})`);
    await app.page.locator(sel("plan-pane")).screenshot({ path: screenshotPath("plan-pane-dark.png") });
    await app.close();
  });

  test("a plan nobody answered is closed when the turn ends", async () => {
    const app = await withPlan();
    await app.emitAll([E.turnComplete("cancelled")]);
    await app.page.waitForSelector(`${sel("plan-pane")}[data-status="closed"]`);
    assert.equal(await app.tid("plan-approve").count(), 0);
    await app.close();
  });

  // An init script: the `submit` of an answer_plan returns only when the test calls
  // `window.__gdReleaseAnswer()`: on a busy machine the events the answer causes can arrive
  // before the call that sent it returns.
  function holdPlanAnswers() {
    window.__gdExtraIPC = (cmd, args) => {
      if (cmd !== "submit" || args.op?.type !== "answer_plan") return undefined;
      return new Promise((resolve) => {
        window.__gdReleaseAnswer = () => resolve(null);
      });
    };
  }

  test("a revised plan that arrives before the call answering the first returns can be answered", async () => {
    const app = await withPlan("p1", PLAN, { init: [holdPlanAnswers] });
    await app.tid("plan-paragraph").nth(1).click();
    await app.tid("plan-comment-input").fill("Say hi there.");
    await app.tid("plan-comment-save").click();
    await app.tid("plan-ask-changes").click();
    await app.waitForOp("answer_plan", (a) => a.call_id === "p1");
    // Core took the answer; the model's revised plan is shown before the call returns.
    await app.emitAll(presented("p2", "# Plan\n\nSay hi there in hello.txt.\n"));
    await app.page.waitForSelector(`${sel("plan-pane")}[data-status="review"]`);
    await app.page.evaluate(() => window.__gdReleaseAnswer());
    // Settled: the revised plan still waits for review, and can be approved.
    await app.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    assert.equal(await app.tid("plan-pane").getAttribute("data-status"), "review");
    assert.match(await app.tid("plan-paragraph").nth(1).innerText(), /Say hi there in hello\.txt/);
    await app.tid("plan-approve").click();
    const call = await app.waitForOp("answer_plan", (a) => a.call_id === "p2");
    assert.equal(call.args.approval.approved, true);
    await app.close();
  });

  test("an approval still on its way when the turn ends shows approved, not closed", async () => {
    const app = await withPlan("p1", PLAN, { init: [holdPlanAnswers] });
    await app.tid("plan-approve").click();
    await app.waitForOp("answer_plan", (a) => a.call_id === "p1");
    // The plan ran and the turn ended before the call returned.
    await app.emitAll([E.turnComplete("completed")]);
    await app.page.evaluate(() => window.__gdReleaseAnswer());
    await app.page.waitForSelector(`${sel("plan-pane")}[data-status="approved"]`);
    await app.close();
  });
});

describe("entering plan mode", () => {
  test("the model's request to plan is asked as a plan-mode card", async () => {
    const app = await env.open();
    await app.sendPrompt("refactor it");
    await app.emitAll([
      E.turnStarted(),
      E.toolRequest("e1", "enter_plan_mode", { reason: "a risky refactor" }),
      E.confirmation("e1", "enter_plan_mode", {
        type: "info",
        title: "Enter Plan Mode",
        prompt: "This will restrict the agent to read-only tools to allow for safe planning.",
        urls: [],
      }),
    ]);
    const card = app.tid("confirmation");
    await card.waitFor();
    assert.equal(await card.locator(".confirm-kind").textContent(), "Plan mode");
    assert.match(await card.innerText(), /restrict the agent to read-only tools/);
    await app.tid("approve").click();
    const call = await app.waitForOp("confirm_tool");
    assert.equal(call.args.outcome, "proceed_once");
    // The session now plans: the switch follows the turn context core echoes.
    await app.emitAll([{ type: "turn_context", approval_mode: "plan", model: "gemini-2.5-pro", review_mode: false }]);
    assert.equal(await app.tid("approval-mode").inputValue(), "plan");
    await app.close();
  });
});

describe("approval mode switch", () => {
  test("offers Plan", async () => {
    const app = await env.open();
    const values = await app.tid("approval-mode").locator("option").evaluateAll((os) => os.map((o) => o.value));
    assert.deepEqual(values, ["default", "auto_edit", "yolo", "plan"]);
    await app.close();
  });
});

// Issue 34, item 10a: plan mode was shown only in the header's drop-down. While it is on, the
// composer says so (a banner in the prompt box, on screen at every width), whether the user or
// the model turned it on, and the banner leaves it.
describe("plan mode banner", () => {
  for (const [width, colorScheme] of [
    [800, "dark"],
    [1440, "light"],
  ]) {
    test(`${width} px ${colorScheme}: the composer shows plan mode while it is on, and leaves it`, async () => {
      const app = await env.open({ viewport: { width, height: 700 }, colorScheme });
      assert.equal(await app.tid("plan-mode-banner").count(), 0, "not in the default mode");
      await app.tid("approval-mode").selectOption("plan");
      const banner = app.tid("plan-mode-banner");
      await banner.waitFor();
      assert.match(await banner.innerText(), /Plan mode/);
      // In the prompt box, whole and on screen.
      const box = await app.page.evaluate(() => {
        const b = document.querySelector('[data-testid="plan-mode-banner"]').getBoundingClientRect();
        const form = document.querySelector('[data-testid="composer-form"]').getBoundingClientRect();
        const leave = /** @type {HTMLElement} */ (document.querySelector('[data-testid="plan-mode-leave"]'));
        const l = leave.getBoundingClientRect();
        return {
          inForm: b.top >= form.top && b.bottom <= form.bottom && b.left >= form.left && b.right <= form.right,
          onScreen: b.top >= 0 && b.bottom <= innerHeight && b.right <= innerWidth,
          leaveInside: l.left >= b.left && l.right <= b.right + 0.5 && leave.scrollWidth <= leave.clientWidth,
        };
      });
      assert.deepEqual(box, { inForm: true, onScreen: true, leaveInside: true });
      await banner.screenshot({ path: screenshotPath(`plan-mode-banner-${width}-${colorScheme}.png`) });
      const from = app.calls.length;
      await app.tid("plan-mode-leave").click();
      const op = await app.waitForOp("override_turn_context", () => true, { from });
      assert.equal(op.args.approval_mode, "default");
      await banner.waitFor({ state: "detached" });
      assert.equal(await app.tid("approval-mode").inputValue(), "default");
      // The model entering plan mode (core's turn context) shows it too.
      await app.emit({ type: "turn_context", approval_mode: "plan", model: "gemini-2.5-pro", review_mode: false });
      await banner.waitFor();
      await app.close();
    });
  }
});

describe("todo checklist", () => {
  const todos = (id, list) => [
    E.toolRequest(id, "write_todos", { todos: list }),
    E.toolResponse(id, "write_todos", "success", "updated"),
  ];

  test("updates live on every write_todos call", async () => {
    const app = await env.open();
    await app.sendPrompt("work");
    await app.emitAll([
      E.turnStarted(),
      ...todos("t1", [
        { description: "Read the code", status: "in_progress" },
        { description: "Change the greeting", status: "pending" },
        { description: "Run the tests", status: "pending" },
      ]),
    ]);
    await app.tid("todo-checklist").waitFor();
    const statuses = () => app.tid("todo-item").evaluateAll((items) => items.map((i) => i.dataset.status));
    assert.deepEqual(await statuses(), ["in_progress", "pending", "pending"]);
    await app.emitAll(
      todos("t2", [
        { description: "Read the code", status: "completed" },
        { description: "Change the greeting", status: "in_progress" },
        { description: "Run the tests", status: "cancelled" },
      ]),
    );
    await app.page.waitForFunction(() => document.querySelector('[data-testid="todo-item"]')?.getAttribute("data-status") === "completed");
    assert.deepEqual(await statuses(), ["completed", "in_progress", "cancelled"]);
    assert.equal(await app.tid("todo-count").innerText(), "1/3");
    // A call that failed does not change the list.
    await app.emitAll([
      E.toolRequest("t3", "write_todos", { todos: [{ description: "Wrong", status: "pending" }] }),
      E.toolResponse("t3", "write_todos", "error", null, "Only one task can be in_progress"),
    ]);
    assert.deepEqual(await statuses(), ["completed", "in_progress", "cancelled"]);
    await app.page.locator(sel("todo-checklist")).screenshot({ path: screenshotPath("todo-checklist-light.png") });
    await app.close();
  });
});
