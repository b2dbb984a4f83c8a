// First import, so that its mark is set before the other modules are evaluated.
import "./lib/script-mark";
// Sets <html data-theme> from the system before the first paint; `ui.theme` refines it.
import "./lib/theme";
import { mount } from "svelte";
import App from "./App.svelte";
import "./styles/base.css";
import "./styles/confirm.css";
import "./styles/markdown.css";

const target = document.getElementById("app");
if (!target) throw new Error("missing #app");

const app = mount(App, { target });
performance.mark("mounted");
export default app;
