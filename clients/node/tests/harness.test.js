// The harness against the real faultline binary ($FAULTLINE_BIN): start-up errors, a round judged
// pass and fail, proxy mode. `node --test clients/node/tests/` (the package imports itself by name).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FaultlineCheckError, startFaultline } from 'faultline';

const guide = (name) => fileURLToPath(new URL(`../../../docs/guides/examples/${name}`, import.meta.url));
const busyFirstTry = { name: 'busy-first-try', kind: 'status', status: 503, retry_after: '1s',
                       match: { method: 'PUT', path: '/kv/*' }, when: { attempts: [1] } };

const put = (url) => fetch(`${url}/kv/order-1`, { method: 'PUT', body: '{}' }).then((r) => r.status);

test('a missing binary is named', async () => {
  await assert.rejects(startFaultline({ bin: '/nonexistent/faultline' }),
                       /the faultline binary \/nonexistent\/faultline does not exist or is not executable/);
});

test('a server that fails to start shows its output', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'faultline-test-'));
  t.after(() => rm(dir, { recursive: true }));
  const rules = join(dir, 'bad.toml');
  await writeFile(rules, '[[fault]]\nkind = "no_such_kind"\n');
  await assert.rejects(startFaultline({ rules }), (error) => {
    assert.match(error.message, /serve --rules \S+bad\.toml .* exited 2 before it was ready:/);
    assert.match(error.message, /no_such_kind/);
    return true;
  });
});

test('each round is judged alone: an early retry fails its round, the next round passes', async () => {
  const faultline = await startFaultline({ rules: guide('rules.toml') });
  try {
    await faultline.addRoundRule(busyFirstTry);
    assert.equal(await put(faultline.url), 503);
    assert.equal(await put(faultline.url), 200);   // at once: Retry-After asked for a second
    await assert.rejects(faultline.finishRound(guide('expect.toml')), (error) => {
      assert.ok(error instanceof FaultlineCheckError);
      assert.equal(error.result.exitCode, 1);
      assert.match(error.message, /faultline check, round 1, failed \(exit 1\)/);
      assert.match(error.message, /retry_after: 1 responses carried Retry-After; 1 retries came too soon/);
      return true;
    });
    assert.equal(faultline.round, 2);
    assert.deepEqual((await faultline.control.rules()).rules, []);
    assert.equal(await put(faultline.url), 200);
    const result = await faultline.finishRound(guide('expect.toml'));
    assert.equal(result.round, 2);
    assert.equal(result.failed, false);
    assert.equal(await faultline.finishRound(guide('expect.toml')), null);   // no attempts: nothing to judge
  } finally {
    await faultline.stop();
  }
});

test('proxy mode puts the faults in front of an upstream', async () => {
  const upstream = await startFaultline({ rules: guide('rules.toml') });
  try {
    const proxy = await startFaultline({ upstream: upstream.url.replace('http://', '') });
    try {
      await proxy.addRoundRule(busyFirstTry);
      assert.equal(await put(proxy.url), 503);
      assert.equal(await put(proxy.url), 200);
      assert.deepEqual((await upstream.control.attempts()).map((a) => a.status), [200]);
    } finally {
      await proxy.stop();
    }
  } finally {
    await upstream.stop();
  }
});
