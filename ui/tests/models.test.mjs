// Models: the model `auto` routed a turn to (the turn's footer), and the quota-fallback prompt
// whose buttons answer core's `fallback_requested` with `answer_fallback`.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const routed = (model = "gemini-3.8-flash") => ({
  type: "model_routed",
  requested: "auto",
  model,
  source: "agent-router/NumericalClassifier (Default)",
  reason: "[Score: 10 / Threshold: 90] Simple read operation.",
  latency_ms: 120,
});

const fallback = (keep_trying = true) => ({
  type: "fallback_requested",
  failed_model: "gemini-3.1-pro-preview",
  fallback_model: "gemini-3-flash-preview",
  message: "Usage limit reached for all Pro models.",
  keep_trying,
});

describe("turn model", () => {
  test("a routed turn's footer shows the chosen model, noted as auto", async () => {
    const app = await env.open();
    await app.sendPrompt("List the files here");
    await app.emitAll([
      E.turnStarted(),
      routed(),
      E.delta("Three files."),
      E.turnComplete("completed", "t1", E.turnUsage(900, 20, { model: "gemini-3.8-flash" })),
    ]);
    const model = app.tid("turn-model");
    await model.waitFor();
    assert.equal(await model.innerText(), "gemini-3.8-flash · auto");
    assert.equal(await model.getAttribute("data-routed"), "true");
    assert.match(await app.tid("turn-footer").getAttribute("title"), /Model: gemini-3\.8-flash \(chosen by auto\)/);

    // The next turn on a pinned model: its model, without the note.
    await app.sendPrompt("Again");
    await app.emitAll([
      E.turnStarted("t2"),
      E.delta("Still three."),
      E.turnComplete("completed", "t2", E.turnUsage(950, 10, { model: "gemini-2.5-pro" })),
    ]);
    await app.until(() => document.querySelectorAll('[data-testid="turn-model"]').length === 2);
    const second = app.tid("turn-model").nth(1);
    assert.equal(await second.innerText(), "gemini-2.5-pro");
    assert.equal(await second.getAttribute("data-routed"), "false");
    await app.close();
  });

  test("a turn without requests shows no model", async () => {
    const app = await env.open();
    await app.sendPrompt("hi");
    await app.emitAll([E.turnStarted(), E.turnComplete("failed", "t1", E.turnUsage(0, 0))]);
    await app.tid("turn-footer").waitFor();
    assert.equal(await app.tid("turn-model").count(), 0);
    await app.close();
  });
});

describe("fallback prompt", () => {
  for (const [button, choice] of [
    ["fallback-accept", "switch"],
    ["fallback-decline", "stop"],
    ["fallback-retry", "keep_trying"],
  ]) {
    test(`${button} answers ${choice}`, async () => {
      const app = await env.open();
      await app.sendPrompt("do it");
      await app.emitAll([E.turnStarted(), fallback()]);
      const prompt = app.tid("fallback-prompt");
      await prompt.waitFor();
      assert.match(await prompt.innerText(), /Switch to gemini-3-flash-preview for this conversation\?/);
      assert.match(await prompt.innerText(), /Usage limit reached for all Pro models\./);
      await app.tid(button).click();
      const op = await app.waitForOp("answer_fallback");
      assert.deepEqual(op.args, { sessionId: "s1", choice });
      await prompt.waitFor({ state: "detached" });
      assert.equal(app.opsOf("answer_fallback").length, 1);
      await app.close();
    });
  }

  test("no Keep trying for a quota that will not reset soon; the turn's end withdraws it", async () => {
    const app = await env.open();
    await app.sendPrompt("do it");
    await app.emitAll([E.turnStarted(), fallback(false)]);
    await app.tid("fallback-prompt").waitFor();
    assert.equal(await app.tid("fallback-retry").count(), 0);
    assert.equal(await app.tid("fallback-accept").innerText(), "Switch to gemini-3-flash-preview");
    await app.emit(E.turnComplete("cancelled"));
    await app.tid("fallback-prompt").waitFor({ state: "detached" });
    assert.equal(app.opsOf("answer_fallback").length, 0);
    await app.close();
  });

  test("a waiting prompt marks the conversation as needing the user and calls them", async () => {
    const app = await env.open();
    await app.sendPrompt("do it");
    await app.page.evaluate(() => window.dispatchEvent(new Event("blur")));
    await app.emitAll([E.turnStarted(), fallback()]);
    const call = await app.waitForCall("attention_notify");
    assert.equal(call.args.request.reason, "approval");
    assert.match(call.args.request.body, /switch to gemini-3-flash-preview\?/);
    const item = app.tid("conversation-item").first();
    assert.equal(await item.getAttribute("data-status"), "approval");
    await app.emit(E.turnComplete("failed"));
    await app.until(() => document.querySelector('[data-testid="conversation-item"]')?.getAttribute("data-status") === "failed");
    await app.close();
  });

  for (const colorScheme of ["light", "dark"]) {
    test(`screenshot (${colorScheme})`, async () => {
      const app = await env.open({ colorScheme });
      await app.sendPrompt("do it");
      await app.emitAll([E.turnStarted(), fallback()]);
      await app.tid("fallback-prompt").waitFor();
      await app.tid("fallback-prompt").screenshot({ path: screenshotPath(`fallback-prompt-${colorScheme}.png`) });
      await app.close();
    });
  }
});
