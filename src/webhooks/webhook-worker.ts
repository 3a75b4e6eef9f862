import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { PollingLoop } from '../events/polling-loop.js';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { deliverWebhook, nextAttemptDelay, shouldDisable } from './delivery.js';
import type { ClaimedDelivery, DeliveryQueueRepository, SettledState } from './delivery-queue.repository.js';
import type { HostResolver } from './target-guard.js';
import type { WebhookSecrets } from './webhook-secrets.js';

export interface WebhookWorkerOptions {
  /** Deliveries in flight at once in this process (never two to one endpoint, whatever this is). */
  concurrency: number;
  /** Attempts of one account in flight at once over every worker: its hanging endpoints hold no more slots. */
  inFlightPerAccount: number;
  /** How often an idle worker looks for work of other processes and due retries. */
  pollMs: number;
  timeoutMs: number;
  allowPrivateTargets: boolean;
  production: boolean;
  /** How often the score.expiring scan runs (by the worker's clock). */
  expiringScanMs: number;
  /** DNS for the target guard (tests); the system resolver otherwise. */
  resolve?: HostResolver;
}

export interface WebhookWorkerDeps {
  queue: DeliveryQueueRepository;
  /** Null when no master key is configured (production without WEBHOOK_SECRET_KEY): nothing is sent. */
  secrets: WebhookSecrets | null;
  /** The webhook body of a stored event, or null when the event is no longer stored. */
  loadPayload: (eventId: number) => Promise<unknown | null>;
  /** Appends the due score.expiring events; returns how many. */
  scanExpiring?: (now: number) => Promise<number>;
  /** Scheduling clock (epoch ms): retries, leases, the expiring scan. Signatures always carry the real time. */
  clock?: () => number;
  /** Jitter source in [0, 1). */
  random?: () => number;
}

export interface AttemptEvent {
  endpointId: number;
  eventId: number;
  attempt: number;
  outcome: 'delivered' | 'failed' | 'refused';
  state: SettledState;
  durationMs: number;
}

const DISPATCH_BATCH = 500;
/** Settled deliveries (and their attempts, the delivery log) are kept this long. */
export const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 3_600_000;
// A lease outlives the attempt it covers (bounded by the timeout) plus the bookkeeping around it.
const LEASE_MARGIN_MS = 5000;

/**
 * Runs in worker processes (never in the request path): moves score events from the outbox to deliveries,
 * sends due deliveries under leases with Standard Webhooks signatures, schedules retries, disables endpoints
 * failing for three days and appends score.expiring events. Several workers (processes) share the work through
 * the database. Emits `attempt` (AttemptEvent) after each attempt and `failure` (Error) for its own faults.
 */
export class WebhookWorker extends EventEmitter {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  readonly #deps: WebhookWorkerDeps;
  readonly #options: WebhookWorkerOptions;
  readonly #clock: () => number;
  readonly #random: () => number;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #loop: PollingLoop;
  // Set by notify() (new events, the poll timer); a finished attempt only refills, without dispatching.
  #dispatchWanted = true;
  #lastScanAt: number | null = null;

