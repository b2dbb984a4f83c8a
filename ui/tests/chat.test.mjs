// The conversation: composer keys, streaming Markdown, thoughts, tool cards, notices, cancel.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

/** Waits for the next animation frame in the page (lets throttled rendering run). */
const frame = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(null))));

describe("header and composer", () => {
  test("shows app info, connection and marks the page ready", async () => {
    const app = await env.open();
    const { page } = app;
    assert.equal(await app.tid("app-title").innerText(), "Gemini Desktop");
    assert.equal(await app.tid("app-version").innerText(), "v0.1.0");
    assert.equal(await app.tid("workspace-path").innerText(), "/home/dev/project");
    assert.equal(await page.evaluate(() => document.body.dataset.ready), "true");
    await waitForText(page, sel("connection-text"), "gemini-2.5-pro");
    assert.equal(await app.tid("approval-mode").inputValue(), "default");
    assert.ok(await app.tid("send").isEnabled());
    assert.ok(!(await app.tid("cancel").isVisible()), "no Stop button while idle");
    assert.match(await app.tid("composer-hint").innerText(), /Enter to send/);
    assert.ok(await app.tid("message-list").count());
    assert.equal(await page.locator("style").count(), 0, "no <style> elements (CSP: style-src 'self')");
    await app.close();
  });

  test("Enter sends, Shift+Enter adds a new line", async () => {
    const app = await env.open();
    const input = app.tid("prompt-input");
    await input.click();
    await app.page.keyboard.type("line one");
    await app.page.keyboard.press("Shift+Enter");
    await app.page.keyboard.type("line two");
    assert.equal(await input.inputValue(), "line one\nline two", "Shift+Enter inserted a newline");
    assert.equal(app.opsOf("user_turn").length, 0);
    await app.page.keyboard.press("Enter");
    const call = await app.waitForOp("user_turn");
    assert.deepEqual([call.args.sessionId, call.args.items], ["s1", [{ type: "text", text: "line one\nline two" }]]);
    assert.equal(await input.inputValue(), "", "the composer is cleared");
    await waitForText(app.page, sel("message-user"), "line one\nline two");
    // A turn runs: Send is disabled, Enter does not send again.
    assert.ok(await app.tid("send").isDisabled());
    await input.fill("again");
    await input.press("Enter");
    await app.emitAll([E.turnStarted(), E.delta("ok"), E.turnComplete()]);
    await waitForText(app.page, sel("message-model"), "ok");
    assert.equal(app.opsOf("user_turn").length, 1, "Enter during a turn sent nothing");
    assert.equal(await input.inputValue(), "again", "the draft is kept");
    assert.ok(await app.tid("send").isEnabled());
    await app.close();
  });

  test("the Stop button and Esc interrupt the running turn", async () => {
    const app = await env.open();
    const { page } = app;
    await app.sendPrompt("take your time");
    await app.tid("cancel").waitFor({ state: "visible" });
    assert.match(await app.tid("composer-hint").innerText(), /Esc to stop/);
    await app.tid("cancel").click();
    const first = await app.waitForOp("interrupt");
    assert.deepEqual(first.args, { sessionId: "s1" });
    const from = app.calls.length;
    await page.keyboard.press("Escape");
    await app.waitForOp("interrupt", () => true, { from });
    await app.emitAll([E.turnStarted(), E.turnComplete("cancelled")]);
    await waitForText(page, sel("notice"), "Cancelled.");
    await app.tid("cancel").waitFor({ state: "hidden" });
    assert.ok(await app.tid("send").isEnabled(), "Send is available again");
    // Idle: Esc does nothing.
    const before = app.opsOf("interrupt").length;
    await page.keyboard.press("Escape");
    await app.sendPrompt("next");
    assert.equal(app.opsOf("interrupt").length, before);
    await app.close();
  });
});

