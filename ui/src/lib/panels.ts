// The one list of the app's panels, as the header's Panels menu offers them: each with how it
// opens, whether it is open, and its other way in (a slash command or a shortcut). Extensions and
// Hooks had only their slash commands (issue 34); the header's own buttons fold into this menu
// in narrow windows, so every panel stays reachable at every width.
import type { AppController } from "./app.svelte";
import { MOD } from "./keys";

export interface PanelEntry {
  /** The menu item's `data-panel` (tests and styles key on it). */
  id: string;
  label: string;
  /** What it is for, one line. */
  what: string;
  /** Its other way in, shown beside the label. */
  key: string;
  isOpen(app: AppController): boolean;
  open(app: AppController): void;
}

export const PANELS: readonly PanelEntry[] = [
  {
    id: "history",
    label: "History",
    what: "Search, read and resume past sessions",
    key: `${MOD}+Shift+H`,
    isOpen: (app) => app.history.open,
    open: (app) => void app.history.show(),
  },
  {
    id: "checkpoints",
    label: "Checkpoints",
    what: "Undo an edit: code, conversation or both",
    key: "/restore",
    isOpen: (app) => app.chat.checkpoints.panelOpen,
    open: (app) => (app.chat.checkpoints.panelOpen = true),
  },
  {
    id: "usage",
    label: "Usage",
    what: "Tokens and the quota left",
    key: "/stats",
    isOpen: (app) => app.usage.open,
    open: (app) => app.usage.show(),
  },
  {
    id: "mcp",
    label: "MCP servers",
    what: "Their state, tools and sign-in",
    key: "/mcp",
    isOpen: (app) => app.mcp.open,
    open: (app) => (app.mcp.open = true),
  },
  {
    id: "policies",
    label: "Policies",
    what: "The rules that let tool calls run, ask or be denied",
    key: "/policies",
    isOpen: (app) => app.policies.open,
    open: (app) => app.policies.show(),
  },
  {
    id: "memory",
    label: "Memory",
    what: "The context files (GEMINI.md) and saved facts",
    key: "/memory",
    isOpen: (app) => app.memory.open,
    open: (app) => (app.memory.open = true),
  },
  {
    id: "agents",
    label: "Agents",
    what: "The subagents Gemini can start",
    key: "/agents",
    isOpen: (app) => app.agents.open,
    open: (app) => app.agents.show(),
  },
  {
    id: "skills",
    label: "Skills",
    what: "Agent skills: enable or disable them",
    key: "/skills",
    isOpen: (app) => app.skills.open,
    open: (app) => app.skills.show(),
  },
  {
    id: "extensions",
    label: "Extensions",
    what: "Install, update, enable or remove extensions",
    key: "/extensions",
    isOpen: (app) => app.extensions.open,
    open: (app) => app.extensions.show(),
  },
  {
    id: "hooks",
    label: "Hooks",
    what: "The configured hooks and their last runs",
    key: "/hooks",
    isOpen: (app) => app.hooks.open,
    open: (app) => app.hooks.show(),
  },
  {
    id: "about",
    label: "About",
    what: "Version, commit and updates",
    key: "",
    isOpen: (app) => app.updates.open,
    open: (app) => app.updates.show(),
  },
  {
    id: "settings",
    label: "Settings",
    what: "Settings files, theme, model and more",
    key: "",
    isOpen: (app) => app.settings.open,
    open: (app) => void app.settings.show(),
  },
];
