// The Node guide's client: built-in fetch with a small retry loop that honours Retry-After (good)
// or, with --ignore-retry-after, retries at once (bad). Needs FAULTLINE_URL, FAULTLINE_CONTROL_URL,
// FAULTLINE_CONTROL_TOKEN; FAULTLINE_CONTROL_JS names faultline-control.mjs (clients/).
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

const { FaultlineControl } = await import(pathToFileURL(process.env.FAULTLINE_CONTROL_JS).href);
const service = process.env.FAULTLINE_URL;
const control = new FaultlineControl(process.env.FAULTLINE_CONTROL_URL, { token: process.env.FAULTLINE_CONTROL_TOKEN });
const honourRetryAfter = !process.argv.includes('--ignore-retry-after');

// Retry-After as a wait in ms: delay-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent.
function retryAfterMs(response) {
  const value = response.headers.get('retry-after');
  if (value === null) return null;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

const retryable = new Set([429, 502, 503, 504]);

// Up to `attempts` tries; full-jitter exponential backoff, or the server's Retry-After when it sends one.
async function fetchWithRetry(url, init, { attempts = 3, baseMs = 100, capMs = 2000, timeoutMs = 5000 } = {}) {
  for (let attempt = 1; ; attempt++) {
    let response = null;
    let error = null;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
      if (!retryable.has(response.status)) return response;
    } catch (e) {
      error = e;  // reset, refused, timed out: worth another try for an idempotent request
    }
    if (attempt === attempts) {
      if (response) return response;
      throw error;
    }
    const backoff = Math.random() * Math.min(capMs, baseMs * 2 ** (attempt - 1));
    const asked = response && honourRetryAfter ? retryAfterMs(response) : null;
    await response?.body?.cancel();
    await sleep(asked ?? (honourRetryAfter ? backoff : 0));
  }
}

await control.clearRules();
await control.addRule(await readFile(new URL('./busy-first-try.toml', import.meta.url), 'utf8'));
await control.reset();

for (const order of [1, 2]) {
  const response = await fetchWithRetry(`${service}/kv/order-${order}`, {
    method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ order }),
  });
  console.log(`order ${order}: HTTP ${response.status}`);
  if (!response.ok) process.exit(1);
}

const attempts = await control.attempts();
console.log(`the server saw ${attempts.length} attempts:`,
            attempts.map((a) => `${a.target}#${a.attempt}=${a.status}`).join(', '));
if (attempts.length !== 4) throw new Error('expected two tries per write: the 503 and the retry');
