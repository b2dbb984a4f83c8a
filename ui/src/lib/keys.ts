// Keyboard shortcut labels (Ctrl on Linux/Windows, ⌘ on macOS).
const mac = typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

/** The modifier's label: "Ctrl" or "⌘". */
export const MOD = mac ? "⌘" : "Ctrl";

/** True when the event's primary modifier (Ctrl, or ⌘ on macOS) is held. */
export function hasMod(event: KeyboardEvent): boolean {
  return mac ? event.metaKey : event.ctrlKey;
}

/** True when `target` is a text field (where Ctrl+Backspace deletes a word). */
export function isTextField(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || target instanceof HTMLTextAreaElement || (target instanceof HTMLInputElement && !["checkbox", "radio", "button", "submit"].includes(target.type));
}
