// Topics as chapters (Gemini CLI 0.61's `update_topic`): a chapter heading where the model
// started a new topic, the collapsible outline that jumps to it, for live and resumed
// conversations, and nothing at all when a conversation has no topics.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { after, before, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, setup } from "./support/harness.mjs";

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** axe-core on the page: contrast problems and serious or critical violations, as lines. */
async function audit(app) {
  await app.page.evaluate(AXE);
  const results = await app.page.evaluate(async () => {
    // @ts-ignore axe is the injected global
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 4).map((n) => n.target.join(" ")) }));
  });
  return results.filter((v) => v.id === "color-contrast" || v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.join(", ")}`);
}

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const topic = (id, args) => [E.toolRequest(id, "update_topic", args), E.toolState(id, "executing"), E.toolResponse(id, "update_topic", "success", "topic")];

/** `count` finished directory listings: rows to scroll past. */
function listings(prefix, count) {
  const events = [];
  for (let i = 0; i < count; i++) {
    const id = `${prefix}${i}`;
    events.push(E.toolRequest(id, "list_directory", { dir_path: `/home/dev/project/dir${i}` }), E.toolResponse(id, "list_directory", "success", `Listed ${i} items.`));
  }
  return events;
}

const live = [
  E.turnStarted(),
  ...topic("u1", { title: "Explore the parser", summary: "Nothing done yet. We read the lexer first.", strategic_intent: "Find the parser's entry point." }),
  ...listings("a", 12),
  // The same title, and a call with only an intent: no new chapter.
  ...topic("u2", { title: "Explore the parser", strategic_intent: "Read lexer.rs." }),
  ...topic("u3", { strategic_intent: "Check the tests." }),
  ...listings("b", 12),
  ...topic("u4", { title: "Rewrite\nthe grammar", summary: "The parser is hand-written; the grammar goes first.", strategic_intent: "Write grammar.rs." }),
  ...listings("c", 12),
  E.delta("Done."),
  E.turnComplete(),
];

const inView = (app, index) =>
  app.page.evaluate((i) => {
    const scroller = document.querySelector('[data-testid="scroller"]').getBoundingClientRect();
    const chapter = document.querySelectorAll('[data-testid="topic-chapter"]')[i];
    if (!chapter) return false;
    const r = chapter.getBoundingClientRect();
    return r.top >= scroller.top - 1 && r.bottom <= scroller.bottom + 1;
  }, index);

const chapterTitles = (app) => app.page.locator(sel("topic-chapter-title")).allInnerTexts();

test("no topics: no chapters, no outline", async () => {
  const app = await env.open();
  await app.sendPrompt("hi");
  await app.emitAll([E.turnStarted(), ...listings("x", 2), E.delta("Hello."), E.turnComplete()]);
  await app.tid("turn-footer").waitFor();
  assert.equal(await app.tid("topic-chapter").count(), 0);
  assert.equal(await app.tid("topics-outline-toggle").count(), 0);
  assert.equal(await app.tid("topics-outline").count(), 0);
  await app.close();
});

for (const colorScheme of ["light", "dark"]) {
  test(`live: a chapter where the topic changed; the outline jumps to it (${colorScheme})`, async () => {
    const app = await env.open({ colorScheme, viewport: { width: 1100, height: 700 } });
    await app.sendPrompt("rewrite the parser");
    await app.emitAll(live);
    await app.tid("turn-footer").waitFor();
    // Following the end: the last chapter is on screen, the first one is not rendered or not in view.
    await app.page.waitForFunction(() => document.querySelectorAll('[data-testid="topic-chapter"]').length >= 1);
    assert.equal(await app.tid("topics-outline").count(), 0, "the outline starts collapsed");
    await app.tid("topics-outline-toggle").click();
    const items = app.tid("topics-outline-item");
    assert.deepEqual(
      (await items.allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim()),
      ["1 Explore the parser", "2 Rewrite the grammar"],
    );
    assert.equal(await inView(app, 0), false);

    await items.nth(0).click();
    await app.page.waitForFunction(() => {
      const s = document.querySelector('[data-testid="scroller"]').getBoundingClientRect();
      const c = document.querySelector('[data-testid="topic-chapter"]');
      if (!c) return false;
      const r = c.getBoundingClientRect();
      return r.top >= s.top - 1 && r.bottom <= s.bottom + 1;
    });
    assert.equal((await chapterTitles(app))[0], "Explore the parser");
    assert.equal(await app.tid("jump-to-latest").count(), 1, "the list no longer follows the end");

    // The summary and intent show on expanding (and on hover, as the title).
    const first = app.tid("topic-chapter").first();
    assert.match((await first.locator(sel("topic-chapter-toggle")).getAttribute("title")) ?? "", /We read the lexer first/);
    assert.equal(await first.locator(sel("topic-chapter-summary")).count(), 0);
    await first.locator(sel("topic-chapter-toggle")).click();
    const summary = await first.locator(sel("topic-chapter-summary")).innerText();
    assert.match(summary, /Nothing done yet\. We read the lexer first\./);
    assert.match(summary, /Intent: Find the parser's entry point\./);
    await app.page.screenshot({ path: screenshotPath(`topics-${colorScheme}.png`) });
    assert.deepEqual(await audit(app), [], "chapters and outline pass axe");

    await items.nth(1).click();
    await app.page.waitForFunction(() => {
      const s = document.querySelector('[data-testid="scroller"]').getBoundingClientRect();
      const titles = [...document.querySelectorAll('[data-testid="topic-chapter"]')].filter((c) => c.textContent.includes("Rewrite the grammar"));
      if (titles.length !== 1) return false;
      const r = titles[0].getBoundingClientRect();
      return r.top >= s.top - 1 && r.bottom <= s.bottom + 1;
    });
    await app.tid("topics-outline-toggle").click();
    assert.equal(await app.tid("topics-outline").count(), 0, "the toggle collapses the outline");
    await app.close();
  });
}

test("a failed topic call starts no chapter; an intent-only call is a card showing the intent", async () => {
  const app = await env.open();
  await app.sendPrompt("go");
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest("f1", "update_topic", { title: "Broken" }),
    E.toolResponse("f1", "update_topic", "error", null, "params must have required property 'strategic_intent'"),
    ...topic("i1", { strategic_intent: "Check the tests." }),
    E.delta("ok"),
    E.turnComplete(),
  ]);
  await app.tid("turn-footer").waitFor();
  assert.equal(await app.tid("topic-chapter").count(), 0);
  assert.equal(await app.tid("topics-outline-toggle").count(), 0);
  const intent = app.page.locator(`${sel("tool-card")}[data-tool="update_topic"]`).nth(1);
  assert.match(await intent.innerText(), /Topic[\s\S]*Check the tests\./);
  await app.close();
});

/** A stored conversation with two topics, resumed when the app starts. */
function resumedHistory() {
  const now = Date.now();
  const base = { in_context: true, truncated: false, size: 10, thoughts: [], usage: null, model: null, parts: null, text: "" };
  const m = (seq, kind, fields) => ({ ...base, id: `r-m${seq}`, seq, kind, role: kind === "model" ? "model" : "user", created_ms: now - 50_000 + seq * 1000, tool_calls: [], ...fields });
  const call = (id, args) => ({ functionCall: { id, name: "update_topic", args } });
  const first = { title: "Survey", summary: "Looked at the layout.", strategic_intent: "List the crates." };
  const second = { title: "Fix the bug", summary: "Found it in the lexer.", strategic_intent: "Patch lexer.rs." };
  const messages = [
    m(1, "prompt", { text: "fix the lexer bug" }),
    m(2, "model", { parts: [call("t1", first)], tool_calls: [{ call_id: "t1", name: "update_topic", args: first }] }),
    m(3, "tool_result", { tool_calls: [{ call_id: "t1", name: "update_topic", status: "success", summary: "Current topic" }] }),
    m(4, "model", { parts: [call("t2", second)], tool_calls: [{ call_id: "t2", name: "update_topic", args: second }] }),
    m(5, "tool_result", { tool_calls: [{ call_id: "t2", name: "update_topic", status: "success", summary: "Current topic" }] }),
    m(6, "model", { parts: [{ text: "Fixed." }], text: "Fixed." }),
  ];
  const summary = {
    id: "r1",
    workspace: "/home/dev/project",
    title: "Lexer bug",
    created_ms: now - 60_000,
    updated_ms: now - 30_000,
    model: "gemini-2.5-pro",
    message_count: messages.length,
    tokens: { prompt: 0, output: 0, cached: 0, thoughts: 0, tool: 0, total: 0 },
    source: "gemini-desktop",
    origin: null,
  };
  return { summary, messages };
}

function installResumed(data) {
  window.__gdExtraIPC = (cmd) => {
    switch (cmd) {
      case "history_last_session":
        return data.summary;
      case "history_list":
        return [data.summary];
      case "history_gemini_cli_sessions":
        return [];
      case "history_page":
        return { messages: data.messages, has_before: false, has_after: false };
      default:
        return undefined;
    }
  };
}

test("resumed: the stored topics are chapters and in the outline", async () => {
  const app = await env.open({ init: [installResumed, resumedHistory()] });
  await app.page.waitForFunction(() => document.querySelectorAll('[data-testid="topic-chapter"]').length === 2);
  assert.deepEqual(await chapterTitles(app), ["Survey", "Fix the bug"]);
  await app.tid("topics-outline-toggle").click();
  assert.equal(await app.tid("topics-outline-item").count(), 2);
  await app.close();
});
