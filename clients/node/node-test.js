// node:test hooks around one faultline process per test file, one journal round per test:
//
//   import { test } from 'node:test';
//   import { useFaultline } from 'faultline/node-test';
//   const faultline = useFaultline({ rules: 'rules.toml', expect: 'expect.toml' });
//   test('a write is retried after 503', async () => { await put(`${faultline.url}/kv/a`); });
//
// useFaultline registers before (start), after (stop) and afterEach (finishRound: reset, then
// `faultline check --round N --expect EXPECT`; a failed check fails that test with the verdicts and
// their evidence). Call it at the top level of the file or inside a describe(). The handle it returns
// is filled in by `before`: url, control, round, and addRule(rule) for the current test's round only.

import { after, afterEach, before } from 'node:test';
import { startFaultline } from './harness.js';

export function useFaultline({ expect, ...startOptions } = {}) {
  let faultline = null;
  const started = () => {
    if (!faultline) throw new Error('faultline is not started: use the handle inside a test, after useFaultline\'s before hook');
    return faultline;
  };
  before(async () => { faultline = await startFaultline(startOptions); });
  afterEach(async () => { await faultline?.finishRound(expect); });
  after(async () => { await faultline?.stop(); });
  return {
    get url() { return started().url; },
    get control() { return started().control; },
    get round() { return started().round; },
    get server() { return started(); },
    addRule(rule) { return started().addRoundRule(rule); },
  };
}
