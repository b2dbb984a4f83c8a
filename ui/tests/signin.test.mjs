// The sign-in screen and the account ("auth doctor") view with a mocked backend: first launch
// without credentials, API key ok / rejected, Vertex AI, Google sign-in with its stages, cancel,
// paste-code, the project picker after a Code Assist failure, every kind of error message, the
// view's buttons, the account view's Choose / Change project (listed or typed, not offered when
// GOOGLE_CLOUD_PROJECT fixes it, reachable after a restart), and a sign-in that ends mid-session.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { screenshotPath, setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const NOT_CONFIGURED =
  "Authentication is not configured: set GEMINI_API_KEY (or Vertex AI variables) in the environment or a .env file, or open Sign in in Gemini Desktop.";
const LOGIN_URL = "https://accounts.google.com/o/oauth2/v2/auth?client_id=test&state=s1";
const OUTCOME = {
  email: "dev@example.com",
  name: "Dev Example",
  code_assist: { project: "proj-123", project_source: "code_assist", tier_id: "standard-tier", tier_name: "Gemini Code Assist Standard" },
};

/**
 * The sign-in commands of src-tauri/src/signin.rs, simulated in the page (installed as
 * `window.__gdExtraIPC`). `window.__gdAuth` lets the test drive the Google flow: `stage(s)`,
 * `complete(outcome)`, `fail(report)`.
 */
