// The settings screen and the trust prompt: what the backend says about the settings layers and
// the folder's trust, and the actions that write them. Changes are applied to the running
// session by the AppController (see its `settingChanged` and `trustChanged`).
import * as api from "../api";
import type { JsonValue } from "../protocol/serde_json/JsonValue";
import type { SettingField } from "../protocol/SettingField";
import type { SettingsLayer } from "../protocol/SettingsLayer";
import type { SettingsScope } from "../protocol/SettingsScope";
import type { SettingsView } from "../protocol/SettingsView";
import type { SettingValue } from "../protocol/SettingValue";
import type { TrustInfo } from "../protocol/TrustInfo";
import type { TrustLevel } from "../protocol/TrustLevel";

export interface SettingsHooks {
  /**
   * A setting was written: apply it (theme, approval mode, reload the session…) as its field's
   * `effect` says.
   */
  settingChanged: (field: SettingField, value: SettingValue | undefined) => Promise<void> | void;
  /** The folder's trust changed: reload the session with (or without) its workspace files. */
  trustChanged: (trust: TrustInfo) => Promise<void> | void;
  /** Turns an MCP server on or off (through the running session). */
  setMcpEnabled: (name: string, enabled: boolean) => Promise<void>;
}

export const LAYER_TEXT: Record<SettingsLayer, string> = {
  system_defaults: "System defaults",
  user: "User",
  workspace: "Workspace",
  system: "System (enforced)",
};

export class SettingsStore {
  /** The settings screen is open. */
  open = $state(false);
  view = $state.raw<SettingsView | null>(null);
  /** Why the view could not be read. */
  loadError = $state<string | null>(null);
  /** Per key: the error of its last save (shown under the field). */
  errors = $state<Record<string, string>>({});
  /** The key being written. */
  saving = $state<string | null>(null);
  /** Said after a save (e.g. "Saved to ~/.gemini/settings.json"). */
  status = $state<string | null>(null);

  /** The open folder's trust; null until known (or without a folder). */
  trust = $state.raw<TrustInfo | null>(null);
  /** The trust prompt is shown (an undecided folder, or the user asked to change it). */
  promptOpen = $state(false);
  trustError = $state<string | null>(null);
  trustBusy = $state(false);

  constructor(private readonly hooks: SettingsHooks) {}

  /** The folder is restricted: not trusted (undecided counts as untrusted). */
  get restricted(): boolean {
    return this.trust !== null && this.trust.trusted !== true;
  }

  /** Reads the folder's trust; an undecided folder opens the prompt. */
  async loadTrust(): Promise<TrustInfo | null> {
    try {
      const trust = await api.commands.trustStatus();
      this.trust = trust;
      this.promptOpen = trust.enabled && trust.trusted === null;
      return trust;
    } catch {
      // No folder, or an older backend: no prompt.
      this.trust = null;
      this.promptOpen = false;
      return null;
    }
  }

  /** Records the user's choice and lets the app reload the session. */
  async decide(level: TrustLevel): Promise<void> {
    this.trustBusy = true;
    this.trustError = null;
    try {
      const trust = await api.commands.trustFolder({ level });
      this.trust = trust;
      this.promptOpen = false;
      await this.hooks.trustChanged(trust);
      if (this.open) await this.load();
    } catch (error) {
      this.trustError = api.errorMessage(error);
    } finally {
      this.trustBusy = false;
    }
  }

  async show(): Promise<void> {
    this.open = true;
    this.status = null;
    await this.load();
  }

  close(): void {
    this.open = false;
  }

  async load(): Promise<void> {
    try {
      this.view = await api.commands.settingsGet();
      this.loadError = null;
    } catch (error) {
      this.loadError = api.errorMessage(error);
    }
  }

  value(key: string): SettingValue | undefined {
    return this.view?.values.find((v) => v.key === key);
  }

  /** The scope a key is edited in by default: where its value comes from, else the user's. */
  defaultScope(key: string): SettingsScope {
    return this.value(key)?.source === "workspace" && this.view?.workspace_trusted ? "workspace" : "user";
  }

  /** Writes `value` (null removes the key) into `scope`'s file. */
  async save(key: string, scope: SettingsScope, value: unknown): Promise<boolean> {
    this.saving = key;
    this.status = null;
    const { [key]: _, ...rest } = this.errors;
    this.errors = rest;
    try {
      this.view = await api.commands.settingsSet({ scope, key, value: value as JsonValue | null });
      const file = this.view.layers.find((l) => l.layer === scope)?.path ?? scope;
      this.status = value === null ? `Removed ${key} from ${file}` : `Saved ${key} to ${file}`;
      const field = this.view.fields.find((f) => f.key === key);
      if (field) await this.hooks.settingChanged(field, this.value(key));
      return true;
    } catch (error) {
      this.errors = { ...this.errors, [key]: api.errorMessage(error) };
      return false;
    } finally {
      this.saving = null;
    }
  }

  async setMcpEnabled(name: string, enabled: boolean): Promise<void> {
    this.saving = `mcp:${name}`;
    const { [`mcp:${name}`]: _, ...rest } = this.errors;
    this.errors = rest;
    try {
      await this.hooks.setMcpEnabled(name, enabled);
      await this.load();
    } catch (error) {
      this.errors = { ...this.errors, [`mcp:${name}`]: api.errorMessage(error) };
    } finally {
      this.saving = null;
    }
  }
}
