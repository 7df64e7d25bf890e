// A small client for the cribboard bridge (`cribboard serve`, docs/bridge.md) using only what
// Node 18+ has built in: fetch for the JSON API, and a WebSocket for the board's events (Node 22
// has one; for older Node a minimal client on node:http is below). Browsers: use fetch and
// WebSocket directly.
import crypto from "node:crypto";
import http from "node:http";

export class Bridge {
  constructor(url = process.env.CRIBBOARD_URL || "http://127.0.0.1:8321",
              token = process.env.CRIBBOARD_TOKEN || "") {
    this.url = url.replace(/\/+$/, "");
    this.token = token;
    this.headers = token ? { Authorization: `Bearer ${token}` } : {};
  }

  async call(method, op, body) {
    const response = await fetch(`${this.url}/api/${op}`, {
      method, headers: { ...this.headers, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const reply = await response.json();
    if (!response.ok) throw new Error(`${reply.error}: ${reply.message}`);
    return reply;
  }

  state() { return this.call("GET", "state"); }
  frame() { return this.call("GET", "frame"); }
  peg(player, points) { return this.call("POST", "peg", { player, points }); }
  setPegs(player, front, back) { return this.call("POST", "set", { player, front, back }); }
  undo() { return this.call("POST", "undo"); }
  newGame(target, players) { return this.call("POST", "new", { target, players }); }
  setDealer(player) { return this.call("POST", "dealer", player === undefined ? {} : { player }); }

  // Calls onMessage(message) for every message the bridge pushes; resolves, once subscribed,
  // to a function that unsubscribes.
  // query: e.g. { board: "b2", frames: 1 }.
  async subscribe(onMessage, query = {}) {
    const u = new URL(`${this.url.replace(/^http/, "ws")}/api/ws`);
    for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
    if (this.token) u.searchParams.set("token", this.token);
    const url = u.toString();
    if (globalThis.WebSocket) {
      const ws = new WebSocket(url);
      ws.onmessage = (e) => onMessage(JSON.parse(e.data));
      await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
      return () => ws.close();
    }
    return openWebSocket(url, (text) => onMessage(JSON.parse(text)));
  }
}

// A minimal WebSocket client (RFC 6455) for Node without a global WebSocket: text messages in,
// nothing out but pong and close. Enough for the bridge, which only talks.
function openWebSocket(url, onText) {
  const key = crypto.randomBytes(16).toString("base64");
  const u = new URL(url.replace(/^ws/, "http"));
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: u.hostname, port: u.port, path: u.pathname + u.search,
      headers: { Connection: "Upgrade", Upgrade: "websocket",
                 "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": key },
    });
    request.on("response", (r) => reject(new Error(`WebSocket refused: HTTP ${r.statusCode}`)));
    request.on("error", reject);
    request.on("upgrade", (response, socket, head) => {
      const accept = crypto.createHash("sha1")
        .update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
      if (response.headers["sec-websocket-accept"] !== accept) {
        socket.destroy();
        reject(new Error("bad WebSocket handshake"));
        return;
      }
      const send = (opcode, payload = Buffer.alloc(0)) => { // client frames are masked
        const mask = crypto.randomBytes(4);
        const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]));
        socket.write(Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | payload.length]), mask, masked]));
      };
      let buffer = head;
      let parts = [];
      const parse = () => {
        while (buffer.length >= 2) {
          let length = buffer[1] & 0x7f;
          let offset = 2;
          if (length === 126) { if (buffer.length < 4) return; length = buffer.readUInt16BE(2); offset = 4; }
          if (length === 127) { if (buffer.length < 10) return; length = Number(buffer.readBigUInt64BE(2)); offset = 10; }
          if (buffer.length < offset + length) return;
          const fin = buffer[0] & 0x80, opcode = buffer[0] & 0x0f;
          const payload = buffer.subarray(offset, offset + length);
          buffer = buffer.subarray(offset + length);
          if (opcode === 1 || opcode === 0) { // text, continuation
            parts.push(payload);
            if (fin) { onText(Buffer.concat(parts).toString("utf8")); parts = []; }
          } else if (opcode === 9) send(10, payload); // ping -> pong
          else if (opcode === 8) { socket.end(); return; } // close
        }
      };
      socket.on("data", (data) => { buffer = Buffer.concat([buffer, data]); parse(); });
      parse();
      resolve(() => { send(8, Buffer.from([0x03, 0xe8])); socket.end(); });
    });
    request.end();
  });
}