  constructor(deps: WebhookWorkerDeps, options: WebhookWorkerOptions) {
    super();
    this.setMaxListeners(0);
    this.#deps = deps;
    this.#options = options;
    this.#clock = deps.clock ?? Date.now;
    this.#random = deps.random ?? Math.random;
    // A poll already pending is kept: a busy worker (attempts finishing all the time) must still look at the
    // outbox and the expiring scan every pollMs, not only when it goes idle.
    this.#loop = new PollingLoop(() => this.#step(false), {
      pollMs: options.pollMs,
      timer: 'keep',
      onPoll: () => this.notify(),
      onError: (error) => this.emit('failure', error),
    });
  }

  get leaseMs(): number {
    return this.#options.timeoutMs + LEASE_MARGIN_MS;
  }

  start(): void {
    if (this.#loop.running) return;
    this.#dispatchWanted = true;
    this.#loop.start();
  }

  /** Looks for work now (a score event was just appended in this process). */
  notify(): void {
    this.#dispatchWanted = true;
    this.#loop.wake();
  }

  /** Stops taking work and waits for the attempts in flight (each bounded by the timeout). */
  async stop(): Promise<void> {
    await this.#loop.stop();
    await Promise.allSettled([...this.#inFlight]);
  }

  /**
   * One full pass without the background loop, for tests and tools driving the clock: the expiring scan if due,
   * the whole outbox dispatched, and every delivery due now sent and settled.
   */
  async runOnce(): Promise<void> {
    this.#dispatchWanted = true;
    await this.#step(true);
    for (;;) {
      if (this.#inFlight.size > 0) await Promise.race([...this.#inFlight]);
      const claimed = await this.#fill(true);
      if (claimed === 0 && this.#inFlight.size === 0) return;
    }
  }

  async #step(manual: boolean): Promise<void> {
    try {
      const now = this.#clock();
      const dispatch = this.#dispatchWanted;
      this.#dispatchWanted = false;
      if (dispatch && this.#deps.scanExpiring && (this.#lastScanAt === null || now - this.#lastScanAt >= this.#options.expiringScanMs)) {
        this.#lastScanAt = now;
        await this.#deps.scanExpiring(now);
        await this.#deps.queue.pruneSettled(now - DELIVERY_LOG_RETENTION_MS, 1000);
      }
      for (;;) {
        if (!dispatch) break;
        const moved = await this.#deps.queue.dispatch(this.#clock(), DISPATCH_BATCH);
        if (moved === null || moved < DISPATCH_BATCH) break;
        await yieldToEventLoop();
      }
    } catch (error) {
      this.emit('failure', error);
    }
    await this.#fill(manual);
  }

  /** Claims due deliveries until the concurrency is used up or none is due; returns how many it claimed. */
  async #fill(manual: boolean): Promise<number> {
    if (!this.#deps.secrets) return 0;
    let claimed = 0;
    while ((this.#loop.running || manual) && this.#inFlight.size < this.#options.concurrency) {
      await yieldToEventLoop();
      let claim: ClaimedDelivery | undefined;
      try {
        claim = await this.#deps.queue.claim(this.owner, this.#clock(), this.leaseMs, this.#options.inFlightPerAccount);
      } catch (error) {
        this.emit('failure', error);
        return claimed;
      }
      if (!claim) return claimed;
      claimed++;
      const run = this.#send(claim).finally(() => {
        this.#inFlight.delete(run);
        this.#loop.wake();
      });
      this.#inFlight.add(run);
    }
    return claimed;
  }

  #secretsFor(claim: ClaimedDelivery, now: number): string[] {
    const secrets = this.#deps.secrets as WebhookSecrets;
    const { endpoint } = claim;
    const list = [secrets.secretOf(endpoint.id, endpoint.secretVersion)];
    if (endpoint.previousSecretVersion !== null && (endpoint.previousSecretExpiresAt ?? 0) > now) {
      list.push(secrets.secretOf(endpoint.id, endpoint.previousSecretVersion));
    }
    return list;
  }

  async #send(claim: ClaimedDelivery): Promise<void> {
    const { delivery, endpoint } = claim;
    try {
      const payload = await this.#deps.loadPayload(delivery.event_id);
      let result: { outcome: AttemptEvent['outcome']; status?: number; durationMs: number; error?: string };
      if (payload === null) {
        result = { outcome: 'failed', durationMs: 0, error: 'the event is no longer stored' };
      } else {
        result = await deliverWebhook({
          url: endpoint.url,
          secret: this.#secretsFor(claim, this.#clock()),
          eventId: delivery.event_id,
          payload,
          timeoutMs: this.#options.timeoutMs,
          allowPrivateTargets: this.#options.allowPrivateTargets,
          production: this.#options.production,
          resolve: this.#options.resolve,
        });
      }
      const now = this.#clock();
      const delivered = result.outcome === 'delivered';
      const delay = delivered || payload === null ? null : nextAttemptDelay(delivery.attempts, this.#random());
      const failingSince = endpoint.failingSince === null ? null : new Date(endpoint.failingSince);
      const disable = !delivered && shouldDisable(failingSince, new Date(now));
      const disableReason = disable
        ? `Disabled on ${new Date(now).toISOString()}: every delivery failed since ${failingSince?.toISOString()} (last error: ${result.error ?? 'unknown'}).`
        : null;
      const state = await this.#deps.queue.settle(
        claim,
        this.owner,
        now,
        { delivered, statusCode: result.status ?? null, durationMs: result.durationMs, error: result.error ?? null },
        delay === null ? null : now + delay,
        disableReason,
      );
      this.emit('attempt', {
        endpointId: endpoint.id,
        eventId: delivery.event_id,
        attempt: delivery.attempts,
        outcome: result.outcome,
        state,
        durationMs: result.durationMs,
      } satisfies AttemptEvent);
    } catch (error) {
      // A database fault: the lease runs out and the delivery is attempted again then.
      this.emit('failure', error);
    }
  }
}

interface WorkerLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Log lines of the webhook worker: debug per attempt, a warning per fault (a database outage is logged elsewhere, once). */
export function logWebhookWorkerEvents(worker: WebhookWorker, log: WorkerLog, isOutage: (error: unknown) => boolean = () => false): void {
  worker.on('attempt', (attempt: AttemptEvent) => log.debug({ owner: worker.owner, ...attempt }, 'webhook attempt'));
  worker.on('failure', (error: Error) => {
    if (!isOutage(error)) log.warn({ owner: worker.owner, err: error?.message }, 'webhook worker step failed');
  });
}