describe("streaming", () => {
  test("deltas render as Markdown without re-creating earlier messages", async () => {
    const app = await env.open();
    const { page } = app;
    await app.sendPrompt("first question");
    await app.emitAll([E.turnStarted("t1"), E.delta("An **earlier** answer."), E.usage(), E.turnComplete("completed", "t1", E.turnUsage(1200, 300))]);
    await waitForText(page, sel("message-model"), "An earlier answer.");
    await waitForText(page, sel("turn-footer"), /1,500 tokens/);

    await app.sendPrompt("second question");
    // Remember the earlier messages' nodes and watch them for any change.
    await page.evaluate(() => {
      const w = /** @type {any} */ (window);
      w.__earlier = {
        user: document.querySelector('[data-testid="message-user"]'),
        model: document.querySelector('[data-testid="message-model"]'),
        strong: document.querySelector('[data-testid="message-model"] strong'),
        footer: document.querySelector('[data-testid="turn-footer"]'),
      };
      w.__mutations = 0;
      const mo = new MutationObserver((records) => (w.__mutations += records.length));
      for (const el of Object.values(w.__earlier)) mo.observe(el, { subtree: true, childList: true, characterData: true, attributes: true });
      w.__mo = mo;
    });

    const markdown = [
      "## Plan\n\n",
      "Here is what I will do:\n\n",
      "1. Read `main.rs`\n2. Make it **faster**\n\n",
      "```rust\nfn main() {\n    let answer = 42;\n    println!(\"{answer}\");\n}\n```\n\n",
      "Done, see [the docs](https://example.com/docs).",
    ].join("");
    await app.emit(E.turnStarted("t2"));
    // Stream it in small pieces, a few per frame.
    const pieces = markdown.match(/[\s\S]{1,3}/g) ?? [];
    let firstBlock = false;
    for (let i = 0; i < pieces.length; i += 8) {
      await app.emitAll(pieces.slice(i, i + 8).map(E.delta));
      await frame(page);
      if (!firstBlock && i > 60) {
        // The heading is complete by now: remember its node.
        firstBlock = await page.evaluate(() => {
          const h = document.querySelectorAll('[data-testid="message-model"]')[1]?.querySelector("h2");
          /** @type {any} */ (window).__heading = h;
          return !!h;
        });
      }
    }
    assert.ok(firstBlock, "the heading rendered while streaming");
    await app.emitAll([E.usage(2000, 500), E.turnComplete("completed", "t2", E.turnUsage(2000, 500))]);
    const text = await waitForText(page, sel("message-model"), /Done, see the docs\.$/, { index: 1 });
    assert.equal(
      text,
      'Plan\n\nHere is what I will do:\n\nRead main.rs\nMake it faster\nfn main() {\n    let answer = 42;\n    println!("{answer}");\n}\n\nDone, see the docs.',
    );

    const result = await page.evaluate(() => {
      const w = /** @type {any} */ (window);
      w.__mo.disconnect();
      const models = document.querySelectorAll('[data-testid="message-model"]');
      const latest = models[1];
      const code = latest?.querySelector("pre code");
      return {
        sameUser: w.__earlier.user === document.querySelector('[data-testid="message-user"]') && w.__earlier.user.isConnected,
        sameModel: w.__earlier.model === models[0] && w.__earlier.model.isConnected,
        sameStrong: w.__earlier.strong.isConnected,
        sameFooter: w.__earlier.footer.isConnected,
        mutations: w.__mutations,
        headingKept: w.__heading === latest?.querySelector("h2") && w.__heading.isConnected,
        codeClass: code?.className,
        keywords: [...(code?.querySelectorAll(".hljs-keyword") ?? [])].map((k) => k.textContent),
        streaming: latest?.getAttribute("data-streaming"),
        listItems: [...(latest?.querySelectorAll("ol > li") ?? [])].map((li) => li.textContent),
        inlineCode: latest?.querySelector("li code")?.textContent,
      };
    });
    assert.ok(result.sameUser, "the earlier user message kept its DOM node");
    assert.ok(result.sameModel && result.sameStrong, "the earlier answer kept its DOM nodes");
    assert.ok(result.sameFooter, "the earlier footer kept its DOM node");
    assert.equal(result.mutations, 0, "nothing in the earlier messages changed while streaming");
    assert.ok(result.headingKept, "completed blocks of the streaming answer are not re-rendered");
    assert.equal(result.codeClass, "hljs language-rust");
    assert.ok(result.keywords.includes("fn") && result.keywords.includes("let"), `highlighted keywords: ${result.keywords}`);
    assert.equal(result.streaming, "false");
    assert.deepEqual(result.listItems, ["Read main.rs", "Make it faster"]);
    assert.equal(result.inlineCode, "main.rs");
    await waitForText(page, sel("turn-footer"), /^2,500 tokens/);
    await app.close();
  });

  test("an answer streamed in pieces renders exactly as the same answer sent at once", async () => {
    // Lists that continue across blank lines, a list closed by a paragraph, an ordered list
    // started at 3, nested items, a blockquote, a table, a setext heading, a long code block
    // (highlighted only once it is complete) and a reference-style link defined at the end.
    const long = Array.from({ length: 160 }, (_, i) => `    let value_${i} = compute(${i}); // step ${i}`).join("\n");
    const markdown = [
      "# Report\n\nIntro paragraph with *emphasis* and `code`.\n\n",
      "- one\n- two\n\n- three (same list, now loose)\n\n",
      "A paragraph closes the list.\n\n",
      "3. third\n4. fourth\n   - nested\n\n   continued item text\n\n10. tenth, same list\n\n",
      "> quoted\n> lines\n\n",
      "| a | b |\n|---|---|\n| 1 | 2 |\n\n",
      "Setext heading\n--------------\n\n",
      "```rust\nfn main() {\n" + long + "\n}\n```\n\n",
      "See [the guide][guide] for more.\n\n",
      "[guide]: https://example.com/guide\n",
    ].join("");
    const app = await env.open();
    const { page } = app;
    await app.sendPrompt("stream it");
    await app.emit(E.turnStarted("t1"));
    // A frame every two characters (every 400 in the long code block), so that every prefix
    // of the tricky parts is rendered at some point.
    const code = markdown.indexOf("```rust");
    const pieces = [
      ...(markdown.slice(0, code).match(/[\s\S]{1,2}/g) ?? []),
      ...(markdown.slice(code).match(/[\s\S]{1,400}/g) ?? []),
    ];
    for (const piece of pieces) {
      await app.emit(E.delta(piece));
      await frame(page);
    }
    await app.emit(E.turnComplete("completed", "t1"));
    // The long answer pushes older rows out of the (virtualised) list: compare one at a time.
    const lastModelHtml = () =>
      page.evaluate(() => [...document.querySelectorAll('[data-testid="message-model"]')].at(-1)?.innerHTML ?? "");
    await waitForText(page, sel("message-model"), /See the guide for more\.$/);
    const streamed = await lastModelHtml();
    await app.sendPrompt("all at once");
    await app.emitAll([E.turnStarted("t2"), E.delta(markdown), E.turnComplete("completed", "t2")]);
    // user, answer, footer twice (the list is virtualised: the earlier rows may not be in the DOM).
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid="message-list"]')?.getAttribute("data-count") === "6" &&
        [...document.querySelectorAll('[data-testid="message-model"]')].at(-1)?.getAttribute("data-streaming") === "false",
    );
    const whole = await lastModelHtml();
    assert.ok(whole.includes('href="https://example.com/guide"'), "the reference link resolved");
    assert.ok(whole.includes("hljs-keyword"), "the long code block is highlighted in the end");
    assert.equal(streamed, whole);
    await app.close();
  });

  test("model HTML is sanitised and links open in the system browser", async () => {
    const app = await env.open();
    const { page } = app;
    await app.sendPrompt("links");
    await app.emitAll([
      E.turnStarted(),
      E.delta('Read [the guide](https://example.com/guide) <img src="x" onerror="window.__pwned=1">'),
      E.delta("<script>window.__pwned=2</script> [bad](javascript:window.__pwned=3)"),
      E.turnComplete(),
    ]);
    const link = page.locator(`${sel("message-model")} a`, { hasText: "the guide" });
    await link.waitFor();
    assert.equal(await link.getAttribute("target"), "_blank");
    assert.equal(await link.getAttribute("rel"), "noopener noreferrer");
    const url = page.url();
    await link.click();
    const call = await app.waitForCall("plugin:opener|open_url");
    assert.deepEqual(call.args, { url: "https://example.com/guide" });
    assert.equal(page.url(), url, "the webview did not navigate");
    // Raw HTML is shown as text, never rendered.
    await waitForText(page, sel("message-model"), /<img src="x" onerror="window.__pwned=1">/);
    await waitForText(page, sel("message-model"), /<script>window.__pwned=2<\/script>/);
    const state = await page.evaluate(() => ({
      pwned: /** @type {any} */ (window).__pwned ?? null,
      scripts: document.querySelectorAll('[data-testid="message-model"] script').length,
      onerror: document.querySelectorAll('[data-testid="message-model"] [onerror]').length,
      badHref: document.querySelector('[data-testid="message-model"] a:not([href^="https"])')?.getAttribute("href") ?? null,
    }));
    assert.deepEqual(state, { pwned: null, scripts: 0, onerror: 0, badHref: null });
    await page.locator(`${sel("message-model")} a`, { hasText: "bad" }).click();
    assert.equal(app.callsOf("plugin:opener|open_url").length, 1, "javascript: links open nothing");
    assert.equal(await page.evaluate(() => /** @type {any} */ (window).__pwned ?? null), null);
    await app.close();
  });
});