function authBackend(cfg) {
  const s = {
    active: cfg.active ?? null,
    ready: cfg.ready ?? false,
    google: { signed_in: false, email: null, tier_id: null, tier_name: null, project: null, project_source: null, ...cfg.google },
    apiKeyStored: cfg.apiKeyStored ?? false,
    apiKeyInEnv: cfg.apiKeyInEnv ?? false,
    problem: cfg.problem ?? null,
    lastError: cfg.lastError ?? null,
    channel: null,
    wait: null,
    projects: cfg.projects ?? [],
  };
  const status = () => ({
    active: s.active,
    chosen_by: s.active ? "app" : null,
    ready: s.ready,
    problem: s.ready ? null : (s.problem ?? { kind: "sign_in_required", message: cfg.startMessage ?? "Not configured.", url: null }),
    secret_location: s.ready
      ? s.active === "google-login"
        ? `Google sign-in (${s.google.email}) in the system keyring (Secret Service)`
        : "the system keyring (Secret Service)"
      : null,
    store: cfg.store ?? { kind: { type: "keyring", backend: "Secret Service" }, fallback_reason: null },
    store_error: null,
    api_key: { in_environment: s.apiKeyInEnv, stored: s.apiKeyStored },
    google: {
      ...s.google,
      name: null,
      token_expires_at: s.google.signed_in ? new Date(Date.now() + 3_000_000).toISOString() : null,
      token_expires_in_secs: s.google.signed_in ? 3000 : null,
      has_refresh_token: s.google.signed_in,
      client_configured: cfg.clientConfigured ?? true,
      client_source: cfg.clientConfigured === false ? null : "environment",
    },
    vertex: { in_environment: false, project: null, location: null, auth: null, stored_key: false, adc_file: null },
    last_error: s.lastError,
    notes: cfg.notes ?? [],
    actions: s.google.signed_in
      ? [
          "switch_method",
          "re_authenticate",
          ...(cfg.pickProject === false ? [] : ["pick_project"]),
          ...(s.ready ? [] : ["retry_code_assist_setup"]),
          "sign_out",
        ]
      : ["switch_method", "sign_in_with_google", "set_api_key", "configure_vertex", ...(s.active ? ["sign_out"] : [])],
    // gd-auth's `sign_in_options`: without an OAuth client the API key leads.
    sign_in_options: cfg.clientConfigured === false ? ["api_key", "vertex", "google"] : ["google", "api_key", "vertex"],
  });
  const settle = (result) => {
    const w = s.wait;
    s.wait = null;
    s.channel = null;
    if (w) result.ok ? w.resolve(result.ok) : w.reject(result.err);
  };
  // `holdStatus`: auth_status answers only after `__gdAuth.releaseStatus()` (a slow keyring probe).
  let releaseStatus;
  const statusHeld = cfg.holdStatus ? new Promise((resolve) => (releaseStatus = resolve)) : null;
  window.__gdAuth = {
    state: s,
    releaseStatus: () => releaseStatus?.(),
    stage(stage) {
      window.__gd.emitTo(s.channel, stage);
    },
    complete(outcome) {
      s.active = "google-login";
      s.ready = true;
      s.google = { ...s.google, signed_in: true, email: outcome.email, tier_id: outcome.code_assist.tier_id, tier_name: outcome.code_assist.tier_name, project: outcome.code_assist.project, project_source: "code_assist" };
      window.__gd.emitTo(s.channel, { stage: "done" });
      settle({ ok: outcome });
    },
    fail(report, signedIn = false) {
      if (signedIn) {
        s.active = "google-login";
        s.ready = false;
        s.google = { ...s.google, signed_in: true, email: "dev@example.com" };
        s.problem = report;
      }
      window.__gd.emitTo(s.channel, { stage: "failed", message: report.message });
      settle({ err: report });
    },
  };
  window.__gdExtraIPC = async (cmd, args) => {
    switch (cmd) {
      case "start_session":
        if (!s.ready) throw { kind: "auth", message: cfg.startMessage ?? "Not configured." };
        return undefined; // the normal mock starts the session
      case "auth_status":
        if (statusHeld) await statusHeld;
        return status();
      case "auth_set_api_key":
        if (String(args.key).startsWith("offline")) {
          // gd-auth's report of a DNS failure: the friendly message, the chain as detail.
          throw {
            kind: "network",
            cause: "dns",
            message: "Can't reach generativelanguage.googleapis.com — check your connection.",
            detail:
              "Cannot reach https://generativelanguage.googleapis.com to check the key: network error: error sending request for url (https://generativelanguage.googleapis.com/v1beta/models): client error (Connect): dns error: failed to lookup address information: Temporary failure in name resolution",
            url: null,
          };
        }
        if (String(args.key).startsWith("bad")) {
          throw { kind: "invalid_api_key", message: "The API key was refused (HTTP 400: API key not valid). Check it in Google AI Studio.", url: null };
        }
        s.active = "gemini-api-key";
        s.apiKeyStored = true;
        s.ready = true;
        return { models: 42, base_url: "https://generativelanguage.googleapis.com" };
      case "auth_set_vertex":
        s.active = "vertex-ai";
        s.ready = true;
        return status();
      case "auth_select_method":
        s.active = args.method;
        s.ready = args.method === "gemini-api-key" ? s.apiKeyStored : s.ready;
        return status();
      case "auth_start_google_login":
        s.channel = args.onProgress.id;
        setTimeout(() => window.__gd.emitTo(s.channel, { stage: "waiting_for_browser" }), 0);
        return cfg.loginUrl;
      case "auth_wait_google_login":
        return new Promise((resolve, reject) => {
          s.wait = { resolve, reject };
        });
      case "auth_cancel_google_login":
        if (s.channel !== null) window.__gdAuth.fail({ kind: "cancelled", message: "Sign-in was cancelled.", url: null });
        return null;
      case "auth_submit_login_code":
        if (/\s/.test(String(args.code).trim())) {
          throw { kind: "input", message: "That does not look like an authorization code or a sign-in address.", url: null };
        }
        window.__gdAuth.stage({ stage: "exchanging_code" });
        setTimeout(() => window.__gdAuth.complete(cfg.outcome), 50);
        return null;
      case "auth_list_projects":
        if (cfg.listError) throw cfg.listError;
        return s.projects;
      case "auth_pick_project":
      case "auth_retry_setup": {
        const project = args.project ?? "proj-123";
        s.ready = true;
        s.problem = null;
        s.google = { ...s.google, tier_id: "standard-tier", tier_name: "Gemini Code Assist Standard", project, project_source: "picked" };
        return { project, project_source: "picked", tier_id: "standard-tier", tier_name: "Gemini Code Assist Standard" };
      }
      case "auth_sign_out":
        s.active = null;
        s.ready = false;
        s.apiKeyStored = false;
        s.google = { signed_in: false, email: null, tier_id: null, tier_name: null, project: null, project_source: null };
        return { revoked: true, revoke_error: null, removed: ["google-oauth"] };
      default:
        return undefined;
    }
  };
}

/** Opens the app with the simulated sign-in backend. */
async function open(cfg = {}, options = {}) {
  const full = { startMessage: NOT_CONFIGURED, loginUrl: LOGIN_URL, outcome: OUTCOME, ...cfg };
  return env.open({ session: full.ready === true, init: [authBackend, full], ...options });
}

const auth = (app, fn, arg) => app.page.evaluate(([f, a]) => window.__gdAuth[f](...a), [fn, arg]);

async function startGoogle(app) {
  await app.tid("signin-google").click();
  await app.page.waitForSelector('[data-testid="signin-stage"][data-stage="waiting_for_browser"]');
  await app.waitForCall("auth_wait_google_login");
}

