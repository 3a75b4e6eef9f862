/**
 * Makes "acknowledged" mean "heard by every process that answers from memory". A process that
 * answers reads from memory (a member) sends a ping through the bus every `pingMs`; it trusts its
 * memory only while the last of its own pings that came back was sent less than `leaseMs` ago.
 * A publisher waits for its own message to come back through the bus (every message sent before
 * it has then reached it too, so it knows every member that may be answering), then for an ack
 * from each of those members, or `leaseMs` at most: a member that has not heard the message by
 * then has stopped answering from memory, because its pings sent since come back only after it.
 *
 * The argument needs the bus to deliver messages to every process in one order (Redis pub/sub
 * on one server; PostgreSQL's notices in commit order) and clocks that run at the same rate.
 */
export interface PeerTimings {
  /** How often a member announces itself. */
  pingMs: number;
  /** How long a ping that came back keeps its sender trusting its memory; the longest a publisher waits for a silent member. */
  leaseMs: number;
}

export const defaultPeerTimings: PeerTimings = { pingMs: 250, leaseMs: 1500 };

/** The fields of a control message; the bus adds the sender. */
export interface PeerMessage {
  topic: 'peer' | 'ack';
  key: string;
}

interface Wait {
  seq: number;
  pending: Set<string>;
  done: () => void;
  timer: NodeJS.Timeout;
}

export class BusPeers {
  readonly #selfId: string;
  readonly #send: (message: PeerMessage) => Promise<boolean>;
  readonly #timings: PeerTimings;
  readonly #now: () => number;
  #seq = 0;
  #serving = false;
  #pingTimer: NodeJS.Timeout | null = null;
  #pingNo = 0;
  readonly #pingsInFlight = new Map<number, number>();
  #leaseFrom = Number.NEGATIVE_INFINITY;
  /** Member id → when its latest ping arrived here. */
  readonly #members = new Map<string, number>();
  /** Member id → the highest of this process's messages it has acknowledged. */
  readonly #acked = new Map<string, number>();
  /** Message seq → what to do when it comes back (true) or could not be sent (false). */
  readonly #echoes = new Map<number, (cameBack: boolean) => void>();
  readonly #waits = new Set<Wait>();
  readonly #toAck = new Map<string, number>();
  #ackScheduled = false;

  /** `selfId`: the id the bus sends this process's messages under (acks are addressed to it). */
  constructor(selfId: string, send: (message: PeerMessage) => Promise<boolean>, timings: PeerTimings, now: () => number = () => performance.now()) {
    this.#selfId = selfId;
    this.#send = send;
    this.#timings = timings;
    this.#now = now;
  }

