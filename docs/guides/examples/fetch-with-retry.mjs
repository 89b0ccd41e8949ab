// The Node guide's client under test: built-in fetch with a small retry loop that honours
// Retry-After (good) or, with { honourRetryAfter: false }, retries at once (bad). Used by
// node_client.mjs (the walk-through) and orders.test.mjs (the node:test recipe).
import { setTimeout as sleep } from 'node:timers/promises';

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
export async function fetchWithRetry(url, init,
                                     { attempts = 3, baseMs = 100, capMs = 2000, timeoutMs = 5000, honourRetryAfter = true } = {}) {
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

// PUT one order as JSON: what the guide's tests do.
export function putOrder(serviceUrl, order, options) {
  return fetchWithRetry(`${serviceUrl}/kv/order-${order}`, {
    method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ order }),
  }, options);
}
