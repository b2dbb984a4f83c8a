// Read by vite-plugin-svelte and svelte-check. TypeScript in components needs no preprocessor
// with Svelte 5 (types are stripped by the compiler).
export default {
  compilerOptions: {
    runes: true,
    // Never inject <style> tags at runtime (the CSP forbids inline styles); see vite.config.ts.
    css: "external",
  },
};
