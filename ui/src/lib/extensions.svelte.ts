// Extensions (Gemini CLI 0.61's `gemini-extension.json` folders): the `/extensions` panel's data
// and its install flow.
//
// Core owns the extensions: it lists them (`extensions`, answering every extension op), stages
// one for installing and says what it would add (`extension_preview`, answering
// `preview_extension`), and says when an op failed (`extension_error`; nothing changed). The
// install flow here is: the source form → the consent screen listing exactly what the staged
// copy contributes → Install (`install_extension` with the settings' values) or Cancel
// (`discard_extension_preview`). Nothing is installed before Install, and a refusal is shown
// where the user is, with what they typed kept.
import * as api from "../api";
import type { Event } from "../protocol/Event";
import type { ExtensionInfo } from "../protocol/ExtensionInfo";
import type { ExtensionInstall } from "../protocol/ExtensionInstall";
import type { SettingsScope } from "../protocol/SettingsScope";
import { DefinitionListStore } from "./agents.svelte";
import type { SessionStore } from "./session.svelte";

/** Where the install flow is: closed, the source form, waiting for the preview, the consent
 * screen, waiting for the install. */
export type InstallStage = "closed" | "form" | "previewing" | "consent" | "installing";

/** Where an installed extension came from, in words. */
export function installSourceLabel(install: ExtensionInstall | undefined, path: string): string {
  if (!install) return `Found in ${path}`;
  switch (install.kind) {
    case "local":
      return `Installed copy of ${install.source}`;
    case "git":
      return `git ${install.source}${install.git_ref ? ` @ ${install.git_ref}` : ""}`;
    case "link":
      return `Linked to ${install.source}`;
    case "github_release":
      return `GitHub release of ${install.source}${install.git_ref ? ` @ ${install.git_ref}` : ""}`;
  }
}

/** A source that git clones rather than a folder (what the form offers a ref for). */
export function isGitSource(source: string): boolean {
  const s = source.trim();
  return /^(https?|ssh|git|file):\/\//.test(s) || /^[\w.-]+@[\w.-]+:/.test(s) || s.endsWith(".git");
}

export class ExtensionsStore extends DefinitionListStore {
  /** The last list; null until core answered. */
  extensions = $state.raw<ExtensionInfo[] | null>(null);
  /** What the last change did, in core's words. */
  notice = $state<string | null>(null);
  /** An op on an installed extension failed (the install flow shows its own). */
  error = $state.raw<{ name?: string; message: string } | null>(null);
  /** Extensions with an op sent and not answered yet. */
  pending = $state.raw<ReadonlySet<string>>(new Set());

  // The install flow.
  stage = $state<InstallStage>("closed");
  source = $state("");
  gitRef = $state("");
  /** Link the folder in place instead of copying it. */
  link = $state(false);
  /** The staged copy the consent screen shows. */
  preview = $state.raw<{ id: string; extension: ExtensionInfo } | null>(null);
  /** The consent screen's fields, by env var. */
  settingValues = $state<Record<string, string>>({});
  /** Why the preview or the install was refused, shown in the flow. */
  installError = $state<string | null>(null);

  constructor(session: SessionStore, failed: (text: string) => void) {
    super(session, failed, "list_extensions", "extensions");
  }

  handle(event: Extract<Event, { type: "extensions" | "extension_preview" | "extension_error" }>): void {
    switch (event.type) {
      case "extensions":
        this.extensions = event.extensions;
        this.errors = event.errors;
        this.notice = event.notice ?? null;
        this.pending = new Set();
        this.error = null;
        if (this.stage === "installing") this.closeFlow();
        return;
      case "extension_preview":
        if (this.stage !== "previewing") {
          // The user gave up waiting (closed the form): the staged copy is not wanted.
          void this.send({ type: "discard_extension_preview", preview_id: event.preview_id }, "discard the staged extension");
          return;
        }
        this.preview = { id: event.preview_id, extension: event.extension };
        this.settingValues = Object.fromEntries(event.extension.contributes.settings.map((s) => [s.env_var, ""]));
        this.installError = null;
        this.stage = "consent";
        return;
      case "extension_error":
        this.pending = new Set();
        if (this.stage === "previewing") {
          this.installError = event.message;
          this.stage = "form";
        } else if (this.stage === "installing") {
          this.installError = event.message;
          this.stage = "consent";
        } else {
          this.error = { name: event.name, message: event.message };
        }
        return;
    }
  }

