#!/usr/bin/env node
// The emulated RP2040 board as a process: the USB CDC byte stream on one file descriptor (a
// socket or pipe the parent passes, fd 3 by default), a control channel of JSON lines on
// stdin/stdout, diagnostics on stderr. See docs/rp2-emulator.md for the protocol.
//
//   node harness.js --image firmware.uf2 --flash flash.bin \
//       --erase 0x20000570 --program 0x200005f4 [--edge-pin 16] [--pace 1] [--cdc-fd 3]

import { readFileSync } from 'node:fs';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { format, parseArgs } from 'node:util';
import { EmulatedBoard } from './lib/board.js';
import { FlashStore } from './lib/flash.js';
import { readImage } from './lib/image.js';

const FLASH_SIZE = 2 * 1024 * 1024; // the Pico's W25Q16JV
const BOOTROM = new URL('./bootrom-b1.bin', import.meta.url);

function fail(message) {
  process.stderr.write(`rp2 harness: ${message}\n`);
  process.exit(2);
}

function address(text, name) {
  const value = Number(text);
  if (!text || !Number.isInteger(value) || value <= 0) {
    fail(`--${name} needs an address, got ${text}`);
  }
  return value;
}

function parseOptions() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        image: { type: 'string' },
        flash: { type: 'string' },
        erase: { type: 'string' },
        program: { type: 'string' },
        'edge-pin': { type: 'string', multiple: true, default: ['16'] },
        pace: { type: 'string', default: '1' },
        'cdc-fd': { type: 'string', default: '3' },
        verbose: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (err) {
    fail(err.message);
  }
  if (!values.image && !values.flash) fail('give --image, --flash or both');
  const pace = Number(values.pace);
  if (!(pace >= 0)) fail(`--pace must be a number >= 0, got ${values.pace}`);
  const edgePins = values['edge-pin'].map((text) => {
    const pin = Number(text);
    if (!Number.isInteger(pin) || pin < 0 || pin > 29) fail(`--edge-pin takes 0..29, got ${text}`);
    return pin;
  });
  return {
    image: values.image,
    flash: values.flash ?? null,
    symbols: {
      erase: address(values.erase, 'erase'),
      program: address(values.program, 'program'),
    },
    edgePins,
    pace,
    cdcFd: Number(values['cdc-fd']),
    verbose: values.verbose,
  };
}

/**
 * rp2040js's messages go to stderr (stdout carries the control channel), warnings only with
 * --verbose; so do those it writes to the console.
 */
function makeLogger(verbose) {
  const write = (level) => (component, message) =>
    process.stderr.write(`rp2 harness: ${level} ${component}: ${message}\n`);
  const quiet = () => {};
  const toLog = (level) => (...args) => {
    if (verbose || level === 'error') write(level)('rp2040js', format(...args));
  };
  console.log = console.info = console.debug = toLog('info');
  console.warn = toLog('warn');
  console.error = toLog('error');
  return {
    debug: quiet,
    info: verbose ? write('info') : quiet,
    // Warnings such as core 1's FIFO reads ("Read from invalid SIO address") are harmless.
    warn: verbose ? write('warn') : quiet,
    error: write('error'),
  };
}

