// A `faultline serve` (or `faultline proxy`) process for a test suite, and the rounds of its journal:
// plain async functions for any runner (node:test through ./node-test.js, Jest, Mocha).
//
//   const faultline = await startFaultline({ rules: 'rules.toml' });   // beforeAll
//   ... // a test: the client under test against faultline.url
//   await faultline.finishRound('expect.toml');   // afterEach: reset, then `faultline check --round N`
//   await faultline.stop();                       // afterAll
//
// The server is started with --ready-file and --journal in a temp dir; startFaultline() resolves once
// the ready file exists (bounded by startTimeoutMs). Each reset starts a new round, and
// `faultline check --round N` judges one round on its own (docs/control-api.md, "Rounds").

import { execFile, spawn } from 'node:child_process';
import { existsSync, accessSync, constants, openSync, closeSync } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FaultlineControl } from './control.js';

// A poll interval, not a wait: every bounded wait below looks this often and gives up at its deadline.
const pollMs = 10;
// How long the journal file may lag the control API: the writer flushes every 2 ms (docs/control-api.md,
// "Journal durability"); the margin is for a loaded machine.
const journalLagMs = 5000;
const stopMs = 10000;

// `faultline check` judged a round and a check failed (or it could not judge); `result` holds its output.
export class FaultlineCheckError extends Error {
  constructor(result) {
    super(describeCheck(result));
    this.name = 'FaultlineCheckError';
    this.result = result;
  }
}

// Exit 4, too little evidence, is no failure: a test without a Retry-After gives retry_after nothing to judge.
function checkFailed(exitCode) { return exitCode !== 0 && exitCode !== 4; }

function describeCheck({ round, command, exitCode, output }) {
  const verdict = checkFailed(exitCode) ? `failed (exit ${exitCode})` : 'passed';
  return `faultline check, round ${round}, ${verdict}: ${command.join(' ')}\n${output}`;
}

// The faultline executable: `bin` if given, else $FAULTLINE_BIN, else `faultline` on PATH.
export function findBinary(bin) {
  const candidate = bin || process.env.FAULTLINE_BIN ||
    (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'faultline')).find(existsSync);
  if (!candidate) {
    throw new Error('the faultline binary was not found: set FAULTLINE_BIN, pass { bin }, or put faultline on PATH');
  }
  try {
    accessSync(candidate, constants.X_OK);
  } catch {
    throw new Error(`the faultline binary ${candidate} does not exist or is not executable`);
  }
  return candidate;
}

// One faultline process this object started and owns: stop() ends it, and only it (its own
// ChildProcess). One test at a time drives the rounds.
export class Faultline {
  #roundRules = [];
  #journalOffset = 0;
  #ownsDir;

  constructor({ bin, child, dir, ownsDir, ready, logPath, round }) {
    this.bin = bin;
    this.#ownsDir = ownsDir;
    this.child = child;
    this.dir = dir;
    this.ready = ready;
    this.logPath = logPath;
    this.journalPath = join(dir, 'journal.jsonl');
    this.url = ready.url;
    this.control = new FaultlineControl(ready.control_url, { token: ready.token });
    this.round = round;
  }

  // A rule (an object or a TOML table, as FaultlineControl.addRule) for the current round only.
  async addRoundRule(rule) {
    const { added } = await this.control.addRule(rule);
    this.#roundRules.push(added);
    return added;
  }

