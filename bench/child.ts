/**
 * Server child process: runs one target (bench/target.ts) and answers the
 * benchmark's requests over the IPC channel. Started by bench/run.ts with
 * `node --import tsx bench/child.ts`; not meant to be run by hand.
 */
import { writeFileSync } from 'node:fs';
import type { Reply, Request } from './protocol.js';
import { profileWindows, type RunningTarget, startTarget } from './target.js';

if (!process.send) {
  console.error('bench/child.ts is started by bench/run.ts (it needs an IPC channel).');
  process.exit(2);
}

let target: RunningTarget | null = null;

function reply(message: Reply): void {
  process.send?.(message);
}

async function handle(request: Request): Promise<unknown> {
  if (request.op === 'start') {
    if (target) throw new Error('target already started');
    target = await startTarget(request.spec);
    return target.info;
  }
  if (!target) throw new Error(`${request.op} before start`);
  switch (request.op) {
    case 'usageStart':
      return target.usageStart(request.window);
    case 'usageStop':
      return target.usageStop();
    case 'check':
      return target.check();
    case 'stop': {
      const stopping = target;
      target = null;
      await stopping.stop();
      // With --cpu-prof, the windows let bench/profile-summary.ts keep only the measured seconds.
      const windowsFile = process.env.BENCH_PROFILE_WINDOWS_FILE;
      if (windowsFile) writeFileSync(windowsFile, `${JSON.stringify(profileWindows, null, 2)}\n`);
      return null;
    }
  }
}

process.on('message', (message: Request) => {
  handle(message).then(
    (result) => reply({ id: message.id, ok: true, result: result ?? null }),
    (error: unknown) => reply({ id: message.id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});

// The parent going away (Ctrl-C, crash) ends this process too.
process.on('disconnect', () => {
  const stopping = target;
  target = null;
  void (stopping ? stopping.stop() : Promise.resolve()).finally(() => process.exit(0));
});
