// The usage meter in the header and the usage panel behind it: the conversation's tokens (core's
// figures: each turn's `turn_complete.usage`, the session's `session_stats` asked for after every
// turn), the per-turn, per-model (with request roles) and per-tool tables, lines changed, and the
// quota buckets (`quota`) with their reset times — or an honest "unknown".
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

const turnUsage = (prompt, cached, output, thoughts, tool) => ({
  ...E.turnUsage(prompt, output),
  cached_tokens: cached,
  thoughts_tokens: thoughts,
  tool_tokens: tool,
  total_tokens: prompt + output + thoughts + tool,
});

const roleStats = (role, requests, prompt, output) => ({
  role,
  requests,
  errors: 0,
  latency_ms: 100 * requests,
  prompt_tokens: prompt,
  cached_tokens: 0,
  output_tokens: output,
  thoughts_tokens: 0,
  tool_tokens: 0,
  total_tokens: prompt + output,
});

/** Core's statistics after the two turns below (plus one routing request). */
const stats = {
  session_id: "s1",
  started_ms: Date.now() - 30_000,
  duration_ms: 30_000,
  turns: 2,
  api_time_ms: 2_000,
  tool_time_ms: 500,
  models: [
    {
      model: "gemini-2.5-pro",
      requests: 3,
      errors: 0,
      errors_by_type: {},
      latency_ms: 1_800,
      prompt_tokens: 3_000,
      cached_tokens: 700,
      output_tokens: 150,
      thoughts_tokens: 40,
      tool_tokens: 9,
      total_tokens: 3_199,
      roles: [roleStats("main", 3, 3_000, 150)],
    },
    {
      model: "gemini-2.5-flash-lite",
      requests: 1,
      errors: 0,
      errors_by_type: {},
      latency_ms: 200,
      prompt_tokens: 500,
      cached_tokens: 0,
      output_tokens: 12,
      thoughts_tokens: 0,
      tool_tokens: 0,
      total_tokens: 512,
      roles: [roleStats("utility_router", 1, 500, 12)],
    },
  ],
  tools: {
    calls: 2,
    success: 2,
    failed: 0,
    duration_ms: 500,
    decisions: { accept: 1, reject: 0, modify: 0, auto_accept: 1 },
    by_name: [
      { name: "replace", calls: 1, success: 1, failed: 0, cancelled: 0, duration_ms: 300, decisions: { accept: 1, reject: 0, modify: 0, auto_accept: 0 } },
      { name: "read_file", calls: 1, success: 1, failed: 0, cancelled: 0, duration_ms: 200, decisions: { accept: 0, reject: 0, modify: 0, auto_accept: 1 } },
    ],
  },
  files: { lines_added: 12, lines_removed: 4 },
};

const quota = {
  type: "quota",
  source: "code_assist",
  buckets: [
    { model: "gemini-2.5-pro", remaining_fraction: 0.2, remaining_amount: 20, reset_time: "2031-02-03T04:05:06Z", token_type: "REQUESTS" },
    { model: "gemini-2.5-flash", remaining_fraction: 0.9, reset_time: "2031-02-03T10:00:00Z" },
  ],
  fetched_ms: Date.now(),
};

/** Two finished turns; resolves once the meter asked for core's statistics after each. */
async function twoTurns(app) {
  await app.sendPrompt("first");
  await app.emitAll([E.turnStarted("t1"), E.delta("one"), E.turnComplete("completed", "t1", turnUsage(1_000, 200, 50, 10, 4))]);
  await app.waitForOp("stats");
  await app.sendPrompt("second");
  await app.emitAll([E.turnStarted("t2"), E.delta("two"), E.turnComplete("completed", "t2", turnUsage(2_000, 500, 100, 30, 5))]);
  await app.until(() => document.querySelectorAll('[data-testid="turn-footer"]').length === 2);
}

const text = async (app, id) => (await app.tid(id).innerText()).trim();

describe("usage meter", () => {
  test("shows the turns' tokens at once, then core's totals and the current model's quota with its reset time", async () => {
    const app = await env.open();
    // Nothing known yet: no bar, and the tooltip says the quota is unknown.
    assert.equal(await app.tid("usage-meter-tokens").getAttribute("data-value"), "0");
    assert.equal(await app.tid("usage-meter-quota").count(), 0);
    assert.match(await app.tid("usage-meter").getAttribute("title"), /Remaining quota: unknown/);

    await twoTurns(app);
    // Before core answers: the turns' own sums.
    assert.equal(await app.tid("usage-meter-tokens").getAttribute("data-value"), String(1_064 + 2_135));
    // One when the session started (what a reopened conversation used), one after each turn.
    assert.equal(app.opsOf("stats").length, 3);
    // The footer of each turn shows its tokens too.
    const footer = app.page.locator(sel("turn-footer")).nth(1);
    assert.equal((await footer.getByTestId("turn-usage-prompt").innerText()).trim(), "↑2,000");
    assert.match(await footer.getByTestId("turn-usage-cached").innerText(), /500 cached/);
    assert.match(await footer.getByTestId("turn-usage-thoughts").innerText(), /30 thinking/);
    assert.match(await footer.getByTestId("turn-usage-tool").innerText(), /5 tool/);

    // Core's answers (one per request: no /stats card in the chat).
    await app.emit({ type: "session_stats", stats });
    await app.emit({ type: "session_stats", stats });
    await app.until(() => document.querySelector('[data-testid="usage-meter-tokens"]')?.getAttribute("data-value") === "3711");
    assert.equal(await text(app, "usage-meter-tokens"), "3.7k");
    assert.equal(await app.tid("stats-card").count(), 0);

    await app.emit(quota);
    await app.tid("usage-meter-quota").waitFor();
    assert.equal(await text(app, "usage-meter-quota"), "20%");
    assert.equal(await app.tid("usage-meter").getAttribute("data-level"), "warn");
    assert.match(await app.tid("usage-meter").getAttribute("title"), /Quota for gemini-2\.5-pro: 20% left, resets .*2031/);
    await app.tid("app-header").screenshot({ path: screenshotPath("usage-meter-light.png") });
    await app.close();
  });

  test("/stats still gets its card while the meter asks for figures", async () => {
    const app = await env.open();
    await twoTurns(app);
    assert.equal(app.opsOf("stats").length, 3);
    const from = app.calls.length;
    await app.tid("prompt-input").fill("/stats model");
    await app.tid("prompt-input").press("Enter");
    // Four requests are out (three from the meter, then /stats'): the first answer is the card's.
    await app.waitForOp("stats", () => true, { from });
    await app.emit({ type: "session_stats", stats });
    const card = app.page.locator(`${sel("stats-card")}[data-view="model"]`);
    await card.waitFor();
    const roles = await card.getByTestId("stats-role-row").evaluateAll((rows) => rows.map((r) => `${r.dataset.model}/${r.dataset.role}`));
    assert.deepEqual(roles, ["gemini-2.5-pro/main", "gemini-2.5-flash-lite/utility_router"]);
    await app.emit({ type: "session_stats", stats });
    await app.emit({ type: "session_stats", stats });
    await app.until(() => document.querySelector('[data-testid="usage-meter-tokens"]')?.getAttribute("data-value") === "3711");
    assert.equal(await app.tid("stats-card").count(), 1, "the meter's answers add no card");
    await app.close();
  });
});

