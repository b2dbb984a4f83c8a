// The /agents and /skills panels (issue 19): what core lists, definition errors with file:line,
// Refresh, the skills' switches (set_skill_enabled with the chosen scope), and the
// activate_skill consent card.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const agentsEvent = {
  type: "agents",
  agents: [
    {
      name: "codebase_investigator",
      display_name: "Codebase Investigator",
      description: "Investigates the codebase with read-only tools.",
      kind: "local",
      source: "built_in",
      model: "gemini-2.5-pro",
      tools: ["read_file", "glob", "grep_search"],
      max_turns: 15,
      timeout_mins: 5,
      enabled: true,
    },
    {
      name: "reviewer",
      description: "Reviews diffs.",
      kind: "local",
      source: "workspace",
      path: "/home/dev/project/.gemini/agents/reviewer.md",
      model: "inherit",
      max_turns: 10,
      timeout_mins: 10,
      enabled: false,
      note: "disabled in agents.overrides",
    },
    {
      name: "far",
      description: "A remote agent.",
      kind: "remote",
      source: "user",
      path: "/home/dev/.gemini/agents/far.md",
      model: "inherit",
      max_turns: 10,
      timeout_mins: 10,
      enabled: false,
      note: "remote agents (A2A) are not supported yet",
    },
  ],
  errors: [{ path: "/home/dev/project/.gemini/agents/broken.md", line: 3, message: "unknown field `colour`" }],
};

const skillsEvent = (enabled = true) => ({
  type: "skills",
  skills: [
    { name: "pdf", description: "Read and fill PDF forms.", source: "user", location: "/home/dev/.gemini/skills/pdf", enabled, active: true },
    { name: "release", description: "Cut a release.", source: "workspace", location: "/home/dev/project/.agents/skills/release", enabled: true, active: false },
    { name: "release", description: "Old release.", source: "user", location: "/home/dev/.gemini/skills/release", enabled: true, active: false, shadowed_by: "workspace" },
  ],
  errors: [{ path: "/home/dev/.gemini/skills/bad/SKILL.md", line: 1, message: "missing front matter" }],
});

/** Types a slash command; the panel asks core for its list. */
async function slash(app, command, op) {
  const from = app.calls.length;
  await app.tid("prompt-input").fill(command);
  await app.tid("prompt-input").press("Enter");
  return app.waitForOp(op, () => true, { from });
}

