// The one rule for every panel, popover and dialog drawn over the chat (history, checkpoints,
// settings, MCP, memory, account, file picker, shortcut list):
//
// - one open at a time: opening one closes the one that was open;
// - Esc closes the top one wherever the focus is (App.svelte's keydown calls `closeTop`);
// - when it closes, the focus goes back to where it was when it opened (the composer if that
//   element is gone), unless the user has put the focus somewhere else meanwhile.
//
// Each overlay component calls `useOverlay` once in its script: the component exists exactly
// while the overlay is open (it is rendered under an `{#if}`), so its lifetime is the overlay's.
import { onDestroy } from "svelte";

/** The attribute every overlay's root element carries (`data-overlay={id}`). */
export const OVERLAY_ATTR = "data-overlay";

interface Entry {
  id: string;
  close: () => void;
  /** Where the focus goes back to on close. */
  returnTo: HTMLElement | null;
  /** Closed because another overlay opened: that one now owns the focus. */
  replaced: boolean;
}

/** The element to focus when nothing better is left: the prompt box. */
function composer(): HTMLElement | null {
  return document.querySelector<HTMLElement>('[data-testid="prompt-input"]');
}

function focusable(el: HTMLElement | null): el is HTMLElement {
  return !!el && el.isConnected && !(el as HTMLButtonElement).disabled && el.getClientRects().length > 0;
}

export class Overlays {
  /**
   * Open overlays, the newest last (at most one once a newly opened one has closed the rest).
   * Deliberately not `$state`: `closed` runs in a component's teardown, where Svelte hands out
   * the values state had before the update that destroys it.
   */
  private stack: Entry[] = [];

  /** The id of the overlay on top, or null. */
  get top(): string | null {
    return this.stack.at(-1)?.id ?? null;
  }

  /**
   * Registers an overlay that just opened and closes the others. `returnTo` overrides where the
   * focus goes back to (the file picker always returns to the prompt box).
   */
  open(id: string, close: () => void, returnTo?: () => HTMLElement | null): Entry {
    const active = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    let back: HTMLElement | null = returnTo?.() ?? null;
    if (!back) back = active && active !== document.body ? active : null;
    const others = this.stack.filter((e) => e.id !== id);
    for (const other of others) {
      other.replaced = true;
      // Opened from inside the one closing (a shortcut, a link in the panel): inherit its way back.
      if (!back || back.closest(`[${OVERLAY_ATTR}]`)) back = other.returnTo;
    }
    const entry: Entry = { id, close, returnTo: back, replaced: false };
    this.stack = [...this.stack.filter((e) => e.id !== id), entry];
    for (const other of others) other.close();
    return entry;
  }

  /**
   * Unregisters an overlay that closed (its component is being destroyed, its DOM may still be
   * there): gives the focus back if it was inside the overlay or nowhere. Focus the user moved
   * elsewhere meanwhile stays where it is.
   */
  closed(entry: Entry): void {
    this.stack = this.stack.filter((e) => e !== entry);
    if (entry.replaced || this.stack.length > 0) return;
    const active = document.activeElement;
    const lost = !active || active === document.body || !active.isConnected || active.closest(`[${OVERLAY_ATTR}="${entry.id}"]`) !== null;
    if (!lost) return;
    const target = focusable(entry.returnTo) ? entry.returnTo : composer();
    target?.focus();
  }

  /** Esc: closes the top overlay; false when none is open. */
  closeTop(): boolean {
    const top = this.stack.at(-1);
    if (!top) return false;
    top.close();
    return true;
  }

  /** Closes every open overlay (e.g. before Ctrl+K puts the focus in the composer). */
  closeAll(): void {
    for (const entry of [...this.stack]) {
      entry.replaced = true;
      entry.close();
    }
  }
}

export const overlays = new Overlays();

/**
 * Makes the calling component an overlay (call it once, in the component's script): registers
 * it on creation, unregisters it when it is destroyed. `close` must make the app stop rendering
 * it (set its open flag to false).
 */
export function useOverlay(id: string, close: () => void, returnTo?: () => HTMLElement | null): void {
  const entry = overlays.open(id, close, returnTo);
  onDestroy(() => overlays.closed(entry));
}
