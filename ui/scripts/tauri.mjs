#!/usr/bin/env node
// Runs the Tauri CLI (`tauri dev`, `tauri build`, `tauri info`, ...) for this repository's
// layout. Usage, from ui/: `npm run tauri -- <command> [args]` (or `npm run tauri:dev`,
// `npm run tauri:build`).
//
// Why a wrapper: `tauri.conf.json` lives at the repository root, but the Tauri CLI requires the
// directory holding the config to also hold the app's Cargo.toml with a [package] section, and
// the root Cargo.toml is a virtual workspace manifest. `cargo build -p gemini-desktop` does not
// care (src-tauri/build.rs and `generate_context!` point at the root config explicitly); only
// the CLI does. So, for the duration of the command, this script writes
// `src-tauri/tauri.conf.json`: the root config with its relative paths rebased onto src-tauri/
// (git-ignored, removed afterwards, never edit it), points the CLI at src-tauri/ and ui/, and
// runs it.
import { spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const uiDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const rootDir = path.resolve(uiDir, "..");
const tauriDir = path.join(rootDir, "src-tauri");
const generated = path.join(tauriDir, "tauri.conf.json");

/** `p`, relative to the repository root, made relative to src-tauri/ instead. */
function rebase(p) {
  if (typeof p !== "string" || path.isAbsolute(p) || /^[a-z][a-z0-9+.-]*:/i.test(p)) {
    return p; // absolute paths and URLs stay as they are
  }
  return path.relative(tauriDir, path.resolve(rootDir, p)).split(path.sep).join("/");
}

function rebaseHook(hook) {
  return hook && typeof hook === "object" && hook.cwd ? { ...hook, cwd: rebase(hook.cwd) } : hook;
}

const config = JSON.parse(readFileSync(path.join(rootDir, "tauri.conf.json"), "utf8"));
config.$schema = "../ui/node_modules/@tauri-apps/cli/config.schema.json";
if (config.build) {
  const build = config.build;
  if (typeof build.frontendDist === "string") build.frontendDist = rebase(build.frontendDist);
  else if (Array.isArray(build.frontendDist)) build.frontendDist = build.frontendDist.map(rebase);
  build.beforeDevCommand = rebaseHook(build.beforeDevCommand);
  build.beforeBuildCommand = rebaseHook(build.beforeBuildCommand);
  build.beforeBundleCommand = rebaseHook(build.beforeBundleCommand);
  if (Array.isArray(build.additionalWatchFolders)) {
    build.additionalWatchFolders = build.additionalWatchFolders.map(rebase);
  }
}
if (config.bundle) {
  if (Array.isArray(config.bundle.icon)) config.bundle.icon = config.bundle.icon.map(rebase);
  if (Array.isArray(config.bundle.resources)) {
    config.bundle.resources = config.bundle.resources.map(rebase);
  }
  // The packages' extra files (bundle.linux.deb/rpm.files: destination -> source) and desktop
  // templates: the sources are relative to the root too (scripts/package.sh stages them).
  for (const kind of ["deb", "rpm"]) {
    const linux = config.bundle.linux?.[kind];
    if (!linux) continue;
    if (linux.files && typeof linux.files === "object") {
      linux.files = Object.fromEntries(
        Object.entries(linux.files).map(([dest, src]) => [dest, rebase(src)]),
      );
    }
    if (typeof linux.desktopTemplate === "string") linux.desktopTemplate = rebase(linux.desktopTemplate);
  }
}
writeFileSync(generated, `${JSON.stringify(config, null, 2)}\n`);

const cli = createRequire(import.meta.url).resolve("@tauri-apps/cli/tauri.js");
const child = spawn(process.execPath, [cli, ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...process.env, TAURI_APP_PATH: tauriDir, TAURI_FRONTEND_PATH: uiDir },
});

// Ctrl+C reaches the CLI too (same process group): let it shut down, then clean up.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => {
  rmSync(generated, { force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
