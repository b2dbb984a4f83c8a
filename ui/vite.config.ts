import { svelte } from "@sveltejs/vite-plugin-svelte";
import { defineConfig } from "vite";

// Vite serves the UI for `tauri dev` (devUrl http://localhost:1420) and builds it into
// `ui/dist`, which tauri.conf.json embeds into the app binary (frontendDist).
const host = process.env.TAURI_DEV_HOST;

export default defineConfig({
  clearScreen: false,
  plugins: [
    svelte({
      // The production CSP is `style-src 'self'`: component styles must end up in a CSS file,
      // never in <style> tags injected at runtime. `emitCss` hands each component's CSS to
      // Vite, which bundles it into dist/assets/*.css (the compiler runs with css: "external").
      emitCss: true,
    }),
  ],
  server: {
    port: 1420,
    strictPort: true,
    host: host || false,
    hmr: host ? { protocol: "ws", host, port: 1421 } : undefined,
    watch: { ignored: ["**/src-tauri/**", "**/target/**", "**/test-results/**"] },
  },
  envPrefix: ["VITE_", "TAURI_ENV_*"],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // WebKitGTK 2.40+ (Linux), Safari 16 (macOS), Chromium-based WebView2 (Windows).
    target: ["es2022", "safari16", "chrome110"],
    minify: !process.env.TAURI_ENV_DEBUG,
    sourcemap: !!process.env.TAURI_ENV_DEBUG,
    // One CSS file for the whole app (loaded by <link>, allowed by `style-src 'self'`).
    cssCodeSplit: false,
  },
});
