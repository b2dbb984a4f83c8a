// The header from the minimum window width (720 px) up: no control clipped or overlapping (with
// the checkpoint counter, the MCP count and a running turn), the folder path does not change
// width when a turn starts, History and Checkpoints have labels where there is room and always a
// tooltip and an accessible name, and the settings icon is a gear.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { emptyHistory, screenshotPath, setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

/** A full header: a long folder path, a model list, an MCP server (the header shows its count). */
const FULL = {
  appInfo: { version: "0.1.0", workspace: "/home/dev/projects/gemini-desktop-throwaway/webapp" },
  models: [
    { name: "gemini-2.5-pro", display_name: "Gemini 2.5 Pro" },
    { name: "gemini-2.5-flash", display_name: "Gemini 2.5 Flash" },
  ],
  mcpServers: [E.mcpStatus("tiny")],
};

const CONTROLS = ["workspace-path", "open-workspace", "connection-status", "usage-meter", "history-open", "checkpoints-open", "mcp-open", "policies-open", "settings-open", "panels-open", "account-open", "approval-mode"];

/** Per control: clipped (scrollWidth > clientWidth), its box; overlapping pairs. */
function measure(ids) {
  const boxes = ids.map((id) => {
    const el = /** @type {HTMLElement} */ (document.querySelector(`[data-testid="${id}"]`));
    if (!el) return { id, missing: true };
    const r = el.getBoundingClientRect();
    // A <select> reports its own text metrics poorly: measure the label it shows instead.
    // The folder path ends in an ellipsis on purpose (its full text is the tooltip).
    return { id, clipped: id !== "workspace-path" && el.scrollWidth > el.clientWidth + 0.5, left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, visible: r.width > 0 };
  });
  const overlaps = [];
  // workspace-path and open-workspace sit inside one pill; connection-status holds model-select.
  const top = boxes.filter((b) => !b.missing && b.visible && b.id !== "workspace-path");
  for (let i = 0; i < top.length; i++)
    for (let j = i + 1; j < top.length; j++) {
      const a = top[i];
      const b = top[j];
      if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom && b.top < a.bottom) overlaps.push(`${a.id}/${b.id}`);
    }
  const header = /** @type {HTMLElement} */ (document.querySelector('[data-testid="app-header"]'));
  const outside = boxes.filter((b) => !b.missing && b.visible && b.right > header.getBoundingClientRect().right + 0.5).map((b) => b.id);
  return { boxes, overlaps, outside, overflow: header.scrollWidth - header.clientWidth };
}

/** The approval switch shows its whole current label ("Ask first"). */
function approvalFits() {
  const select = /** @type {HTMLSelectElement} */ (document.querySelector('[data-testid="approval-mode"]'));
  const canvas = document.createElement("canvas").getContext("2d");
  const style = getComputedStyle(select);
  canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const text = canvas.measureText(select.selectedOptions[0]?.text ?? "").width;
  const pad = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
  const arrow = style.appearance === "none" ? 0 : 14; // our caret sits in the right padding
  return { need: Math.ceil(text + pad + arrow), have: select.clientWidth };
}

async function withCheckpoints(app) {
  await app.emit(E.checkpoints(Array.from({ length: 12 }, (_, i) => E.checkpointInfo(`cp-${i}`, { call_id: `c${i}`, files: ["a.txt"] }))));
  await app.until(() => document.querySelector('[data-testid="checkpoints-open"]')?.getAttribute("data-count") === "12");
}

