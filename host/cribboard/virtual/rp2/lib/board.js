// An emulated Raspberry Pi Pico: rp2040js's RP2040 with the bootrom, a flash chip that erases
// and programs (the SDK's flash functions are caught and done here), USB CDC, buttons on its
// GPIO pins, an edge log of chosen output pins, a watchdog that resets the chip, power cuts, and
// a run loop on one emulated clock that spans every reset.
//
// Time: each chip has its own rp2040js SimulationClock from 0 (its TIMER counts from power-on or
// reset, as a real one does); the board adds the time of earlier chips, so `nanos` never goes
// back. One CPU cycle is 8 ns (125 MHz, rp2040js's convention and MicroPython's clk_sys on an
// RP2040); `cycles` is nanos / 8.

import { GPIOPinState, RP2040, USBCDC } from 'rp2040js';
import { FlashOperation } from './flash.js';
import { FLASH_BASE } from './image.js';

export const NANOS_PER_CYCLE = 8;
const WATCHDOG_KEY = 0x40058; // rp2040js keys peripherals by (address >>> 14) << 2
const REASON_FORCE = 2; // the watchdog's REASON bits: 1 TIMER, 2 FORCE
const SLICE_MILLIS = 20; // wall time of one run slice before yielding to I/O
const CHECK_EVERY = 4096; // instructions between looks at the wall clock
const MAX_LAG_NANOS = 20e6; // a paced board that fell behind catches up at most this much
const INPUT_LIMIT = 1 << 16; // host bytes queued for the USB FIFO before reading pauses
const EDGE_LIMIT = 1 << 21; // edges kept per pin; the oldest half goes when full
const USB_SOF_RD = 0x48;
const USB_INTR_DEV_SOF = 1 << 17;
const USB_FRAME_NANOS = 1e6;
const CDC_DTR = 1;
const CDC_RTS = 2;
const PIO_STRIDE = 1000; // cycles the clock moves at a time while the CPU sleeps and a PIO works
const TRACE_LIMIT = 1 << 20; // trace entries kept (USB traffic and probe hits); then no more

/** r0-r3 and lr (a call's arguments and return address at its entry), 20 bytes little-endian. */
function callRegisters(registers) {
  const bytes = Buffer.alloc(20);
  [0, 1, 2, 3, 14].forEach((r, k) => bytes.writeUInt32LE(registers[r] >>> 0, 4 * k));
  return bytes;
}

/**
 * Moves a SimulationClock to `nanos` exactly (now + (nanos - now) can round below it), firing
 * the alarms due by then (one due now too: a DMA transfer a PIO step asked for).
 */
function tickTo(clock, nanos) {
  if (nanos >= clock.nanosCounter) clock.tick(nanos - clock.nanosCounter);
  if (clock.nanosCounter < nanos) clock.nanosCounter = nanos;
}

/**
 * States: 'running', 'halted' (stopped at a requested cycle or flash operation; resume goes
 * on), 'off' (power cut; powerOn starts a new chip from the flash).
 */