async function connected(app) {
  await app.page.waitForFunction(() => document.querySelector('[data-testid="connection-status"]')?.getAttribute("data-state") === "connected");
}

describe("sign-in screen", () => {
  test("first launch without credentials shows it with three explained choices", async () => {
    const app = await open();
    await app.tid("signin-screen").waitFor();
    await app.waitForCall("auth_status");
    // Nothing was ever configured: the screen is the explanation (no "not configured" banner).
    assert.equal(await app.tid("signin-reason").count(), 0);
    for (const id of ["signin-google", "signin-api-key", "signin-vertex"]) assert.ok(await app.tid(id).isVisible(), id);
    const text = await app.tid("signin-screen").innerText();
    assert.match(text, /Code Assist Standard or Enterprise/);
    assert.match(text, /retired Code Assist for individuals in June 2026/);
    assert.match(text, /Google AI Studio/);
    assert.match(text, /Vertex AI/);
    // The chat is replaced, not covered: no composer to type into without credentials.
    assert.equal(await app.tid("prompt-input").count(), 0);
    assert.equal(await app.tid("account-label").innerText(), "Sign in");
    assert.equal(await app.tid("account-open").getAttribute("data-attention"), "true");
    assert.equal(await app.tid("notice").count(), 0, "no 'not connected' card behind it");
    await app.page.screenshot({ path: screenshotPath("signin-light.png") });
    await app.close();
  });

  test("choosing the API key puts the focus in the key field", async () => {
    const app = await open();
    await app.tid("signin-api-key").click();
    await app.tid("api-key-input").waitFor();
    assert.equal(await app.page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "api-key-input");
    await app.page.keyboard.type("typed-at-once");
    assert.equal(await app.tid("api-key-input").inputValue(), "typed-at-once");
    await app.close();
  });

  test("dark theme", async () => {
    const app = await open({}, { colorScheme: "dark" });
    await app.tid("signin-screen").waitFor();
    await app.tid("signin-api-key").click();
    await app.page.screenshot({ path: screenshotPath("signin-dark.png") });
    const bg = await app.tid("signin-screen").locator(".card").evaluate((el) => getComputedStyle(el).backgroundColor);
    assert.equal(bg, "rgb(23, 26, 34)");
    await app.close();
  });

  test("a rejected API key says why and keeps the screen; a good one is saved and the chat connects", async () => {
    const app = await open();
    await app.tid("signin-api-key").click();
    await app.tid("api-key-input").fill("bad-key");
    await app.tid("api-key-save").click();
    await app.tid("auth-error").waitFor();
    assert.equal(await app.tid("auth-error").getAttribute("data-kind"), "invalid_api_key");
    assert.match(await app.tid("auth-error").innerText(), /API key was refused/);
    assert.ok(await app.tid("signin-screen").isVisible());
    assert.equal(app.callsOf("start_session").length, 1, "no session attempt with a refused key");

    await app.tid("api-key-input").fill("AIza-good-key");
    await app.tid("api-key-save").click();
    await connected(app);
    assert.deepEqual(app.callsOf("auth_set_api_key").map((c) => c.args.key), ["bad-key", "AIza-good-key"]);
    assert.equal(await app.tid("signin-screen").count(), 0);
    assert.match(await app.tid("notice").last().innerText(), /API key checked \(42 models available\) and saved/);
    assert.equal(await app.tid("account-label").innerText(), "Gemini API key");
    // The key is not kept in the page.
    const html = await app.page.content();
    assert.ok(!html.includes("AIza-good-key"));
    await app.close();
  });

  test("a network failure reads as one sentence; the technical chain is behind Show details", async () => {
    const app = await open();
    await app.tid("signin-api-key").click();
    await app.tid("api-key-input").fill("offline-key");
    await app.tid("api-key-save").click();
    await app.tid("auth-error").waitFor();
    assert.equal(await app.tid("auth-error").getAttribute("data-cause"), "dns");
    assert.equal(await app.tid("auth-error-message").innerText(), "Can't reach generativelanguage.googleapis.com — check your connection.");
    assert.doesNotMatch(await app.tid("auth-error").innerText(), /dns error|error sending request/);
    assert.equal(await app.tid("auth-error-detail").count(), 0);
    await app.tid("auth-error-detail-toggle").click();
    assert.match(await app.tid("auth-error-detail").innerText(), /dns error: failed to lookup address information/);
    assert.equal(await app.tid("auth-error-detail-toggle").getAttribute("aria-expanded"), "true");
    for (const [scheme, width] of [["light", 800], ["dark", 1440]]) {
      await app.page.emulateMedia({ colorScheme: scheme });
      await app.page.setViewportSize({ width, height: 900 });
      await app.page.screenshot({ path: screenshotPath(`signin-network-error-${scheme}-${width}.png`) });
    }
    await app.tid("auth-error-detail-toggle").click();
    assert.equal(await app.tid("auth-error-detail").count(), 0);
    await app.close();
  });

  test("without an OAuth client the API key comes first and is the primary button", async () => {
    const order = (app) =>
      app.page.evaluate(() =>
        [...document.querySelectorAll('[data-testid="signin-google"], [data-testid="signin-api-key"], [data-testid="signin-vertex"]')].map((b) => [
          b.dataset.testid,
          b.classList.contains("primary"),
        ]),
      );
    // While gd-auth's answer is on its way the screen offers no choice, rather than a default
    // order that then moves under the pointer.
    const app = await open({ clientConfigured: false, holdStatus: true });
    await app.tid("signin-screen").waitFor();
    await app.waitForCall("auth_status");
    await app.tid("signin-checking").waitFor();
    assert.deepEqual(await order(app), []);
    await auth(app, "releaseStatus", []);
    await app.tid("signin-api-key").waitFor();
    assert.equal(await app.tid("signin-checking").count(), 0);
    await app.page.waitForFunction(() => document.querySelector('[data-testid="signin-api-key"]')?.classList.contains("primary"));
    assert.deepEqual(await order(app), [
      ["signin-api-key", true],
      ["signin-vertex", false],
      ["signin-google", false],
    ]);
    for (const [scheme, width] of [["light", 800], ["dark", 1440]]) {
      await app.page.emulateMedia({ colorScheme: scheme });
      await app.page.setViewportSize({ width, height: 900 });
      await app.page.screenshot({ path: screenshotPath(`signin-no-oauth-${scheme}-${width}.png`) });
    }
    await app.close();
    // With a client, Google sign-in leads as before.
    const withClient = await open();
    await withClient.tid("signin-screen").waitFor();
    await withClient.waitForCall("auth_status");
    assert.deepEqual(await order(withClient), [
      ["signin-google", true],
      ["signin-api-key", false],
      ["signin-vertex", false],
    ]);
    await withClient.close();
  });

  test("without a keyring the API key choice says the key goes to a private file", async () => {
    const app = await open({ store: { kind: { type: "file", path: "/home/dev/.gemini/gemini-desktop/secrets.json" }, fallback_reason: "no D-Bus session bus" } });
    await app.tid("signin-screen").waitFor();
    await app.page.getByText("a file only you can read").waitFor();
    await app.close();
  });

  test("GEMINI_API_KEY in the environment is shown as winning", async () => {
    const app = await open({ apiKeyInEnv: true });
    await app.tid("signin-screen").waitFor();
    assert.match(await app.tid("api-key-env").innerText(), /GEMINI_API_KEY is set in the environment/);
    await app.close();
  });

  test("Vertex AI settings are sent as entered", async () => {
    const app = await open();
    await app.tid("signin-vertex").click();
    await app.tid("vertex-project").fill("my-proj");
    await app.tid("vertex-location").fill("europe-west4");
    await app.tid("signin-screen").screenshot({ path: screenshotPath("signin-vertex.png") });
    await app.tid("vertex-save").click();
    await connected(app);
    const call = await app.waitForCall("auth_set_vertex");
    assert.deepEqual(call.args.input, { project: "my-proj", location: "europe-west4", auth: "adc" });
    await app.close();
  });

  test("Google: stages, then the email; the chat connects", async () => {
    const app = await open();
    await startGoogle(app);
    assert.equal(await app.tid("signin-stage").innerText(), "Waiting for you to finish in the browser…");
    assert.equal(await app.tid("signin-url").inputValue(), LOGIN_URL);
    await app.page.screenshot({ path: screenshotPath("signin-google-waiting.png") });
    await auth(app, "stage", [{ stage: "exchanging_code" }]);
    await app.page.waitForSelector('[data-testid="signin-stage"][data-stage="exchanging_code"]');
    await auth(app, "stage", [{ stage: "finishing_setup", detail: "Setting up Gemini Code Assist" }]);
    await app.page.waitForSelector('[data-testid="signin-stage"][data-stage="finishing_setup"]');
    assert.equal(await app.tid("signin-stage").innerText(), "Setting up Gemini Code Assist…");
    await auth(app, "complete", [OUTCOME]);
    await connected(app);
    assert.equal(await app.tid("account-label").innerText(), "dev@example.com");
    assert.match(
      await app.tid("notice").last().innerText(),
      /^Signed in as dev@example.com \(Gemini Code Assist Standard, project proj-123\)\.$/,
    );
    await app.close();
  });

  test("Google: Cancel stops the sign-in without an error", async () => {
    const app = await open();
    await startGoogle(app);
    await app.tid("signin-cancel").click();
    await app.waitForCall("auth_cancel_google_login");
    await app.tid("signin-google").waitFor();
    assert.equal(await app.tid("signin-progress").count(), 0);
    assert.equal(await app.tid("auth-error").count(), 0);
    await app.close();
  });

  test("Google: a pasted typo is explained and the sign-in keeps waiting; the address completes it", async () => {
    const app = await open();
    await startGoogle(app);
    await app.tid("signin-paste-code").fill("not a code");
    await app.tid("signin-paste-submit").click();
    await app.tid("auth-error").waitFor();
    assert.equal(await app.tid("auth-error").getAttribute("data-kind"), "input");
    assert.ok(await app.tid("signin-progress").isVisible(), "still waiting");
    const pasted = "http://127.0.0.1:40123/oauth2callback?state=s1&code=4%2F0abc";
    await app.tid("signin-paste-code").fill(pasted);
    await app.tid("signin-paste-submit").click();
    await connected(app);
    assert.deepEqual(app.callsOf("auth_submit_login_code").map((c) => c.args.code), ["not a code", pasted]);
    assert.equal(await app.tid("account-label").innerText(), "dev@example.com");
    await app.close();
  });

  test("Google: project required → project picker → Code Assist set up with the pick", async () => {
    const app = await open({
      projects: [
        { project_id: "alpha-1", name: "Alpha", project_number: "111" },
        { project_id: "beta-2", name: null, project_number: "222" },
      ],
    });
    await startGoogle(app);
    const message =
      "Your account needs a Google Cloud project for Gemini Code Assist (Standard, Enterprise or Workspace). Set GOOGLE_CLOUD_PROJECT, or pick a project on the sign-in screen.";
    await auth(app, "fail", [{ kind: "code_assist", message, url: null }, true]);
    await app.tid("signin-setup").waitFor();
    assert.equal(await app.tid("auth-error").innerText(), message);
    await app.tid("project-list-load").click();
    await app.tid("project-select").waitFor();
    assert.equal(await app.tid("auth-error").innerText(), message, "the reason stays visible next to the picker");
    assert.deepEqual(await app.tid("project-select").locator("option:not([disabled])").allInnerTexts(), ["Alpha (alpha-1)", "beta-2"]);
    await app.tid("project-select").selectOption("beta-2");
    await app.tid("signin-screen").screenshot({ path: screenshotPath("signin-project-picker.png") });
    await app.tid("project-pick").click();
    await connected(app);
    assert.deepEqual((await app.waitForCall("auth_pick_project")).args, { project: "beta-2" });
    assert.match(await app.tid("notice").last().innerText(), /project beta-2/);
    await app.close();
  });

  test("Google: Retry setup after fixing the account", async () => {
    const app = await open();
    await startGoogle(app);
    await auth(app, "fail", [{ kind: "code_assist", message: "Gemini Code Assist is not enabled for this project.", url: null }, true]);
    await app.tid("retry-setup").click();
    await connected(app);
    await app.waitForCall("auth_retry_setup");
    await app.close();
  });

  const errors = [
    {
      name: "validation required (with its link)",
      report: {
        kind: "code_assist",
        message: "Google needs you to verify your account before using Gemini Code Assist. Open the link, finish the steps, then retry.",
        url: "https://accounts.google.com/signin/continue?sarp=1",
      },
    },
    {
      name: "ineligible tier with Google's reason",
      report: {
        kind: "code_assist",
        message: "Your account is not eligible for Gemini Code Assist: Your organization has not enabled Gemini (INELIGIBLE_ACCOUNT). Use an API key instead.",
        url: null,
      },
    },
    {
      name: "retired consumer tier",
      report: {
        kind: "code_assist",
        message: "Gemini Code Assist for individuals was retired by Google in June 2026. Use a Gemini API key (free from Google AI Studio) or Vertex AI.",
        url: null,
      },
    },
    { name: "401/403", report: { kind: "sign_in_required", message: "Google did not accept the sign-in (HTTP 401). Sign in again.", url: null } },
    { name: "timeout", report: { kind: "timed_out", message: "No answer from the browser within 5 minutes, so sign-in was stopped.", url: null } },
    { name: "consent denied", report: { kind: "denied", message: "Google did not grant access: access_denied. Start the sign-in again and allow access, or use an API key.", url: null } },
    { name: "no OAuth client", report: { kind: "o_auth_client_missing", message: "No Google OAuth client is configured: set GEMINI_DESKTOP_OAUTH_CLIENT_ID.", url: null } },
  ];
  for (const { name, report } of errors) {
    test(`Google error shown as is: ${name}`, async () => {
      const app = await open();
      await startGoogle(app);
      await auth(app, "fail", [report, report.kind === "code_assist"]);
      await app.tid("auth-error").waitFor();
      assert.equal(await app.tid("auth-error").getAttribute("data-kind"), report.kind);
      assert.equal(await app.tid("auth-error").locator(".message").innerText(), report.message);
      assert.equal(await app.tid("signin-progress").count(), 0, "the flow ended");
      assert.ok(await app.tid("signin-google").isVisible(), "a new sign-in can start");
      if (report.url) {
        await app.tid("auth-error-link").click();
        const call = await app.waitForCall("plugin:opener|open_url");
        assert.equal(call.args.url, report.url);
      } else {
        assert.equal(await app.tid("auth-error-link").count(), 0);
      }
      await app.close();
    });
  }
});

