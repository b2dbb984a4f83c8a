// The About view's and the update notice's state: the version and commit, whether updates are
// on (a manifest URL in the user's settings), the last check's result and an install's outcome.
// Everything is the backend's (src-tauri/src/updates): it reads the URL, verifies the signature
// and refuses downgrades; this only shows what it said.
import * as api from "../api";
import type { UpdateCheck } from "../protocol/UpdateCheck";
import type { UpdateDone } from "../protocol/UpdateDone";
import type { UpdateOffer } from "../protocol/UpdateOffer";
import type { UpdateStatus } from "../protocol/UpdateStatus";

export type UpdateBusy = "checking" | "installing" | null;

export class UpdatesStore {
  /** The About view is open. */
  open = $state(false);
  status = $state<UpdateStatus | null>(null);
  /** The last check's answer (null: none yet). */
  check = $state<UpdateCheck | null>(null);
  /** The last check's or install's refusal, as the backend words it. */
  error = $state<string | null>(null);
  /** Which step `error` comes from. */
  failedAt = $state<"check" | "install" | null>(null);
  done = $state<UpdateDone | null>(null);
  busy = $state<UpdateBusy>(null);
  /** Checks answered so far (the About view shows it as `data-checks`: tests wait for it). */
  checks = $state(0);
  /** "Later" on the notice: hidden until the next start (the About view still shows it). */
  dismissed = $state(false);

  /** The newer version on offer, if the last check found one. */
  get offer(): UpdateOffer | null {
    return this.check?.kind === "available" ? this.check.offer : null;
  }

  /** Whether the notice above the conversation shows: an offer, or what became of one. */
  get noticeShown(): boolean {
    if (this.dismissed) return false;
    return this.offer !== null || this.done !== null || (this.error !== null && this.status?.manifestUrl != null);
  }

  /** At start: the status, then a check when the user has set a manifest URL (none otherwise). */
  async start(): Promise<void> {
    await this.loadStatus();
    // The status was just read: the check need not read it again.
    if (this.status?.manifestUrl) await this.checkNow(false);
  }

  async loadStatus(): Promise<void> {
    try {
      this.status = await api.commands.updateStatus();
    } catch (error) {
      this.error = api.errorMessage(error);
    }
  }

  show(): void {
    this.open = true;
    void this.loadStatus();
  }

  /** Asks the manifest; `reloadStatus`: read the status first (the URL may have changed). */
  async checkNow(reloadStatus = true): Promise<void> {
    if (this.busy) return;
    this.busy = "checking";
    this.error = null;
    this.done = null;
    this.dismissed = false;
    try {
      if (reloadStatus) await this.loadStatus();
      this.check = await api.commands.updateCheck();
    } catch (error) {
      this.check = null;
      this.error = api.errorMessage(error);
      this.failedAt = "check";
    } finally {
      this.busy = null;
      this.checks += 1;
    }
  }

  async install(): Promise<void> {
    if (this.busy || !this.offer) return;
    this.busy = "installing";
    this.error = null;
    try {
      this.done = await api.commands.updateInstall();
      this.check = null;
    } catch (error) {
      this.error = api.errorMessage(error);
      this.failedAt = "install";
    } finally {
      this.busy = null;
    }
  }

  async restart(): Promise<void> {
    await api.commands.appRestart();
  }

  dismiss(): void {
    this.dismissed = true;
  }
}

/** What the install button says for this build. */
export function installLabel(offer: UpdateOffer): string {
  return offer.install.kind === "package" ? `Install ${offer.version}` : `Download ${offer.version}`;
}

/** One line on how this build takes updates. */
export function installWords(status: UpdateStatus): string {
  if (status.install.kind === "package") {
    return `Installed from the .${status.install.format} package: an update is installed by the package manager (it asks for an administrator's password), then the app restarts.`;
  }
  return "Not installed from a package (a build from source): an update is downloaded, verified and saved for you to install, with its checksum and link.";
}
