// One request through axios + axios-retry (npm, pinned in package.json).
//
//   node axios_client.mjs URL METHOD BODY TIMEOUT [--retries N] [--delay exponential|none]
//                         [--condition idempotent|any-5xx]
//
// TIMEOUT is seconds per attempt (axios `timeout`). `--delay exponential` is
// axiosRetry.exponentialDelay (100·2^n ms plus up to 20 % random); `--condition idempotent` is
// axios-retry's default retryCondition (isNetworkOrIdempotentRequestError: network errors and 5xx
// on idempotent methods), `any-5xx` retries network errors and 5xx/429 on every method.
// Exits 0 on a 2xx reply, 1 otherwise.
import axios from 'axios';
import axiosRetry from 'axios-retry';

const [url, method, body, timeout, ...rest] = process.argv.slice(2);
const option = (name, fallback) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1] : fallback;
};
// shouldResetTimeout: {timeout} is per attempt, as for the other clients (axios-retry's default keeps
// one timeout over every retry).
const config = { retries: Number(option('--retries', 3)), shouldResetTimeout: true };
if (option('--delay', 'exponential') === 'exponential') config.retryDelay = axiosRetry.exponentialDelay;
if (option('--condition', 'idempotent') === 'any-5xx') {
  config.retryCondition = (error) =>
    axiosRetry.isNetworkError(error) || !error.response || error.response.status >= 500 || error.response.status === 429;
}
axiosRetry(axios, config);

try {
  const res = await axios.request({ url, method, data: body, timeout: Number(timeout) * 1000 });
  console.error(`axios: ${res.status}`);
  process.exit(0);
} catch (e) {
  console.error(`axios: ${e.code ?? ''} ${e.message}`);
  process.exit(1);
}
