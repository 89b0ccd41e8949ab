// faultline score's timing control on Node.js: the builtin control (control_client.hpp) written for
// the runtime a Node.js client runs on, so that the runtime's own wake-up and queueing on a loaded
// machine are in the noise the client is judged against. One PUT, and after anything but a 2xx (a
// status, a reset, a refused or failed connection) exactly DELAY_MS of wait — no jitter, no growth —
// then the same request again on a fresh connection, at most ATTEMPTS times in all. Exits 0.
//   node control.mjs URL DELAY_MS ATTEMPTS
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

const [url, delayText, attemptsText] = process.argv.slice(2);
const delay = Number(delayText);
const attempts = Number(attemptsText);
const timeoutMs = 5000;

// One attempt on a connection of its own; true for a complete 2xx reply.
function attempt() {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'PUT', agent: false, timeout: timeoutMs,
                                    headers: { 'content-type': 'text/plain', connection: 'close' } }, (res) => {
      res.on('data', () => {});
      res.on('end', () => resolve(res.statusCode >= 200 && res.statusCode < 300));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
    req.end('control');
  });
}

for (let made = 1; made <= attempts; ++made) {
  if (await attempt()) break;
  if (made < attempts) await sleep(delay);
}