function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function main() {
  const options = parseOptions();
  const waiters = new Waiters();
  let flash;
  try {
    flash = new FlashStore(FLASH_SIZE, options.flash);
    if (options.image) flash.writeImage(readImage(options.image, FLASH_SIZE));
  } catch (err) {
    fail(err.message);
  }
  const bootromBytes = readFileSync(BOOTROM);
  const bootrom = new Uint32Array(
    bootromBytes.buffer,
    bootromBytes.byteOffset,
    bootromBytes.length / 4,
  );

  let cdc;
  try {
    cdc = new net.Socket({ fd: options.cdcFd, readable: true, writable: true });
  } catch (err) {
    fail(`cannot use fd ${options.cdcFd} for the USB stream: ${err.message}`);
  }
  const board = new EmulatedBoard({
    bootrom,
    flash,
    symbols: options.symbols,
    edgePins: options.edgePins,
    pace: options.pace,
    logger: makeLogger(options.verbose),
    emit: (event) => {
      send(event);
      waiters.settle(event);
    },
    onSerial: (bytes) => cdc.write(bytes),
  });
  cdc.on('data', (chunk) => {
    if (!board.write(chunk)) cdc.pause();
  });
  board.onInputSpace = () => cdc.resume();
  cdc.on('error', () => {}); // the parent went away; stdin's end stops us
  const handlers = makeHandlers(board, waiters);

  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (!line.trim()) return;
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      send({ ok: false, error: 'bad-request', text: 'not JSON' });
      return;
    }
    // Requests without an id get no reply (their errors go to stderr).
    const { id, op } = request;
    const answer = (message) => {
      if (id !== undefined) send({ id, ...message });
      else if (!message.ok) process.stderr.write(`rp2 harness: ${op}: ${message.text}\n`);
    };
    const handler = handlers[op];
    if (!handler) {
      answer({ ok: false, error: 'bad-request', text: `unknown op ${op}` });
      return;
    }
    const reply = (result) => answer({ ok: true, ...result });
    try {
      const result = handler(request, reply);
      if (result !== undefined) reply(result);
    } catch (err) {
      answer({ ok: false, error: 'refused', text: err.message });
    }
  });
  lines.on('close', () => {
    board.powerCut();
    flash.close();
    process.exit(0);
  });
  board.powerOn();
}

/** Replies that wait for the board to halt or go off (run_until, power_cut at a cycle). */
class Waiters {
  constructor() {
    this.pending = [];
  }

  add(reply) {
    this.pending.push(reply);
  }

  /** Answers the waiting requests when the board halts or goes off. */
  settle(event) {
    if (event.event !== 'halted' && event.event !== 'off') return;
    const pending = this.pending;
    this.pending = [];
    const { reason = 'cut', flash_op: flashOp, nanos, cycles } = event;
    for (const reply of pending) {
      reply({ state: event.event, reason, flash_op: flashOp, nanos, cycles });
    }
  }
}

function pinOf(request) {
  if (!Number.isInteger(request.pin)) throw new Error('pin must be an integer');
  return request.pin;
}

function cycleOf(request) {
  if (!Number.isInteger(request.cycle) || request.cycle < 0) {
    throw new Error('cycle must be an integer >= 0');
  }
  return request.cycle;
}

function makeHandlers(board, waiters) {
  return {
    info: () => board.info(),
    clock: () => ({ state: board.state, ...board.stamp() }),
    press: (request) => {
      const ms = request.ms ?? null;
      if (ms !== null && !(ms > 0)) throw new Error('ms must be > 0');
      board.press(pinOf(request), ms);
      return {};
    },
    release: (request) => {
      board.release(pinOf(request));
      return {};
    },
    pin: (request) => board.pinInfo(pinOf(request)),
    host: (request) => {
      board.setHostOpen(!!request.open);
      return {};
    },
    edges: (request) => board.edgesOf(request.pin ?? 16, request.since ?? 0, !!request.clear),
    run_until: (request, reply) => {
      board.stopAt(cycleOf(request));
      waiters.add(reply);
    },
    power_cut: (request, reply) => {
      if (request.cycle === undefined || request.cycle === null) {
        const flashOp = board.powerCut();
        return { state: board.state, flash_op: flashOp, ...board.stamp() };
      }
      board.stopAt(cycleOf(request), true);
      waiters.add(reply);
      return undefined;
    },
    break_flash: (request) => {
      const kind = request.kind ?? 'any';
      if (!['erase', 'program', 'any'].includes(kind)) {
        throw new Error('kind is erase, program or any');
      }
      board.breakOn = kind;
      return {};
    },
    halt: () => {
      if (board.state === 'running') board.halt('request');
      return { state: board.state, ...board.stamp() };
    },
    resume: () => {
      board.resume();
      return { state: board.state };
    },
    power_on: () => {
      board.powerOn();
      return { state: board.state, boot: board.boots };
    },
    restart: () => {
      board.powerCut();
      board.powerOn();
      return { state: board.state, boot: board.boots };
    },
    flash_op: () => ({ flash_op: board.describeFlashOp() }),
    trace: (request) => {
      board.setTrace(!!request.on, request.probes ?? {});
      return {};
    },
    trace_log: (request) => board.traceOf(request.since ?? 0),
    profile: (request) => {
      board.setProfile(!!request.on);
      return {};
    },
    profile_log: () => ({ cycles: board.profileOf() }),
  };
}

main();
