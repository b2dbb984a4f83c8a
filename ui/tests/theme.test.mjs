// Native controls follow the app's theme (issue 34, item 10g): a <select>'s popup list is drawn
// from its options' colours and the `color-scheme` they inherit, so in the dark theme it must not
// stay light. Checked for the system's dark preference and for `ui.theme` choosing against it.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const MODELS = [
  { name: "gemini-2.5-pro", display_name: "Gemini 2.5 Pro" },
  { name: "gemini-2.5-flash", display_name: "Gemini 2.5 Flash" },
];

/** A settings view with only `ui.theme` set (in the user's file). */
const themed = (theme) => ({
  layers: [{ layer: "user", path: "/home/dev/.gemini/settings.json", exists: true, loaded: true, error: null }],
  values: [{ key: "ui.theme", value: theme, source: "user", user: theme, workspace: null }],
  mcp_servers: [],
  workspace_trusted: true,
});

/** Per <select> in the header: its color-scheme, and each option's against the theme's colours. */
function selects() {
  const probe = document.createElement("div");
  probe.style.cssText = "background: var(--surface); color: var(--text)";
  document.body.append(probe);
  const want = { bg: getComputedStyle(probe).backgroundColor, fg: getComputedStyle(probe).color };
  probe.remove();
  return [...document.querySelectorAll('[data-testid="app-header"] select')].map((select) => ({
    id: select.getAttribute("data-testid"),
    scheme: getComputedStyle(select).colorScheme,
    options: [...select.options].map((o) => {
      const s = getComputedStyle(o);
      return { scheme: s.colorScheme, themed: s.backgroundColor === want.bg && s.color === want.fg };
    }),
  }));
}

for (const [name, options, theme] of [
  ["the system's dark preference", { colorScheme: "dark" }, "dark"],
  ["ui.theme \"dark\" on a light system", { colorScheme: "light", config: { settings: themed("dark") } }, "dark"],
  ["ui.theme \"light\" on a dark system", { colorScheme: "dark", config: { settings: themed("light") } }, "light"],
]) {
  test(`${name}: the drop-downs and their lists are ${theme}`, async () => {
    const app = await env.open({ ...options, config: { models: MODELS, ...options.config } });
    await app.until((t) => document.documentElement.dataset.theme === t, theme);
    await app.tid("model-select").waitFor({ state: "attached" });
    const found = await app.page.evaluate(selects);
    assert.deepEqual(found.map((s) => s.id).sort(), ["approval-mode", "model-select"]);
    for (const s of found) {
      assert.equal(s.scheme, theme, `${s.id}: color-scheme`);
      for (const [i, o] of s.options.entries()) {
        assert.equal(o.scheme, theme, `${s.id} option ${i}: color-scheme`);
        assert.ok(o.themed, `${s.id} option ${i}: the theme's surface and text colours`);
      }
    }
    await app.close();
  });
}

// What GTK draws itself in the real app (a <select>'s popup list) takes the window's theme, which
// only the backend can set: `ui.theme` is passed on, "system" hands it back to the system.
for (const [name, options, sent] of [
  ["ui.theme \"dark\"", { config: { settings: themed("dark") } }, "dark"],
  ["ui.theme \"light\"", { config: { settings: themed("light") } }, "light"],
  ["no ui.theme (the system's)", {}, null],
]) {
  test(`${name}: the window's native theme is set to ${sent ?? "follow the system"}`, async () => {
    const app = await env.open({ ...options, config: { models: MODELS, ...options.config } });
    const call = await app.waitForCall("set_window_theme");
    assert.equal(call.args.theme ?? null, sent);
    await app.close();
  });
}
