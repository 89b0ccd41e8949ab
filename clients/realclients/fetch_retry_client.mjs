// One request through Node's built-in fetch (undici) wrapped by fetch-retry (npm, pinned).
//
//   node fetch_retry_client.mjs URL METHOD BODY TIMEOUT [--retries N] [--retry-on default|4xx]
//
// TIMEOUT is seconds per attempt (each attempt gets its own AbortSignal.timeout). `default` is
// fetch-retry's defaults: 3 retries, 1000 ms apart, on network errors only (any method).
// `4xx` is a deliberately bad config: every error and every status >= 400 retried, 200·2^n ms apart.
// Exits 0 on a 2xx reply, 1 otherwise.
import fetchRetry from 'fetch-retry';

const [url, method, body, timeout, ...rest] = process.argv.slice(2);
const option = (name, fallback) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1] : fallback;
};
const retries = Number(option('--retries', 3));
const perAttempt = (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(Number(timeout) * 1000) });
const defaults = { retries };
if (option('--retry-on', 'default') === '4xx') {
  defaults.retryOn = (attempt, error, response) => attempt < retries && (error !== null || response.status >= 400);
  defaults.retryDelay = (attempt) => 200 * 2 ** attempt;
}
const fetchWithRetry = fetchRetry(perAttempt, defaults);

try {
  const res = await fetchWithRetry(url, { method, body: method === 'GET' || method === 'HEAD' ? undefined : body });
  console.error(`fetch-retry: ${res.status}`);
  process.exit(res.ok ? 0 : 1);
} catch (e) {
  console.error(`fetch-retry: ${e.name} ${e.message}`);
  process.exit(1);
}
