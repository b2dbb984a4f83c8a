// The colour theme: `ui.theme` from the settings drives it ("light", "dark", or "system" /
// unset / a terminal theme name Gemini CLI knows, followed by its light/dark word if any).
// The resolved theme is set as <html data-theme="light|dark">, which the stylesheets key on.

export type ThemeChoice = "light" | "dark" | "system";

const media = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
let choice: ThemeChoice = "system";

/** What a `ui.theme` value means here. */
export function themeChoice(setting: unknown): ThemeChoice {
  if (typeof setting !== "string") return "system";
  const name = setting.trim().toLowerCase();
  if (name === "light" || name === "dark") return name;
  if (name.includes("light")) return "light";
  if (name.includes("dark")) return "dark";
  return "system";
}

function resolved(): "light" | "dark" {
  if (choice !== "system") return choice;
  return media?.matches ? "dark" : "light";
}

function apply(): void {
  document.documentElement.dataset.theme = resolved();
}

/** Applies a `ui.theme` setting now (and follows the system while it says "system"). */
export function applyTheme(setting: unknown): void {
  choice = themeChoice(setting);
  apply();
}

media?.addEventListener("change", apply);
apply();
