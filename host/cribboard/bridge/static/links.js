// The page's ways to a board, with one interface:
//   BridgeLink: the bridge's HTTP API and WebSocket (cribboard serve).
//   BleLink: a board straight over Web Bluetooth (Nordic UART Service), speaking the line
//            protocol with codec.js; no bridge needed (Chrome on Android, desktop Chrome).
//   BoardSocketLink (boardsocket.js): the board's own WebSocket, on the page the board serves.
// The last two speak the protocol through LineLink: requests with ids, replies, events.
// Both emit: "boards" {boards}, "state" {board, state}, "frame" {board, rgb (hex)},
// "button" {board, name, action}, "cfg" {...}, "status" {text, values, live}: the status is a
// sentence marked for the catalog (N_) and its values, translated where it is shown.

import { N_, _ } from "./i18n.js";

class Emitter {
  constructor() { this.handlers = {}; }
  on(type, fn) { (this.handlers[type] ||= []).push(fn); return this; }
  emit(type, data) { for (const fn of this.handlers[type] || []) fn(data); }
}

export class BridgeLink extends Emitter {
  constructor(base = "") {
    super();
    this.base = base;
    this.board = null; // the board id the controls act on
    this.closed = false;
    this.retry = 250;
    this.heard = new Set(); // "state:b1", "frame:b1": what the WebSocket has sent
  }

  async start() {
    const boards = await this.get("api/boards");
    this.emit("boards", boards);
    this.connect();
    await this.fetchBoard();
    return boards;
  }

  // The board as it is now, over HTTP: drawn while the WebSocket connects, so the page never
  // shows an empty board. Whatever the WebSocket sends is newer, and wins.
  async fetchBoard() {
    const board = this.board;
    if (!board) return;
    const base = `api/boards/${encodeURIComponent(board)}/`;
    try {
      const [state, frame] = await Promise.all([this.get(base + "state"), this.get(base + "frame")]);
      if (this.heard.has("state:" + board)) return;
      this.emit("state", { type: "state", board, state });
      if (!this.heard.has("frame:" + board)) this.emit("frame", { type: "frame", board, ...frame });
    } catch { /* not connected yet: the WebSocket brings it */ }
  }

  async get(path) {
    const r = await fetch(this.base + path, { credentials: "same-origin" });
    if (!r.ok) throw new Error((await r.json().catch(() => ({}))).message || r.statusText);
    return r.json();
  }

