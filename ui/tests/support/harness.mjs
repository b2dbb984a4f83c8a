// Test harness: serves ui/dist with the app's production CSP, launches Debian's Chromium via
// playwright-core, and opens the app with the Tauri IPC mocked (tests/support/ipc-mock.ts).
//
// Every test gets a fresh page. `app.calls` lists every invoke the UI made (reported through
// page.exposeFunction, in order); `app.waitForCall` waits for one; `app.emit` delivers session
// events into the Channel the UI passed to start_session.
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync, mkdirSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const UI_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const DIST = path.join(UI_DIR, "dist");
export const RESULTS = path.join(UI_DIR, "test-results");
export const MOCK_BUNDLE = path.join(RESULTS, ".cache", "ipc-mock.js");
const TIMEOUT = 10_000;

/** The production CSP of tauri.conf.json, as an HTTP header value. */
export function productionCsp() {
  const conf = JSON.parse(readFileSync(path.join(UI_DIR, "..", "tauri.conf.json"), "utf8"));
  const csp = conf.app.security.csp;
  return Object.entries(csp)
    .map(([k, v]) => `${k} ${v}`)
    .join("; ");
}

/** Bundles the IPC mock into one classic script (skipped when up to date). */
export async function buildMock() {
  return bundle(path.join(UI_DIR, "tests", "support", "ipc-mock.ts"), "GdMock", MOCK_BUNDLE);
}

/**
 * Bundles `source` (and what it imports) into one classic script at `out` that sets the global
 * `name` to its exports; skipped when `out` is newer than `source`.
 */
export async function bundle(source, name, out = path.join(RESULTS, ".cache", `${name}.js`)) {
  if (existsSync(out) && statSync(out).mtimeMs >= statSync(source).mtimeMs) return out;
  mkdirSync(path.dirname(out), { recursive: true });
  const { build } = await import("vite");
  await build({
    configFile: false,
    logLevel: "warn",
    root: UI_DIR,
    build: {
      lib: { entry: source, formats: ["iife"], name, fileName: () => path.basename(out) },
      outDir: path.dirname(out),
      emptyOutDir: false,
      minify: false,
      copyPublicDir: false,
    },
  });
  return out;
}

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".json": "application/json",
};

/** A static server for ui/dist on a free localhost port, with the production CSP header. */
export async function serveDist() {
  assert.ok(existsSync(path.join(DIST, "index.html")), "ui/dist is missing: run `npm run build` first");
  const csp = productionCsp();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    let file = path.normalize(path.join(DIST, decodeURIComponent(url.pathname)));
    if (!file.startsWith(DIST)) {
      res.writeHead(403).end();
      return;
    }
    if (!existsSync(file) || statSync(file).isDirectory()) file = path.join(DIST, "index.html");
    res.writeHead(200, {
      "Content-Type": TYPES[path.extname(file)] ?? "application/octet-stream",
      "Content-Security-Policy": csp,
      "Cache-Control": "no-store",
    });
    res.end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(r)) };
}

/**
 * The browser: Debian's headless shell (package chromium-headless-shell, the "old" headless
 * Chromium that Playwright itself uses for headless runs) where installed, else Debian's
 * Chromium; `CHROMIUM_PATH` names another. The full browser in its new headless mode starts
 * browser-UI pages (the omnibox popup) for every page a test opens: a renderer process and
 * ~0.8 s of CPU each, about half of the UI suite's CPU on 2 cores (issue 32).
 */
function chromiumPath() {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  const shell = "/usr/lib/chromium/chromium-headless-shell";
  return existsSync(shell) ? shell : "/usr/bin/chromium";
}

/**
 * A browser of the test file's own. (One browser shared by the whole run, through Playwright's
 * browser server, was measured slower: every protocol message then passes through the server's
 * process, which costs more than a headless shell's start per file. Issue 32.) `scrollbars`:
 * classic scrollbars (Playwright hides them in headless mode), for a test that clicks or drags
 * one.
 */
export async function launchBrowser({ scrollbars = false } = {}) {
  return chromium.launch({
    executablePath: chromiumPath(),
    ignoreDefaultArgs: scrollbars ? ["--hide-scrollbars"] : [],
    // Keeps the browser off this machine's closed network.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--font-render-hinting=none",
    ],
  });
}

/** One browser and server for a test file (`options`: see `launchBrowser`). */
export async function setup(options = {}) {
  const mock = readFileSync(await buildMock(), "utf8");
  const server = await serveDist();
  const browser = await launchBrowser(options);
  return {
    server,
    browser,
    mock,
    open: (options) => openApp({ server, browser, mock }, options),
    async close() {
      await browser.close();
      await server.close();
    },
  };
}

/**
 * A `submit` call's arguments as one object: the session id and the op's fields but its type
 * (a user_turn's text items joined as `text` too).
 */
function opArgs({ sessionId, op }) {
  const { type, ...fields } = op;
  const text = type === "user_turn" ? { text: fields.items.map((item) => item.text).join("") } : {};
  return { sessionId, ...fields, ...text };
}

const opCall = (call) => ({ cmd: call.cmd, args: opArgs(call.args) });

/**
 * Opens the app. `config` goes to the mock (see ipc-mock.ts MockConfig). Waits for
 * <body data-ready="true"> and, unless `session: false`, for the session to be connected.
 */
