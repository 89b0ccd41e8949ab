// The Node guide's node:test recipe: fetch-with-retry.mjs against `faultline serve`, one round a test
// (useFaultline from `npm install ./clients/node`). Each test is judged on its own by
// `faultline check --round N --expect expect.toml` after it; a failed check fails that test.
//   FAULTLINE_BIN=/path/to/faultline node --test orders.test.mjs
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { useFaultline } from 'faultline/node-test';
import { putOrder } from './fetch-with-retry.mjs';

const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const faultline = useFaultline({ rules: here('rules.toml'), expect: here('expect.toml') });
// The first try of every key-value write gets 503 with Retry-After: 1.
const busyFirstTry = await readFile(here('busy-first-try.toml'), 'utf8');
// Set by the test of this recipe to show a client that ignores Retry-After failing its tests.
const honourRetryAfter = process.env.ORDERS_IGNORE_RETRY_AFTER !== '1';

const statuses = async () => (await faultline.control.attempts()).map((a) => [a.target, a.attempt, a.status]);

test('a write is retried after 503 with Retry-After', async () => {
  await faultline.addRule(busyFirstTry);
  assert.equal((await putOrder(faultline.url, 1, { honourRetryAfter })).status, 200);
  assert.deepEqual(await statuses(), [['/kv/order-1', 1, 503], ['/kv/order-1', 2, 200]]);
});

test('the same write in the next test is a new operation', async () => {
  // The reset between tests forgot order-1's attempts: this is its first try again, and busy again.
  await faultline.addRule(busyFirstTry);
  assert.equal((await putOrder(faultline.url, 1, { honourRetryAfter })).status, 200);
  assert.deepEqual(await statuses(), [['/kv/order-1', 1, 503], ['/kv/order-1', 2, 200]]);
});

test('without faults the first try succeeds', async () => {
  assert.equal((await putOrder(faultline.url, 2, { honourRetryAfter })).status, 200);
  assert.deepEqual(await statuses(), [['/kv/order-2', 1, 200]]);
  assert.deepEqual((await faultline.control.rules()).rules, []);   // the first tests' rules ended with their rounds
});
