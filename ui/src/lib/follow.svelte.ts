// Whether the conversation follows its end, decided from what the user does (issue 32).
//
// The rules: any scroll input of the user's — wheel or touchpad, keys, a drag of the scrollbar,
// a finger — detaches at once, and wins over a scroll to the end that the list asked for and
// has not done yet, however late that frame comes; only reaching the bottom by the user's own
// scrolling, or "Jump to latest", attaches again.
//
// Why it is built this way: the list scrolls itself (to the end while following; to keep what
// the user reads in place while rows above change height), and the browser reports those
// scrolls with the same `scroll` event as the user's, a frame or more later, coalesced with
// whatever the user did in that frame, and after layout changes that clamp the position. The
// old logic read each scroll event against the one before it, so on a busy machine a user's
// small scroll up from a bottom the list had just moved to (and the browser not yet reported)
// read as a move *down* into the bottom margin: it re-attached, and the list pulled the view
// back down. Here the user's intent comes from the input events, which both engines deliver
// before the scroll they cause (checked in WebKitGTK and Chromium: `wheel`, `keydown`, and a
// `pointerdown` on the scrollbar itself); every scroll the list makes is recorded when it is
// made (`known`); and a scroll event's direction is read only while the user's input is under
// way, so a layout change alone never detaches.

/** Within this many pixels of the end, the view is at the bottom (fractional device scales). */
const AT_BOTTOM = 2;

/** Keys that scroll a focused list up, and ones that scroll it down. */
const UP_KEYS = new Set(["ArrowUp", "PageUp", "Home"]);
const DOWN_KEYS = new Set(["ArrowDown", "PageDown", "End"]);

export function fromBottom(el: HTMLElement): number {
  return el.scrollHeight - el.scrollTop - el.clientHeight;
}

export class Follow {
  /** Following the end of the conversation (the list scrolls to new content). */
  following = $state(true);
  /** Where the list last put the view itself, or where the last scroll event found it. */
  private known = 0;
  /**
   * The user asked to go up (wheel, keys, a drag upwards) and has not asked to go down since:
   * being at the bottom does not attach yet. A smooth-scrolling engine reports the first frames
   * of a wheel step up still at the bottom.
   */
  private goingUp = false;
  /**
   * The user has the list: a mouse button or a finger is down on it (its scrollbar, its text),
   * or it was let go and the scroll it started has not come to rest (a click on the scrollbar's
   * track, a flick, scroll smoothly for frames after the button is up). Meanwhile the list does
   * not scroll itself, and what the scroll events report is the user's doing.
   */
  private held = false;
  /** Counts presses, so the rest-watch of an earlier one does not end a newer one. */
  private presses = 0;
  /**
   * A key or wheel input reached the list and the frame that renders its scroll has not run
   * yet: a scroll seen now is the user's. (Counted, so an older input's frame does not end a
   * newer one's.)
   */
  private inputs = 0;
  private input = false;

  /** A `scroll` event of the list. */
  scrolled(el: HTMLElement): void {
    this.read(el, this.held || this.input);
  }

  /**
   * Takes in where the view is now. `byUser`: the user's input is under way, so a move from
   * where the list last put it is the user's and says which way they went.
   */
  private read(el: HTMLElement, byUser: boolean): void {
    const top = el.scrollTop;
    const distance = fromBottom(el);
    if (byUser) {
      if (top < this.known - 1 && distance > AT_BOTTOM) this.detach();
      else if (top > this.known + 1) this.goingUp = false;
    }
    this.known = top;
    if (!this.following && !this.goingUp && distance <= AT_BOTTOM) this.following = true;
  }

  /** A `wheel` event (a mouse wheel, a touchpad), delivered before the scroll it causes. */
  wheel(event: WheelEvent, el: HTMLElement): void {
    this.userInput();
    if (event.deltaY < 0 && el.scrollTop > 0) this.detach();
    else if (event.deltaY > 0) this.goingUp = false;
  }

