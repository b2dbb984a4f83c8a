// Renders a session's events into the message list.
//
// A deliberately small, framework-free renderer: each event touches only the element it concerns
// (text deltas append to one text node), so streaming never re-renders the history.
import type { Event } from "./protocol/Event";

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  testId?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (testId) node.dataset.testid = testId;
  return node;
}

function summariseArgs(args: unknown): string {
  if (args && typeof args === "object") {
    const values = Object.values(args as Record<string, unknown>).filter(
      (v) => typeof v === "string" || typeof v === "number",
    );
    if (values.length > 0) return values.map(String).join(" ");
  }
  return JSON.stringify(args);
}

export class ChatView {
  private readonly list: HTMLElement;
  private assistantText: Text | null = null;
  private assistantBody: HTMLElement | null = null;
  private readonly toolCards = new Map<string, HTMLElement>();
  private turnTokens = 0;
  private turnStarted = 0;

  constructor(list: HTMLElement) {
    this.list = list;
  }

  addUserMessage(text: string): void {
    this.list.querySelector('[data-testid="empty-state"]')?.remove();
    const item = el("li", "message user", "user-message");
    item.textContent = text;
    this.append(item);
  }

  addNotice(kind: "error" | "warning" | "info", text: string): void {
    const item = el("li", `notice ${kind}`, "notice");
    item.dataset.kind = kind;
    item.textContent = text;
    this.append(item);
  }

  /** Applies one session event. Returns true when the turn is over. */
  handle(event: Event): boolean {
    switch (event.type) {
      case "turn_started":
        this.turnTokens = 0;
        this.turnStarted = performance.now();
        this.endAssistantBlock();
        return false;
      case "thought": {
        const details = el("details", "thought", "thought");
        const summary = el("summary", "thought-subject");
        summary.textContent = event.subject || "Thinking";
        details.append(summary);
        if (event.description) {
          const body = el("p", "thought-body");
          body.textContent = event.description;
          details.append(body);
        }
        this.assistantBlock().before(details);
        return false;
      }
      case "content_delta":
        this.appendText(event.text);
        return false;
      case "tool_call_request": {
        this.endAssistantBlock();
        const card = el("li", "tool-card", "tool-card");
        card.dataset.status = "running";
        card.dataset.tool = event.name;
        const head = el("div", "tool-head");
        const name = el("span", "tool-name");
        name.textContent = event.name;
        const args = el("code", "tool-args");
        args.textContent = summariseArgs(event.args);
        const status = el("span", "tool-status", "tool-status");
        status.textContent = "Running…";
        head.append(name, args, status);
        card.append(head);
        this.toolCards.set(event.call_id, card);
        this.append(card);
        return false;
      }
      case "tool_call_response": {
        const card = this.toolCards.get(event.call_id);
        if (!card) return false;
        card.dataset.status = event.status;
        const status = card.querySelector<HTMLElement>(".tool-status");
        if (status) {
          status.textContent =
            event.status === "success" ? `Done · ${event.duration_ms} ms` : event.status;
        }
        const result = el("div", "tool-result", "tool-result");
        result.textContent = event.error ?? event.display ?? "";
        card.append(result);
        return false;
      }
      case "usage":
        this.turnTokens += event.total_tokens;
        return false;
      case "retrying":
        this.addNotice("info", `Retrying (attempt ${event.attempt} of ${event.max_attempts})…`);
        return false;
      case "warning":
        this.addNotice("warning", event.message);
        return false;
      case "loop_detected":
        this.addNotice("warning", `Stopped: ${event.detail}`);
        return false;
      case "chat_compressed":
        this.addNotice(
          "info",
          `Older messages were summarised (${event.original_tokens} → ${event.new_tokens} tokens).`,
        );
        return false;
      case "error":
        this.addNotice("error", event.message);
        return false;
      case "turn_complete": {
        this.endAssistantBlock();
        if (event.status === "cancelled") this.addNotice("info", "Cancelled.");
        if (event.status === "declined") this.addNotice("info", "Declined. Tell the agent what to do instead.");
        const seconds = ((performance.now() - this.turnStarted) / 1000).toFixed(1);
        const footer = el("li", "turn-footer", "turn-footer");
        footer.textContent = `${this.turnTokens.toLocaleString()} tokens · ${seconds} s`;
        this.append(footer);
        return true;
      }
      default:
        return false;
    }
  }

  private appendText(text: string): void {
    if (!this.assistantText) {
      this.assistantText = document.createTextNode("");
      this.assistantBlock().append(this.assistantText);
    }
    this.assistantText.appendData(text);
    this.scrollToEnd();
  }

  private assistantBlock(): HTMLElement {
    if (!this.assistantBody) {
      const item = el("li", "message assistant", "assistant-message");
      const body = el("div", "assistant-text", "assistant-text");
      item.append(body);
      this.append(item);
      this.assistantBody = body;
    }
    return this.assistantBody;
  }

  private endAssistantBlock(): void {
    this.assistantBody = null;
    this.assistantText = null;
  }

  private append(node: HTMLElement): void {
    this.list.append(node);
    this.scrollToEnd();
  }

  private scrollToEnd(): void {
    const scroller = this.list.parentElement;
    if (scroller) scroller.scrollTop = scroller.scrollHeight;
  }
}