  async call(op, body = {}) {
    const where = this.board ? `api/boards/${encodeURIComponent(this.board)}/${op}` : `api/${op}`;
    const r = await fetch(this.base + where, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    const reply = await r.json().catch(() => ({ message: r.statusText }));
    if (!r.ok) throw Object.assign(new Error(reply.message || reply.error || r.statusText),
                                   { code: reply.error });
    return reply;
  }

  peg(player, points) { return this.call("peg", { player, points }); }
  undo() { return this.call("undo"); }
  newGame(target, players) { return this.call("new", { target, players }); }
  deal() { return this.call("dealer"); }
  // kind: "best_of" or "first_to" (protocol 1.4)
  startMatch(kind, length, skunkDouble) {
    return this.call("match", { [kind]: length, skunk_double: skunkDouble });
  }
  endMatch() { return this.call("match", { end: true }); }

  connect() {
    const url = new URL(this.base + "api/ws?frames=1", location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => { this.retry = 250; this.emit("status", { text: N_("live"), live: true }); };
    ws.onmessage = (e) => {
      const m = JSON.parse(e.data);
      if (m.board) this.heard.add(`${m.type}:${m.board}`);
      if (m.type === "link") {
        this.emit("status", { text: m.state === "back" ? N_("live") : N_("board lost: reconnecting"),
                              live: m.state === "back" });
      }
      this.emit(m.type, m);
    };
    ws.onclose = () => {
      if (this.closed) return;
      this.emit("status", { text: N_("bridge lost: reconnecting"), live: false });
      setTimeout(() => this.connect(), this.retry);
      this.retry = Math.min(this.retry * 2, 4000);
    };
  }

  close() { this.closed = true; if (this.ws) this.ws.close(); }
}

// Nordic UART Service (its UUID comes with the codec, from /protocol.json). The board notifies on
// one characteristic and the central writes to the other; which is which is found by their
// properties (names differ between sources).
const PACKET = 20; // bytes per write at BLE's default ATT MTU (23)
// A request fails when the board has said nothing for this long since the request went out: a
// long reply (hello, frame) comes in many 20-byte notifications and may take longer than this
// in all, on a slow link or a busy phone, yet every notification shows the board answering.
const SILENCE_MS = 3000;
const FRAME_POLL_MS = 500; // frame refresh while the board animates

// The line protocol over any link that carries bytes: a subclass writes lines (write) and
// hands what arrives to received(); requests get ids, replies are matched to them, events keep
// the state (emitted as the bridge's are) and the frame follows the state.
export class LineLink extends Emitter {
  constructor(codec, board) {
    super();
    this.codec = codec;
    this.board = board;
    this.buffer = "";
    this.pending = new Map();
    this.nextId = Math.floor(Math.random() * 36 ** 4);
    this.fields = {};
    this.frameBusy = false;
    this.frameAgain = false;
  }

  // The clock of a request starts once its line is written (not while it waits behind other
  // writes) and starts again at every line the board sends (see SILENCE_MS).
  request(verb, ...args) {
    this.nextId = (this.nextId + 1) % 36 ** 6;
    const id = this.nextId.toString(36);
    const line = this.codec.encodeRequest(verb, args, id);
    return new Promise((resolve, reject) => {
      const waiting = { timer: null, armed: false, line, verb };
      waiting.expire = () => this.silent(id, waiting);
      waiting.fail = (err) => { clearTimeout(waiting.timer); reject(err); };
      waiting.done = (reply) => {
        clearTimeout(waiting.timer);
        if (reply.kind === "err") {
          reject(Object.assign(new Error(`${reply.text} (${reply.code})`), { code: reply.code }));
        }
        else resolve(reply);
      };
      this.pending.set(id, waiting);
      this.write(line).then(
        () => { if (this.pending.get(id) === waiting) { waiting.armed = true; this.rearm(waiting); } },
        (err) => { this.pending.delete(id); reject(err); });
    });
  }

  // No word from the board for SILENCE_MS since the request went out.
  silent(id, waiting) {
    this.pending.delete(id);
    waiting.fail(new Error(_("no reply to %(verb)s from the board", { verb: waiting.verb })));
  }

  rearm(waiting) {
    clearTimeout(waiting.timer);
    waiting.timer = setTimeout(waiting.expire, SILENCE_MS);
  }

  received(text) {
    for (const waiting of this.pending.values()) if (waiting.armed) this.rearm(waiting);
    this.buffer += text;
    let end;
    while ((end = this.buffer.indexOf("\n")) >= 0) {
      const text = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 1);
      let line;
      try { line = this.codec.decodeLine(text); } catch { continue; } // not protocol: skip
      if (line.kind === "event") this.onEvent(line);
      else if (line.requestId !== null && this.pending.has(line.requestId)) {
        const waiting = this.pending.get(line.requestId);
        this.pending.delete(line.requestId);
        waiting.done(line);
      }
    }
  }

  onEvent(line) {
    const f = line.fields;
    const board = this.board;
    if (line.name === "st") this.onState(f);
    else if (line.name === "cfg") { this.emit("cfg", { board, bright: +f.bright, budget: +f.budget }); this.refreshFrame(); }
    else if (line.name === "btn") this.emit("button", { board, name: f.n, action: f.a });
    else if (line.name === "hello") { this.fields = {}; this.request("st").then((r) => this.onState(r.fields), () => {}); }
  }

  onState(f) {
    if (this.fields.r !== undefined && f.r !== undefined && +f.r < +this.fields.r) return;
    this.fields = { ...this.fields, ...f };
    try {
      const state = this.codec.stateJson(this.codec.decodeState(this.fields));
      this.state = state;
      this.emit("state", { board: this.board, state });
    } catch { /* partial state: wait for more */ }
    this.refreshFrame();
  }

  async refreshFrame() {
    if (this.frameBusy) { this.frameAgain = true; return; }
    this.frameBusy = true;
    try {
      do {
        this.frameAgain = false;
        const f = (await this.request("frame")).fields;
        this.emit("frame", { board: this.board, rgb: f.rgb, scale: +f.scale, milliamps: +f.ma });
        const s = this.state;
        if (s && (s.winner !== null || s.pending.some((p) => p > 0)) && !this.frameAgain) {
          await new Promise((r) => setTimeout(r, FRAME_POLL_MS));
          this.frameAgain = true;
        }
      } while (this.frameAgain);
    } catch { /* the link is gone; the status says so */ }
    this.frameBusy = false;
  }

  // The hello, checked: the board's protocol must have this page's major version.
  async checkHello() {
    const hello = (await this.request("hello")).fields;
    const major = parseInt((hello.proto || "").split(".")[0], 10);
    if (major !== this.codec.major) {
      throw new Error(_("the board speaks protocol %(board)s; this page speaks %(page)s.x",
                        { board: hello.proto, page: this.codec.major }));
    }
    this.hello = hello;
    return hello;
  }

  async peg(player, points) { return this.request("peg", player, points); }
  async undo() { return this.request("undo"); }
  async newGame(target, players) { return this.request("new", target, players); }
  async deal() { return this.request("deal"); }
  async startMatch(kind, length, skunkDouble) {
    await this.request("match", kind === "first_to" ? "first" : "best", length);
    return this.request("games", "x2", skunkDouble ? 1 : 0);
  }
  async endMatch() { return this.request("match", "clear"); }
}

export class BleLink extends LineLink {
  constructor(codec, bluetooth = navigator.bluetooth) {
    super(codec, "ble");
    this.bluetooth = bluetooth;
    this.writing = Promise.resolve();
  }

