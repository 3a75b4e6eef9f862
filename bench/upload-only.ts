import { runBatchUploadCases } from './batch-upload.js';
const dbs = (process.argv[2] ?? 'sqlite,postgres').split(',') as ('sqlite' | 'postgres')[];
const r = await runBatchUploadCases(dbs, process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
console.log(JSON.stringify(r.verdicts));
