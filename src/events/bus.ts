/**
 * Notices between the services of every process: cached data that changed. Events are named and
 * typed here, once; a transport carries them (in this process only, or through Redis to every
 * process). Scoring jobs do not travel here but through the database (see db/job-signals.ts), so
 * that Redis is never needed to score.
 */

/** Every event, by name, with its payload. */
export interface BusEvents {
  /** An API key was created, changed or revoked. */
  apiKeyChanged: { prefix: string };
  scorerChanged: { scorerId: number };
  /** The trusted-issuer list changed. */
  issuersChanged: Record<string, never>;
  /** Cached public data documents under `prefix` are stale. */
  publicDataChanged: { prefix: string };
  /** The score row of (scorerId, address) was written (announced after the commit, before the write is acknowledged). */
  scoreChanged: { scorerId: number; address: string };
}

export type BusEvent = keyof BusEvents;

/**
 * How each event travels: the `{"topic","key"}` messages of docs/operations.md, so processes of
 * the previous release on the same Redis still understand each other.
 */
const wire: { [E in BusEvent]: { topic: string; key: (payload: BusEvents[E]) => string; payload: (key: string) => BusEvents[E] } } = {
  apiKeyChanged: { topic: 'api_key', key: (p) => p.prefix, payload: (prefix) => ({ prefix }) },
  scorerChanged: { topic: 'scorer', key: (p) => String(p.scorerId), payload: (key) => ({ scorerId: Number(key) }) },
  issuersChanged: { topic: 'issuers', key: () => '', payload: () => ({}) },
  publicDataChanged: { topic: 'public_data', key: (p) => p.prefix, payload: (prefix) => ({ prefix }) },
  scoreChanged: {
    topic: 'score',
    key: (p) => `${p.scorerId}:${p.address}`,
    payload: (key) => ({ scorerId: Number(key.slice(0, key.indexOf(':'))), address: key.slice(key.indexOf(':') + 1) }),
  },
};
const eventOfTopic = new Map(Object.entries(wire).map(([event, { topic }]) => [topic, event as BusEvent]));

/** Carries serialised events (JSON `{"topic","key"}`); whatever is sent reaches this process's receivers too. */
export interface BusTransport {
  send(message: string): Promise<void>;
  receive(handler: (message: string) => void): void;
  /**
   * Null while events from other processes cannot arrive (the connection is down); otherwise a
   * number that changes whenever some may have been missed (each reconnection). A cache that
   * relies on hearing every change trusts itself only while this stays the same number.
   */
  generation(): number | null;
  close(): Promise<void>;
}

export class EventBus {
  private readonly handlers = new Map<BusEvent, ((payload: never) => void)[]>();
  private receiving = false;

  constructor(private readonly transport: BusTransport) {}

  /** Tells every process (this one included) about `event`. */
  async publish<E extends BusEvent>(event: E, payload: BusEvents[E]): Promise<void> {
    const { topic, key } = wire[event];
    await this.transport.send(JSON.stringify({ topic, key: key(payload) }));
  }

  on<E extends BusEvent>(event: E, handler: (payload: BusEvents[E]) => void): void {
    const list = this.handlers.get(event) ?? [];
    list.push(handler as (payload: never) => void);
    this.handlers.set(event, list);
    if (this.receiving) return;
    this.receiving = true;
    this.transport.receive((message) => this.deliver(message));
  }

  /** See BusTransport.generation. */
  generation(): number | null {
    return this.transport.generation();
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  private deliver(message: string): void {
    let parsed: { topic?: unknown; key?: unknown };
    try {
      parsed = JSON.parse(message) as { topic?: unknown; key?: unknown };
    } catch {
      return; // Not one of ours.
    }
    const event = typeof parsed.topic === 'string' ? eventOfTopic.get(parsed.topic) : undefined;
    if (event === undefined || typeof parsed.key !== 'string') return;
    const payload = wire[event].payload(parsed.key);
    for (const handler of this.handlers.get(event) ?? []) handler(payload as never);
  }
}

/**
 * Only this process hears its events: SQLite without REDIS_URL (the score cache notices other
 * processes' writes through the database file itself; other caches' TTLs bound staleness there).
 */
export function inProcessTransport(): BusTransport {
  const receivers: ((message: string) => void)[] = [];
  return {
    send: async (message) => {
      for (const receiver of receivers) receiver(message);
    },
    receive: (handler) => void receivers.push(handler),
    generation: () => 0,
    close: async () => {},
  };
}
