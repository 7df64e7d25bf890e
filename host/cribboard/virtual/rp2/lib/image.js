// Firmware images: UF2 (as the RP2040's USB boot loader takes them) or a raw BIN that starts at
// the beginning of flash. Both become a list of (flash offset, bytes) pieces.

import { readFileSync } from 'node:fs';

export const FLASH_BASE = 0x10000000;

const UF2_BLOCK = 512;
const UF2_MAGIC_START0 = 0x0a324655;
const UF2_MAGIC_START1 = 0x9e5d5157;
const UF2_MAGIC_END = 0x0ab16f30;
const UF2_FLAG_NOT_MAIN_FLASH = 0x00000001;
const UF2_FLAG_FAMILY_ID = 0x00002000;
const RP2040_FAMILY_ID = 0xe48bff56;

/** Whether the bytes look like a UF2 file (its first block carries both start magics). */
export function isUF2(bytes) {
  if (bytes.length < UF2_BLOCK) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start0 = view.getUint32(0, true);
  return start0 === UF2_MAGIC_START0 && view.getUint32(4, true) === UF2_MAGIC_START1;
}

/** The RP2040 flash pieces of a UF2 file; blocks for other chips or outside flash are skipped. */
export function parseUF2(bytes, flashSize) {
  if (bytes.length % UF2_BLOCK !== 0) {
    throw new Error(`UF2 size ${bytes.length} is not a multiple of ${UF2_BLOCK}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const pieces = [];
  for (let at = 0; at < bytes.length; at += UF2_BLOCK) {
    const word = (index) => view.getUint32(at + 4 * index, true);
    if (word(0) !== UF2_MAGIC_START0 || word(1) !== UF2_MAGIC_START1) {
      throw new Error(`UF2 block at byte ${at} has no start magic`);
    }
    if (view.getUint32(at + UF2_BLOCK - 4, true) !== UF2_MAGIC_END) {
      throw new Error(`UF2 block at byte ${at} has no end magic`);
    }
    const flags = word(2);
    const address = word(3);
    const size = word(4);
    if (flags & UF2_FLAG_NOT_MAIN_FLASH) continue;
    if (flags & UF2_FLAG_FAMILY_ID && word(7) !== RP2040_FAMILY_ID) continue;
    if (size > 476) throw new Error(`UF2 block at byte ${at} claims ${size} bytes of data`);
    const offset = address - FLASH_BASE;
    if (offset < 0 || offset + size > flashSize) {
      throw new Error(`UF2 block at byte ${at} targets 0x${address.toString(16)}, outside flash`);
    }
    pieces.push({ offset, data: bytes.subarray(at + 32, at + 32 + size) });
  }
  if (!pieces.length) throw new Error('the UF2 file has no RP2040 flash blocks');
  return pieces;
}

/** Reads a UF2 or BIN image file into flash pieces. */
export function readImage(path, flashSize) {
  const bytes = new Uint8Array(readFileSync(path));
  if (isUF2(bytes)) return parseUF2(bytes, flashSize);
  if (!bytes.length) throw new Error(`${path} is empty`);
  if (bytes.length > flashSize) {
    throw new Error(`${path} (${bytes.length} bytes) does not fit in ${flashSize} bytes of flash`);
  }
  return [{ offset: 0, data: bytes }];
}