  /** This process answers from memory: it announces itself and acknowledges what it hears. */
  startServing(): void {
    if (this.#serving) return;
    this.#serving = true;
    this.#ping();
    this.#pingTimer = setInterval(() => this.#ping(), this.#timings.pingMs);
    this.#pingTimer.unref();
  }

  /** True while this process may answer from memory (its own recent ping came back). */
  leased(): boolean {
    return this.#now() - this.#leaseFrom < this.#timings.leaseMs;
  }

  get serving(): boolean {
    return this.#serving;
  }

  /** The sequence number of this process's next message; `expect` it before sending it. */
  nextSeq(): number {
    return ++this.#seq;
  }

  /**
   * Resolves once message `seq` came back and every member it found has acknowledged it (or
   * `leaseMs` passed). Called before the send, so that a copy coming back at once is not missed;
   * `abandon` when the message could not be sent.
   */
  expect(seq: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const gaveUp = setTimeout(() => {
        this.#echoes.delete(seq);
        resolve();
      }, this.#timings.leaseMs);
      gaveUp.unref();
      this.#echoes.set(seq, (cameBack) => {
        clearTimeout(gaveUp);
        this.#echoes.delete(seq);
        if (cameBack) this.#awaitAcks(seq, resolve);
        else resolve();
      });
    });
  }

  abandon(seq: number): void {
    this.#echoes.get(seq)?.(false);
  }

  /** A message of this process came back through the bus. */
  echoed(topic: string, key: string, seq: number | undefined): void {
    if (topic === 'peer' && key.startsWith('ping:')) {
      const no = Number(key.slice(5));
      const sentAt = this.#pingsInFlight.get(no);
      if (sentAt === undefined) return;
      for (const pending of this.#pingsInFlight.keys()) if (pending <= no) this.#pingsInFlight.delete(pending);
      this.#leaseFrom = Math.max(this.#leaseFrom, sentAt);
      return;
    }
    if (seq !== undefined) this.#echoes.get(seq)?.(true);
  }

  /** A control message from another process. */
  heard(from: string, topic: string, key: string): void {
    if (topic === 'peer') {
      if (key === 'leave') this.#left(from);
      else this.#members.set(from, this.#now());
      return;
    }
    const colon = key.lastIndexOf(':');
    const seq = Number(key.slice(colon + 1));
    if (key.slice(0, colon) !== this.#selfId || !Number.isSafeInteger(seq)) return;
    if (seq <= (this.#acked.get(from) ?? 0)) return;
    this.#acked.set(from, seq);
    for (const wait of this.#waits) if (wait.seq <= seq && wait.pending.delete(from) && wait.pending.size === 0) wait.done();
  }

  /** Another process's message `seq` was handled here; members acknowledge it (once per turn of the event loop per sender). */
  handled(from: string, seq: number): void {
    if (!this.#serving) return;
    this.#toAck.set(from, Math.max(seq, this.#toAck.get(from) ?? 0));
    if (this.#ackScheduled) return;
    this.#ackScheduled = true;
    setImmediate(() => {
      this.#ackScheduled = false;
      const acks = [...this.#toAck];
      this.#toAck.clear();
      for (const [to, upTo] of acks) void this.#send({ topic: 'ack', key: `${to}:${upTo}` });
    });
  }

  /** Stops announcing; tells the others not to wait for this process any more. */
  async stop(): Promise<void> {
    if (this.#pingTimer) clearInterval(this.#pingTimer);
    this.#pingTimer = null;
    for (const wait of [...this.#waits]) wait.done();
    if (this.#serving) {
      this.#serving = false;
      this.#leaseFrom = Number.NEGATIVE_INFINITY;
      await this.#send({ topic: 'peer', key: 'leave' });
    }
  }

  /** The bus can hear again: a member pings at once rather than at its next beat. */
  pingNow(): void {
    if (this.#serving) this.#ping();
  }

  #ping(): void {
    const no = ++this.#pingNo;
    this.#pingsInFlight.set(no, this.#now());
    // A ping lost on the way shortens the lease; the next one restores it.
    void this.#send({ topic: 'peer', key: `ping:${no}` }).then((sent) => sent || this.#pingsInFlight.delete(no));
  }

  #awaitAcks(seq: number, resolve: () => void): void {
    const now = this.#now();
    const pending = new Set<string>();
    for (const [member, seenAt] of this.#members) {
      if (now - seenAt >= this.#timings.leaseMs) this.#members.delete(member);
      else if ((this.#acked.get(member) ?? 0) < seq) pending.add(member);
    }
    if (pending.size === 0) return resolve();
    const wait: Wait = {
      seq,
      pending,
      done: () => {
        clearTimeout(wait.timer);
        this.#waits.delete(wait);
        resolve();
      },
      timer: setTimeout(() => wait.done(), this.#timings.leaseMs),
    };
    wait.timer.unref();
    this.#waits.add(wait);
  }

  #left(member: string): void {
    this.#members.delete(member);
    this.#acked.delete(member);
    for (const wait of [...this.#waits]) if (wait.pending.delete(member) && wait.pending.size === 0) wait.done();
  }
}