export class EmulatedBoard {
  /**
   * @param {object} options
   * @param {Uint32Array} options.bootrom
   * @param {import('./flash.js').FlashStore} options.flash
   * @param {{erase: number, program: number}} options.symbols addresses of the SDK's
   *   flash_range_erase and flash_range_program (Thumb bit ignored)
   * @param {number[]} options.edgePins output pins whose edges are logged
   * @param {number} options.pace emulated seconds per wall second at most (0: as fast as it goes)
   * @param {import('rp2040js').Logger} options.logger
   * @param {(event: object) => void} options.emit board events (boot, usb, halted, off, ...)
   * @param {(bytes: Uint8Array) => void} options.onSerial CDC bytes from the board
   */
  constructor({ bootrom, flash, symbols, edgePins, pace, logger, emit, onSerial }) {
    this.bootrom = bootrom;
    this.flash = flash;
    this.eraseAddress = symbols.erase & ~1;
    this.programAddress = symbols.program & ~1;
    this.pace = pace;
    this.logger = logger;
    this.emit = emit;
    this.onSerial = onSerial;
    this.state = 'off';
    this.chip = null;
    this.clock = null;
    this.boots = 0;
    this.baseNanos = 0; // time of earlier chips
    this.stopAtNanos = Infinity;
    this.stopReason = null;
    this.breakOn = null; // 'erase' | 'program' | 'any': halt before the next such operation
    this.flashOp = null;
    this.flashOps = 0;
    this.pendingReset = 0; // watchdog REASON bits of a reset to do between instructions
    this.lockedUp = false; // the core stopped after a fault (lockup): only a reset ends it
    this.buttons = new Map(); // pin -> level the outside world drives (false: pressed)
    this.releaseAlarms = new Map();
    this.edges = new Map(edgePins.map((pin) => [pin, { base: 0, nanos: [], levels: [] }]));
    this.hostOpen = false;
    this.cdc = null;
    this.waitingRead = null; // the device's OUT read, waiting for host bytes
    this.input = [];
    this.inputBytes = 0;
    this.onInputSpace = null;
    this.timer = null;
    this.wallAnchor = 0;
    this.emuAnchor = 0;
    // The trace (setTrace): USB traffic both ways and entries to chosen firmware addresses, each
    // with the emulated time; null when off.
    this.trace = null;
    this.probes = null; // address (Thumb bit clear) -> name
    this.profile = null; // setProfile: address (Thumb bit clear) -> cycles spent there
    this.pios = null; // the chip's two PIO blocks
    this.stampNanos = null; // the time of the PIO step being run, for the edges it makes
  }

  // -- time -----------------------------------------------------------------------------------

  get nanos() {
    return this.baseNanos + (this.clock ? this.clock.nanos : 0);
  }

  get cycles() {
    return Math.floor(this.nanos / NANOS_PER_CYCLE);
  }

  // -- power ----------------------------------------------------------------------------------

  /** Starts a chip from the flash. `carry` keeps watchdog state across a watchdog reset. */
  powerOn(cause = 'power', carry = null) {
    if (this.chip) throw new Error('the board is already on');
    const chip = new RP2040(); // with a SimulationClock of its own, from 0
    const clock = chip.clock;
    chip.logger = this.logger;
    chip.loadBootrom(this.bootrom); // also resets the core and blanks the flash array
    chip.flash.set(this.flash.data);
    // No debugger is attached: a BKPT (or UDF) escalates to a HardFault, and the SDK's HardFault
    // handler is itself a BKPT, so the core locks up (ARMv6-M) until the watchdog resets it.
    chip.onBreak = (code) => this.lockup(code);
    const watchdog = chip.peripherals[WATCHDOG_KEY];
    if (carry) {
      watchdog.scratchData.set(carry.scratch);
      watchdog.reason = carry.reason;
    }
    watchdog.onWatchdogTrigger = () => {
      // Stop its countdown: rp2040js would re-arm the alarm 0 ns ahead and spin for ever.
      watchdog.alarm.enable = false;
      this.pendingReset = watchdog.reason || REASON_FORCE;
    };
    this.attachUSB(chip);
    this.attachPins(chip);
    this.attachPio(chip);
    // boot2 at the start of flash sets up XIP and jumps to the vector table (the bootrom's own
    // path through its flash probing does not reach MicroPython in rp2040js).
    chip.core.PC = FLASH_BASE;
    this.chip = chip;
    this.clock = clock;
    this.boots += 1;
    this.pendingReset = 0;
    this.lockedUp = false;
    this.state = 'running';
    const reason = carry ? carry.reason : 0;
    this.emit({ event: 'boot', boot: this.boots, cause, reason, ...this.stamp() });
    this.schedule();
  }

  /**
   * Cuts the power now: the chip and its RAM and registers are gone; the flash stays. Returns
   * the flash operation cut part-way (or null).
   */
  powerCut() {
    if (!this.chip) return null;
    if (this.flashOp) this.flashOp.advance(this.clock.nanos, this.chip.flash, this.flash);
    const op = this.describeFlashOp();
    this.dropChip();
    this.state = 'off';
    this.emit({ event: 'off', flash_op: op, ...this.stamp() });
    return op;
  }