  async start() {
    const nus = this.codec.nusService;
    this.device = await this.bluetooth.requestDevice({
      filters: [{ services: [nus] }], optionalServices: [nus],
    });
    this.device.addEventListener("gattserverdisconnected", () =>
      this.emit("status", { text: N_("Bluetooth link lost"), live: false }));
    const server = await this.device.gatt.connect();
    const service = await server.getPrimaryService(nus);
    const chars = await service.getCharacteristics();
    this.rx = chars.find((c) => c.properties.write || c.properties.writeWithoutResponse);
    this.tx = chars.find((c) => c.properties.notify);
    if (!this.rx || !this.tx) throw new Error(_("not a cribboard: no UART characteristics"));
    const decoder = new TextDecoder();
    this.tx.addEventListener("characteristicvaluechanged",
                             (e) => this.received(decoder.decode(e.target.value)));
    await this.tx.startNotifications();
    await this.write("\n"); // end whatever partial line an earlier host left
    const hello = await this.checkHello();
    const name = this.device.name || "board";
    const boards = { boards: [{ id: "ble", port: "Bluetooth: " + name, kind: "ble", connected: true,
                                board: hello.board, firmware: hello.fw, protocol: hello.proto }] };
    this.emit("boards", boards);
    this.emit("status", { text: N_("Bluetooth: %(name)s"), values: { name }, live: true });
    this.onState((await this.request("st")).fields);
    return boards;
  }

  write(text) {
    const bytes = new TextEncoder().encode(text);
    const rx = this.rx;
    const send = async () => {
      for (let i = 0; i < bytes.length; i += PACKET) {
        const chunk = bytes.slice(i, i + PACKET);
        if (rx.properties.writeWithoutResponse && rx.writeValueWithoutResponse) {
          await rx.writeValueWithoutResponse(chunk);
        } else if (rx.writeValueWithResponse) {
          await rx.writeValueWithResponse(chunk);
        } else {
          await rx.writeValue(chunk);
        }
      }
    };
    // One line at a time: the packets of two requests must not interleave.
    this.writing = this.writing.then(send, send);
    return this.writing;
  }

  close() { if (this.device && this.device.gatt.connected) this.device.gatt.disconnect(); }
}
