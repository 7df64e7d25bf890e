// The board's QSPI flash chip: its contents (optionally kept in a file on the host, so that a
// restart from the same file is a restart of the same chip) and its erase/program operations,
// which take emulated time and can be cut short by a power cut.

import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from 'node:fs';

export const SECTOR_SIZE = 4096;
export const PAGE_SIZE = 256;

// Typical times of the Pico's flash (W25Q16JV datasheet): 4 KiB sector erase 45 ms, 256-byte
// page program 0.4 ms. An operation progresses linearly through its bytes at these rates, so a
// power cut part-way leaves the bytes before the cut erased/programmed and the rest untouched.
export const ERASE_NANOS_PER_BYTE = 45e6 / SECTOR_SIZE;
export const PROGRAM_NANOS_PER_BYTE = 0.4e6 / PAGE_SIZE;

export class FlashStore {
  /**
   * @param {number} size flash size in bytes
   * @param {string|null} path file that holds the whole flash (created, erased, if missing or
   *   empty); null keeps the flash in memory only
   */
  constructor(size, path = null) {
    this.size = size;
    this.path = path;
    this.data = new Uint8Array(size).fill(0xff);
    this.fd = null;
    if (path) {
      this.fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o644);
      const length = fstatSync(this.fd).size;
      if (length === 0) {
        this.persist(0, size);
      } else if (length !== size) {
        closeSync(this.fd);
        this.fd = null;
        throw new Error(`flash file ${path} holds ${length} bytes, not ${size}`);
      } else {
        readSync(this.fd, this.data, 0, size, 0);
      }
    }
  }

  /** Writes image pieces as a programmer would: only the bytes the image holds change. */
  writeImage(pieces) {
    for (const { offset, data } of pieces) {
      this.data.set(data, offset);
      this.persist(offset, data.length);
    }
  }

  persist(offset, count) {
    if (this.fd === null || count <= 0) return;
    writeSync(this.fd, this.data, offset, count, offset);
  }

  close() {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
  }
}

/**
 * One erase or program operation in progress. The chip's array (what the CPU reads) and the
 * store (the file) are updated together as the operation advances.
 */
export class FlashOperation {
  /**
   * @param {'erase'|'program'} kind
   * @param {number} offset flash offset
   * @param {Uint8Array|null} data bytes to program (null for an erase)
   * @param {number} count bytes
   * @param {number} startNanos emulated time the operation starts
   */
  constructor(kind, offset, data, count, startNanos) {
    this.kind = kind;
    this.offset = offset;
    this.data = data;
    this.count = count;
    this.startNanos = startNanos;
    const perByte = kind === 'erase' ? ERASE_NANOS_PER_BYTE : PROGRAM_NANOS_PER_BYTE;
    this.endNanos = startNanos + Math.ceil(count * perByte);
    this.done = 0; // bytes already erased/programmed
  }

  /** Bytes done by emulated time `nanos`. */
  bytesBy(nanos) {
    if (nanos >= this.endNanos) return this.count;
    const span = this.endNanos - this.startNanos;
    return Math.max(0, Math.floor(((nanos - this.startNanos) * this.count) / span));
  }

  /** Advances the operation to emulated time `nanos` on `chipFlash` and the store. */
  advance(nanos, chipFlash, store) {
    const target = this.bytesBy(nanos);
    if (target <= this.done) return;
    const from = this.offset + this.done;
    const to = this.offset + target;
    if (this.kind === 'erase') {
      store.data.fill(0xff, from, to);
    } else {
      // NOR flash programming only clears bits.
      for (let at = from, i = this.done; at < to; at++, i++) store.data[at] &= this.data[i];
    }
    chipFlash.set(store.data.subarray(from, to), from);
    store.persist(from, to - from);
    this.done = target;
  }

  get finished() {
    return this.done >= this.count;
  }

  /** A report of the operation; its times on the board's clock, which is `baseNanos` ahead. */
  describe(baseNanos, nanosPerCycle) {
    const start = baseNanos + this.startNanos;
    const end = baseNanos + this.endNanos;
    const info = {
      kind: this.kind,
      offset: this.offset,
      count: this.count,
      done: this.done,
      start_nanos: start,
      end_nanos: end,
      start_cycle: Math.ceil(start / nanosPerCycle),
      end_cycle: Math.ceil(end / nanosPerCycle),
    };
    if (this.data) info.data = Buffer.from(this.data).toString('hex');
    return info;
  }
}