  /** The watchdog's reset: a new chip from the same flash, scratch registers and REASON kept. */
  watchdogReset(reason) {
    const watchdog = this.chip.peripherals[WATCHDOG_KEY];
    const carry = { scratch: Uint32Array.from(watchdog.scratchData), reason };
    if (this.flashOp) {
      // The flash chip has its own supply and finishes what it was doing.
      this.flashOp.advance(Infinity, this.chip.flash, this.flash);
      this.flashOp = null;
    }
    this.dropChip();
    this.powerOn('watchdog', carry);
  }

  /** A fault with no debugger: the core executes nothing more; timers and the watchdog run. */
  lockup(code) {
    if (this.lockedUp) return;
    this.lockedUp = true;
    const pc = (this.chip.core.PC - 2) >>> 0;
    this.logger.warn('board', `BKPT ${code} at 0x${pc.toString(16)}: core locked up`);
    this.emit({ event: 'lockup', code, pc, ...this.stamp() });
  }

  dropChip() {
    this.stopTimer();
    this.baseNanos += Math.ceil(this.clock.nanos); // whole nanoseconds between chips
    this.chip = null;
    this.clock = null;
    this.pios = null;
    this.flashOp = null;
    this.cdc = null;
    this.waitingRead = null;
    // A timed press ends with the chip's clock; held buttons stay down across resets.
    for (const index of this.releaseAlarms.keys()) this.buttons.delete(index);
    this.releaseAlarms.clear();
    this.clearInput(); // a board that drops off USB never reads what was in flight
  }

  // -- USB CDC --------------------------------------------------------------------------------

  attachUSB(chip) {
    const cdc = new USBCDC(chip.usbCtrl);
    cdc.onDeviceConnected = () => {
      this.startFrames(chip);
      this.emit({ event: 'usb', ...this.stamp() });
    };
    cdc.onSerialData = (bytes) => {
      this.traced('usb_in', bytes); // a packet the device sent has reached the host
      this.onSerial(bytes);
    };
    // DTR and RTS follow whether a host has the port open (setHostOpen), not always on.
    const setLineState = cdc.cdcSetControlLineState.bind(cdc);
    cdc.cdcSetControlLineState = () => setLineState(this.hostOpen ? CDC_DTR | CDC_RTS : 0);
    const usb = chip.usbCtrl;
    const read = usb.onEndpointRead;
    // The host sends OUT data only when it has some: a read the device arms with nothing to
    // send waits (on the chip: NAKs) instead of ending at once with no bytes, which would have
    // the firmware re-arm it every 10 us and never sleep.
    usb.onEndpointRead = (endpoint, size) => {
      if (endpoint === cdc.outEndpoint && !this.input.length && cdc.txFIFO.empty) {
        this.waitingRead = () => read(endpoint, size);
        return;
      }
      this.feed(cdc);
      read(endpoint, size);
    };
    this.cdc = cdc;
  }

  /**
   * The host's start-of-frame every millisecond. rp2040js emulates SOF only in host mode; a
   * device needs it too: MicroPython sends what it printed before the host opened the port
   * (the banner) 16 frames after DTR rises, and tinyusb keeps bulk IN alive with it. The
   * device-mode SOF interrupt (INTR bit 17) is cleared by reading SOF_RD, as on the chip.
   */
  startFrames(chip) {
    const usb = chip.usbCtrl;
    const read = usb.readUint32.bind(usb);
    usb.readUint32 = (offset) => {
      if (offset === USB_SOF_RD && usb.intRaw & USB_INTR_DEV_SOF) {
        usb.intRaw &= ~USB_INTR_DEV_SOF;
        usb.checkInterrupts();
      }
      return read(offset);
    };
    const frame = chip.clock.createAlarm(() => {
      usb.sofFrameNumber = (usb.sofFrameNumber + 1) & 0x7ff;
      usb.intRaw |= USB_INTR_DEV_SOF;
      usb.checkInterrupts();
      frame.schedule(USB_FRAME_NANOS);
    });
    frame.schedule(USB_FRAME_NANOS);
  }

  /** A host opened (true) or closed (false) the serial port: DTR and RTS go up or down. */
  setHostOpen(open) {
    if (open === this.hostOpen) return;
    this.hostOpen = open;
    if (this.cdc?.initialized) this.cdc.cdcSetControlLineState();
  }