test("a stored method that cannot start shows the launch's reason on the screen", async () => {
  const lastError = { method: "google-login", message: "Your Google sign-in was revoked.", at: new Date().toISOString(), sign_in_required: true };
  const app = await open({ active: "google-login", lastError, startMessage: "Your Google sign-in was revoked. Sign in again." });
  await app.tid("signin-reason").waitFor();
  assert.equal(await app.tid("signin-reason").innerText(), "Your Google sign-in was revoked. Sign in again.");
  await app.close();
});

describe("account view", () => {
  const signedIn = {
    ready: true,
    active: "google-login",
    google: { signed_in: true, email: "dev@example.com", tier_id: "standard-tier", tier_name: "Gemini Code Assist Standard", project: "proj-123", project_source: "code_assist" },
    notes: ["GEMINI_API_KEY in the environment is used instead of the stored API key."],
  };

  test("shows method, secret location, account, tier, project, expiry and notes", async () => {
    const app = await open(signedIn);
    assert.equal(await app.tid("account-label").innerText(), "dev@example.com");
    await app.tid("account-open").click();
    await app.tid("auth-status").waitFor();
    assert.equal(await app.tid("auth-method").getAttribute("data-method"), "google-login");
    assert.match(await app.tid("auth-method").innerText(), /Google sign-in \(Gemini Code Assist\) · chosen by your choice in Gemini Desktop/);
    assert.match(await app.tid("auth-secret-location").innerText(), /system keyring/);
    assert.equal(await app.tid("account-email").innerText(), "dev@example.com");
    assert.equal(await app.tid("auth-tier").innerText(), "Gemini Code Assist Standard");
    assert.match(await app.tid("auth-project").innerText(), /proj-123 · assigned by Code Assist/);
    assert.match(await app.tid("auth-expiry").innerText(), /expires in 50 min/);
    assert.match(await app.tid("auth-note").innerText(), /GEMINI_API_KEY/);
    assert.equal(await app.tid("auth-ready").getAttribute("data-ready"), "true");
    await app.tid("auth-status").screenshot({ path: screenshotPath("auth-status-light.png") });
    await app.page.keyboard.press("Escape");
    assert.equal(await app.tid("auth-status").count(), 0);
    await app.close();
  });

  test("at the minimum window width the header still fits with the account button", async () => {
    const app = await open(signedIn, { viewport: { width: 720, height: 600 } });
    const overflow = await app.tid("app-header").evaluate((el) => el.scrollWidth - el.clientWidth);
    assert.ok(overflow <= 0, `the header overflows by ${overflow}px`);
    assert.ok(await app.tid("account-open").isVisible());
    await app.tid("app-header").screenshot({ path: screenshotPath("header-narrow-account.png") });
    await app.close();
  });

  // The header's meta row (status, buttons, approvals) never shrinks; the folder path gives
  // way, but some of it must stay readable at every width, signed out ("Agent not connected",
  // "Sign in") or signed in with a long address.
  for (const [state, cfg] of [
    ["signed out", {}],
    ["signed in", { ...signedIn, google: { ...signedIn.google, email: "a.very.long.address@example-company.com" } }],
  ]) {
    test(`${state}: the folder path stays readable and the header fits from 720 to 1,400 px`, async () => {
      for (const width of [720, 860, 900, 1000, 1100, 1200, 1320, 1400]) {
        const app = await open(cfg, { viewport: { width, height: 700 } });
        await app.tid("account-open").waitFor();
        if (state === "signed out") await app.tid("signin-screen").waitFor();
        else await connected(app);
        const overflow = await app.tid("app-header").evaluate((el) => el.scrollWidth - el.clientWidth);
        assert.ok(overflow <= 0, `${width}px: the header overflows by ${overflow}px`);
        const path = await app.tid("workspace-path").evaluate((el) => el.getBoundingClientRect().width);
        const least = width > 860 ? 80 : 40;
        assert.ok(path >= least, `${width}px: the folder path has ${path}px`);
        assert.ok(await app.tid("approval-mode").isVisible(), `${width}px: the approval switch shows`);
        if (width === 1100) await app.tid("app-header").screenshot({ path: screenshotPath(`header-1100-${state.replace(" ", "-")}.png`) });
        await app.close();
      }
    });
  }

  test("Re-authenticate starts a Google sign-in", async () => {
    const app = await open(signedIn);
    await app.tid("account-open").click();
    await app.tid("reauth").click();
    await app.tid("signin-screen").waitFor();
    await app.waitForCall("auth_start_google_login");
    await app.page.waitForSelector('[data-testid="signin-stage"][data-stage="waiting_for_browser"]');
    // Signed in already: the screen can be left.
    await app.tid("signin-close").click();
    await app.waitForCall("auth_cancel_google_login");
    assert.equal(await app.tid("signin-screen").count(), 0);
    await app.close();
  });

  test("Switch method opens the choices; a stored key can be used without typing it", async () => {
    const app = await open({ ...signedIn, apiKeyStored: true });
    await app.tid("account-open").click();
    await app.tid("switch-method").click();
    await app.tid("signin-screen").waitFor();
    await app.tid("signin-api-key").click();
    const before = app.callsOf("start_session").length;
    await app.tid("api-key-use-stored").click();
    assert.deepEqual((await app.waitForCall("auth_select_method")).args, { method: "gemini-api-key" });
    await app.waitForCall("start_session", () => true, { from: app.calls.findIndex((c) => c.cmd === "auth_select_method") });
    await connected(app);
    assert.ok(app.callsOf("start_session").length > before);
    await app.close();
  });

  test("Sign out revokes, stops the session and shows the sign-in screen", async () => {
    const app = await open(signedIn);
    await app.tid("account-open").click();
    await app.tid("sign-out").click();
    assert.deepEqual((await app.waitForCall("auth_sign_out")).args, { method: null });
    await app.tid("signin-screen").waitFor();
    assert.equal(await app.tid("signin-reason").innerText(), "You are signed out.");
    assert.equal(await app.tid("connection-status").getAttribute("data-state"), "disconnected");
    assert.equal(await app.tid("account-label").innerText(), "Sign in");
    await app.close();
  });

  test("a sign-in revoked mid-session leads to the sign-in screen with the reason, once", async () => {
    const app = await open(signedIn);
    const revoked = "Your Google sign-in has expired or was revoked (Google said: invalid_grant). Sign in again.";
    await app.page.evaluate((message) => {
      const s = window.__gdAuth.state;
      s.ready = false;
      s.google = { ...s.google, signed_in: false };
      s.lastError = { method: "google-login", message, at: new Date().toISOString(), sign_in_required: true };
    }, revoked);
    await app.emit({ type: "error", kind: "auth", message: `giving up after 2 attempts: credentials unavailable: ${revoked}`, status: null, fatal: false });
    await app.tid("signin-screen").waitFor();
    // gd-auth's message, without the transport's wrapping.
    assert.equal(await app.tid("signin-reason").innerText(), revoked);
    assert.equal(await app.tid("account-label").innerText(), "Sign in");
    // The screen waits for the user: no new session attempt (no loop).
    const starts = app.callsOf("start_session").length;
    await app.page.waitForTimeout(300);
    assert.equal(app.callsOf("start_session").length, starts);
    await app.close();
  });

  const PROJECTS = [
    { project_id: "proj-123", name: "Main", project_number: "111" },
    { project_id: "beta-2", name: "Beta", project_number: "222" },
  ];

  test("Change project: the account view lists the projects and a pick sets Code Assist up again", async () => {
    const app = await open({ ...signedIn, projects: PROJECTS });
    await app.tid("account-open").click();
    assert.equal(await app.tid("project-list-load").innerText(), "Change project…");
    const starts = app.callsOf("start_session").length;
    await app.tid("project-list-load").click();
    await app.tid("project-select").waitFor();
    assert.deepEqual(await app.tid("project-select").locator("option:not([disabled])").allInnerTexts(), [
      "Main (proj-123) · current",
      "Beta (beta-2)",
    ]);
    await app.tid("project-select").selectOption("beta-2");
    await app.tid("auth-status").screenshot({ path: screenshotPath("auth-status-change-project.png") });
    await app.tid("project-pick").click();
    assert.deepEqual((await app.waitForCall("auth_pick_project")).args, { project: "beta-2" });
    // A new session starts with the project, and says so.
    await app.tid("auth-status").waitFor({ state: "detached" });
    await connected(app);
    assert.ok(app.callsOf("start_session").length > starts, "a new session");
    assert.match(await app.tid("notice").last().innerText(), /Gemini Code Assist is set up \(Gemini Code Assist Standard, project beta-2\)/);
    await app.tid("account-open").click();
    assert.match(await app.tid("auth-project").innerText(), /beta-2 · picked in Gemini Desktop/);
    await app.close();
  });

  test("Cancel closes the picker without changing anything", async () => {
    const app = await open({ ...signedIn, projects: PROJECTS });
    await app.tid("account-open").click();
    await app.tid("project-list-load").click();
    await app.tid("project-select").waitFor();
    await app.tid("project-cancel").click();
    assert.equal(await app.tid("project-picker").count(), 0);
    assert.equal(await app.tid("project-list-load").innerText(), "Change project…");
    assert.equal(app.callsOf("auth_pick_project").length, 0);
    await app.close();
  });

  test("a project the account cannot list is typed in; listing's failure stays explained", async () => {
    const listError = { kind: "protocol", message: "Could not list your Google Cloud projects (HTTP 403): permission denied", url: null };
    const app = await open({ ...signedIn, listError });
    await app.tid("account-open").click();
    await app.tid("project-list-load").click();
    await app.tid("auth-error").waitFor();
    assert.equal(await app.tid("auth-error").locator(".message").innerText(), listError.message);
    assert.match(await app.tid("project-loading").innerText(), /could not be listed; type the project ID/);
    assert.ok(await app.tid("project-pick").isDisabled(), "nothing chosen yet");
    await app.tid("project-id-input").fill("  typed-proj-9 ");
    await app.tid("project-pick").click();
    assert.deepEqual((await app.waitForCall("auth_pick_project")).args, { project: "typed-proj-9" });
    await connected(app);
    await app.close();
  });

  test("a project set by GOOGLE_CLOUD_PROJECT is not offered for change; the note says where it comes from", async () => {
    const note = "The Code Assist project env-proj comes from the GOOGLE_CLOUD_PROJECT environment variable; change it there to use another project.";
    const app = await open({
      ...signedIn,
      pickProject: false,
      google: { ...signedIn.google, project: "env-proj", project_source: "env_google_cloud_project" },
      notes: [note],
    });
    await app.tid("account-open").click();
    await app.tid("auth-status").waitFor();
    assert.match(await app.tid("auth-project").innerText(), /env-proj · GOOGLE_CLOUD_PROJECT/);
    assert.equal(await app.tid("auth-note").innerText(), note);
    assert.equal(await app.tid("project-list-load").count(), 0);
    await app.close();
  });

  test("after a restart without a project: Choose project in the account view and on the sign-in screen", async () => {
    const message =
      "Your account needs a Google Cloud project for Gemini Code Assist (Standard, Enterprise or Workspace). Set GOOGLE_CLOUD_PROJECT, or pick a project on the sign-in screen.";
    const app = await open({
      active: "google-login",
      ready: false,
      google: { signed_in: true, email: "dev@example.com" },
      problem: { kind: "code_assist", message, url: null },
      startMessage: message,
      projects: PROJECTS,
    });
    // The launch could not start a session: the sign-in screen says why and, the Google sign-in
    // being kept, offers the picker and Retry setup without signing in again.
    await app.tid("signin-screen").waitFor();
    assert.equal(await app.tid("signin-reason").innerText(), message);
    await app.tid("signin-setup").waitFor();
    assert.ok(await app.tid("retry-setup").isVisible());
    assert.equal(await app.tid("signin-setup").locator('[data-testid="project-list-load"]').innerText(), "Choose a Google Cloud project…");

    // The account view offers it too.
    await app.tid("account-open").click();
    await app.tid("auth-status").waitFor();
    const picker = app.tid("auth-project-picker");
    assert.equal(await picker.locator('[data-testid="project-list-load"]').innerText(), "Choose project…");
    await picker.locator('[data-testid="project-list-load"]').click();
    await picker.locator('[data-testid="project-select"]').selectOption("proj-123");
    await picker.locator('[data-testid="project-pick"]').click();
    assert.deepEqual((await app.waitForCall("auth_pick_project")).args, { project: "proj-123" });
    await connected(app);
    assert.equal(await app.tid("signin-screen").count(), 0);
    await app.close();
  });
});