describe("header", () => {
  for (const width of [720, 800, 1100, 1440]) {
    for (const colorScheme of ["light", "dark"]) {
      test(`${width} px ${colorScheme}: nothing clipped or overlapping, the path keeps its width while a turn runs`, async () => {
        const app = await env.open({ viewport: { width, height: 700 }, colorScheme, config: FULL });
        await withCheckpoints(app);
        // The usage meter at its widest usual text (six figures of tokens: "123k").
        await app.sendPrompt("a first task");
        await app.emitAll([E.turnStarted("t0"), E.turnComplete("completed", "t0", E.turnUsage(123_000, 456))]);
        await app.until(() => document.querySelector('[data-testid="usage-meter-tokens"]')?.getAttribute("data-value") === "123456");
        // ... and the quota left for the session's model (bar and percentage).
        await app.emit({ type: "quota", source: "code_assist", buckets: [{ model: "gemini-2.5-pro", remaining_fraction: 0.42, reset_time: "2031-01-01T00:00:00Z" }], fetched_ms: 0 });
        await app.tid("usage-meter-quota").waitFor({ state: "attached" });
        const idle = await app.page.evaluate(measure, CONTROLS);
        assert.deepEqual(idle.boxes.filter((b) => b.missing).map((b) => b.id), [], "every control is there");
        assert.deepEqual(idle.boxes.filter((b) => b.clipped).map((b) => b.id), [], "no control clips its text");
        assert.deepEqual(idle.overlaps, [], "no controls overlap");
        assert.deepEqual(idle.outside, [], "no control sticks out of the header");
        assert.ok(idle.overflow <= 0, `the header overflows by ${idle.overflow}px`);
        const fits = await app.page.evaluate(approvalFits);
        assert.ok(fits.have >= fits.need, `"Ask first" needs ${fits.need}px, has ${fits.have}px`);
        const pathBefore = idle.boxes.find((b) => b.id === "workspace-path").width;
        // Some of the path stays readable (as in signin.test.mjs: less at the narrowest widths).
        const least = width > 860 ? 80 : 40;
        assert.ok(pathBefore >= least, `the folder path has ${pathBefore}px`);

        await app.sendPrompt("a long task");
        await app.emit(E.turnStarted());
        await app.until(() => document.querySelector('[data-testid="connection-status"]')?.getAttribute("data-state") === "busy");
        const busy = await app.page.evaluate(measure, CONTROLS);
        assert.deepEqual(busy.boxes.filter((b) => b.clipped).map((b) => b.id), [], "busy: no control clips its text");
        assert.deepEqual(busy.overlaps, [], "busy: no controls overlap");
        const pathBusy = busy.boxes.find((b) => b.id === "workspace-path").width;
        assert.equal(pathBusy, pathBefore, "the folder path keeps its width when a turn starts");
        if (width !== 720) await app.tid("app-header").screenshot({ path: screenshotPath(`header-${width}-${colorScheme}.png`) });
        await app.close();
      });
    }
  }

  // Issue 34, item 10d: at 800 px the usage meter and the Policies button were hidden, with no
  // way to them but slash commands. They stay on screen down to the minimum width, with the
  // Panels menu; what the header folds away (MCP) is in that menu.
  for (const width of [720, 800]) {
    test(`${width} px: the usage meter, Policies and Panels are on screen, inside the header`, async () => {
      const app = await env.open({ viewport: { width, height: 700 }, config: FULL });
      await app.sendPrompt("a first task");
      await app.emitAll([E.turnStarted("t0"), E.turnComplete("completed", "t0", E.turnUsage(123_000, 456))]);
      await app.until(() => document.querySelector('[data-testid="usage-meter-tokens"]')?.getAttribute("data-value") === "123456");
      const boxes = await app.page.evaluate(() => {
        const header = document.querySelector('[data-testid="app-header"]').getBoundingClientRect();
        return ["usage-meter", "policies-open", "panels-open", "history-open", "checkpoints-open", "settings-open", "account-open", "approval-mode"].map((id) => {
          const el = /** @type {HTMLElement} */ (document.querySelector(`[data-testid="${id}"]`));
          const r = el.getBoundingClientRect();
          const shown = r.width > 0 && r.height > 0;
          const inside = r.left >= header.left && r.right <= Math.min(header.right, innerWidth) + 0.5 && r.top >= header.top && r.bottom <= header.bottom + 0.5;
          return { id, shown, inside, cut: el.scrollWidth > el.clientWidth + 0.5 };
        });
      });
      for (const b of boxes) assert.deepEqual(b, { id: b.id, shown: true, inside: true, cut: false }, `${width}px: ${b.id}`);
      assert.equal(await app.tid("usage-meter-tokens").innerText(), "123k");
      await app.close();
    });
  }

  // Issue 34, item 10c: Extensions and Hooks had only their slash commands. The Panels menu lists
  // every panel (lib/panels.ts) and opens each; it fits the window at every width.
  for (const width of [800, 1440]) {
    test(`${width} px: the Panels menu lists every panel, Extensions and Hooks among them, and opens each`, async () => {
      const app = await env.open({ viewport: { width, height: 700 }, config: FULL, init: [emptyHistory] });
      const opens = {
        history: "history-panel",
        checkpoints: "checkpoints-panel",
        usage: "usage-panel",
        mcp: "mcp-panel",
        policies: "policy-editor",
        memory: "memory-panel",
        agents: "agents-panel",
        skills: "skills-panel",
        extensions: "extensions-panel",
        hooks: "hooks-panel",
        about: "about-panel",
        settings: "settings-panel",
      };
      await app.tid("panels-open").click();
      await app.tid("panels-menu").waitFor();
      assert.equal(await app.tid("panels-open").getAttribute("aria-expanded"), "true");
      const items = await app.tid("panels-item").evaluateAll((els) =>
        els.map((el) => {
          const r = el.getBoundingClientRect();
          return { panel: el.dataset.panel, text: el.innerText, fits: r.left >= 0 && r.right <= innerWidth && el.scrollWidth <= el.clientWidth };
        }),
      );
      assert.deepEqual(items.map((i) => i.panel), Object.keys(opens));
      assert.deepEqual(items.filter((i) => !i.fits).map((i) => i.panel), [], "every item is whole and on screen");
      assert.match(items.find((i) => i.panel === "extensions").text, /Extensions/);
      assert.match(items.find((i) => i.panel === "hooks").text, /Hooks/);
      // The first item has the focus: ↓ moves it, Esc closes the menu.
      assert.equal(await app.page.evaluate(() => document.activeElement?.getAttribute("data-panel")), "history");
      await app.page.keyboard.press("ArrowDown");
      assert.equal(await app.page.evaluate(() => document.activeElement?.getAttribute("data-panel")), "checkpoints");
      await app.tid("panels-menu").screenshot({ path: screenshotPath(`panels-menu-${width}.png`) });
      await app.page.keyboard.press("Escape");
      await app.tid("panels-menu").waitFor({ state: "detached" });
      for (const [panel, testid] of Object.entries(opens)) {
        await app.tid("panels-open").click();
        await app.page.locator(`[data-testid="panels-item"][data-panel="${panel}"]`).click();
        await app.tid(testid).waitFor();
        assert.equal(await app.tid("panels-menu").count(), 0, `${panel}: the menu closed`);
      }
      await app.close();
    });
  }

  test("History and Checkpoints: labels where there is room, tooltips and names always", async () => {
    for (const width of [800, 1440]) {
      const app = await env.open({ viewport: { width, height: 700 } });
      for (const [id, name] of [
        ["history-open", "History"],
        ["checkpoints-open", "Checkpoints"],
        ["settings-open", "Settings"],
      ]) {
        const el = app.tid(id);
        assert.ok((await el.getAttribute("aria-label"))?.startsWith(name), `${id} is named ${name}`);
        assert.ok((await el.getAttribute("title"))?.length > 0, `${id} has a tooltip`);
        const label = (await el.innerText()).trim();
        if (width >= 1440) assert.ok(label.includes(name), `${width}px: ${id} shows "${name}": "${label}"`);
      }
      await app.close();
    }
  });

  test("the settings icon is a gear (teeth around a ring), not a sun (rays)", async () => {
    const app = await env.open();
    const icon = await app.tid("settings-open").locator("svg").getAttribute("data-icon");
    assert.equal(icon, "gear");
    await app.close();
  });
});
