// What the conversation used and what quota is left: the header's usage meter and the usage
// panel read this store. Every figure is core's (one owner for usage statistics): each turn's
// row is its `turn_complete.usage` until core's `SessionStats.turn_rows` (which also has a reopened
// conversation's stored turns) replace the rows, the totals and the per-model, per-role and per-tool tables
// are the session's `SessionStats` (asked for after every turn, and when the panel opens), and
// the quota is the last `Event::Quota`.
import type { QuotaBucket } from "../protocol/QuotaBucket";
import type { QuotaReport } from "../protocol/QuotaReport";
import type { SessionStats } from "../protocol/SessionStats";
import type { TurnStatus } from "../protocol/TurnStatus";
import type { TurnUsage } from "../protocol/TurnUsage";

/** One turn's row of the panel. */
export interface TurnRow {
  /** 1 for the conversation's first turn. */
  index: number;
  status: TurnStatus;
  usage: TurnUsage;
}

/** The conversation's token totals (summed over core's per-model figures). */
export interface UsageTotals {
  requests: number;
  prompt: number;
  cached: number;
  output: number;
  thoughts: number;
  tool: number;
  total: number;
}

const ZERO: UsageTotals = { requests: 0, prompt: 0, cached: 0, output: 0, thoughts: 0, tool: 0, total: 0 };

export class UsageStore {
  /** The usage panel is open. */
  open = $state(false);
  turns = $state.raw<TurnRow[]>([]);
  stats = $state.raw<SessionStats | null>(null);
  quota = $state.raw<QuotaReport | null>(null);

  /** `refresh` asks the session for its statistics (answered by `session_stats`). */
  constructor(private readonly refresh: () => void) {}

  /** A turn ended: its row, and fresh totals from core. */
  turnComplete(status: TurnStatus, usage: TurnUsage): void {
    this.turns = [...this.turns, { index: this.turns.length + 1, status, usage }];
    this.refresh();
  }

  handleStats(stats: SessionStats): void {
    this.stats = stats;
    // Core's rows: a reopened conversation's stored turns too, not only the ones seen here.
    // (Older cores sent no rows: the turns seen here stay.)
    const rows = stats.turn_rows as SessionStats["turn_rows"] | undefined;
    if (rows) this.turns = rows.map((row, i) => ({ index: i + 1, status: row.status, usage: row.usage }));
  }

  handleQuota(quota: QuotaReport): void {
    this.quota = quota;
  }

  /** `/clear`: a new conversation counts from zero (the quota is the account's: it stays). */
  cleared(): void {
    this.turns = [];
    this.stats = null;
    this.refresh();
  }

  /** A new session: nothing used yet, and its own quota report will come. */
  reset(): void {
    this.turns = [];
    this.stats = null;
    this.quota = null;
  }

  /** A session started: what it has used so far (a reopened conversation's stored turns). */
  load(): void {
    this.refresh();
  }

  show(): void {
    this.open = true;
    this.refresh();
  }

  get totals(): UsageTotals {
    const models = this.stats?.models ?? [];
    if (models.length === 0) return this.turnTotals();
    return models.reduce(
      (t, m) => ({
        requests: t.requests + m.requests,
        prompt: t.prompt + m.prompt_tokens,
        cached: t.cached + m.cached_tokens,
        output: t.output + m.output_tokens,
        thoughts: t.thoughts + m.thoughts_tokens,
        tool: t.tool + m.tool_tokens,
        total: t.total + m.total_tokens,
      }),
      ZERO,
    );
  }

  /** Before core's statistics arrive: the turns' own sums (also core's). */
  private turnTotals(): UsageTotals {
    return this.turns.reduce(
      (t, { usage: u }) => ({
        requests: t.requests + u.requests,
        prompt: t.prompt + u.prompt_tokens,
        cached: t.cached + u.cached_tokens,
        output: t.output + u.output_tokens,
        thoughts: t.thoughts + u.thoughts_tokens,
        tool: t.tool + (u.tool_tokens ?? 0),
        total: t.total + u.total_tokens,
      }),
      ZERO,
    );
  }

  /**
   * The bucket the meter shows: the current model's, else the emptiest one (what runs out
   * first); null when the backend reports none.
   */
  meterBucket(model: string): QuotaBucket | null {
    const buckets = this.quota?.buckets ?? [];
    if (buckets.length === 0) return null;
    return buckets.find((b) => b.model === model) ?? buckets.reduce((a, b) => (b.remaining_fraction < a.remaining_fraction ? b : a));
  }
}

/** `0.75` → `75%`. */
export function percent(fraction: number): string {
  return `${Math.round(fraction * 100)}%`;
}

/** `12345` → `12.3k`, `1234567` → `1.2M`: the meter's short form. */
export function shortCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A reset time for people: local date and time, and how far away it is. */
export function resetText(resetTime: string | undefined, now = Date.now()): string {
  if (!resetTime) return "reset time not reported";
  const at = Date.parse(resetTime);
  if (Number.isNaN(at)) return `resets ${resetTime}`;
  const minutes = Math.round((at - now) / 60_000);
  const when = new Date(at).toLocaleString("en-US", { dateStyle: "medium", timeStyle: "short" });
  if (minutes <= 0) return `reset ${when}`;
  const away = minutes < 60 ? `${minutes} min` : minutes < 48 * 60 ? `${Math.round(minutes / 60)} h` : `${Math.round(minutes / 1440)} days`;
  return `resets ${when} (in ${away})`;
}
