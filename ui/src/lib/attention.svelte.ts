// Calling the user back (issue 16): when a conversation needs them — a tool call waits for
// approval, or a turn finished or failed — and they are not looking at it, the backend shows a
// desktop notification (a click opens that conversation), sets the window's urgency hint and
// the launcher badge (src-tauri/src/attention.rs). This store decides whether to call: the
// `ui.desktopNotifications` setting (all, approvals only, off) and where the user is looking —
// never for the conversation shown in the focused window.
import * as api from "../api";

export type NotificationMode = "all" | "approvals" | "off";
export type AttentionReason = "approval" | "finished" | "failed";

export class Attention {
  mode = $state<NotificationMode>("all");
  /** The window has the keyboard focus (the user is looking at the shown conversation). */
  focused = $state(typeof document === "undefined" || document.hasFocus());
  /** An urgency hint is up, to clear when the user comes back. */
  private hinted = false;

  constructor(private readonly pending: () => number) {
    if (typeof window === "undefined") return;
    window.addEventListener("focus", () => {
      this.focused = true;
      if (this.hinted) {
        this.hinted = false;
        void api.commands.attentionClear({ pending: this.pending() }).catch(() => {});
      }
    });
    window.addEventListener("blur", () => (this.focused = false));
  }

  /** Reads the setting's value (anything unknown counts as the default, all). */
  setMode(value: unknown): void {
    this.mode = value === "approvals" || value === "off" ? value : "all";
  }

  /**
   * A conversation needs the user for `reason`; `shown` says whether it is the window's shown
   * conversation. Returns whether a notification was asked for.
   */
  call(conversation: { key: number; title: string; workspace: string | null }, shown: boolean, reason: AttentionReason, detail: string): boolean {
    if (this.mode === "off" || (this.mode === "approvals" && reason !== "approval")) return false;
    if (shown && this.focused) return false;
    const folder = conversation.workspace?.split("/").filter(Boolean).pop() ?? "";
    const title =
      reason === "approval" ? "Approval needed" : reason === "failed" ? "A turn failed" : "Gemini finished";
    const body = `${conversation.title}${folder ? ` (${folder})` : ""}: ${detail}`;
    this.hinted = true;
    void api.commands
      .attentionNotify({ request: { conversation: conversation.key, reason, title, body }, pending: this.pending() })
      .catch(() => {});
    return true;
  }
}
