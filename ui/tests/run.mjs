#!/usr/bin/env node
// `npm test`: builds ui/dist if it is missing or older than the sources, bundles the IPC mock,
// then runs the Playwright tests (tests/*.test.mjs) with node's test runner, two files at a time
// (GD_UI_TEST_JOBS sets how many), each file in its own headless browser (see
// support/harness.mjs: Debian's chromium-headless-shell when installed).
//   node tests/run.mjs [--no-build] [node --test options, e.g. --test-name-pattern=diff] [files...]
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { buildMock, DIST, UI_DIR } from "./support/harness.mjs";

const args = process.argv.slice(2);
const noBuild = args.includes("--no-build");
const files = args.filter((a) => !a.startsWith("--"));
const testOptions = args.filter((a) => a.startsWith("--") && a !== "--no-build");

function newest(dir) {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const built = path.join(DIST, "index.html");
const sources = Math.max(
  newest(path.join(UI_DIR, "src")),
  newest(path.join(UI_DIR, "public")),
  ...["index.html", "vite.config.ts", "svelte.config.js", "package-lock.json"].map((f) => statSync(path.join(UI_DIR, f)).mtimeMs),
);
if (!noBuild && (!existsSync(built) || statSync(built).mtimeMs < sources)) {
  console.log("ui/dist is missing or stale: building it (vite build)…");
  const vite = path.join(UI_DIR, "node_modules", "vite", "bin", "vite.js");
  const r = spawnSync(process.execPath, [vite, "build", "--logLevel", "warn"], { cwd: UI_DIR, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
await buildMock();

const tests =
  files.length > 0
    ? files
    : readdirSync(path.join(UI_DIR, "tests"))
        .filter((f) => f.endsWith(".test.mjs"))
        .sort()
        .map((f) => path.join("tests", f));
// Two test files at a time: the suite is CPU-bound (Chromium's software rendering), and two
// files keep both cores of the project's 2-core machines busy where one left gaps (issue 32:
// 35 s against 44-51 s for one at a time on six files). GD_UI_TEST_JOBS=1 runs one at a time.
const r = spawnSync(process.execPath, ["--test", "--test-concurrency=" + (process.env.GD_UI_TEST_JOBS ?? "2"), "--test-reporter=spec", ...testOptions, ...tests], {
  cwd: UI_DIR,
  stdio: "inherit",
});
process.exit(r.status ?? 1);