export async function openApp(env, options = {}) {
  const { config = {}, colorScheme = "light", viewport = { width: 1200, height: 820 }, session = true, init = null, boot = null } = options;
  const context = await env.browser.newContext({ colorScheme, viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  const calls = [];
  const waiters = new Set();
  const errors = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(`console.error: ${msg.text()}`);
  });
  await page.exposeFunction("__gdReport", (cmd, args) => {
    const call = { cmd, args };
    calls.push(call);
    for (const w of waiters) w(call);
  });
  await page.addInitScript((cfg) => {
    window.__GD_MOCK_CONFIG__ = cfg;
  }, config);
  // `init: [fn, arg]`: a test's own page script before the mock (e.g. one that sets
  // `window.__gdExtraIPC`, see ipc-mock.ts).
  if (init) await page.addInitScript(init[0], init[1]);
  await page.addInitScript({ content: env.mock });
  // What the app's initialization script hands the page (src-tauri/src/boot.rs), if asked.
  if (boot) await page.addInitScript((info) => Object.defineProperty(window, "__GD_BOOT__", { value: Object.freeze(info) }), boot);
  // tauri.conf.json sets `freezePrototype: true`: Tauri freezes Object.prototype before the
  // app's scripts run. Do the same, so a library that assigns to a frozen built-in fails here.
  await page.addInitScript(() => {
    Object.freeze(Object.prototype);
  });
  await page.goto(env.server.url);
  await page.waitForFunction(() => document.body.dataset.ready === "true");
  if (session) await page.waitForFunction(() => document.querySelector('[data-testid="connection-status"]')?.getAttribute("data-state") === "connected");

  const app = {
    page,
    context,
    calls,
    errors,
    /** Locator of a data-testid. */
    tid: (id) => page.getByTestId(id),
    /** Calls of one command so far. */
    callsOf: (cmd) => calls.filter((c) => c.cmd === cmd),
    /** Session ops of one type submitted so far, as calls whose `args` are `opArgs` of them. */
    opsOf: (type) => calls.filter((c) => c.cmd === "submit" && c.args.op.type === type).map(opCall),
    /**
     * Waits for (or finds) the first op of `type` submitted after `from` calls whose `opArgs`
     * match `pred`; resolves to it as a call whose `args` are its `opArgs`.
     */
    async waitForOp(type, pred = () => true, options = {}) {
      const call = await app.waitForCall("submit", (a) => a.op.type === type && pred(opArgs(a)), options);
      return opCall(call);
    },
    /** Waits for (or finds) the first call of `cmd` after `from` calls matching `pred`. */
    waitForCall(cmd, pred = () => true, { from = 0, timeout = TIMEOUT } = {}) {
      const match = (c) => c.cmd === cmd && pred(c.args);
      const found = calls.slice(from).find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no ${cmd} call within ${timeout} ms; calls: ${JSON.stringify(calls.map((c) => c.cmd))}`));
        }, timeout);
        const waiter = (c) => {
          if (match(c)) {
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve(c);
          }
        };
        waiters.add(waiter);
      });
    },
    emit: (event) => page.evaluate((e) => window.__gd.emit(e), event),
    emitAll: (events) => page.evaluate((es) => window.__gd.emitAll(es), events),
    /** Types a prompt and sends it with Enter; resolves once its user_turn was submitted. */
    async sendPrompt(text) {
      const from = calls.length;
      await app.tid("prompt-input").fill(text);
      await app.tid("prompt-input").press("Enter");
      return app.waitForOp("user_turn", (a) => a.text === text, { from });
    },
    /** Waits until `fn` (run in the page) returns a truthy value; returns it. */
    async until(fn, arg) {
      const handle = await page.waitForFunction(fn, arg, { timeout: TIMEOUT });
      return handle.jsonValue();
    },
    /** Fails on page errors and CSP violations; closes the page. */
    async close() {
      const violations = await page.evaluate(() => window.__gd.cspViolations).catch(() => []);
      await context.close();
      assert.deepEqual(violations, [], "no CSP violations");
      assert.deepEqual(errors, [], "no page errors");
    },
  };
  return app;
}

/** CSS selector of a data-testid. */
export const sel = (id) => `[data-testid="${id}"]`;

/**
 * Waits until the innerText of the last element matching `selector` equals `expected` (a
 * string) or matches it (a RegExp); returns the text. Runs in the page (no polling from here).
 */
export async function waitForText(page, selector, expected, { timeout = TIMEOUT, index = -1 } = {}) {
  const arg =
    expected instanceof RegExp
      ? { selector, index, source: expected.source, flags: expected.flags }
      : { selector, index, text: expected };
  try {
    const handle = await page.waitForFunction(
      ({ selector, index, text, source, flags }) => {
        const all = document.querySelectorAll(selector);
        const el = all[index < 0 ? all.length + index : index];
        if (!el) return false;
        const t = /** @type {HTMLElement} */ (el).innerText;
        const ok = source !== undefined ? new RegExp(source, flags).test(t) : t === text;
        return ok ? t : false;
      },
      arg,
      { timeout },
    );
    return await handle.jsonValue();
  } catch (error) {
    const last = await page
      .evaluate(({ selector, index }) => {
        const all = document.querySelectorAll(selector);
        return /** @type {HTMLElement | undefined} */ (all[index < 0 ? all.length + index : index])?.innerText ?? null;
      }, arg)
      .catch(() => null);
    throw new Error(`${selector} text never matched ${expected}; last: ${JSON.stringify(last)}`, { cause: error });
  }
}

export function screenshotPath(name) {
  mkdirSync(RESULTS, { recursive: true });
  return path.join(RESULTS, name);
}

export function fixture(name) {
  return JSON.parse(readFileSync(path.join(UI_DIR, "tests", "fixtures", name), "utf8"));
}

/**
 * An init script (for `open({ init: [emptyHistory] })`): an empty history backend, so the chat
 * restores nothing and the history panel opens without errors.
 */
export function emptyHistory() {
  window.__gdExtraIPC = (cmd) => {
    switch (cmd) {
      case "history_last_session":
        return null;
      case "history_list":
      case "history_gemini_cli_sessions":
        return [];
      default:
        return undefined;
    }
  };
}