  /** Queues host bytes for the board; returns false when the caller should pause reading. */
  write(bytes) {
    if (!this.chip) return true; // nobody on the other end of the cable
    this.traced('usb_out', bytes); // the host's bytes are at the device's port
    this.input.push(bytes);
    this.inputBytes += bytes.length;
    const waiting = this.waitingRead;
    if (waiting) {
      this.waitingRead = null;
      this.feed(this.cdc);
      waiting();
    }
    return this.inputBytes < INPUT_LIMIT;
  }

  feed(cdc) {
    const fifo = cdc.txFIFO;
    while (this.input.length && !fifo.full) {
      const head = this.input[0];
      const room = fifo.size - fifo.itemCount;
      const take = Math.min(room, head.length);
      for (let i = 0; i < take; i++) fifo.push(head[i]);
      this.inputBytes -= take;
      if (take === head.length) this.input.shift();
      else this.input[0] = head.subarray(take);
    }
    if (this.inputBytes < INPUT_LIMIT / 2) this.onInputSpace?.();
  }

  clearInput() {
    this.input = [];
    this.inputBytes = 0;
    this.onInputSpace?.();
  }

  // -- PIO on the emulated clock ---------------------------------------------------------------

  /**
   * rp2040js steps its PIO state machines from a wall-clock timer, one instruction a step,
   * whatever their clock dividers and delay cycles. Here the run loop steps them as the CPU's
   * cycles pass instead: each enabled machine runs one cycle per clock-divider period, an
   * instruction's delay cycles are idle cycles after it, and a machine stalled on an empty TX
   * FIFO waits for data. So what a PIO program puts on a pin has its real timing.
   */
  attachPio(chip) {
    this.pios = chip.pio;
    for (const pio of chip.pio) {
      pio.run = () => {}; // started by a CTRL write: stepped by advancePio, not a timer
      for (const machine of pio.machines) {
        machine.fraction = 0; // clk_sys cycles (x256) towards the machine's next cycle
        machine.delayLeft = 0;
      }
    }
  }

  get pioRunning() {
    const pios = this.pios;
    return pios !== null && (!pios[0].stopped || !pios[1].stopped);
  }

  /** Whether a state machine has work to do that no CPU instruction has to start. */
  pioBusy() {
    for (const pio of this.pios) {
      if (pio.stopped) continue;
      for (const machine of pio.machines) {
        if (machine.enabled && (!machine.waiting || !machine.txFIFO.empty)) return true;
      }
    }
    return false;
  }

  /**
   * Runs the enabled state machines through the `cycles` clk_sys cycles that just passed; a pin
   * a step changes is logged at the step's own time.
   */
  advancePio(cycles) {
    const end = this.nanos;
    for (const pio of this.pios) {
      if (pio.stopped) continue;
      for (const machine of pio.machines) {
        if (!machine.enabled) continue;
        const divider = (machine.clockDivInt || 65536) * 256 + machine.clockDivFrac;
        machine.fraction += cycles * 256;
        while (machine.fraction >= divider) {
          machine.fraction -= divider;
          if (machine.delayLeft > 0) {
            machine.delayLeft -= 1;
            continue;
          }
          const before = machine.cycles;
          this.stampNanos = end - (machine.fraction / 256) * NANOS_PER_CYCLE;
          machine.step();
          pio.checkChangedPins();
          machine.delayLeft = Math.max(0, machine.cycles - before - 1);
        }
      }
    }
    this.stampNanos = null;
  }

  // -- the trace ----------------------------------------------------------------------------

  /**
   * Starts (a fresh) trace or stops it. `probes` maps names to firmware addresses (from the
   * image's ELF): each time the core starts executing one, the trace gets its name. A name
   * ending in '+' also records the call's arguments and return address there: r0-r3 and lr,
   * 20 bytes little-endian (what a function's entry sees in them, by the ARM calling convention).
   */
  setTrace(on, probes = {}) {
    this.trace = on ? [] : null;
    this.probes = null;
    if (on && Object.keys(probes).length) {
      this.probes = new Map(Object.entries(probes).map(([name, at]) => [at & ~1, name]));
    }
  }

  /**
   * Starts (a fresh) profile or stops it: the cycles the core spends at each instruction
   * address (time asleep is not counted), for a profile by function with the image's ELF.
   */
  setProfile(on) {
    this.profile = on ? new Map() : null;
  }

