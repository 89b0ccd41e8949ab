// A client for faultline's control API (docs/control-api.md): no dependencies, Node 18+ (built-in
// fetch). `import { FaultlineControl } from 'faultline'` once installed (`npm install ./clients/node`);
// this file also works copied on its own.
//
//   const control = new FaultlineControl('http://127.0.0.1:18101/__faultline/', { token: '3f9c...' });
//   await control.addRule({ name: 'busy', kind: 'status', status: 503, retry_after: '1s' });
//   ... // point the client under test at the service URL
//   const { double_effects } = await control.ledger();
//
// FaultlineControl.fromBanner(text) reads `faultline serve`'s two lines of output. Every error the
// API returns throws a FaultlineError with its HTTP status and the API's message.

export class FaultlineError extends Error {
  constructor(status, message, errors = []) {
    super(`faultline control API: ${status}: ${message}` + errors.map((e) => `\n  ${e}`).join(''));
    this.status = status;
    this.errors = errors;
  }
}

// { serviceUrl, controlUrl, token } (token null when served without one) from `faultline serve`'s output.
export function parseBanner(text) {
  const service = /faultline serving on (http:\/\/\S+)/.exec(text);
  const control = /control API: (http:\/\/\S+)(?: \(Authorization: Bearer (\w+)\))?/.exec(text);
  if (!service || !control) throw new Error(`not the output of \`faultline serve\`: ${text.slice(0, 200)}`);
  return { serviceUrl: service[1], controlUrl: control[1], token: control[2] ?? null };
}

export class FaultlineControl {
  constructor(controlUrl, { token = null, timeoutMs = 10000 } = {}) {
    this.base = controlUrl.replace(/\/*$/, '/');
    this.token = token;
    this.timeoutMs = timeoutMs;
  }

  static fromBanner(text, options = {}) {
    const { controlUrl, token } = parseBanner(text);
    return new FaultlineControl(controlUrl, { ...options, token });
  }

  async #request(method, path, body, contentType = 'application/json') {
    const headers = {};
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let payload;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      headers['content-type'] = contentType;
    }
    const response = await fetch(this.base + path, {
      method, headers, body: payload, signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await response.text();
    if (!response.ok) {
      let parsed = null;
      try { parsed = JSON.parse(text); } catch { /* not JSON: report the text as is */ }
      throw new FaultlineError(response.status, parsed?.error ?? text, parsed?.errors ?? []);
    }
    return text;
  }

  async #json(method, path, body, contentType) {
    return JSON.parse(await this.#request(method, path, body, contentType));
  }

  health() { return this.#json('GET', 'health'); }
  rules() { return this.#json('GET', 'rules'); }
  // One rule: an object with a [[fault]] table's keys, or the TOML text of such a table.
  addRule(rule, position) {
    const path = position === undefined ? 'rules' : `rules?position=${Number(position)}`;
    return typeof rule === 'string' ? this.#json('POST', path, rule, 'application/toml')
                                    : this.#json('POST', path, rule);
  }
  removeRule(name) { return this.#json('DELETE', `rules/${encodeURIComponent(name)}`); }
  clearRules() { return this.#json('DELETE', 'rules'); }
  reset() { return this.#json('POST', 'reset'); }
  // The current round's journal (round: a number, or 'all' for all that memory holds): attempts and
  // server events (those carry `event`), in seq order.
  async journal(round) {
    const path = round === undefined ? 'journal' : `journal?round=${round}`;
    return (await this.#request('GET', path)).split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  }
  async attempts(round) { return (await this.journal(round)).filter((r) => !('event' in r)); }
  ledger() { return this.#json('GET', 'ledger'); }
  stats() { return this.#json('GET', 'stats'); }
}
