// One request through Node's built-in fetch (undici) in a small hand-written retry loop.
//
//   node fetch_loop.mjs URL METHOD BODY TIMEOUT [--policy naive|careful] [--attempts N] [--deadline S]
//                       [--key KEY|rotate]
//
// TIMEOUT is seconds per attempt. Two loops people write:
// - naive: up to N attempts back to back, repeating anything that is not a 2xx (any method, any
//   status, any error). The deliberately bad config: no backoff, no jitter, 4xx and POST repeated.
// - careful: up to N attempts; repeats 408/429/500/502/503/504 and errors, but a POST only after
//   ECONNREFUSED (nothing was sent); full jitter rand(0, min(2 s, 200 ms·2^(n-1))), and never
//   sooner than a Retry-After (seconds or HTTP-date); with --deadline S, no attempt and no sleep
//   runs past start + S (an attempt's timeout is cut to what is left; a longer wait gives up).
//   With --key, every attempt carries `Idempotency-Key: KEY`, and a keyed POST is repeated after
//   errors too (the service deduplicates); `--key rotate` is the bug of a fresh key on every attempt.
// Exits 0 on a 2xx reply, 1 otherwise.
const [url, method, body, timeout, ...rest] = process.argv.slice(2);
const option = (name, fallback) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1] : fallback;
};
const policy = option('--policy', 'naive');
const attempts = Number(option('--attempts', 4));
const deadline = Date.now() + Number(option('--deadline', 'Infinity')) * 1000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const key = option('--key', undefined);
const idempotent = ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE'].includes(method);

function retryAfterMs(res) {
  const value = res.headers.get('retry-after');
  if (value === null) return 0;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? 0 : Math.max(0, date - Date.now());
}

let status = 'no attempt';
for (let n = 1; n <= attempts; ++n) {
  let retryable = false;
  let floor = 0;
  try {
    const res = await fetch(url, {
      method,
      body: method === 'GET' || method === 'HEAD' ? undefined : body,
      headers: key === undefined ? {} : { 'Idempotency-Key': key === 'rotate' ? crypto.randomUUID() : key },
      signal: AbortSignal.timeout(Math.max(1, Math.min(Number(timeout) * 1000, deadline - Date.now()))),
    });
    await res.arrayBuffer();
    status = String(res.status);
    if (res.ok) {
      console.error(`fetch: ${status}`);
      process.exit(0);
    }
    retryable = policy === 'naive' || [408, 429, 500, 502, 503, 504].includes(res.status);
    floor = retryAfterMs(res);
  } catch (e) {
    status = `${e.name} ${e.cause?.code ?? e.message}`;
    retryable = policy === 'naive' || idempotent || key !== undefined || e.cause?.code === 'ECONNREFUSED';
  }
  if (!retryable || n === attempts) break;
  if (policy === 'careful') {
    const wait = Math.max(floor, Math.random() * Math.min(2000, 200 * 2 ** (n - 1)));
    if (Date.now() + wait >= deadline) break;
    await sleep(wait);
  }
}
console.error(`fetch: ${status}`);
process.exit(1);