  // Removes this round's rules and resets, starting the next round; resolves to { round, attempts }
  // of the round that ended once the journal file holds all of it.
  async endRound() {
    for (const name of this.#roundRules.splice(0)) await this.control.removeRule(name);
    // Memory holds the current round until the reset forgets it.
    const attempts = (await this.control.attempts(this.round)).length;
    const ended = this.round;
    this.round = (await this.control.reset()).round;
    await this.#waitForResetInJournal(this.round);
    return { round: ended, attempts };
  }

  // `faultline check` on the journal file, judging `round` alone against the checks in `expect`:
  // { round, command, exitCode, output, failed }.
  checkRound(round, expect) {
    const command = [this.bin, 'check', this.journalPath, '--expect', expect, '--round', String(round)];
    return new Promise((resolve, reject) => {
      execFile(command[0], command.slice(1), { timeout: 60000 }, (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        const exitCode = error ? error.code : 0;
        resolve({ round, command, exitCode, output: stdout + stderr, failed: checkFailed(exitCode) });
      });
    });
  }

  // Ends the current round and judges it against `expect` (if given and the round had attempts: a
  // round without any has nothing to judge). Throws FaultlineCheckError when a check fails (exit 1) or
  // the round could not be judged (exit 2, 3); resolves to the check's result, or null.
  async finishRound(expect) {
    const { round, attempts } = await this.endRound();
    if (!expect || attempts === 0) return null;
    const result = await this.checkRound(round, expect);
    if (result.failed) throw new FaultlineCheckError(result);
    return result;
  }

  // SIGTERM, so the server flushes its journal and removes its ready file; SIGKILL after a bound.
  // Then the temp dir goes, if startFaultline made it (a `dir` of the caller's stays).
  async stop() {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), stopMs);
      await exited;
      clearTimeout(timer);
    }
    if (this.#ownsDir) await rm(this.dir, { recursive: true, force: true });
  }

  // Waits until the journal file holds the reset event that starts `round`: every record of the rounds
  // before it is written by then (the writer keeps the order).
  async #waitForResetInJournal(round) {
    const deadline = Date.now() + journalLagMs;
    const journal = await open(this.journalPath, 'r');
    try {
      for (;;) {
        const { bytesRead, buffer } = await journal.read({ buffer: Buffer.alloc(65536), position: this.#journalOffset });
        // Whole lines only: a line still being written is read again on the next pass.
        const whole = buffer.subarray(0, bytesRead === 0 ? 0 : buffer.lastIndexOf(10, bytesRead - 1) + 1);
        this.#journalOffset += whole.length;
        const lines = whole.toString('utf8').split('\n');
        if (lines.some((line) => line.includes('"event":"reset"') && JSON.parse(line).round === round)) return;
        if (whole.length > 0) continue;
        if (Date.now() > deadline) {
          throw new Error(`${this.journalPath} has no reset event of round ${round} after ${journalLagMs} ms (see ${this.logPath})`);
        }
        await sleep(pollMs);
      }
    } finally {
      await journal.close();
    }
  }
}

// Starts `faultline serve`, or with `upstream` (HOST:PORT) `faultline proxy` in front of it, with its
// ready file, journal and output in `dir` (default: a new temp dir); resolves to a Faultline once it listens.
export async function startFaultline({ bin, rules, upstream, dir, startTimeoutMs = 10000 } = {}) {
  bin = findBinary(bin);
  const ownsDir = dir === undefined;
  if (ownsDir) dir = await mkdtemp(join(tmpdir(), 'faultline-'));
  else await mkdir(dir, { recursive: true });
  const readyPath = join(dir, 'ready.json');
  const logPath = join(dir, 'faultline.log');
  await rm(readyPath, { force: true });   // one left by a `kill -9` would pass for this server's
  const args = upstream ? ['proxy', '--upstream', upstream] : ['serve'];
  if (rules) args.push('--rules', rules);
  args.push('--journal', join(dir, 'journal.jsonl'), '--ready-file', readyPath);
  // Its output goes to a file, not a pipe nobody reads: a full pipe would stall the server.
  const log = openSync(logPath, 'w');
  const child = spawn(bin, args, { stdio: ['ignore', log, log] });
  closeSync(log);
  try {
    await new Promise((resolve, reject) => { child.once('spawn', resolve); child.once('error', reject); });
    await waitForReadyFile(child, readyPath, logPath, [bin, ...args].join(' '), startTimeoutMs);
    const ready = JSON.parse(await readFile(readyPath, 'utf8'));
    const { round } = await new FaultlineControl(ready.control_url, { token: ready.token }).health();
    return new Faultline({ bin, child, dir, ownsDir, ready, logPath, round });
  } catch (error) {
    // No Faultline owns the process yet, so nobody else would stop it; its output is in the error.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (ownsDir) await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

// The ready file is renamed into place once every port listens, so it is whole when it exists.
async function waitForReadyFile(child, readyPath, logPath, command, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(readyPath)) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${command} exited ${child.exitCode ?? child.signalCode} before it was ready:\n${await readFile(logPath, 'utf8')}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`${command} wrote no ready file within ${timeoutMs} ms:\n${await readFile(logPath, 'utf8')}`);
    }
    await sleep(pollMs);
  }
}
