// Sign-in state and actions: the sign-in screen (API key / Google / Vertex AI) and the auth
// status ("auth doctor") view. All IPC goes through api.ts; the backend is gd-auth's
// AuthManager (src-tauri/src/signin.rs). Secrets only travel from the UI to the backend: the
// status never contains one.
import * as api from "../api";
import type { AuthErrorReport } from "../protocol/AuthErrorReport";
import type { AuthMethod } from "../protocol/AuthMethod";
import type { AuthStatus } from "../protocol/AuthStatus";
import type { CloudProject } from "../protocol/CloudProject";
import type { LoginOutcome } from "../protocol/LoginOutcome";
import type { LoginStage } from "../protocol/LoginStage";
import type { VertexAuth } from "../protocol/VertexAuth";

export type AuthView = "none" | "signin" | "status";
export type SignInChoice = "google" | "api_key" | "vertex";

export const METHOD_LABEL: Record<AuthMethod, string> = {
  "gemini-api-key": "Gemini API key",
  "vertex-ai": "Vertex AI",
  "google-login": "Google sign-in (Gemini Code Assist)",
};

/** What the Google flow shows for each stage. */
export function stageText(stage: LoginStage | null): string {
  switch (stage?.stage) {
    case undefined:
      return "Starting…";
    case "waiting_for_browser":
      return "Waiting for you to finish in the browser…";
    case "exchanging_code":
      return "Browser answered; finishing sign-in…";
    case "finishing_setup":
      return `${stage.detail}…`;
    case "done":
      return "Signed in.";
    case "failed":
      return "Sign-in failed.";
  }
}

export class AuthStore {
  view = $state<AuthView>("none");
  /** Why the sign-in screen is shown (e.g. the session could not start), if it is. */
  reason = $state<string | null>(null);
  status = $state.raw<AuthStatus | null>(null);
  /** The expanded choice on the sign-in screen. */
  choice = $state<SignInChoice | null>(null);
  /** An action is running (buttons disabled). */
  busy = $state(false);
  /** The last failure, shown with what to do (and a link when there is one). */
  error = $state.raw<AuthErrorReport | null>(null);
  /** A short success line (e.g. "Key saved: 42 models"). */
  info = $state<string | null>(null);

  /** Google sign-in in progress: its stage and the URL opened in the browser. */
  googleRunning = $state(false);
  stage = $state.raw<LoginStage | null>(null);
  loginUrl = $state<string | null>(null);
  outcome = $state.raw<LoginOutcome | null>(null);
  /** Code Assist setup failed after the Google sign-in: offer project picker and retry. */
  setupFailed = $state(false);
  /** The project picker's list (`null`: not loaded, or listing failed). */
  projects = $state.raw<CloudProject[] | null>(null);

  /**
   * Called after credentials changed for the better: the app starts a new session and shows
   * `message` (e.g. the Google account) in the chat.
   */
  private readonly onSignedIn: (message: string | null) => Promise<void> | void;
  /** Called after sign-out (the backend stopped the sessions). */
  private readonly onSignedOut: () => void;
  /** Bumped per Google sign-in, so answers of a replaced one are ignored. */
  private loginGeneration = 0;

  constructor(hooks: { onSignedIn: (message: string | null) => Promise<void> | void; onSignedOut: () => void }) {
    this.onSignedIn = hooks.onSignedIn;
    this.onSignedOut = hooks.onSignedOut;
  }

  /** Whether the account button should draw attention (no usable credentials). */
  get needsAttention(): boolean {
    return this.status !== null && !this.status.ready;
  }

  /** The header's account label: the email, else the method, else "Sign in". */
  get accountLabel(): string {
    const s = this.status;
    if (!s || !s.active) return "Sign in";
    if (s.active === "google-login") return s.google.signed_in ? (s.google.email ?? METHOD_LABEL[s.active]) : "Sign in";
    return METHOD_LABEL[s.active];
  }

  async refresh(): Promise<AuthStatus | null> {
    try {
      this.status = await api.commands.authStatus();
    } catch (error) {
      this.error = api.authError(error);
    }
    return this.status;
  }

  /**
   * Shows the sign-in screen, with `reason` (why it is needed) when given. With `firstRun`, the
   * reason is left out when nothing was ever configured: the screen itself is the explanation.
   */
  async showSignIn(reason: string | null = null, { firstRun = false } = {}): Promise<void> {
    this.error = null;
    this.info = null;
    this.view = "signin";
    const status = await this.refresh();
    this.reason = firstRun && status && !status.active && !status.last_error ? null : reason;
  }

  async showStatus(): Promise<void> {
    this.error = null;
    this.info = null;
    this.projects = null;
    this.view = "status";
    await this.refresh();
  }

  close(): void {
    if (this.googleRunning) void this.cancelGoogle();
    this.view = "none";
    this.error = null;
    this.info = null;
  }

  choose(choice: SignInChoice | null): void {
    this.choice = choice;
    this.error = null;
    this.info = null;
  }

  /**
   * Runs `action` with the busy flag, turning a rejection into `error`. With `keepError`, the
   * error shown stays until a new one replaces it (e.g. listing projects after a Code Assist
   * failure keeps that failure's explanation visible).
   */
  private async run<T>(action: () => Promise<T>, { keepError = false } = {}): Promise<T | undefined> {
    this.busy = true;
    if (!keepError) this.error = null;
    this.info = null;
    try {
      return await action();
    } catch (error) {
      this.error = api.authError(error);
      return undefined;
    } finally {
      this.busy = false;
    }
  }

