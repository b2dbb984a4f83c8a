// The header from the minimum window width (720 px) up: no control clipped or overlapping (with
// the checkpoint counter, the MCP count and a running turn), the folder path does not change
// width when a turn starts, History and Checkpoints have labels where there is room and always a
// tooltip and an accessible name, and the settings icon is a gear.
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

/** A full header: a long folder path, a model list, an MCP server (the header shows its count). */
const FULL = {
  appInfo: { version: "0.1.0", workspace: "/home/dev/projects/gemini-desktop-throwaway/webapp" },
  models: [
    { name: "gemini-2.5-pro", display_name: "Gemini 2.5 Pro" },
    { name: "gemini-2.5-flash", display_name: "Gemini 2.5 Flash" },
  ],
  mcpServers: [E.mcpStatus("tiny")],
};

const CONTROLS = ["workspace-path", "open-workspace", "connection-status", "usage-meter", "history-open", "checkpoints-open", "mcp-open", "settings-open", "account-open", "approval-mode"];

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