  /** "Install extension…": the source form (what was typed before is kept). */
  openInstall(): void {
    this.installError = null;
    if (this.stage === "closed") this.stage = "form";
  }

  /** "Browse…": the native folder dialog fills the source field (a cancelled dialog changes nothing). */
  async browse(): Promise<void> {
    try {
      const picked = await api.commands.chooseFolder({ title: "Choose an extension folder" });
      if (picked) {
        this.source = picked;
        this.installError = null;
      }
    } catch (error) {
      this.installError = `Could not open the folder dialog: ${api.errorMessage(error)}`;
    }
  }

  /** Asks core to stage the typed source and say what it would add. */
  async requestPreview(): Promise<void> {
    const source = this.source.trim();
    if (!source) {
      this.installError = "Type the path of an extension folder, or a git URL.";
      return;
    }
    if (!this.session.info) return;
    this.installError = null;
    this.stage = "previewing";
    const gitRef = this.gitRef.trim();
    const spec = { source, link: this.link && !isGitSource(source), auto_update: false, ...(gitRef && isGitSource(source) ? { git_ref: gitRef } : {}) };
    try {
      await this.session.submit({ type: "preview_extension", spec });
    } catch (error) {
      this.installError = `Could not read the extension: ${api.errorMessage(error)}`;
      this.stage = "form";
    }
  }

  /** The user consented: installs exactly the staged copy, with the settings they filled in. */
  async install(): Promise<void> {
    const preview = this.preview;
    if (!preview || !this.session.info) return;
    const settings: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.settingValues)) if (value !== "") settings[name] = value;
    this.installError = null;
    this.stage = "installing";
    try {
      await this.session.submit({ type: "install_extension", preview_id: preview.id, settings });
    } catch (error) {
      this.installError = `Could not install ${preview.extension.name}: ${api.errorMessage(error)}`;
      this.stage = "consent";
    }
  }

  /** Cancel on the consent screen: the staged copy is dropped; the form keeps the source. */
  async cancelPreview(): Promise<void> {
    const preview = this.preview;
    this.preview = null;
    this.settingValues = {};
    this.installError = null;
    this.stage = "form";
    if (preview) await this.send({ type: "discard_extension_preview", preview_id: preview.id }, "discard the staged extension");
  }

  /** Closes the install flow (a staged copy is discarded). */
  closeFlow(): void {
    const preview = this.stage === "consent" ? this.preview : null;
    this.preview = null;
    this.settingValues = {};
    this.installError = null;
    if (this.stage === "installing") {
      // Installed: the next install starts from an empty form.
      this.source = "";
      this.gitRef = "";
      this.link = false;
    }
    this.stage = "closed";
    if (preview) void this.send({ type: "discard_extension_preview", preview_id: preview.id }, "discard the staged extension");
  }

  async setEnabled(name: string, enabled: boolean, scope: SettingsScope): Promise<void> {
    await this.onExtension(name, { type: "set_extension_enabled", name, enabled, scope }, `${enabled ? "enable" : "disable"} ${name}`);
  }

  /** Sets (an empty `value`: removes) one setting, as `extensions config` does. */
  async setSetting(name: string, envVar: string, value: string, scope: SettingsScope): Promise<void> {
    const what = `${value === "" ? "remove" : "set"} ${envVar} of ${name}`;
    await this.onExtension(name, { type: "set_extension_setting", name, env_var: envVar, value, scope }, what);
  }

  async uninstall(name: string): Promise<void> {
    await this.onExtension(name, { type: "uninstall_extension", name }, `uninstall ${name}`);
  }

  async update(name: string): Promise<void> {
    await this.onExtension(name, { type: "update_extension", name }, `update ${name}`);
  }

  private async onExtension(name: string, op: Parameters<SessionStore["submit"]>[0], what: string): Promise<void> {
    if (!this.session.info) return;
    this.error = null;
    this.pending = new Set([...this.pending, name]);
    if (!(await this.send(op, what))) {
      const rest = new Set(this.pending);
      rest.delete(name);
      this.pending = rest;
    }
  }

  private async send(op: Parameters<SessionStore["submit"]>[0], what: string): Promise<boolean> {
    try {
      await this.session.submit(op);
      return true;
    } catch (error) {
      this.failed(`Could not ${what}: ${api.errorMessage(error)}`);
      return false;
    }
  }

  clear(): void {
    this.extensions = null;
    this.errors = [];
    this.notice = null;
    this.error = null;
    this.pending = new Set();
    this.preview = null;
    this.settingValues = {};
    this.installError = null;
    this.stage = "closed";
  }
}
