/** What the benchmark asks a target server to be, and what the target says back. */

export type DatabaseKind = 'sqlite' | 'postgres';

export type TargetSpec =
  | { kind: 'ceiling' | 'ceiling-large' }
  | {
      kind: 'stampgate';
      database: DatabaseKind;
      /** Environment for loadConfig (DATABASE_URL, DATA_DIR, …), on top of process.env. */
      env: Record<string, string>;
      /** JSON file of `[{address, credentials}]` documents, issued by the dev issuer in DATA_DIR. */
      credentialsFile: string;
      /** The score every address must get (all addresses hold the same 20 providers). */
      expectedScore: string;
      expectedRawScore: string;
      /** Bounties to seed for the public data list case (0 = none). */
      bounties: number;
    };

export interface TargetInfo {
  port: number;
  /** Present for stampgate targets. */
  apiKey?: string;
  scorerId?: number;
  addresses?: string[];
  /** Where set-up time went, in ms. */
  setup: Record<string, number>;
  /** The values loadConfig produced, for the results file (stampgate only). */
  config?: Record<string, unknown>;
}

export interface ServerUsage {
  /** Server process CPU time during the measured window. */
  cpuUserMs: number;
  cpuSystemMs: number;
  /** Event-loop utilisation (0..1) of the server's loop during the window. */
  eventLoopUtilization: number;
  wallMs: number;
}

export interface TargetCheck {
  /** Score rows of the bench scorer by status. */
  scoreStatus: Record<string, number>;
  /** Scoring jobs still in the queue. */
  queueDepth: number;
  /** `failure` events the scoring worker emitted since start. */
  workerFailures: number;
  firstWorkerFailure: string | null;
}

export type Op = 'usageStop' | 'check' | 'stop';

/** Parent → child. `usageStart` names the measured window (kept for CPU-profile summaries). */
export type Request = { id: number; op: 'start'; spec: TargetSpec } | { id: number; op: 'usageStart'; window: string } | { id: number; op: Op };

/** A measured window on the monotonic clock V8 CPU profiles use (µs). */
export interface ProfileWindow {
  name: string;
  startUs: number;
  endUs: number;
}

/** Child → parent. */
export type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };
