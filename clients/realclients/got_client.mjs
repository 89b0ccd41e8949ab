// One request through got (npm, pinned in package.json) with its own retry.
//
//   node got_client.mjs URL METHOD BODY TIMEOUT [--limit N] [--backoff-limit MS]
//
// TIMEOUT is seconds per attempt (got's `timeout.request`, which is also got's default
// `maxRetryAfter`). Everything else is got's default retry: GET/PUT/HEAD/DELETE/OPTIONS/TRACE,
// 408/413/429/500/502/503/504/521/522/524 and network errors, 1000·2^(n-1) ms + up to 100 ms noise,
// Retry-After honoured. Exits 0 on a 2xx reply, 1 otherwise.
import got from 'got';

const [url, method, body, timeout, ...rest] = process.argv.slice(2);
const option = (name, fallback) => {
  const i = rest.indexOf(name);
  return i >= 0 ? Number(rest[i + 1]) : fallback;
};
const retry = { limit: option('--limit', 3) };
if (rest.includes('--backoff-limit')) retry.backoffLimit = option('--backoff-limit');

try {
  const res = await got(url, {
    method,
    body: method === 'GET' || method === 'HEAD' ? undefined : body,
    timeout: { request: Number(timeout) * 1000 },
    retry,
  });
  console.error(`got: ${res.statusCode}`);
  process.exit(0);
} catch (e) {
  console.error(`got: ${e.code ?? ''} ${e.message}`);
  process.exit(1);
}