describe("usage panel", () => {
  for (const colorScheme of ["light", "dark"]) {
    test(`${colorScheme}: totals, turns, models with roles, tools, lines changed and quota buckets`, async () => {
      const app = await env.open({ colorScheme, viewport: { width: 1280, height: 900 } });
      await twoTurns(app);
      await app.emit({ type: "session_stats", stats });
      await app.emit(quota);
      const from = app.calls.length;
      await app.tid("usage-meter").click();
      const panel = app.tid("usage-panel");
      await panel.waitFor();
      // Opening asks for fresh figures.
      await app.waitForOp("stats", () => true, { from });
      assert.equal(await text(app, "usage-total-prompt"), "3,500");
      assert.match(await text(app, "usage-total-cached"), /^700 \(20\.0% of prompt\)$/);
      assert.equal(await text(app, "usage-total-output"), "162");
      assert.equal(await text(app, "usage-total-thoughts"), "40");
      assert.equal(await text(app, "usage-total-tool"), "9");
      assert.equal(await text(app, "usage-total-total"), "3,711");
      assert.equal(await text(app, "usage-total-requests"), "4");
      assert.equal(await text(app, "usage-lines-added"), "+12");
      assert.equal(await text(app, "usage-lines-removed"), "−4");

      const turns = panel.getByTestId("usage-turn-row");
      assert.equal(await turns.count(), 2);
      const second = turns.nth(1);
      const cells = async (row, ids) => Promise.all(ids.map(async (id) => (await row.getByTestId(id).innerText()).trim()));
      assert.deepEqual(await cells(second, ["usage-turn-prompt", "usage-turn-cached", "usage-turn-output", "usage-turn-thoughts", "usage-turn-tool"]), ["2,000", "500", "100", "30", "5"]);

      const roles = await panel.getByTestId("usage-role-row").evaluateAll((rows) => rows.map((r) => `${r.dataset.model}/${r.dataset.role}`));
      assert.deepEqual(roles, ["gemini-2.5-pro/main", "gemini-2.5-flash-lite/utility_router"]);
      const pro = panel.locator(`${sel("usage-model-row")}[data-model="gemini-2.5-pro"]`);
      assert.deepEqual(await cells(pro, ["usage-model-requests", "usage-model-prompt", "usage-model-output"]), ["3", "3,000", "150"]);
      const replace = panel.locator(`${sel("usage-tool-row")}[data-tool="replace"]`);
      assert.deepEqual(await cells(replace, ["usage-tool-calls", "usage-tool-decisions"]), ["1", "1 · 0 · 0 · 0"]);

      const buckets = panel.getByTestId("usage-quota-bucket");
      assert.equal(await buckets.count(), 2);
      assert.equal(await buckets.first().getAttribute("data-model"), "gemini-2.5-pro");
      assert.equal((await buckets.first().getByTestId("usage-quota-percent").innerText()).trim(), "20%");
      assert.equal(await buckets.first().getByTestId("usage-quota-reset").getAttribute("data-reset"), "2031-02-03T04:05:06Z");
      assert.match(await buckets.first().getByTestId("usage-quota-reset").innerText(), /resets .*2031.*\(in \d+ days\)/);
      await panel.screenshot({ path: screenshotPath(`usage-panel-${colorScheme}.png`) });

      // Esc closes it, the focus back on the meter.
      await app.page.keyboard.press("Escape");
      await panel.waitFor({ state: "detached" });
      assert.ok(await app.tid("usage-meter").evaluate((el) => el === document.activeElement));
      await app.close();
    });
  }

  test("an API key: the quota is unknown, and a rate-limit answer is shown as it came", async () => {
    const app = await env.open();
    await app.emit({ type: "quota", source: "gemini_api", buckets: [], note: "This backend does not report the remaining quota.", fetched_ms: Date.now() });
    await app.tid("usage-meter").click();
    await app.tid("usage-panel").waitFor();
    assert.equal(await app.tid("usage-quota").getAttribute("data-source"), "gemini_api");
    assert.match(await text(app, "usage-quota-unknown"), /does not report/);
    assert.equal(await app.tid("usage-no-turns").count(), 1);
    await app.emit({ type: "quota", source: "gemini_api", buckets: [], note: "Rate limit reached (429): Quota exceeded", fetched_ms: Date.now() });
    await app.until(() => /429/.test(document.querySelector('[data-testid="usage-quota-unknown"]')?.textContent ?? ""));
    assert.equal(await app.tid("usage-meter-quota").count(), 0);
    await app.close();
  });

  test("/clear starts the counts again", async () => {
    const app = await env.open();
    await twoTurns(app);
    await app.emit({ type: "session_stats", stats });
    await app.emit({ type: "conversation_cleared", session_id: "conv-2" });
    await app.until(() => document.querySelector('[data-testid="usage-meter-tokens"]')?.getAttribute("data-value") === "0");
    await app.close();
  });
});
