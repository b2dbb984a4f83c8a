// State of the file-tree context picker: the lazy tree, the streamed fuzzy search, the selection
// (chips in the composer, with a token estimate) and live updates from the backend's watcher.
import { channel, commands, errorMessage } from "../api";
import type { Entry } from "../protocol/Entry";
import type { IndexEvent } from "../protocol/IndexEvent";
import type { SearchMatch } from "../protocol/SearchMatch";
import type { SearchUpdate } from "../protocol/SearchUpdate";
import type { SelectionEstimate } from "../protocol/SelectionEstimate";
import { withMentions } from "./picker";

/** A row of the tree or of the search results. */
export interface PickerRow {
  /** The selection key: workspace-relative path, or absolute inside an include directory. */
  key: string;
  root: number;
  /** Relative to the root. */
  path: string;
  name: string;
  kind: Entry["kind"];
  depth: number;
  entry: Entry | null;
  match: SearchMatch | null;
}

/** A picked file or folder. */
export interface Picked {
  key: string;
  kind: Entry["kind"];
  binary: boolean;
  huge: boolean;
}

const listingKey = (root: number, path: string) => `${root}:${path}`;

export class PickerController {
  open = $state(false);
  roots = $state<string[]>([]);
  showIgnored = $state(false);
  query = $state("");
  results = $state<SearchMatch[]>([]);
  matched = $state(0);
  indexed = $state(0);
  searching = $state(false);
  /** Listings by `root:path`; a folder is expanded when its listing is here and in `expanded`. */
  listings = $state<Record<string, Entry[]>>({});
  expanded = $state<Record<string, boolean>>({});
  selected = $state<Picked[]>([]);
  estimate = $state<SelectionEstimate | null>(null);
  cursor = $state(0);
  error = $state<string | null>(null);

  #searchSeq = 0;
  #estimateSeq = 0;
  #watching = false;

  /** Visible rows: the tree when there is no query, else the ranked results. */
  rows = $derived.by((): PickerRow[] => {
    if (this.query.trim() !== "") {
      return this.results.map((m) => {
        const name = m.path.split("/").pop() ?? m.path;
        return { key: m.path, root: 0, path: m.path, name, kind: "file", depth: 0, entry: null, match: m };
      });
    }
    const rows: PickerRow[] = [];
    const walk = (root: number, path: string, depth: number) => {
      for (const entry of this.listings[listingKey(root, path)] ?? []) {
        const key = root === 0 ? entry.path : `${this.roots[root]}/${entry.path}`;
        rows.push({ key, root, path: entry.path, name: entry.name, kind: entry.kind, depth, entry, match: null });
        if (entry.kind === "dir" && this.expanded[listingKey(root, entry.path)]) walk(root, entry.path, depth + 1);
      }
    };
    if (this.roots.length <= 1) walk(0, "", 0);
    else
      this.roots.forEach((root, i) => {
        const name = root.split("/").pop() || root;
        const key = i === 0 ? "" : root;
        rows.push({ key, root: i, path: "", name, kind: "dir", depth: 0, entry: null, match: null });
        if (this.expanded[listingKey(i, "")]) walk(i, "", 1);
      });
    return rows;
  });

  tokens = $derived(this.estimate?.tokens ?? 0);
  flagged = $derived(this.selected.filter((p) => p.binary || p.huge).length);

  /** Opens the panel (loading the roots and the first level on first use). */
  async show(): Promise<void> {
    this.open = true;
    this.error = null;
    try {
      await this.ensureRoots(true);
    } catch (error) {
      this.error = errorMessage(error);
    }
  }

  close(): void {
    this.open = false;
  }