  /** The profile so far: [[address, cycles], ...]. */
  profileOf() {
    return this.profile === null ? [] : [...this.profile.entries()];
  }

  traced(what, bytes = null) {
    const trace = this.trace;
    if (trace === null || trace.length >= TRACE_LIMIT) return;
    const entry = [Math.round(this.nanos), what];
    if (bytes !== null) entry.push(Buffer.from(bytes).toString('latin1'));
    trace.push(entry);
  }

  /** Trace entries from index `since`: [nanos, what, data?] and the next index. */
  traceOf(since = 0) {
    const trace = this.trace ?? [];
    return { entries: trace.slice(since), next: trace.length };
  }

  // -- pins -----------------------------------------------------------------------------------

  attachPins(chip) {
    for (const pin of chip.gpio) {
      pin.addListener(() => this.settle(pin));
      this.settle(pin);
    }
    for (const [index, log] of this.edges) {
      chip.gpio[index].addListener((state) => {
        if (state !== GPIOPinState.High && state !== GPIOPinState.Low) return;
        if (log.nanos.length >= EDGE_LIMIT) {
          const drop = EDGE_LIMIT / 2;
          log.nanos.splice(0, drop);
          log.levels.splice(0, drop);
          log.base += drop;
        }
        log.nanos.push(this.stampNanos ?? this.nanos);
        log.levels.push(state === GPIOPinState.High ? 1 : 0);
      });
    }
  }

  /**
   * The level at a pin's pad: a pressed button shorts it to ground; otherwise it is what the
   * pin drives, else its pull-up or pull-down, else it keeps its last level (floating).
   */
  settle(pin) {
    let level = pin.rawInputValue;
    const driven = this.buttons.get(pin.index);
    if (driven !== undefined) level = driven;
    else if (pin.outputEnable) level = pin.outputValue;
    else if (pin.pullupEnabled && !pin.pulldownEnabled) level = true;
    else if (pin.pulldownEnabled && !pin.pullupEnabled) level = false;
    if (level !== pin.rawInputValue) pin.setInputValue(level);
  }

  /** A button from `pin` to ground goes down (for `millis` emulated ms, if given). */
  press(index, millis = null) {
    this.checkPin(index);
    this.traced('press', [index]);
    this.buttons.set(index, false);
    this.cancelRelease(index);
    if (this.chip) this.settle(this.chip.gpio[index]);
    if (millis !== null) this.releaseAfter(index, millis);
  }

  release(index) {
    this.checkPin(index);
    this.buttons.delete(index);
    this.cancelRelease(index);
    if (this.chip) this.settle(this.chip.gpio[index]);
  }

  releaseAfter(index, millis) {
    if (!this.chip) throw new Error('the board is off');
    const alarm = this.clock.createAlarm(() => {
      this.releaseAlarms.delete(index);
      this.release(index);
    });
    alarm.schedule(millis * 1e6);
    this.releaseAlarms.set(index, alarm);
  }

  cancelRelease(index) {
    const alarm = this.releaseAlarms.get(index);
    if (alarm) alarm.cancel();
    this.releaseAlarms.delete(index);
  }

  checkPin(index) {
    if (!Number.isInteger(index) || index < 0 || index > 29) throw new Error(`no GPIO ${index}`);
  }

  pinInfo(index) {
    this.checkPin(index);
    const pressed = this.buttons.get(index) === false;
    if (!this.chip) return { pin: index, pressed };
    const pin = this.chip.gpio[index];
    return {
      pin: index,
      pressed,
      level: pin.rawInputValue ? 1 : 0,
      output: pin.outputEnable,
      pull_up: pin.pullupEnabled,
      pull_down: pin.pulldownEnabled,
      function: pin.functionSelect,
    };
  }

  /** Edges of a logged pin from absolute index `since`: [nanos, level] pairs and the next index. */
  edgesOf(index, since = 0, clear = false) {
    const log = this.edges.get(index);
    if (!log) throw new Error(`GPIO ${index} is not logged (see --edge-pin)`);
    const from = Math.max(0, since - log.base);
    const edges = [];
    for (let i = from; i < log.nanos.length; i++) {
      edges.push([Math.round(log.nanos[i]), log.levels[i]]);
    }
    const next = log.base + log.nanos.length;
    if (clear) {
      log.base = next;
      log.nanos = [];
      log.levels = [];
    }
    return { pin: index, first: log.base, next, edges };
  }

