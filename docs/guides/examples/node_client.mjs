// The Node guide's walk-through client (fetch-with-retry.mjs), honouring Retry-After or, with
// --ignore-retry-after, not. Needs FAULTLINE_URL, FAULTLINE_CONTROL_URL, FAULTLINE_CONTROL_TOKEN;
// FAULTLINE_CONTROL_JS names the control client, clients/node/control.js.
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { putOrder } from './fetch-with-retry.mjs';

const { FaultlineControl } = await import(pathToFileURL(process.env.FAULTLINE_CONTROL_JS).href);
const service = process.env.FAULTLINE_URL;
const control = new FaultlineControl(process.env.FAULTLINE_CONTROL_URL, { token: process.env.FAULTLINE_CONTROL_TOKEN });
const honourRetryAfter = !process.argv.includes('--ignore-retry-after');

await control.clearRules();
await control.addRule(await readFile(new URL('./busy-first-try.toml', import.meta.url), 'utf8'));
await control.reset();

for (const order of [1, 2]) {
  const response = await putOrder(service, order, { honourRetryAfter });
  console.log(`order ${order}: HTTP ${response.status}`);
  if (!response.ok) process.exit(1);
}

const attempts = await control.attempts();
console.log(`the server saw ${attempts.length} attempts:`,
            attempts.map((a) => `${a.target}#${a.attempt}=${a.status}`).join(', '));
if (attempts.length !== 4) throw new Error('expected two tries per write: the 503 and the retry');