  /**
   * Asks the backend for the roots (starting its index if needed). When the workspace changed
   * since the last time (another folder was opened), everything shown and picked is reset.
   */
  async ensureRoots(force = false): Promise<void> {
    if (this.roots.length > 0 && !force) return;
    const info = await commands.pickerOpen();
    this.indexed = info.files;
    if (info.roots[0] === this.roots[0] && this.roots.length > 0) return;
    if (this.roots.length > 0) {
      this.listings = {};
      this.expanded = {};
      this.results = [];
      this.query = "";
      this.clear();
      // The old index's event stream ended with it.
      this.#watching = false;
    }
    this.roots = info.roots;
    if (!this.#watching) {
      this.#watching = true;
      void commands.pickerWatch({ onEvent: channel((event: IndexEvent) => this.#onIndexEvent(event)) }).catch(() => (this.#watching = false));
    }
    if (info.roots.length > 1) this.expanded = { [listingKey(0, "")]: true };
    await this.#load(0, "");
  }

  async #load(root: number, path: string): Promise<void> {
    const entries = await commands.pickerListDir({ root, path, showIgnored: this.showIgnored });
    this.listings = { ...this.listings, [listingKey(root, path)]: entries };
  }

  async toggleExpand(row: PickerRow): Promise<void> {
    if (row.kind !== "dir") return;
    const key = listingKey(row.root, row.path);
    if (this.expanded[key]) {
      this.expanded = { ...this.expanded, [key]: false };
      return;
    }
    try {
      if (!this.listings[key]) await this.#load(row.root, row.path);
      this.expanded = { ...this.expanded, [key]: true };
    } catch (error) {
      this.error = errorMessage(error);
    }
  }

  /** Shows or hides ignored entries: every loaded listing is read again. */
  async setShowIgnored(show: boolean): Promise<void> {
    this.showIgnored = show;
    const keys = Object.keys(this.listings);
    this.listings = {};
    await Promise.all(
      keys.map((k) => {
        const [root, ...rest] = k.split(":");
        return this.#load(Number(root), rest.join(":")).catch(() => {});
      }),
    );
  }

  /** Runs a fuzzy search; results stream in, a newer query supersedes an older one. */
  async search(query: string): Promise<void> {
    this.query = query;
    this.cursor = 0;
    const seq = ++this.#searchSeq;
    if (query.trim() === "") {
      this.results = [];
      this.searching = false;
      return;
    }
    this.searching = true;
    try {
      await this.ensureRoots();
      await commands.pickerSearch({
        query: query.trim(),
        onUpdate: channel((update: SearchUpdate) => {
        if (seq !== this.#searchSeq) return;
        this.results = update.matches;
        this.matched = update.matched;
        this.indexed = update.indexed;
        if (update.done) this.searching = false;
        }),
      });
    } catch (error) {
      if (seq === this.#searchSeq) this.error = errorMessage(error);
    } finally {
      if (seq === this.#searchSeq) this.searching = false;
    }
  }

  isSelected(key: string): boolean {
    return this.selected.some((p) => p.key === key);
  }

  toggleSelect(row: PickerRow): void {
    if (this.isSelected(row.key)) this.remove(row.key);
    else {
      this.selected = [
        ...this.selected,
        { key: row.key, kind: row.kind, binary: row.entry?.binary ?? false, huge: row.entry?.huge ?? false },
      ];
      void this.refreshEstimate();
    }
  }

  remove(key: string): void {
    this.selected = this.selected.filter((p) => p.key !== key);
    void this.refreshEstimate();
  }

  clear(): void {
    this.selected = [];
    this.estimate = null;
  }

  async refreshEstimate(): Promise<void> {
    const seq = ++this.#estimateSeq;
    if (this.selected.length === 0) {
      this.estimate = null;
      return;
    }
    try {
      const estimate = await commands.pickerEstimate({ paths: this.selected.map((p) => p.key) });
      if (seq !== this.#estimateSeq) return;
      this.estimate = estimate;
      // The estimate also knows about binary/huge files picked from search results or folders.
      this.selected = this.selected.map((p) => {
        const item = estimate.items.find((i) => i.path === p.key);
        return item ? { ...p, binary: p.binary || item.binaryFiles > 0, huge: p.huge || item.hugeFiles > 0 } : p;
      });
    } catch (error) {
      this.error = errorMessage(error);
    }
  }

  /**
   * Whether the file or folder at `path` (an index key) holds binary or large files, the flags
   * its chip would show; for a path inserted by the inline `@` search.
   */
  async flagsOf(path: string): Promise<{ binary: boolean; huge: boolean }> {
    try {
      const estimate = await commands.pickerEstimate({ paths: [path] });
      const item = estimate.items.find((i) => i.path === path);
      return { binary: (item?.binaryFiles ?? 0) > 0, huge: (item?.hugeFiles ?? 0) > 0 };
    } catch {
      return { binary: false, huge: false };
    }
  }

  /** The prompt with the picked paths as `@path` references. */
  promptWith(text: string): string {
    return withMentions(text, this.selected.map((p) => p.key));
  }

  /** Keyboard navigation inside the panel; true when the key was handled. */
  onKey(event: KeyboardEvent): boolean {
    const rows = this.rows;
    const row = rows[this.cursor];
    switch (event.key) {
      case "ArrowDown":
        this.cursor = Math.min(rows.length - 1, this.cursor + 1);
        return true;
      case "ArrowUp":
        this.cursor = Math.max(0, this.cursor - 1);
        return true;
      case "ArrowRight":
        if (row?.kind === "dir" && !this.expanded[listingKey(row.root, row.path)]) void this.toggleExpand(row);
        return true;
      case "ArrowLeft":
        if (row?.kind === "dir" && this.expanded[listingKey(row.root, row.path)]) void this.toggleExpand(row);
        return true;
      case " ":
      case "Enter":
        if (row) this.toggleSelect(row);
        return true;
      case "Escape":
        this.close();
        return true;
      default:
        return false;
    }
  }

  #onIndexEvent(event: IndexEvent): void {
    if (event.type === "changed") {
      for (const dir of event.dirs) {
        const key = listingKey(event.root, dir);
        if (this.listings[key]) void this.#load(event.root, dir).catch(() => {});
      }
      const gone = new Set(event.removed);
      if (this.selected.some((p) => gone.has(p.key))) {
        this.selected = this.selected.filter((p) => !gone.has(p.key));
        void this.refreshEstimate();
      }
    }
    this.indexed = event.type === "built" ? event.files : this.indexed;
    if (this.query.trim() !== "") void this.search(this.query);
  }
}
