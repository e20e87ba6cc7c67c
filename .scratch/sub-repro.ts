import { EventBus, Keys, createRedisConnection } from '@taskgate/core';
import { startPersistentRedis, startToxiproxy } from '@taskgate/test-harness';
import { Redis } from 'ioredis';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const redis = await startPersistentRedis();
const toxi = await startToxiproxy({ binary: '/work/wt/i16-ev/.tools/bin/toxiproxy-server' });
const link = await toxi.createProxy('r', `127.0.0.1:${redis.port}`);
const base = new Redis({ port: link.port, host: '127.0.0.1', maxRetriesPerRequest: 3, commandTimeout: 5000 });
base.on('error', () => {});
const keys = new Keys('repro');
const bus = new EventBus(base, keys);
const direct = new Redis({ port: redis.port, host: '127.0.0.1', maxRetriesPerRequest: null, lazyConnect: true });
direct.on('error', () => {});
let unsubs = [];
for (let i = 0; i < 20; i++) unsubs.push(await bus.onTaskChange(`old${i}`, () => {}));
console.log('subscribed old');
let results: string[] = [];
const trial = async (name: string) => {
  const t0 = Date.now();
  let got = false;
  const p = bus.onTaskChange(name, () => { got = true; });
  const r = await Promise.race([p.then(() => 'ok', (e) => `err ${e.message}`), sleep(8000).then(() => 'TIMEOUT')]);
  results.push(`${name} subscribe ${r} after ${Date.now() - t0} ms`);
};
await redis.kill();
const during: Promise<void>[] = [];
for (let i = 0; i < 10; i++) { during.push(trial(`during${i}`)); await sleep(100); }
await redis.restart();
for (let i = 0; i < 10; i++) { during.push(trial(`after${i}`)); await sleep(50); }
await Promise.all(during);
console.log(results.join('\n'));
await direct.connect();
console.log('numsub', await direct.pubsub('NUMSUB', keys.taskChannel('old0'), keys.taskChannel('after5'), keys.taskChannel('during5')));
process.exit(0);