describe("thoughts, tools and notices", () => {
  test("thoughts are collapsed with their subject", async () => {
    const app = await env.open();
    const { page } = app;
    await app.sendPrompt("think");
    await app.emitAll([E.turnStarted(), E.thought("Planning the refactor", "First I will read the file."), E.delta("Answer")]);
    const t = app.tid("thought");
    await t.waitFor();
    assert.equal(await app.tid("thought-subject").innerText(), "Planning the refactor");
    assert.equal(await t.evaluate((d) => /** @type {HTMLDetailsElement} */ (d).open), false);
    assert.ok(!(await page.getByText("First I will read the file.").isVisible()), "the description is hidden");
    await app.tid("thought-subject").click();
    await page.getByText("First I will read the file.").waitFor({ state: "visible" });
    await waitForText(page, sel("message-model"), "Answer");
    await app.close();
  });

  test("tool cards show name, description, state, live output and result", async () => {
    const app = await env.open();
    const { page } = app;
    await app.sendPrompt("run the tests");
    await app.emitAll([E.turnStarted(), E.toolRequest("c1", "run_shell_command", { command: "npm test", description: "Run tests" })]);
    const card = page.locator(`${sel("tool-card")}[data-call-id="c1"]`);
    await card.waitFor();
    assert.equal(await card.getAttribute("data-tool"), "run_shell_command");
    assert.equal(await card.getAttribute("data-state"), "validating");
    assert.equal(await card.getByTestId("tool-description").innerText(), "npm test");
    assert.match(await card.innerText(), /^Shell/);

    await app.emit(E.toolState("c1", "executing"));
    await page.waitForSelector(`${sel("tool-card")}[data-call-id="c1"][data-state="executing"]`);
    assert.equal(await card.getByTestId("tool-state").innerText(), "Running");
    await app.emit(E.toolOutput("c1", "\u001b[32m> test\u001b[0m\nrunning 3 tests\n"));
    await waitForText(page, `${sel("tool-card")}[data-call-id="c1"] ${sel("tool-output")}`, "> test\nrunning 3 tests\n");
    await app.emit(E.toolOutput("c1", "> test\nrunning 3 tests\ntest a ... ok\n"));
    await waitForText(page, `${sel("tool-card")}[data-call-id="c1"] ${sel("tool-output")}`, /test a \.\.\. ok/);

    await app.emit(E.toolResponse("c1", "run_shell_command", "success", "Exit code 0", null, 1530));
    await page.waitForSelector(`${sel("tool-card")}[data-call-id="c1"][data-state="success"]`);
    assert.equal(await card.getAttribute("data-status"), "success");
    assert.equal(await card.getByTestId("tool-result").innerText(), "Exit code 0");
    assert.equal(await card.getByTestId("tool-state").innerText(), "Done · 1.5 s");
    // A finished command keeps one output view (open; its toggle collapses it).
    assert.equal(await card.getByTestId("tool-output").count(), 1);
    await card.getByTestId("tool-output-toggle").click();
    assert.equal(await card.getByTestId("tool-output").count(), 0, "the toggle collapses the output");

    // Descriptions from other arguments; a failure shows its error.
    await app.emitAll([
      E.toolRequest("c2", "read_file", { absolute_path: "/home/dev/project/src/lib.rs" }),
      E.toolRequest("c3", "grep_search", { pattern: "TODO", path: "/home/dev/project/src" }),
      E.toolRequest("c4", "google_web_search", { query: "svelte 5 runes" }),
      E.toolRequest("c5", "web_fetch", { url: "https://example.com" }),
      E.toolResponse("c2", "read_file", "error", null, "File not found: src/lib.rs"),
    ]);
    const desc = (id) => page.locator(`${sel("tool-card")}[data-call-id="${id}"] ${sel("tool-description")}`).innerText();
    await page.waitForSelector(`${sel("tool-card")}[data-call-id="c2"][data-state="error"]`);
    assert.equal(await desc("c2"), "src/lib.rs");
    assert.equal(await desc("c3"), "TODO in src");
    assert.equal(await desc("c4"), "svelte 5 runes");
    assert.equal(await desc("c5"), "https://example.com");
    assert.equal(await page.locator(`${sel("tool-card")}[data-call-id="c2"] ${sel("tool-result")}`).innerText(), "File not found: src/lib.rs");
    await app.close();
  });

  test("turn outcomes and session notices are explained inline", async () => {
    const app = await env.open();
    const { page } = app;
    const notices = () => page.locator(sel("notice")).allInnerTexts();

    await app.sendPrompt("one");
    await app.emitAll([E.turnStarted(), E.turnComplete("declined")]);
    await waitForText(page, sel("notice"), "You declined; tell the agent what to do instead.");

    await app.sendPrompt("two");
    await app.emitAll([
      E.turnStarted(),
      { type: "retrying", attempt: 1, max_attempts: 3, delay_ms: 2000, reason: "HTTP 503" },
      { type: "retrying", attempt: 2, max_attempts: 3, delay_ms: 4000, reason: "HTTP 503" },
      { type: "error", kind: "api", message: "The model is overloaded", status: 503, fatal: true },
      E.turnComplete("failed"),
    ]);
    await waitForText(page, sel("notice"), "The turn failed: The model is overloaded (HTTP 503)");
    const texts = await notices();
    assert.deepEqual(texts.slice(1), [
      "Retrying (attempt 2 of 3) in 4 s: HTTP 503",
      "The turn failed: The model is overloaded (HTTP 503)",
    ]);

    await app.sendPrompt("three");
    await app.emitAll([
      E.turnStarted(),
      { type: "chat_compressed", original_tokens: 120000, new_tokens: 8000 },
      { type: "warning", message: "Policy file ignored" },
      { type: "loop_detected", kind: "repeated_tool_call", detail: "the same tool call repeated 5 times" },
      E.turnComplete("loop_detected"),
      E.turnStarted(),
      E.turnComplete("turn_limit_reached"),
    ]);
    await waitForText(page, sel("notice"), /turn reached its limit/);
    const all = await notices();
    assert.deepEqual(all.slice(3), [
      "Older messages were summarised to save context (120,000 → 8,000 tokens).",
      "Policy file ignored",
      "Loop detected, the turn was stopped: the same tool call repeated 5 times",
      "Stopped: the turn reached its limit of model requests. Send a message to continue.",
    ]);
    const kinds = await page.locator(sel("notice")).evaluateAll((els) => els.map((e) => e.getAttribute("data-kind")));
    assert.deepEqual(kinds, ["info", "info", "error", "info", "warning", "warning", "warning"]);
    await app.close();
  });
});

