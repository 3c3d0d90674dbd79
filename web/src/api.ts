// The ticksentry API as the dashboard uses it. Authentication is the HttpOnly cookie set when
// the page was opened with ?token=...; requests that change state add X-Requested-With, which
// the server requires with cookie auth (CSRF protection, see src/http/http_auth.h).

export interface Alert {
  id: number | string; symbol: string; type: string; severity: string; exch_ts_ns: string | number; price: number;
  price_ticks?: number; price_text?: string; event_seq?: number;
  values: { name: string; value: number; threshold: number; cmp: string; text?: string }[];
  latency_ns: { total: number; book?: number; features?: number; detect?: number; emit?: number };
  wall_ms?: number; silenced_by?: string;
  model?: { name: string; version: number | string; probability: number; threshold: number; shadow: boolean; [k: string]: unknown };
  // GET /api/alerts/{id} and /api/alerts (audit): the feature row; /api/alerts/{id}: the book at
  // the alert (absent where the store did not record it) and the model's input window.
  features?: Record<string, number | null>;
  book?: { bids: { price_text: string; size_text: string }[]; asks: { price_text: string; size_text: string }[] };
  [k: string]: unknown;
}
// A symbol's market context (src/http/live_feed.h, "market").
export interface Market {
  exch_ts_ns: string; phase: string; prev_close: number; change_pct: number | null; currency: string; lot_size: number;
  price_decimals: number; time_zone: string; utc_offset_s: number; limit_up: number; limit_down: number;
}
// The model's peak probability for a symbol in one live-feed tick ("scores" stream).
export interface Score { s: string; m: number; t: number }
export interface Tick { s: string; p: number; v: number; b: number; a: number; t: number }
// "name": the instrument's name where the instruments reference file gives one ("" otherwise).
export interface SymbolEntry { s: string; name?: string; p: number; v: number; b: number; a: number; market?: Market }
export interface StagePoint { p50: number; p99: number; p999: number; count: number }
// Model serving over one live-feed tick (src/http/serving_stats.h); absent while no model serves.
export interface ModelStats {
  batches_per_s: number; inferences_per_s: number; mean_batch: number;
  batch_sizes: [number, number][];
  queue_wait_us: StagePoint; compute_us: StagePoint; end_to_end_us: StagePoint;
  drops: Record<string, number>; drops_total: Record<string, number>;
  failed_batches: number; fallback_batches: number; failed_total: number; backend_switches_total: number;
}
export interface Stats {
  t: number; events_per_s: number; alerts_per_s: number; alerts_silenced: number; events_total: number;
  alerts_total: number; latency_us: Record<string, StagePoint>; model?: ModelStats;
}

export class ApiError extends Error {
  constructor(public status: number, message: string) {
    super(message);
  }
}

export async function api<T>(path: string, method = "GET", body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (method !== "GET") headers["X-Requested-With"] = "ticksentry";
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: reported below */
  }
  if (!res.ok) {
    const msg = (json as { message?: string } | null)?.message ?? `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, msg);
  }
  return json as T;
}

type Listener<T> = (data: T) => void;

// One EventSource for the whole page; pages subscribe to "alert", "ticks", "scores" and "stats".
export class Stream {
  private listeners = new Map<string, Set<Listener<unknown>>>();
  private source: EventSource | null = null;
  onState: (live: boolean) => void = () => {};

  connect(): void {
    this.source = new EventSource("api/stream");
    this.source.onopen = () => this.onState(true);
    this.source.onerror = () => this.onState(false);
    for (const name of ["alert", "ticks", "scores", "stats"]) {
      this.source.addEventListener(name, (ev) => {
        const data = JSON.parse((ev as MessageEvent).data);
        this.listeners.get(name)?.forEach((l) => l(data));
      });
    }
  }

  on<T>(name: "alert" | "ticks" | "scores" | "stats", l: Listener<T>): () => void {
    if (!this.listeners.has(name)) this.listeners.set(name, new Set());
    this.listeners.get(name)!.add(l as Listener<unknown>);
    return () => this.listeners.get(name)!.delete(l as Listener<unknown>);
  }
}

export const stream = new Stream();

// Alerts this page has seen (feed, symbol page, audit search), by id: the detail view opens at
// once from them and completes from GET /api/alerts/{id}.
const seen = new Map<string, Alert>();
export function rememberAlert(a: Alert): void {
  seen.set(String(a.id), a);
  if (seen.size > 20000) seen.delete(seen.keys().next().value as string);
}
export function knownAlert(id: string): Alert | undefined {
  return seen.get(id);
}
export function alertHref(a: Alert): string {
  return `#/alert/${encodeURIComponent(String(a.id))}`;
}