  // -- stopping -------------------------------------------------------------------------------

  /** Runs on until `cycle` and halts there (or cuts the power there, with cut). */
  stopAt(cycle, cut = false) {
    if (!this.chip) throw new Error('the board is off');
    const nanos = cycle * NANOS_PER_CYCLE;
    if (nanos < this.nanos) throw new Error(`cycle ${cycle} is past (now ${this.cycles})`);
    this.stopAtNanos = nanos;
    this.stopReason = cut ? 'cut' : 'cycle';
    if (this.state === 'halted') this.resume();
  }

  halt(reason) {
    this.stopTimer();
    this.state = 'halted';
    const op = this.describeFlashOp();
    this.emit({ event: 'halted', reason, flash_op: op, ...this.stamp() });
  }

  resume() {
    if (this.state !== 'halted') return;
    this.state = 'running';
    this.schedule();
  }

  // -- the run loop ---------------------------------------------------------------------------

  /** Starts running slices (after power-on or a halt), pacing from now. */
  schedule() {
    if (this.timer !== null || this.state !== 'running') return;
    this.wallAnchor = performance.now();
    this.emuAnchor = this.nanos;
    this.runNext();
  }

  /** The next slice: at once (after pending I/O) or in `delay` ms. */
  runNext(delay = 0) {
    this.stopTimer();
    const run = () => {
      this.timer = null;
      this.slice();
    };
    this.timer = delay > 0 ? { timeout: setTimeout(run, delay) } : { immediate: setImmediate(run) };
  }

  stopTimer() {
    if (this.timer === null) return;
    if (this.timer.immediate) clearImmediate(this.timer.immediate);
    else clearTimeout(this.timer.timeout);
    this.timer = null;
  }

  /** Runs the chip for up to SLICE_MILLIS of wall time, then yields to I/O. */
  slice() {
    const wallStart = performance.now();
    let limit = Infinity; // chip-clock nanos this slice may reach
    if (this.pace > 0) {
      let allowed = this.emuAnchor + (wallStart - this.wallAnchor) * 1e6 * this.pace;
      if (allowed - this.nanos > MAX_LAG_NANOS) {
        // Behind (a busy CPU runs slower than real time): go on from here, do not sprint.
        this.emuAnchor = allowed = this.nanos + MAX_LAG_NANOS;
        this.wallAnchor = wallStart;
      }
      limit = Math.max(allowed, this.nanos) - this.baseNanos;
    }
    const stopLimit = this.stopAtNanos - this.baseNanos;
    const end = Math.min(limit, stopLimit);
    this.runUntil(end, wallStart);
    if (this.pendingReset) {
      this.watchdogReset(this.pendingReset);
      return;
    }
    if (this.state !== 'running' || !this.chip) return;
    if (this.clock.nanos >= stopLimit) {
      const reason = this.stopReason;
      this.stopAtNanos = Infinity;
      this.stopReason = null;
      if (reason === 'cut') this.powerCut();
      else this.halt('cycle');
      return;
    }
    if (this.clock.nanos >= limit) {
      // Ahead of the wall clock: sleep until it catches up.
      const emulatedMillis = (this.nanos - this.emuAnchor) / 1e6 / this.pace;
      this.runNext(Math.max(1, emulatedMillis - (performance.now() - this.wallAnchor)));
      return;
    }
    this.runNext();
  }

