import "./styles.css";
import {
  appInfo,
  errorMessage,
  inTauri,
  interruptTurn,
  sendPrompt,
  startSession,
  type AppInfo,
  type SessionInfo,
} from "./api";
import { ChatView } from "./chat";

function byTestId<T extends HTMLElement>(id: string): T {
  const el = document.querySelector<T>(`[data-testid="${id}"]`);
  if (!el) {
    throw new Error(`missing element [data-testid="${id}"]`);
  }
  return el;
}

function renderAppInfo(info: AppInfo): void {
  byTestId("app-version").textContent = `v${info.version}`;
  const workspace = byTestId("workspace-path");
  workspace.textContent = info.workspace ?? "No workspace";
  workspace.title = info.workspace ?? "";
  document.body.dataset.ready = "true";
}

function renderError(message: string): void {
  byTestId("app-version").textContent = "";
  const workspace = byTestId("workspace-path");
  workspace.textContent = message;
  workspace.classList.add("is-error");
  document.body.dataset.ready = "error";
}

type Connection =
  | { state: "connecting" }
  | { state: "connected"; session: SessionInfo }
  | { state: "busy"; session: SessionInfo }
  | { state: "disconnected"; reason: string };

/** The composer and status line, driven by the connection state. */
class Controls {
  private readonly status = byTestId("connection-status");
  private readonly statusText = byTestId("connection-text");
  private readonly send = byTestId<HTMLButtonElement>("send-button");
  private readonly sendWrapper = byTestId("send-tooltip");
  private readonly cancel = byTestId<HTMLButtonElement>("cancel-button");
  private readonly hint = byTestId("composer-hint");

  show(connection: Connection): void {
    this.status.dataset.state = connection.state;
    let tooltip = "";
    switch (connection.state) {
      case "connecting":
        this.statusText.textContent = "Connecting…";
        tooltip = "The agent is starting";
        break;
      case "connected":
        this.statusText.textContent = connection.session.model;
        this.hint.textContent = "Enter to send · Shift+Enter for a new line";
        break;
      case "busy":
        this.statusText.textContent = `${connection.session.model} · working`;
        this.hint.textContent = "Esc to stop";
        break;
      case "disconnected":
        this.statusText.textContent = "Agent not connected";
        this.hint.textContent = connection.reason;
        tooltip = `Agent not connected: ${connection.reason}`;
        break;
    }
    const canSend = connection.state === "connected";
    this.send.disabled = !canSend;
    this.send.setAttribute("aria-disabled", String(!canSend));
    this.send.title = tooltip;
    this.sendWrapper.title = tooltip;
    this.cancel.hidden = connection.state !== "busy";
  }
}

async function connect(view: ChatView, controls: Controls): Promise<void> {
  const form = byTestId<HTMLFormElement>("composer-form");
  const input = byTestId<HTMLTextAreaElement>("prompt-input");
  const cancel = byTestId<HTMLButtonElement>("cancel-button");
  let connection: Connection = { state: "connecting" };
  const set = (next: Connection) => {
    connection = next;
    controls.show(next);
  };
  set(connection);

  let session: SessionInfo;
  try {
    session = await startSession((event) => {
      const done = view.handle(event);
      if (done && connection.state === "busy") set({ state: "connected", session });
    });
  } catch (error) {
    const reason = errorMessage(error);
    view.addNotice("error", reason);
    set({ state: "disconnected", reason });
    return;
  }
  set({ state: "connected", session });
  for (const warning of session.warnings) view.addNotice("warning", warning);

  const submit = async () => {
    const text = input.value.trim();
    if (!text || connection.state !== "connected") return;
    input.value = "";
    input.style.height = "auto";
    view.addUserMessage(text);
    set({ state: "busy", session });
    try {
      await sendPrompt(session.session_id, text);
    } catch (error) {
      view.addNotice("error", errorMessage(error));
      set({ state: "connected", session });
    }
  };
  const stop = () => {
    if (connection.state === "busy") void interruptTurn(session.session_id);
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void submit();
  });
  cancel.addEventListener("click", stop);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void submit();
    }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") stop();
  });
}

async function main(): Promise<void> {
  const input = byTestId<HTMLTextAreaElement>("prompt-input");
  // Grow with the text, up to the CSS max-height (then it scrolls).
  input.addEventListener("input", () => {
    input.style.height = "auto";
    input.style.height = `${input.scrollHeight}px`;
  });
  byTestId<HTMLFormElement>("composer-form").addEventListener("submit", (e) => e.preventDefault());
  if (!inTauri()) {
    renderError("Not running inside Gemini Desktop");
    return;
  }
  try {
    renderAppInfo(await appInfo());
  } catch (err) {
    console.error("app_info failed", err);
    renderError(`Could not load app info: ${String(err)}`);
    return;
  }
  await connect(new ChatView(byTestId("message-list")), new Controls());
}

void main();
