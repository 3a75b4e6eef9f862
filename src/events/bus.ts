/**
 * Notices between the services of every process: cached data that changed. Events are named and
 * typed here, once; a transport carries them (in this process only, or through Redis to every
 * process). Scoring jobs do not travel here but through the database (see db/job-signals.ts), so
 * that Redis is never needed to score.
 */
import { randomUUID } from 'node:crypto';
import { BusPeers, type PeerMessage, type PeerTimings } from './bus-peers.js';

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

/**
 * Carries serialised messages (JSON `{"topic","key","from"}`, `seq` on those a publisher waits
 * on) to every process, this one included: the bus recognises its own by `from`.
 */
export interface BusTransport {
  /** Sends the messages in order, in one round trip; false when they could not be sent (the connection is down). */
  send(messages: readonly string[]): Promise<boolean>;
  receive(handler: (message: string) => void): void;
  /**
   * Null while events from other processes cannot arrive (the connection is down); otherwise a
   * number that changes whenever some may have been missed (each reconnection). A cache that
   * relies on hearing every change trusts itself only while this stays the same number.
   */
  generation(): number | null;
  /** Runs each time the transport can hear the other processes again (after a (re)connection). */
  onConnected?(handler: () => void): void;
  close(): Promise<void>;
}

export interface EventBusOptions {
  /**
   * Set when caches answer from memory on the strength of this bus (the single-score read on
   * PostgreSQL): a publish then resolves only once every such process has heard it (see
   * bus-peers.ts), and `generation` is null while this process's own lease has lapsed.
   */
  peers?: PeerTimings;
  now?: () => number;
}

interface WireMessage {
  topic?: unknown;
  key?: unknown;
  from?: unknown;
  seq?: unknown;
}

export class EventBus {
  readonly #id = randomUUID();
  readonly #handlers = new Map<BusEvent, ((payload: never) => void)[]>();
  readonly #peers: BusPeers | null;
  #receiving = false;

  constructor(
    private readonly transport: BusTransport,
    options: EventBusOptions = {},
  ) {
    const canHear = () => transport.generation() !== null;
    this.#peers = options.peers ? new BusPeers(this.#id, (message) => this.#sendRaw(message), canHear, options.peers, options.now) : null;
    if (this.#peers) {
      // Acks and pings arrive whether or not anything here listens for events.
      this.#listen();
      transport.onConnected?.(() => this.#peers?.connected());
    }
  }

  /**
   * Tells every process (this one at once) about `event`. With peers, resolves once every
   * process answering from memory has heard it, or can no longer answer from memory.
   */
  async publish<E extends BusEvent>(event: E, payload: BusEvents[E]): Promise<void> {
    await this.publishAll(event, [payload]);
  }

  /**
   * publish of many events of one kind (a batch step's scores) in one send: each still travels as
   * a message of its own, so every process understands it; with peers, only the last carries a
   * number, since an ack covers every message before it.
   */
  async publishAll<E extends BusEvent>(event: E, payloads: readonly BusEvents[E][]): Promise<void> {
    if (payloads.length === 0) return;
    const { topic, key: keyOf } = wire[event];
    const keys = payloads.map((payload) => keyOf(payload));
    for (const key of keys) this.#deliver(event, key);
    const messages = (seq?: number) =>
      keys.map((key, index) => JSON.stringify(seq !== undefined && index === keys.length - 1 ? { topic, key, from: this.#id, seq } : { topic, key, from: this.#id }));
    if (!this.#peers) {
      await this.transport.send(messages());
      return;
    }
    await this.#peers.publish((seq) => this.transport.send(messages(seq)));
  }

  on<E extends BusEvent>(event: E, handler: (payload: BusEvents[E]) => void): void {
    const list = this.#handlers.get(event) ?? [];
    list.push(handler as (payload: never) => void);
    this.#handlers.set(event, list);
    this.#listen();
  }

  /** This process answers from memory on the strength of the bus: it joins the peers a publisher waits for. */
  startServing(): void {
    this.#peers?.startServing();
  }

  /** See BusTransport.generation; with peers, also null while this process's lease has lapsed. */
  generation(): number | null {
    const generation = this.transport.generation();
    const peers = this.#peers;
    return peers && (peers.stopped || (peers.serving && !peers.leased())) ? null : generation;
  }

  async close(): Promise<void> {
    await this.#peers?.stop();
    await this.transport.close();
  }

  #listen(): void {
    if (this.#receiving) return;
    this.#receiving = true;
    this.transport.receive((message) => this.#receive(message));
  }

  #sendRaw(message: PeerMessage): Promise<boolean> {
    return this.transport.send([JSON.stringify({ ...message, from: this.#id })]);
  }

  #receive(text: string): void {
    let message: WireMessage;
    try {
      message = JSON.parse(text) as WireMessage;
    } catch {
      return; // Not one of ours.
    }
    const { topic, key, from } = message;
    if (typeof topic !== 'string' || typeof key !== 'string') return;
    const seq = Number.isSafeInteger(message.seq) ? (message.seq as number) : undefined;
    // Already delivered when it was published.
    if (from === this.#id) return this.#peers?.echoed(topic, key, seq);
    if (topic === 'peer' || topic === 'ack') {
      if (typeof from === 'string') this.#peers?.heard(from, topic, key);
      return;
    }
    const event = eventOfTopic.get(topic);
    if (event !== undefined) this.#deliver(event, key);
    if (seq !== undefined && typeof from === 'string') this.#peers?.handled(from, seq);
  }

  #deliver(event: BusEvent, key: string): void {
    const payload = wire[event].payload(key);
    for (const handler of this.#handlers.get(event) ?? []) handler(payload as never);
  }
}

/**
 * Only this process hears its events: SQLite without REDIS_URL (the score cache notices other
 * processes' writes through the database file itself; other caches' TTLs bound staleness there).
 */
export function inProcessTransport(): BusTransport {
  const receivers: ((message: string) => void)[] = [];
  return {
    send: async (messages) => {
      for (const message of messages) for (const receiver of receivers) receiver(message);
      return true;
    },
    receive: (handler) => void receivers.push(handler),
    generation: () => 0,
    close: async () => {},
  };
}
