import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { buildCli, freePort } from '../../test/helpers/processes.js';
const dir = mkdtempSync(join(tmpdir(), 'base-'));
const cli = await buildCli(join(dir, 'build'));
const port = await freePort();
const child = spawn(process.execPath, [cli, 'serve'], { env: { ...process.env, STAMPGATE_ENV: 'development', DATA_DIR: dir, DATABASE_URL: `sqlite:${dir}/t.sqlite`, PORT: String(port), LOG_LEVEL: 'warn' }, stdio: 'ignore' });
for (let i = 0; i < 40; i++) { await new Promise(r => setTimeout(r, 250)); if ((await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null))?.ok) break; }
await new Promise(r => setTimeout(r, 1000));
const st = readFileSync(`/proc/${child.pid}/status`, 'utf8');
console.log(st.split('\n').filter(l => /VmRSS|VmHWM/.test(l)).join(' '));
child.kill('SIGKILL');
