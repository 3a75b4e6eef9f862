/**
 * A publish through a bus with peers resolves only once every process that answers from memory
 * has heard it, or has stopped answering from memory. The processes here share a broker that
 * delivers every message to every subscriber in one order, as Redis and PostgreSQL's notices
 * do; a subscriber's deliveries can be held back, as a busy or cut-off process's are.
 * (Real Redis and PostgreSQL carry the same bus in test/scoring/score-read-cache.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type BusTransport, EventBus } from '../../src/events/bus.js';

const timings = { pingMs: 20, leaseMs: 300 };

class Broker {
  readonly subscribers: Subscriber[] = [];
  up = true;

  transport(): { transport: BusTransport; subscriber: Subscriber } {
    const subscriber = new Subscriber();
    this.subscribers.push(subscriber);
    const transport: BusTransport = {
      send: async (message) => {
        await Promise.resolve();
        if (!this.up) return false;
        for (const s of this.subscribers) s.enqueue(message);
        return true;
      },
      receive: (handler) => void subscriber.handlers.push(handler),
      generation: () => (this.up ? 1 : null),
      close: async () => {
        subscriber.closed = true;
      },
    };
    return { transport, subscriber };
  }
}

class Subscriber {
  readonly handlers: ((message: string) => void)[] = [];
  readonly queue: string[] = [];
  held = false;
  closed = false;

  enqueue(message: string): void {
    if (this.closed) return;
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
  function process(broker: Broker, serving: boolean) {
    const { transport, subscriber } = broker.transport();
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
});
