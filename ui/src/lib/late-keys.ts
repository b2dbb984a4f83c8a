// Keys typed into the proposal editor before "Review as hunks" was clicked but delivered after
// it. WebKit hands a busy page its queued key events one at a time and a click can overtake
// them (issue 34: "# edited by hand" was written as "# ed by hand"); by the time they arrive the
// editor is closed, so without this they were lost or, worse, taken as the review's shortcuts
// (a late "e" reopened the editor). A key event's `timeStamp` is when it was typed, so a key
// stamped before the click belongs to the text; the first one stamped after it means the queue
// is drained.

/** A key as the editor would have taken it; the fields of a KeyboardEvent that matter. */
export interface LateKey {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
}

/** `text` with `key` typed at `caret`, and where the caret is then. */
export function typeLate(text: string, caret: number, key: LateKey): { text: string; caret: number } {
  const at = Math.max(0, Math.min(caret, text.length));
  const plain = !key.ctrlKey && !key.metaKey && !key.altKey;
  if (plain && [...key.key].length === 1) return { text: text.slice(0, at) + key.key + text.slice(at), caret: at + key.key.length };
  switch (key.key) {
    case "Enter":
      return { text: `${text.slice(0, at)}\n${text.slice(at)}`, caret: at + 1 };
    case "Backspace":
      return at === 0 ? { text, caret: at } : { text: text.slice(0, at - 1) + text.slice(at), caret: at - 1 };
    case "Delete":
      return { text: text.slice(0, at) + text.slice(at + 1), caret: at };
    case "ArrowLeft":
      return { text, caret: Math.max(0, at - 1) };
    case "ArrowRight":
      return { text, caret: Math.min(text.length, at + 1) };
    default:
      // Shift, Tab, a chord…: typed into the editor they changed nothing we can replay.
      return { text, caret: at };
  }
}
