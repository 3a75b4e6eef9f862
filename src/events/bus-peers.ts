/**
 * Makes "acknowledged" mean "heard by every process that answers from memory". A process that
 * answers reads from memory (a member) sends a ping through the bus every `pingMs` while it can
 * hear the bus; it trusts its memory only while the last of its own pings that came back was sent
 * less than `leaseMs` ago. A publisher waits for its own message to come back through the bus
 * (every message sent before it has then reached it too, so it knows every member that may be
 * answering), then for an ack from each of those members, or at most `leaseMs` from the moment
 * its send completed: a member that has not heard the message by then has stopped answering from
 * memory, because every ping it has heard back was sent before the message reached the bus.
 * That lease is all a publisher waits while it hears nothing itself, or while it began to hear
 * less than a lease ago (members that pinged only before then are unknown to it).
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

interface Publish {
  seq: number;
  resolve: () => void;
  /** Members still to acknowledge, known once the message came back (null until then). */
  pending: Set<string> | null;
  giveUp: NodeJS.Timeout | null;
}

/** Timers may fire a little early (libuv's loop time lags the clock the leases use): the waits add this. */
const TIMER_MARGIN_MS = 10;

export class BusPeers {
  readonly #selfId: string;
  readonly #send: (message: PeerMessage) => Promise<boolean>;
  readonly #canHear: () => boolean;
  readonly #timings: PeerTimings;
  readonly #now: () => number;
  #seq = 0;
  #serving = false;
  #stopped = false;
  #pingTimer: NodeJS.Timeout | null = null;
  #pingNo = 0;
  /** Ping number → when it was sent; a ping that never comes back is dropped after a lease. */
  readonly #pingsInFlight = new Map<number, number>();
  #leaseFrom = Number.NEGATIVE_INFINITY;
  /** When this process last began to hear the bus: a member that pinged only before it is unknown here. */
  #hearingSince = Number.NEGATIVE_INFINITY;
  /** Member id → when its latest ping arrived here. */
  readonly #members = new Map<string, number>();
  /** Member id → the highest of this process's messages it has acknowledged. */
  readonly #acked = new Map<string, number>();
  readonly #publishes = new Map<number, Publish>();
  readonly #toAck = new Map<string, number>();
  #ackScheduled = false;

  /**
   * `selfId`: the id the bus sends this process's messages under (acks are addressed to it);
   * `canHear`: whether the transport hears the bus right now.
   */
  constructor(
    selfId: string,
    send: (message: PeerMessage) => Promise<boolean>,
    canHear: () => boolean,
    timings: PeerTimings,
    now: () => number = () => performance.now(),
  ) {
    this.#selfId = selfId;
    this.#send = send;
    this.#canHear = canHear;
    this.#timings = timings;
    this.#now = now;
  }