describe("themes", () => {
  for (const colorScheme of ["light", "dark"]) {
    test(`a conversation in the ${colorScheme} theme`, async () => {
      const app = await env.open({ colorScheme });
      const { page } = app;
      await app.sendPrompt("Why does `cargo test` fail on CI? Fix it please.");
      await app.emitAll([
        E.turnStarted(),
        E.thought("Investigating the CI failure", "The log mentions a missing feature flag."),
        E.delta(
          "The CI job runs `cargo test` **without** the `sqlite` feature, so `db::tests` fail to compile.\n\n" +
            "I'll check the workflow first:\n\n```yaml\n- run: cargo test --all-features\n  env:\n    RUST_LOG: debug\n```\n",
        ),
        E.toolRequest("t1", "read_file", { absolute_path: "/home/dev/project/.github/workflows/ci.yml" }),
        E.toolResponse("t1", "read_file", "success", "Read 42 lines.", null, 3),
        E.toolRequest("t2", "run_shell_command", { command: "cargo test --features sqlite" }),
        E.toolState("t2", "executing"),
        E.toolOutput("t2", "   Compiling app v0.1.0\n    Finished test profile\n     Running unittests src/lib.rs\nrunning 12 tests\n"),
        E.usage(5400, 820),
      ]);
      await waitForText(page, `${sel("tool-card")}[data-call-id="t2"] ${sel("tool-output")}`, /running 12 tests/);
      await page.screenshot({ path: screenshotPath(`chat-${colorScheme}.png`) });
      await app.close();
    });
  }
});

test("an answer's lists keep their top-level markers inside the conversation's list", async () => {
  const app = await env.open();
  await app.emitAll([E.turnStarted("t1"), E.delta("Files:\n\n- one\n  - nested\n- two\n\n1. first\n"), E.turnComplete("completed", "t1")]);
  await waitForText(app.page, sel("message-model"), /first/);
  // The Markdown renderer is loaded on demand: an answer that arrives first is plain text until
  // it is in (no prompt was sent here, which would have requested it).
  await app.page.waitForFunction(() => document.querySelector('[data-testid="message-model"] ul'));
  const styles = await app.page.evaluate(() => {
    const md = document.querySelector('[data-testid="message-model"]');
    const style = (el) => (el ? getComputedStyle(el).listStyleType : null);
    return [style(md?.querySelector(":scope > ul")), style(md?.querySelector("ul ul")), style(md?.querySelector(":scope > ol"))];
  });
  assert.deepEqual(styles, ["disc", "circle", "decimal"]);
  await app.close();
});
