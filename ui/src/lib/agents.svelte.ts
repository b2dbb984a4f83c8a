// The `/agents` and `/skills` panels' data: core lists the agents `invoke_agent` can run and the
// skills `activate_skill` can load (`agents` / `skills` events, answering `list_agents` /
// `list_skills`), with the definition files it could not read. These stores keep the last list
// and send the ops; core stays the one place that knows what is defined.
import * as api from "../api";
import type { AgentInfo } from "../protocol/AgentInfo";
import type { DefinitionError } from "../protocol/DefinitionError";
import type { Event } from "../protocol/Event";
import type { SettingsScope } from "../protocol/SettingsScope";
import type { SkillInfo } from "../protocol/SkillInfo";
import type { SessionStore } from "./session.svelte";

/** `path:line` of a definition error, as an editor's "go to" takes it. */
export function errorPlace(error: DefinitionError): string {
  return error.line ? `${error.path}:${error.line}` : error.path;
}

/** Where a definition came from, as a badge. */
export function sourceLabel(source: AgentInfo["source"]): string {
  switch (source) {
    case "built_in":
      return "Built-in";
    case "user":
      return "User";
    case "workspace":
      return "Workspace";
    case "extension":
      return "Extension";
  }
}

/** What the definition panels (agents, skills, hooks, extensions) share: the open flag, the
 * files core could not read, and asking core for the list (opening a panel asks again: for
 * skills, core looks in their folders again). */
export abstract class DefinitionListStore {
  errors = $state.raw<DefinitionError[]>([]);
  open = $state(false);

  constructor(
    protected readonly session: SessionStore,
    protected readonly failed: (text: string) => void,
    private readonly listOp: "list_agents" | "list_skills" | "list_hooks" | "list_extensions",
    private readonly noun: string,
  ) {}

  /** Opens the panel and asks for a fresh list. */
  show(): void {
    this.open = true;
    void this.refresh();
  }

  async refresh(): Promise<void> {
    if (!this.session.info) return;
    try {
      await this.session.submit({ type: this.listOp });
    } catch (error) {
      this.failed(`Could not list the ${this.noun}: ${api.errorMessage(error)}`);
    }
  }
}

export class AgentsStore extends DefinitionListStore {
  /** The last list; null until core answered. */
  agents = $state.raw<AgentInfo[] | null>(null);

  constructor(session: SessionStore, failed: (text: string) => void) {
    super(session, failed, "list_agents", "agents");
  }

  handle(event: Extract<Event, { type: "agents" }>): void {
    this.agents = event.agents;
    this.errors = event.errors;
  }

  clear(): void {
    this.agents = null;
    this.errors = [];
  }
}

export class SkillsStore extends DefinitionListStore {
  skills = $state.raw<SkillInfo[] | null>(null);
  /** Where the switches write (`skills.disabled` of the user's or the workspace's settings). */
  scope = $state<SettingsScope>("user");
  /** Skills whose switch was sent and not answered by a new list yet. */
  pending = $state.raw<ReadonlySet<string>>(new Set());

  constructor(session: SessionStore, failed: (text: string) => void) {
    super(session, failed, "list_skills", "skills");
  }

  handle(event: Extract<Event, { type: "skills" }>): void {
    this.skills = event.skills;
    this.errors = event.errors;
    this.pending = new Set();
  }

  /** Enables or disables a skill in the chosen scope; core answers with the new list. */
  async setEnabled(name: string, enabled: boolean): Promise<void> {
    if (!this.session.info) return;
    this.pending = new Set([...this.pending, name]);
    try {
      await this.session.submit({ type: "set_skill_enabled", name, enabled, scope: this.scope });
    } catch (error) {
      const rest = new Set(this.pending);
      rest.delete(name);
      this.pending = rest;
      this.failed(`Could not ${enabled ? "enable" : "disable"} the skill ${name}: ${api.errorMessage(error)}`);
    }
  }

  clear(): void {
    this.skills = null;
    this.errors = [];
    this.pending = new Set();
  }
}
