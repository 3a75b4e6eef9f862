/**
 * A publish through a bus with peers resolves only once every process that answers from memory
 * has heard it, or has stopped answering from memory. The processes here share a broker that
 * delivers every message to every subscriber in one order, as Redis and PostgreSQL's notices
 * do; a subscriber's deliveries can be held back, as a busy or cut-off process's are.
 * (Real Redis and PostgreSQL carry the same bus in test/scoring/scores/score-read-cache.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type BusTransport, EventBus } from '../../src/events/bus.js';

const timings = { pingMs: 20, leaseMs: 300 };

class Broker {
  readonly subscribers: Subscriber[] = [];
  up = true;

  transport(deaf = false): { transport: BusTransport; subscriber: Subscriber } {
    const subscriber = new Subscriber(deaf);
    this.subscribers.push(subscriber);
    const transport: BusTransport = {
      send: async (messages) => {
        await Promise.resolve();
        if (subscriber.sendDelayMs > 0) await sleep(subscriber.sendDelayMs);
        if (!this.up || subscriber.closed) return false;
        for (const message of messages) for (const s of this.subscribers) s.enqueue(message);
        return true;
      },
      receive: (handler) => void subscriber.handlers.push(handler),
      generation: () => (this.up && !subscriber.deaf ? subscriber.generation : null),
      onConnected: (handler) => void subscriber.connected.push(handler),
      close: async () => {
        subscriber.closed = true;
      },
    };
    return { transport, subscriber };
  }
}

/** One process's connection to the broker: deliveries can be held back, or not heard at all (deaf). */
class Subscriber {
  readonly handlers: ((message: string) => void)[] = [];
  readonly connected: (() => void)[] = [];
  readonly queue: string[] = [];
  held = false;
  closed = false;
  generation = 1;
  sendDelayMs = 0;

  constructor(public deaf: boolean) {}

  enqueue(message: string): void {
    if (this.closed || this.deaf) return;
    this.queue.push(message);
    setImmediate(() => this.flush());
  }

  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    this.flush();
  }

  /** Delivers the held messages before the first that `stop` matches, and keeps holding. */
  releaseBefore(stop: (message: { topic: string; key: string; seq?: number }) => boolean): void {
    while (this.queue.length > 0 && !stop(JSON.parse(this.queue[0]!) as { topic: string; key: string; seq?: number })) {
      const message = this.queue.shift()!;
      for (const handler of this.handlers) handler(message);
    }
  }

  /** Starts hearing (again): what was sent meanwhile is gone. */
  connect(): void {
    this.deaf = false;
    this.generation += 1;
    for (const handler of this.connected) handler();
  }

  flush(): void {
    while (!this.held && this.queue.length > 0) {
      const message = this.queue.shift()!;
      for (const handler of this.handlers) handler(message);
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

describe('a bus whose publishes wait for the processes answering from memory', () => {
  const buses: EventBus[] = [];
  afterEach(async () => {
    for (const bus of buses.splice(0)) await bus.close();
  });

  /** A process: its bus, its deliveries, and the score keys it has heard changed. */
  function process(broker: Broker, serving: boolean, deaf = false) {
    const { transport, subscriber } = broker.transport(deaf);
    const bus = new EventBus(transport, { peers: timings });
    buses.push(bus);
    const heard: string[] = [];
    bus.on('scoreChanged', ({ scorerId, address }) => heard.push(`${scorerId}:${address}`));
    if (serving) bus.startServing();
    return { bus, subscriber, heard };
  }

  /** A (publishing, not answering from memory) and B (a member whose pings A has heard). */
  async function publisherAndMember() {
    const broker = new Broker();
    const a = process(broker, false);
    const b = process(broker, true);
    await until('B trusting its memory', () => b.bus.generation() !== null);
    await sleep(timings.pingMs * 2);
    return { broker, a, b };
  }

  /** Resolves when `promise` settles; reports whether it has so far. */
  function track(promise: Promise<void>) {
    const state = { settled: false, at: 0 };
    void promise.then(() => {
      state.settled = true;
      state.at = performance.now();
    });
    return state;
  }

  it('resolves a publish only after a member slow to hear it has heard it', async () => {
    const { a, b } = await publisherAndMember();

    b.subscriber.hold();
    const published = track(a.bus.publish('scoreChanged', { scorerId: 7, address: '0xaa' }));
    await sleep(timings.pingMs * 3);
    expect(published.settled).toBe(false);
    expect(b.heard).toEqual([]);

    b.subscriber.release();
    await until('the publish', () => published.settled);
    expect(b.heard).toEqual(['7:0xaa']);
  });

  it('resolves a publish of many only after a member has heard the last of them', async () => {
    const { a, b } = await publisherAndMember();

    b.subscriber.hold();
    const addresses = ['0x01', '0x02', '0x03'];
    const published = track(a.bus.publishAll('scoreChanged', addresses.map((address) => ({ scorerId: 7, address }))));
    expect(a.heard).toEqual(['7:0x01', '7:0x02', '7:0x03']);
    await until('the messages reaching B', () => b.subscriber.queue.some((message) => message.includes('"7:0x03"')));
    // Every message but the last is heard: the publish still waits for B's ack of the last.
    b.subscriber.releaseBefore((message) => message.key === '7:0x03');
    await sleep(timings.pingMs * 3);
    expect(b.heard).toEqual(['7:0x01', '7:0x02']);
    expect(published.settled).toBe(false);

    b.subscriber.release();
    await until('the publish', () => published.settled);
    expect(b.heard).toEqual(['7:0x01', '7:0x02', '7:0x03']);
  });

  it('resolves, after at most the lease, past a member that never hears it, which by then no longer trusts its memory', async () => {
    const { a, b } = await publisherAndMember();

    b.subscriber.hold();
    const started = performance.now();
    const published = track(a.bus.publish('scoreChanged', { scorerId: 7, address: '0xbb' }));
    await sleep(timings.leaseMs / 2);
    expect(published.settled).toBe(false);
    await until('the publish', () => published.settled);
    expect(published.at - started).toBeLessThan(timings.leaseMs * 2 + 100);
    expect(b.heard).toEqual([]);
    // Its own pings come back only after the message it has not heard: its lease has lapsed.
    expect(b.bus.generation()).toBeNull();
  });

  it('waits for a member that joined just before the message, though the publisher had not heard of it yet', async () => {
    const broker = new Broker();
    const a = process(broker, false);
    const b = process(broker, false);
    await sleep(timings.pingMs);
    // B's first ping goes to the broker, then A's message; B hears neither yet.
    b.subscriber.hold();
    b.bus.startServing();
    await Promise.resolve();
    const published = track(a.bus.publish('scoreChanged', { scorerId: 7, address: '0xcc' }));
    await sleep(timings.pingMs * 3);
    expect(published.settled).toBe(false);
    b.subscriber.release();
    await until('the publish', () => published.settled);
    expect(b.heard).toEqual(['7:0xcc']);
  });

  it('does not wait for a member that left, nor for a process that does not answer from memory', async () => {
    const broker = new Broker();
    const a = process(broker, false);
    const worker = process(broker, false);
    const b = process(broker, true);
    await until('B trusting its memory', () => b.bus.generation() !== null);
    await sleep(timings.pingMs * 2);
    worker.subscriber.hold();
    await b.bus.close();
    buses.splice(buses.indexOf(b.bus), 1);

    const started = performance.now();
    await a.bus.publish('scoreChanged', { scorerId: 7, address: '0xdd' });
    expect(performance.now() - started).toBeLessThan(timings.leaseMs / 2);
    expect(worker.heard).toEqual([]);
  });

  it('neither waits nor trusts memory while the bus is down', async () => {
    const broker = new Broker();
    const a = process(broker, true);
    const b = process(broker, true);
    await until('both trusting their memory', () => a.bus.generation() !== null && b.bus.generation() !== null);
    broker.up = false;
    expect(a.bus.generation()).toBeNull();
    const started = performance.now();
    await a.bus.publish('scoreChanged', { scorerId: 7, address: '0xee' });
    expect(performance.now() - started).toBeLessThan(timings.leaseMs / 2);
    // Heard here at once, whatever the bus does.
    expect(a.heard).toEqual(['7:0xee']);
    expect(b.heard).toEqual([]);
  });

  it('answers every member once per turn for all the messages it heard from one sender', async () => {
    const { broker, a, b } = await publisherAndMember();
    const sent: string[] = [];
    const { transport } = broker.transport();
    transport.receive((message) => sent.push(message));
    b.subscriber.hold();
    const published = Promise.all([1, 2, 3].map((n) => a.bus.publish('scoreChanged', { scorerId: n, address: '0xff' })));
    await sleep(timings.pingMs);
    b.subscriber.release();
    await published;
    await sleep(10);
    expect(b.heard).toEqual(['1:0xff', '2:0xff', '3:0xff']);
    const acks = sent.map((m) => JSON.parse(m) as { topic: string; key: string }).filter((m) => m.topic === 'ack');
    expect(acks).toHaveLength(1);
    expect(acks[0]!.key.endsWith(':3')).toBe(true);
  });

  it('lets a member trust its memory from when its ping was sent, so one lease of the publisher covers it', async () => {
    const { a, b } = await publisherAndMember();
    b.subscriber.hold();
    await a.bus.publish('scoreChanged', { scorerId: 8, address: '0xa1' });
    // B hears its pings sent before the message, not the message: none was sent within a lease.
    b.subscriber.releaseBefore((m) => m.topic === 'score');
    expect(b.heard).toEqual([]);
    expect(b.bus.generation()).toBeNull();
    b.subscriber.release();
    expect(b.heard).toEqual(['8:0xa1']);
  });

  it('keeps waiting for a newer message when a member acknowledged only an older one', async () => {
    const { a, b } = await publisherAndMember();
    b.subscriber.hold();
    const first = track(a.bus.publish('scoreChanged', { scorerId: 8, address: '0xb1' }));
    const second = track(a.bus.publish('scoreChanged', { scorerId: 8, address: '0xb2' }));
    await sleep(5);
    b.subscriber.releaseBefore((m) => m.key === '8:0xb2');
    await until('the first publish', () => first.settled);
    await sleep(timings.pingMs * 2);
    expect(second.settled).toBe(false);
    b.subscriber.release();
    await until('the second publish', () => second.settled);
    expect(b.heard).toEqual(['8:0xb1', '8:0xb2']);
  });

  it('stops waiting for a member killed without a word once a lease has passed since its last ping', async () => {
    const { a, b } = await publisherAndMember();
    // Killed: it neither pings nor hears any more, and says nothing.
    b.subscriber.closed = true;
    buses.splice(buses.indexOf(b.bus), 1);
    const started = performance.now();
    await a.bus.publish('scoreChanged', { scorerId: 8, address: '0xc1' });
    expect(performance.now() - started).toBeGreaterThan(timings.leaseMs / 2);
    const again = performance.now();
    await a.bus.publish('scoreChanged', { scorerId: 8, address: '0xc2' });
    expect(performance.now() - again).toBeLessThan(timings.leaseMs / 2);
  });

  it('waits a lease when the publisher hears nothing though it can send, or its send is slow', async () => {
    const { a, b } = await publisherAndMember();
    b.subscriber.hold();
    a.subscriber.deaf = true;
    const deafPublish = track(a.bus.publish('scoreChanged', { scorerId: 8, address: '0xd1' }));
    await sleep(timings.leaseMs / 2);
    expect(deafPublish.settled).toBe(false);
    await until('the publish', () => deafPublish.settled);
    expect(b.heard).toEqual([]);
    expect(b.bus.generation()).toBeNull();
  });

  it('waits past a send slower than a lease for the members to acknowledge', async () => {
    const { a, b } = await publisherAndMember();
    a.subscriber.sendDelayMs = timings.leaseMs * 1.5;
    b.subscriber.hold();
    const published = track(a.bus.publish('scoreChanged', { scorerId: 8, address: '0xe1' }));
    await sleep(timings.leaseMs * 1.5 + 50);
    expect(published.settled).toBe(false);
    b.subscriber.release();
    await until('the publish', () => published.settled);
    expect(b.heard).toEqual(['8:0xe1']);
  });

  it('waits a lease after it began to hear, for members whose pings it has not heard yet', async () => {
    const broker = new Broker();
    const b = process(broker, true);
    await until('B trusting its memory', () => b.bus.generation() !== null);
    const a = process(broker, false, true);
    b.subscriber.hold();
    a.subscriber.connect();
    const published = track(a.bus.publish('scoreChanged', { scorerId: 8, address: '0xf1' }));
    await sleep(timings.leaseMs / 2);
    expect(published.settled).toBe(false);
    await until('the publish', () => published.settled);
    expect(b.heard).toEqual([]);
    expect(b.bus.generation()).toBeNull();
  });

  it('does not hold writers up for a member that can send but not hear: it stops announcing itself', async () => {
    const { a, b } = await publisherAndMember();
    b.subscriber.deaf = true;
    await sleep(timings.leaseMs + 50);
    expect(b.bus.generation()).toBeNull();
    const started = performance.now();
    await a.bus.publish('scoreChanged', { scorerId: 8, address: '0xa2' });
    expect(performance.now() - started).toBeLessThan(timings.leaseMs / 2);
  });
});