  /** Executes until the chip clock reaches `end`, a halt, a reset, or the slice's wall time. */
  runUntil(end, wallStart) {
    const { chip, clock } = this;
    const core = chip.core;
    const registers = core.registers;
    const erase = this.eraseAddress;
    const program = this.programAddress;
    for (;;) {
      for (let n = 0; n < CHECK_EVERY; n++) {
        if (clock.nanosCounter >= end || this.pendingReset) return;
        if (this.flashOp) {
          if (!this.stepFlashOp(end)) return;
          continue;
        }
        if (core.waiting || this.lockedUp) {
          let next = clock.nextAlarm ? Math.min(clock.nextAlarm.nanos, end) : end;
          const pio = this.pioRunning && this.pioBusy();
          if (pio) next = Math.min(next, clock.nanosCounter + PIO_STRIDE * NANOS_PER_CYCLE);
          if (next === Infinity) return; // asleep with nothing to wake it: wait for I/O
          const before = clock.nanosCounter;
          tickTo(clock, next);
          if (pio) this.advancePio(Math.round((clock.nanosCounter - before) / NANOS_PER_CYCLE));
          continue;
        }
        const pc = registers[15] & ~1;
        if (this.probes !== null) {
          const name = this.probes.get(pc);
          if (name !== undefined) {
            this.traced(name, name.endsWith('+') ? callRegisters(registers) : null);
          }
        }
        if (pc === erase || pc === program) {
          if (!this.startFlashOp(pc === erase ? 'erase' : 'program')) return;
          continue;
        }
        const cycles = core.executeInstruction();
        clock.tick(cycles * NANOS_PER_CYCLE);
        if (this.profile !== null) this.profile.set(pc, (this.profile.get(pc) ?? 0) + cycles);
        if (this.pioRunning) this.advancePio(cycles);
      }
      if (performance.now() - wallStart > SLICE_MILLIS) return;
    }
  }

  // -- flash operations -----------------------------------------------------------------------

  /** At the entry of flash_range_erase/program: starts the operation (false: halted first). */
  startFlashOp(kind) {
    const { chip } = this;
    const core = chip.core;
    const offset = core.registers[0] >>> 0;
    let data = null;
    let count;
    if (kind === 'erase') {
      count = core.registers[1] >>> 0;
    } else {
      const source = core.registers[1] >>> 0;
      count = core.registers[2] >>> 0;
      data = new Uint8Array(count);
      for (let i = 0; i < count; i++) data[i] = chip.readUint8(source + i);
    }
    if (offset + count > this.flash.size) {
      const where = `0x${offset.toString(16)}`;
      this.logger.error('flash', `${kind} of ${count} bytes at ${where} is outside flash`);
      count = Math.max(0, this.flash.size - offset);
    }
    this.flashOp = new FlashOperation(kind, offset, data, count, Math.ceil(this.clock.nanos));
    this.flashOps += 1;
    if (this.breakOn === kind || this.breakOn === 'any') {
      this.breakOn = null;
      this.halt('flash');
      return false;
    }
    return true;
  }

  /**
   * Advances the operation in progress (the CPU waits on it); false when the slice must end.
   * The state machines and the DMA feeding them run on meanwhile, as on the chip (only the CPU
   * waits for the flash): in strides while one is busy, as while the CPU sleeps. (Frozen, an LED
   * frame going out when a save began stopped part-way for the whole operation.)
   */
  stepFlashOp(end) {
    const op = this.flashOp;
    const { clock } = this;
    const target = Math.min(op.endNanos, end);
    while (clock.nanosCounter < target) {
      const pio = this.pioRunning && this.pioBusy();
      const next = pio ? Math.min(target, clock.nanosCounter + PIO_STRIDE * NANOS_PER_CYCLE) : target;
      const before = clock.nanosCounter;
      tickTo(clock, next);
      if (pio) this.advancePio(Math.round((clock.nanosCounter - before) / NANOS_PER_CYCLE));
    }
    op.advance(target, this.chip.flash, this.flash);
    if (target < op.endNanos) return false; // stopped part-way (end reached)
    this.flashOp = null;
    const core = this.chip.core;
    core.PC = core.LR & ~1; // return from the SDK function
    return true;
  }

  describeFlashOp() {
    return this.flashOp ? this.flashOp.describe(this.baseNanos, NANOS_PER_CYCLE) : null;
  }

  // -- reports --------------------------------------------------------------------------------

  stamp() {
    return { nanos: Math.round(this.nanos), cycles: this.cycles };
  }

  info() {
    return {
      state: this.state,
      boots: this.boots,
      flash_ops: this.flashOps,
      flash_file: this.flash.path,
      pace: this.pace,
      ...this.stamp(),
    };
  }
}
