// Opening the sign-in screen's links (AI Studio, the authorization URL again) in the system
// browser. A failure is ignored: the address is always shown as text the user can copy.
import { openExternal } from "../api";

export function openUrl(url: string): void {
  void openExternal(url).catch(() => {});
}