  /** A `keydown` on the list (keys typed into a field inside it are not for the list). */
  key(event: KeyboardEvent, el: HTMLElement): void {
    const target = event.target as HTMLElement | null;
    if (target && target !== el && target.closest("input, textarea, select, [contenteditable]")) return;
    // Only keys that scroll (Tab too: moving the focus to a row above scrolls the list). Any
    // other key, with the focus left in the list by a click on a card, made the scrolls of that
    // frame read as the user's: a window resize or a card growing in it detached (issue 34).
    if (!scrollKey(event, target !== el)) return;
    this.userInput();
    const up = UP_KEYS.has(event.key) || (event.key === " " && event.shiftKey);
    if (up && el.scrollTop > 0) this.detach();
    else if (DOWN_KEYS.has(event.key) || event.key === " ") this.goingUp = false;
  }

  /** A mouse button or a finger went down on the list. */
  hold(): void {
    this.presses++;
    this.held = true;
    this.goingUp = false;
  }

  /**
   * It was let go. What the user did while holding it counts (a quick drag can end before the
   * frame that reports it), and so does the scroll it set going, until the view has been still
   * for two frames (frames, not time: on a busy machine they come late, and so does the
   * scroll); then, if still following, the list catches up with the end.
   */
  release(el: HTMLElement): void {
    if (!this.held) return;
    this.read(el, true);
    const press = this.presses;
    let last = el.scrollTop;
    let still = 0;
    const watch = () => {
      if (press !== this.presses) return;
      if (el.scrollTop === last) still++;
      else {
        still = 0;
        last = el.scrollTop;
      }
      if (still < 2) return onFrame(watch);
      this.read(el, true);
      this.held = false;
      this.toEnd(el);
    };
    onFrame(watch);
  }

  /**
   * Scrolls to the end if following and the user does not hold the list. If the user's input
   * has already moved the view up and the browser has not reported it yet, the user wins: the
   * list detaches instead of pulling the view back.
   */
  toEnd(el: HTMLElement): void {
    if (!this.following || this.held) return;
    if (this.input && el.scrollTop < this.known - 1 && fromBottom(el) > AT_BOTTOM) {
      this.detach();
      this.known = el.scrollTop;
      return;
    }
    el.scrollTop = el.scrollHeight;
    this.known = el.scrollTop;
  }

  /** "Jump to latest": follow again, from the end. */
  jump(el: HTMLElement): void {
    this.following = true;
    this.goingUp = false;
    el.scrollTop = el.scrollHeight;
    this.known = el.scrollTop;
  }

  /** The list moved the view itself, not to the end (a chapter, rows above changing height). */
  moved(el: HTMLElement): void {
    this.known = el.scrollTop;
  }

  /** Stop following: the user went elsewhere (a chapter of the outline). */
  stop(): void {
    this.following = false;
    this.goingUp = false;
  }

  /** The list was emptied: follow what comes next. */
  reset(): void {
    this.following = true;
    this.goingUp = false;
  }

  private detach(): void {
    this.following = false;
    this.goingUp = true;
  }

  private userInput(): void {
    const n = ++this.inputs;
    this.input = true;
    const done = () => {
      if (this.inputs === n) this.input = false;
    };
    onFrame(done);
  }
}

/**
 * Whether a key scrolls the list: the arrows, Page Up/Down, Home/End, Tab, and Space unless a
 * control inside the list has the focus (Space presses a button, it does not scroll).
 */
function scrollKey(event: KeyboardEvent, onControl: boolean): boolean {
  if (event.ctrlKey || event.metaKey || event.altKey) return false;
  if (event.key === " ") return !onControl;
  return event.key === "Tab" || UP_KEYS.has(event.key) || DOWN_KEYS.has(event.key);
}

function onFrame(f: () => void): void {
  if (typeof requestAnimationFrame === "function") requestAnimationFrame(f);
  else setTimeout(f, 16);
}
