// The page's third way to a board: on the page a board with Wi-Fi serves itself, its WebSocket
// (ws://BOARD/ws) carries the board's own protocol lines (docs/protocol.md, "WebSocket"), as
// Web Bluetooth does, spoken through LineLink (links.js). No bridge and no app: any phone's
// browser, an iPhone's too.
//
// The page keeps a token (12 hex digits drawn once, in localStorage) and sends it with every
// socket: the board admits the token with a tap of its deal button and remembers it across
// reloads and power cuts, and a request resent on a new socket after one dropped is answered
// from the replies the board remembers for that token, never applied twice.

import { N_, _ } from "./i18n.js";
import { LineLink } from "./links.js";

const TOKEN_KEY = "cribboard.token";
const PING_MS = 10000; // something every 10 s: the board closes a socket silent for 30 s
const RETRY_MS = [250, 500, 1000, 2000, 4000];
const TRIES = 3; // a request unanswered on this many sockets in a row fails

// Whether this page came from a board (it answers link.json; the bridge does not).
export async function servedByBoard() {
  try {
    const r = await fetch("link.json", { credentials: "same-origin" });
    return r.ok && Boolean((await r.json()).socket);
  } catch {
    return false;
  }
}

function token() {
  let value = null;
  try { value = localStorage.getItem(TOKEN_KEY); } catch { /* private mode */ }
  if (!/^[0-9a-f]{12}$/.test(value || "")) {
    const bytes = crypto.getRandomValues(new Uint8Array(6));
    value = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
    try { localStorage.setItem(TOKEN_KEY, value); } catch { /* kept for this visit only */ }
  }
  return value;
}

export class BoardSocketLink extends LineLink {
  constructor(codec) {
    super(codec, "board");
    this.token = token();
    this.ws = null;
    this.open = false;
    this.closed = false;
    this.started = false;
    this.tries = 0; // sockets opened in a row without a reply
    this.pinger = null;
  }

  async start() {
    await this.connect();
    const hello = await this.checkHello();
    const boards = { boards: [{ id: "board", port: location.host, kind: "wifi", connected: true,
                                board: hello.board, firmware: hello.fw, protocol: hello.proto }] };
    this.emit("boards", boards);
    this.onState((await this.request("st")).fields);
    this.pinger = setInterval(() => {
      if (this.open && !this.pending.size) this.request("ping").catch(() => {});
    }, PING_MS);
    return boards;
  }

  // Open a socket; resolves once it is open (the first one rejects if it cannot open).
  connect() {
    return new Promise((resolve, reject) => {
      const url = new URL(`ws?t=${this.token}`, location.href);
      url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
      const ws = new WebSocket(url);
      const first = !this.started;
      this.started = true;
      this.ws = ws;
      let opened = false;
      ws.onopen = () => {
        opened = true;
        this.open = true;
        this.emit("status", { text: N_("live"), live: true });
        // What got no reply on the socket that dropped goes again, with the same id: the board
        // answers it from memory if it was applied.
        for (const waiting of this.pending.values()) {
          ws.send(waiting.line);
          if (waiting.armed) this.rearm(waiting);
        }
        // A new socket resynchronises (docs/protocol.md, section 7): the board may have
        // restarted meanwhile, its revisions counting from 0 again.
        if (!first) this.request("st").then((r) => { this.fields = {}; this.onState(r.fields); }, () => {});
        resolve();
      };
      ws.onmessage = (e) => { if (this.ws === ws) { this.tries = 0; this.received(String(e.data)); } };
      ws.onclose = (e) => {
        if (first && !opened) {
          this.ws = null;
          reject(new Error(_("the board's page socket did not open")));
        } else if (this.ws === ws) this.dropped(e.code);
      };
    });
  }

  // The socket is gone: what waits for a reply waits for the next one, which opens after a
  // pause that grows with each socket lost in a row.
  dropped(code) {
    this.ws = null;
    this.open = false;
    this.buffer = "";
    for (const waiting of this.pending.values()) clearTimeout(waiting.timer);
    if (this.closed) return;
    this.emit("status", { text: code === 1013 ? N_("the board is busy: reconnecting")
                                              : N_("board lost: reconnecting"), live: false });
    const wait = RETRY_MS[Math.min(this.tries, RETRY_MS.length - 1)];
    this.tries += 1;
    for (const [id, waiting] of this.pending) {
      waiting.sockets = (waiting.sockets || 0) + 1;
      if (waiting.sockets >= TRIES) {
        this.pending.delete(id);
        waiting.fail(new Error(_("no reply to %(verb)s from the board", { verb: waiting.verb })));
      }
    }
    setTimeout(() => this.connect().catch(() => {}), wait);
  }

  write(line) {
    if (this.open) this.ws.send(line); // else it goes when the next socket opens
    return Promise.resolve();
  }

  // No word for SILENCE_MS: the socket is taken for dead (Wi-Fi gone without a close), and a
  // new one resends what is waiting.
  silent(id, waiting) {
    const ws = this.ws;
    if (!ws || !this.open) { super.silent(id, waiting); return; }
    this.dropped(0);
    ws.close();
  }

  close() {
    this.closed = true;
    clearInterval(this.pinger);
    if (this.ws) this.ws.close();
  }
}