  /** This process answers from memory: it announces itself and acknowledges what it hears. */
  startServing(): void {
    if (this.#serving || this.#stopped) return;
    this.#serving = true;
    this.#ping();
    this.#pingTimer = setInterval(() => this.#ping(), this.#timings.pingMs);
    this.#pingTimer.unref();
  }

  /** True while this process may answer from memory: serving, and its own recent ping came back. */
  leased(): boolean {
    return !this.#stopped && this.#now() - this.#leaseFrom < this.#timings.leaseMs;
  }

  get serving(): boolean {
    return this.#serving;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** The transport hears the bus again (first connection or reconnection). */
  connected(): void {
    this.#hearingSince = this.#now();
    // A member's lease starts with its first ping heard back: sent at once, not at the next beat.
    if (this.#serving) this.#ping();
  }

  /**
   * Sends message `seq` with `send` and resolves once every process that may answer from memory
   * has heard it: it came back here and each member heard pinging since has acknowledged it, or
   * a lease has passed since it was sent (a member that has not heard it by then no longer trusts
   * its memory; this is also all that is waited for while this process hears nothing, or while
   * it began to hear too recently to know every member). A message that could not be sent is not
   * waited for: nobody heard it (the TTL bounds what that leaves).
   */
  async publish(send: (seq: number) => Promise<boolean>): Promise<void> {
    const seq = ++this.#seq;
    const done = new Promise<void>((resolve) => this.#publishes.set(seq, { seq, resolve, pending: null, giveUp: null }));
    const sent = await send(seq);
    const publish = this.#publishes.get(seq);
    if (publish && !sent) this.#finish(publish);
    else if (publish) {
      publish.giveUp = setTimeout(() => this.#finish(publish), this.#timings.leaseMs + TIMER_MARGIN_MS);
      publish.giveUp.unref();
    }
    return done;
  }

  /** A message of this process came back through the bus. */
  echoed(topic: string, key: string, seq: number | undefined): void {
    if (topic === 'peer' && key.startsWith('ping:')) {
      const no = Number(key.slice(5));
      const sentAt = this.#pingsInFlight.get(no);
      if (sentAt === undefined) return;
      for (const pending of this.#pingsInFlight.keys()) if (pending <= no) this.#pingsInFlight.delete(pending);
      // From when it was sent, not when it came back: what this process had not heard by then
      // was sent after it, and publishers wait one lease from their send.
      this.#leaseFrom = Math.max(this.#leaseFrom, sentAt);
      return;
    }
    const publish = seq === undefined ? undefined : this.#publishes.get(seq);
    if (!publish) return;
    const now = this.#now();
    this.#prune(now);
    publish.pending = new Set([...this.#members.keys()].filter((member) => (this.#acked.get(member) ?? 0) < publish.seq));
    this.#check(publish, now);
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
    const now = this.#now();
    // An ack covers this process's messages up to its number, not the later ones.
    for (const publish of [...this.#publishes.values()]) if (publish.seq <= seq && publish.pending?.delete(from)) this.#check(publish, now);
  }

  /** Another process's message `seq` was handled here; members acknowledge it (once per turn of the event loop per sender). */
  handled(from: string, seq: number): void {
    if (!this.#serving || this.#stopped) return;
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

  /** Stops announcing and answering from memory; tells the others not to wait for this process any more. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#pingTimer) clearInterval(this.#pingTimer);
    this.#pingTimer = null;
    for (const publish of [...this.#publishes.values()]) this.#finish(publish);
    if (this.#serving) await this.#send({ topic: 'peer', key: 'leave' });
  }

  #ping(): void {
    const now = this.#now();
    this.#prune(now);
    // A process that cannot hear would never acknowledge: it does not announce itself then.
    if (!this.#canHear()) return;
    const no = ++this.#pingNo;
    this.#pingsInFlight.set(no, now);
    // A ping lost on the way shortens the lease; the next one restores it.
    void this.#send({ topic: 'peer', key: `ping:${no}` }).then((sent) => sent || this.#pingsInFlight.delete(no));
  }

  /** Forgets members not heard from for a lease, and pings that never came back. */
  #prune(now: number): void {
    for (const [member, seenAt] of this.#members) {
      if (now - seenAt < this.#timings.leaseMs) continue;
      this.#members.delete(member);
      this.#acked.delete(member);
    }
    for (const [no, sentAt] of this.#pingsInFlight) if (now - sentAt >= this.#timings.leaseMs) this.#pingsInFlight.delete(no);
  }

  #check(publish: Publish, now: number): void {
    if (publish.pending === null || publish.pending.size > 0) return;
    // Begun to hear less than a lease ago: a member that pinged only before then is unknown here.
    if (now - this.#hearingSince < this.#timings.leaseMs + TIMER_MARGIN_MS) return;
    this.#finish(publish);
  }

  #finish(publish: Publish): void {
    if (publish.giveUp) clearTimeout(publish.giveUp);
    this.#publishes.delete(publish.seq);
    publish.resolve();
  }

  #left(member: string): void {
    this.#members.delete(member);
    this.#acked.delete(member);
    const now = this.#now();
    for (const publish of [...this.#publishes.values()]) if (publish.pending?.delete(member)) this.#check(publish, now);
  }
}