describe("/agents", () => {
  test("lists the agents with source, model, tools, limits, notes; errors first with file:line; Refresh", async () => {
    const app = await env.open();
    await slash(app, "/agents", "list_agents");
    const panel = app.tid("agents-panel");
    await panel.waitFor();
    await app.emit(agentsEvent);
    await app.page.waitForSelector(sel("agents-item"));
    assert.equal(await app.tid("agents-item").count(), 3);
    const first = await app.tid("agents-item").first().innerText();
    for (const text of ["Codebase Investigator", "Built-in", "gemini-2.5-pro", "read_file, glob, grep_search", "15 turns · 5 min"]) {
      assert.ok(first.includes(text), `${text} in ${first}`);
    }
    const reviewer = app.page.locator(`${sel("agents-item")}[data-name="reviewer"]`);
    assert.equal(await reviewer.getAttribute("data-enabled"), "false");
    assert.match(await reviewer.innerText(), /Workspace[\s\S]*the session's[\s\S]*disabled in agents.overrides/);
    await waitForText(app.page, `${sel("agents-item")}[data-name="far"] ${sel("agents-note")}`, "remote agents (A2A) are not supported yet");
    assert.equal(
      (await app.tid("agents-error").innerText()).replace(/\s+/g, " ").trim(),
      "/home/dev/project/.gemini/agents/broken.md:3: unknown field `colour`",
    );
    await app.page.screenshot({ path: screenshotPath("agents-panel-light.png") });
    const from = app.calls.length;
    await app.tid("agents-refresh").click();
    await app.waitForOp("list_agents", () => true, { from });
    // Skills is one click away (and Agents from there): one panel at a time.
    await app.tid("agents-skills-open").click();
    await app.tid("skills-panel").waitFor();
    await app.waitForOp("list_skills");
    assert.equal(await panel.count(), 0);
    await app.tid("skills-agents-open").click();
    await panel.waitFor();
    // Esc closes it, like every panel.
    await app.page.keyboard.press("Escape");
    await panel.waitFor({ state: "detached" });
    await app.close();
  });
});

test("the settings screen opens both panels", async () => {
  const app = await env.open();
  await app.tid("settings-open").click();
  await app.tid("settings-agents-open").click();
  await app.tid("agents-panel").waitFor();
  await app.waitForOp("list_agents");
  await app.tid("settings-open").click();
  await app.tid("settings-skills-open").click();
  await app.tid("skills-panel").waitFor();
  await app.waitForOp("list_skills");
  await app.close();
});

describe("/skills", () => {
  test("lists skills (active, shadowed), errors with file:line; the switch sends set_skill_enabled in the chosen scope", async () => {
    const app = await env.open({ colorScheme: "dark" });
    await slash(app, "/skills", "list_skills");
    await app.tid("skills-panel").waitFor();
    await app.emit(skillsEvent());
    await app.page.waitForSelector(sel("skills-item"));
    assert.equal(await app.tid("skills-item").count(), 3);
    const pdf = app.page.locator(`${sel("skills-item")}[data-name="pdf"]`);
    assert.equal(await pdf.getAttribute("data-active"), "true");
    assert.match(await pdf.innerText(), /Read and fill PDF forms[\s\S]*\/home\/dev\/.gemini\/skills\/pdf/);
    const hidden = app.page.locator(`${sel("skills-item")}[data-name="release"]`).nth(1);
    await waitForText(app.page, sel("skills-shadowed"), "Hidden by workspace");
    assert.ok(await hidden.getByTestId("skills-toggle").isDisabled(), "a hidden skill has no switch of its own");
    assert.equal((await app.tid("skills-error").innerText()).replace(/\s+/g, " ").trim(), "/home/dev/.gemini/skills/bad/SKILL.md:1: missing front matter");
    await app.page.screenshot({ path: screenshotPath("skills-panel-dark.png") });

    await pdf.getByTestId("skills-toggle").click();
    let op = await app.waitForOp("set_skill_enabled");
    assert.deepEqual(op.args, { sessionId: "s1", name: "pdf", enabled: false, scope: "user" });
    await app.emit(skillsEvent(false));
    await app.until(() => document.querySelector('[data-testid="skills-item"][data-name="pdf"]')?.getAttribute("data-enabled") === "false");
    assert.equal(await pdf.getByTestId("skills-toggle").isChecked(), false);

    await app.tid("skills-scope-workspace").check();
    const from = app.calls.length;
    await pdf.getByTestId("skills-toggle").click();
    op = await app.waitForOp("set_skill_enabled", () => true, { from });
    assert.deepEqual(op.args, { sessionId: "s1", name: "pdf", enabled: true, scope: "workspace" });
    await app.close();
  });
});

describe("activate_skill consent", () => {
  test("names the skill, says what consenting means, and answers like any confirmation", async () => {
    const app = await env.open();
    await app.sendPrompt("fill the form");
    await app.emitAll([
      E.turnStarted(),
      E.toolRequest("k1", "activate_skill", { name: "pdf" }),
      E.confirmation("k1", "activate_skill", E.skillDetails("pdf", "Read and fill PDF forms.", "/home/dev/.gemini/skills/pdf")),
    ]);
    const consent = app.tid("skill-consent");
    await consent.waitFor();
    const text = (await consent.innerText()).replace(/\s+/g, " ");
    for (const part of ["pdf", "Read and fill PDF forms.", "/home/dev/.gemini/skills/pdf", "instructions", "read the files in its folder", "read only: no tool can change them"]) {
      assert.ok(text.includes(part), `${part} in ${text}`);
    }
    assert.equal(await app.tid("confirmation").getAttribute("data-kind"), "activate_skill");
    // The tool card says which skill, too (its only argument).
    assert.equal(await app.page.locator(`${sel("tool-card")}[data-tool="activate_skill"] ${sel("tool-description")}`).innerText(), "pdf");
    assert.match(await app.tid("always-allow").innerText(), /Always allow pdf/);
    await app.page.locator(sel("confirmation")).screenshot({ path: screenshotPath("skill-consent-light.png") });
    await app.tid("approve").click();
    const call = await app.waitForOp("confirm_tool");
    assert.deepEqual(call.args, { sessionId: "s1", call_id: "k1", outcome: "proceed_once", content: null });
    await app.close();
  });
});