  private async signedIn(message: string | null = null): Promise<void> {
    await this.refresh();
    this.view = "none";
    this.reason = null;
    this.choice = null;
    await this.onSignedIn(message ?? this.info);
  }

  // ----- API key ---------------------------------------------------------------------------

  async saveApiKey(key: string): Promise<boolean> {
    if (!key.trim()) {
      this.error = { kind: "input", message: "Paste your Gemini API key first.", url: null, cause: null, detail: null };
      return false;
    }
    const check = await this.run(() => api.commands.authSetApiKey({ key }));
    if (!check) return false;
    await this.signedIn(`API key checked (${check.models} models available) and saved.`);
    return true;
  }

  /** Switches to a method whose credentials are already stored. */
  async useMethod(method: AuthMethod): Promise<void> {
    const status = await this.run(() => api.commands.authSelectMethod({ method }));
    if (!status) return;
    this.status = status;
    if (status.ready) await this.signedIn();
    else if (status.problem) this.error = status.problem;
  }

  // ----- Vertex AI -------------------------------------------------------------------------

  async saveVertex(project: string, location: string, auth: VertexAuth, apiKey: string): Promise<boolean> {
    const input = {
      project: project.trim() || null,
      location: location.trim() || null,
      auth,
      ...(auth === "api-key" && apiKey.trim() ? { api_key: apiKey.trim() } : {}),
    };
    const status = await this.run(() => api.commands.authSetVertex({ input }));
    if (!status) return false;
    this.status = status;
    await this.signedIn("Vertex AI settings saved.");
    return true;
  }

  // ----- Google ----------------------------------------------------------------------------

  async startGoogle(): Promise<void> {
    const generation = ++this.loginGeneration;
    this.choice = "google";
    this.error = null;
    this.info = null;
    this.outcome = null;
    this.setupFailed = false;
    this.projects = null;
    this.stage = null;
    this.loginUrl = null;
    this.googleRunning = true;
    try {
      this.loginUrl = await api.authStartGoogleLogin((stage) => {
        if (generation === this.loginGeneration) this.stage = stage;
      });
    } catch (error) {
      if (generation !== this.loginGeneration) return;
      this.googleRunning = false;
      this.error = api.authError(error);
      return;
    }
    let outcome: LoginOutcome;
    try {
      outcome = await api.commands.authWaitGoogleLogin();
    } catch (error) {
      if (generation !== this.loginGeneration) return;
      this.googleRunning = false;
      const report = api.authError(error);
      // Cancelling is the user's own choice: nothing to explain.
      if (report.kind !== "cancelled") this.error = report;
      if (report.kind === "code_assist") {
        // Signed in, but Code Assist could not be set up: the tokens are kept, so the user
        // can pick a project or fix the account and retry without signing in again.
        this.setupFailed = true;
        await this.refresh();
      }
      return;
    }
    if (generation !== this.loginGeneration) return;
    this.googleRunning = false;
    this.outcome = outcome;
    const setup = outcome.code_assist;
    const who = outcome.email ?? outcome.name ?? "your Google account";
    await this.signedIn(
      `Signed in as ${who} (${setup.tier_name ?? setup.tier_id}, project ${setup.project}).`,
    );
  }

  async cancelGoogle(): Promise<void> {
    this.loginGeneration++;
    this.googleRunning = false;
    this.stage = null;
    try {
      await api.commands.authCancelGoogleLogin();
    } catch {
      // Already over.
    }
  }

  /** Returns whether the pasted text was accepted (a typo keeps the sign-in waiting). */
  async submitCode(code: string): Promise<boolean> {
    if (!code.trim()) {
      this.error = { kind: "input", message: "Paste the address the browser ended on, or the code.", url: null, cause: null, detail: null };
      return false;
    }
    this.error = null;
    try {
      await api.commands.authSubmitLoginCode({ code });
      return true;
    } catch (error) {
      const report = api.authError(error);
      // A failed exchange also ends the wait, which reports it; show typos here.
      if (report.kind === "input") this.error = report;
      return false;
    }
  }

  async loadProjects(): Promise<void> {
    const projects = await this.run(() => api.commands.authListProjects(), { keepError: true });
    if (projects) this.projects = projects;
  }

  /** Code Assist setup with `project` (picker) or again as it is (retry). */
  async setupCodeAssist(project?: string): Promise<void> {
    const setup = await this.run(() => (project !== undefined ? api.commands.authPickProject({ project }) : api.commands.authRetrySetup()));
    if (!setup) {
      await this.refresh();
      return;
    }
    this.setupFailed = false;
    this.projects = null;
    await this.signedIn(`Gemini Code Assist is set up (${setup.tier_name ?? setup.tier_id}, project ${setup.project}).`);
  }

  // ----- Status view -----------------------------------------------------------------------

  async signOut(): Promise<void> {
    const report = await this.run(() => api.commands.authSignOut({ method: null }));
    if (!report) return;
    this.outcome = null;
    this.onSignedOut();
    const revoke = report.revoke_error ? ` (Google could not revoke it: ${report.revoke_error}; the local copy is deleted)` : "";
    await this.showSignIn(`You are signed out${revoke}.`);
  }

  /** "Switch method": the sign-in screen with the three choices. */
  async switchMethod(): Promise<void> {
    this.choice = null;
    await this.showSignIn(null);
  }

  /** "Re-authenticate": a new Google sign-in (other methods: their form). */
  async reauthenticate(): Promise<void> {
    const active = this.status?.active;
    await this.showSignIn(null);
    if (active === "google-login" || active === null || active === undefined) {
      await this.startGoogle();
    } else {
      this.choose(active === "vertex-ai" ? "vertex" : "api_key");
    }
  }
}
