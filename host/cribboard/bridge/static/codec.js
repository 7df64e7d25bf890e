// The board's line protocol in JavaScript, for the Web Bluetooth mode (docs/protocol.md).
// A port of the host half of firmware/cribcore/protocol.py (encode_request, decode_line,
// decode_state, decode_frame). The constants come from /protocol.json, generated from that
// module; tests/test_bridge_browser.py runs the Python codec's vectors through this one.

export function makeCodec(P) {
  const verbs = new Set(P.verbs);
  const ID = /^[0-9A-Za-z]+$/;
  const INT = /^[+-]?[0-9]+$/;

  // ifRev: applied only while the board's revision is that (protocol 1.3), else `stale`.
  function encodeRequest(verb, args = [], requestId = null, ifRev = null) {
    const parts = [];
    if (requestId !== null && requestId !== undefined) {
      const id = String(requestId);
      if (!id || id.length > P.max_id || !ID.test(id)) throw new Error("bad request id");
      parts.push("#" + id);
    }
    if (ifRev !== null && ifRev !== undefined) {
      if (!Number.isInteger(ifRev) || ifRev < 0 || String(ifRev).length > P.rev_digits) {
        throw new Error("bad revision: " + JSON.stringify(ifRev));
      }
      parts.push("@" + ifRev);
    }
    if (!verbs.has(verb)) throw new Error("unknown verb: " + verb);
    parts.push(verb);
    for (const arg of args) {
      const text = String(arg);
      if (!text || text.includes(" ")) throw new Error("bad argument: " + JSON.stringify(arg));
      parts.push(text);
    }
    const line = parts.join(" ") + "\n";
    if (new TextEncoder().encode(line).length > P.max_line) {
      throw new Error("request longer than " + P.max_line + " bytes");
    }
    for (let i = 0; i < line.length - 1; i++) {
      const c = line.charCodeAt(i);
      if (c < 32 || c > 126) throw new Error("requests are printable ASCII");
    }
    return line;
  }

  function fields(words) {
    const out = {};
    for (const word of words) {
      const eq = word.indexOf("=");
      if (eq > 0) out[word.slice(0, eq)] = word.slice(eq + 1);
    }
    return out; // words without '=' are ignored: unknown things are skipped, never fatal
  }

  function line(kind, requestId, name, f, code, text) {
    return { kind, requestId, name, fields: f, code, text };
  }

  // One line (text, with or without its newline) from a board: a reply or an event.
  function decodeLine(data) {
    const text = data.replace(/[\r\n]+$/, "");
    let words = text.split(" ");
    if (!words[0]) throw new Error("empty line");
    if (words[0] === "!") {
      if (words.length < 2 || !words[1]) throw new Error("event without a kind");
      return line("event", null, words[1], fields(words.slice(2)), "", "");
    }
    let requestId = null;
    if (words[0].startsWith("#")) {
      requestId = words[0].slice(1);
      words = words.slice(1);
      if (!words.length) throw new Error("reply without a status");
    }
    if (words[0] === "ok") return line("ok", requestId, "", fields(words.slice(1)), "", "");
    if (words[0] === "err") {
      if (words.length < 2) throw new Error("error without a code");
      return line("err", requestId, "", {}, words[1], words.slice(2).join(" "));
    }
    throw new Error("not a reply or event: " + text);
  }

  function toInt(text) {
    if (!INT.test(text)) throw new Error("not a number: " + text);
    return parseInt(text, 10);
  }

  // State fields with readable names; absent keys stay absent (a partial update).
  function decodeState(f) {
    const state = {};
    for (const [key, value] of Object.entries(f)) {
      const name = P.state_keys[key];
      if (name === undefined) continue; // a newer board's field
      state[name] = P.list_keys.includes(key)
        ? (value ? value.split(",").map(toInt) : [])
        : toInt(value);
    }
    return state;
  }

  // The 'rgb' field of a frame reply: 3 bytes per hole, in hole order.
  function decodeFrame(hex) {
    if (hex.length % 6) throw new Error("frame length is not whole RGB triples");
    if (!/^[0-9a-fA-F]*$/.test(hex)) throw new Error("frame is not hex");
    const out = new Uint8Array(hex.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(2 * i, 2), 16);
    return out;
  }

  // The match as the bridge's JSON gives it (cribboard.api.Match.to_json), or null.
  function matchJson(s) {
    if (!s.match) return null;
    const kind = P.match_kinds[s.match_kind] || "?";
    const needed = kind === "first_to" ? s.match : Math.floor(s.match / 2) + 1;
    const winner = s.games.findIndex((g) => g >= needed);
    return {
      kind, length: s.match, game: s.match_game, number: s.match_number, needed,
      winner: winner < 0 ? null : winner,
    };
  }

  // The state as the bridge's JSON gives it (cribboard.api.BoardState.to_json).
  function stateJson(s) {
    return {
      rev: s.rev, target: s.target, players: s.players, dealer: s.dealer,
      winner: s.winner < 0 ? null : s.winner, result: P.result_names[s.result],
      front: s.front, back: s.back, games: s.games, pending: s.pending, undo: s.undo,
      skunk_double: Boolean(s.skunk_double),
      game: s.game === undefined ? null : s.game, match: matchJson(s),
    };
  }

  // nusService: the Bluetooth LE service the board offers (the Nordic UART Service).
  return {
    major: P.major, nusService: P.nus.service,
    encodeRequest, decodeLine, decodeState, decodeFrame, stateJson,
  };
}
