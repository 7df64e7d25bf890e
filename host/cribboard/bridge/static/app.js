// The cribboard page: the board mirrored live, per-player controls. Through the bridge when the
// page comes from one (cribboard serve), or straight to a board over Web Bluetooth. It speaks
// the browser's language, or the one chosen in its menu (i18n.js), and changes its words
// without touching the board.

import { makeCodec } from "./codec.js";
import { BoardView, screenColor } from "../board/board.js";
import { BleLink, BridgeLink } from "./links.js";
import { BoardSocketLink, servedByBoard } from "./boardsocket.js";
import { N_, _, language, languageNames, n_, onLanguage, setLanguage, startLanguage } from "./i18n.js";

const $ = (selector) => document.querySelector(selector);
const params = new URLSearchParams(location.search);
const QUICK_POINTS = [1, 2, 3, 4, 5, 6];
const RESULTS = {
  // Translators: the badge on the winner's card.
  won: N_("wins"),
  skunk: N_("wins, skunk"),
  double_skunk: N_("wins, double skunk"),
};

// The table's line when a game is won, by how it was won.
const WON_LINES = {
  won: N_("%(winner)s wins the game. Press New game to play another."),
  skunk: N_("%(winner)s wins with a skunk. Press New game to play another."),
  double_skunk: N_("%(winner)s wins with a double skunk. Press New game to play another."),
};

// The words written in index.html, by element: its text, or one of its attributes.
const PAGE_TEXT = [
  ["#ble", "title", N_("Drive a board over Bluetooth, without the bridge")],
  ["#board-select", "aria-label", N_("board")],
  ["#lang-select", "aria-label", N_("language")],
  ["#board", "aria-label", N_("the board's LEDs")],
  ["#legend", "aria-label", N_("what the lights mean")],
  [".game", "aria-label", N_("game")],
  ["#undo", "text", N_("Undo")],
  ["#deal", "text", N_("Pass deal")],
  ["#target", "aria-label", N_("game length")],
  ["#player-count", "aria-label", N_("players")],
  ["#new", "text", N_("New game")],
  ["#match-form", "aria-label", N_("match")],
  ["#match-skunks-text", "text", N_("a skunk wins two")],
  ["#match-start", "text", N_("Start match")],
  ["#match-end", "text", N_("End match")],
  ["#large-text", "text", N_("Large text")],
  ["#legend-title", "text", N_("What the lights mean")],
];
const LARGE_TEXT_KEY = "cribboard.large-text"; // the large-text mode, remembered in this browser

let layout, limits, codec, view, link;
let records = null; // the record's parts of the page (records.js), with a bridge only
const names = {}; // the players' names of each board's game, one a seat (from the record)
let current = params.get("board");
let statusShown = { text: N_("connecting…"), values: {}, live: false };
let boardsShown = [];
const states = {};
const frames = {};
const deals = {};
const logLines = [];
let announced = null; // the scores the live region last said, by board

// The scores as a sentence for people who cannot see the LEDs ("orange 82, blue 34"): the
// players whose score changed first, then the others; the winner said last.
function scoresSentence(state, changed = []) {
  const order = [...changed, ...state.front.map((_f, p) => p).filter((p) => !changed.includes(p))];
  const scores = order.map((p) => _("%(player)s %(score)d", { player: playerName(p), score: state.front[p] }));
  let text = scores.join(", ");
  if (state.winner !== null) {
    text += ". " + _("%(winner)s %(result)s", { winner: playerName(state.winner), result: result(state) });
  }
  return text;
}

// The board's picture, said in words: each player's pegs and lap (a text alternative).
function describeBoard(state) {
  const pegs = state.front.map((front, p) => {
    const { lap, laps } = lapsOf({ front, players: state.players, target: state.target });
    return _("%(player)s %(score)d, back peg %(back)d, lap %(lap)d of %(laps)d",
             { player: playerName(p), score: front, back: state.back[p], lap, laps });
  });
  return _("The board: %(pegs)s", { pegs: pegs.join("; ") });
}

// Say a change of score in the live region (not the first state a board shows: nothing moved).
function announce(id, state) {
  const seen = announced && announced.id === id ? announced.front : null;
  announced = { id, front: [...state.front], winner: state.winner };
  if (!seen || seen.length !== state.front.length) return;
  const changed = state.front.map((_f, p) => p).filter((p) => state.front[p] !== seen[p]);
  if (!changed.length) return;
  $("#announce").textContent = scoresSentence(state, changed);
}

// A player's colour as people read it (the catalog's "blue", "orange", "purple").
const playerName = (p) => _(layout.players[p].name);

// A player's card title: the names of the side's seats in the record (partners with &) and
// the colour, or the colour alone.
function cardTitle(p, count) {
  const named = (names[current] || []).filter((name, seat) => name && seat % count === p);
  return named.length ? _("%(names)s (%(colour)s)", { names: named.join(" & "), colour: playerName(p) })
                      : playerName(p);
}

async function fetchJson(path) {
  const r = await fetch(path, { credentials: "same-origin" });
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return r.json();
}

// The status line: a marked sentence and its values, translated each time it is shown.
function status(text, live, values = {}) {
  statusShown = { text, values, live };
  const node = $("#status");
  node.textContent = _(text, values);
  node.classList.toggle("live", Boolean(live));
}

// The bridge put back what a power cut took (its `restored` message): the same words as the
// host's (cribboard/watchwords.py, restored_line).
function restoredLine(fields) {
  if (fields.unknown) return _("the board came back at a game this program never saw: check the score");
  const lost = Number(fields.lost) || 0;
  const back = Number(fields.back) || 0;
  if (back === lost) {
    return n_("the board came back from a power cut without %(count)d change made here: put back",
      "the board came back from a power cut without %(count)d changes made here: put back",
      lost);
  }
  return n_("the board came back from a power cut without %(count)d change made here: %(back)d put back, the rest refused: check the score",
    "the board came back from a power cut without %(count)d changes made here: %(back)d put back, the rest refused: check the score",
    lost, { back });
}

function log(text, isError = false) {
  logLines.unshift({ text, isError });
  logLines.length = Math.min(logLines.length, 3);
  const node = $("#log");
  node.replaceChildren(...logLines.map(({ text, isError }) => {
    const line = document.createElement("span");
    line.textContent = text;
    if (isError) line.className = "error";
    return line;
  }));
}

// Do something on the board; true when it was done, else the reason is logged.
async function act(what) {
  if (!link) return false;
  try {
    await what();
    return true;
  } catch (err) {
    // The bridge's and the board's own messages stay as they come: the API speaks English.
    log(err.code === "denied"
      ? _("the board asks who this is: tap its deal button (its win hole blinks) to let this device score")
      : err.message, true);
    return false;
  }
}

// An undo, from here or anywhere, leaves a line: whose score it moved, from where to where.
function tellUndo(before, after) {
  if (!before || after.undo >= before.undo || after.players !== before.players) return;
  const moved = after.front.map((_f, p) => p).filter((p) => after.front[p] !== before.front[p]);
  if (!moved.length) {
    log(_("undone: the last change"));
    return;
  }
  for (const p of moved) {
    log(_("undone: %(player)s back from %(before)d to %(score)d",
          { player: playerName(p), before: before.front[p], score: after.front[p] }));
  }
}

// The large-text mode: the page's words and numbers bigger, kept through a change of language
// and for the next visit.
function useLargeText(on, remember = true) {
  document.documentElement.classList.toggle("large-text", on);
  $("#large-text").setAttribute("aria-pressed", String(on));
  if (!remember) return;
  try { localStorage.setItem(LARGE_TEXT_KEY, on ? "1" : "0"); } catch { /* private mode */ }
}

function largeTextChosen() {
  try { return localStorage.getItem(LARGE_TEXT_KEY) === "1"; } catch { return false; }
}

// --- players -----------------------------------------------------------------------------

function buildPlayers(count) {
  const box = $("#players");
  box.replaceChildren();
  for (let p = 0; p < count; p++) {
    const info = layout.players[p];
    const card = $("#player-card").content.firstElementChild.cloneNode(true);
    card.dataset.player = p;
    card.style.setProperty("--pc", info.color);
    card.querySelector(".crib").textContent = _("crib");
    card.querySelector(".count-text").textContent = _("Count");
    card.querySelector(".more button").textContent = _("Peg");
    card.querySelector(".front").id = `score-${p}`;
    const pegs = card.querySelector(".pegs");
    for (const n of QUICK_POINTS) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = "+" + n;
      b.dataset.player = p;
      b.dataset.points = n;
      b.setAttribute("aria-label", _("%(player)s pegs %(points)d", { player: playerName(p), points: n }));
      b.addEventListener("click", () => act(() => link.peg(p, n)));
      pegs.appendChild(b);
    }
    const form = card.querySelector(".more");
    const field = form.querySelector("input");
    field.max = limits.max_points;
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const text = field.value.trim();
      const n = Number(text);
      if (!Number.isInteger(n) || n < 1 || n > limits.max_points) {
        log(text
          ? _("%(player)s: a count is 1 to %(most)d, not %(count)s: nothing pegged",
              { player: playerName(p), most: limits.max_points, count: text })
          : _("%(player)s: type the count first", { player: playerName(p) }), true);
        return;
      }
      if (await act(() => link.peg(p, n))) field.value = ""; // a second tap must not peg it again
    });
    box.appendChild(card);
  }
  showTitles(count);
}

// The cards' titles: the players' names (from the record) and colours, changed in place.
function showTitles(count) {
  for (const card of $("#players").children) {
    const p = +card.dataset.player;
    const title = card.querySelector(".name");
    title.textContent = cardTitle(p, count);
    title.classList.toggle("named", title.textContent !== playerName(p));
  }
}

// --- the game: laps, the deal, whose count is next ----------------------------------------

function lapLength(players) {
  return layout.tracks[String(players)][0].length;
}

// The lap a front peg is on, of the laps a game has. The win hole is past the last lap's
// holes, not the start of a new lap: a player on it has finished the last one.
function lapsOf(state) {
  const length = lapLength(state.players);
  const laps = Math.ceil((state.target - 1) / length);
  const lap = state.front === 0 ? 1 : Math.floor((state.front - 1) / length) + 1;
  return { lap: Math.min(lap, laps), laps };
}

// The board keeps the dealer, not the deal's number: the page counts the deals it sees pass,
// as the terminal app does (a new game is deal 1; an undone pass counts back).
function followDeal(id, state) {
  const fresh = state.front.every((f) => f === 0) && state.back.every((b) => b === 0);
  const seen = deals[id];
  let deal = seen ? seen.deal : 1;
  if (fresh) deal = 1;
  else if (seen && state.dealer !== seen.dealer && state.winner === null) {
    deal = state.undo < seen.undo ? Math.max(1, deal - 1) : deal + 1;
  }
  deals[id] = { deal, dealer: state.dealer, undo: state.undo };
}

function result(state) {
  return _(RESULTS[state.result] || RESULTS.won);
}

// A match's form as people say it: best of 3, first to 5.
function matchForm(kind, length) {
  return kind === "first_to" ? _("first to %(games)d", { games: length })
                             : _("best of %(games)d", { games: length });
}

// The match the board plays, in a line (the same words as the terminal's), or none.
function matchLine(state) {
  const match = state.match;
  if (!match) return null;
  let form = matchForm(match.kind, match.length);
  if (state.skunk_double) form = _("%(form)s, a skunk wins two", { form });
  const score = state.games.map((g, p) => `${playerName(p)} ${g}`).join(", ");
  if (match.winner !== null) {
    return _("match (%(form)s) won by %(player)s: %(score)s",
             { form, player: playerName(match.winner), score });
  }
  return _("match (%(form)s), game %(game)d: %(score)s", { form, game: match.game, score });
}

function tableLines(id, state) {
  const lines = gameLines(id, state);
  const match = matchLine(state);
  return match ? [match, ...lines] : lines;
}

function gameLines(id, state) {
  const name = playerName;
  if (state.winner !== null) {
    // Translators: the table's line once a game is won; "New game" is the button's name.
    return [_(WON_LINES[state.result] || WON_LINES.won, { winner: name(state.winner) })];
  }
  const dealer = state.dealer;
  const order = [];
  for (let i = 1; i <= state.players; i++) order.push((dealer + i) % state.players);
  const hands = order.map((p) => _("%(player)s's hand", { player: name(p) })).join(", ");
  return [
    _("Deal %(deal)d · %(dealer)s deals and has the crib · %(pone)s leads and counts first",
      { deal: deals[id] ? deals[id].deal : 1, dealer: name(dealer), pone: name(order[0]) }),
    _("The show counts %(hands)s, then %(crib)s",
      { hands, crib: _("%(player)s's crib", { player: name(dealer) }) }),
  ];
}

function showTable(id, state) {
  $("#table").replaceChildren(...tableLines(id, state).map((text) => {
    const line = document.createElement("span");
    line.textContent = text;
    return line;
  }));
}

// What the lights mean, for this game (two or three players, 61 or 121), in this language.
function showLegend(state) {
  const key = `${state.players}/${state.target}/${language()}`;
  const box = $("#legend");
  if (box.dataset.game === key) return;
  box.dataset.game = key;
  const colour = layout.players[0].color;
  const rgb = [1, 3, 5].map((i) => parseInt(colour.substr(i, 2), 16));
  const dim = (level) => screenColor(...rgb.map((c) => (c * level) >> 8));
  const white = screenColor(...layout.line_rgb);
  const [double, skunk] = layout.skunk_lines[String(state.target)];
  const { laps } = lapsOf({ front: 0, players: state.players, target: state.target });
  const names = layout.players.map((_info, p) => playerName(p)).join(", ");
  const items = [
    ["front", colour, _("Bright: the front peg, the score")],
    ["back", dim(layout.levels.back), _("Dim: the back peg, the score before the last count")],
  ];
  if (state.players === 3) {
    items.push(["laps", dim(layout.levels.back),
                _("The bottom row counts laps: a hole for each lap started (%(names)s from the left)",
                  { names })]);
  } else if (laps > 1) {
    items.push(["glow", dim(layout.levels.glow),
                _("A whole track glowing faintly: that player is on the second lap")]);
  }
  items.push(["skunk", white, double
    ? _("White hole on a trailing player's track: the skunk line (%(skunk)d), or the double skunk line (%(double)d), that the leader has passed",
        { skunk, double })
    : _("White hole on a trailing player's track: the skunk line (%(skunk)d) that the leader has passed",
        { skunk })]);
  items.push(["win", dim(layout.levels.glow),
              _("The game hole: faint in the dealer's colour; pulsing for the winner")]);
  items.push(["match", colour,
              _("In a match the winner's game hole flashes the game's number, then pauses; it sparkles for the winner of the match")]);
  items.push(["count", "rgb(229,229,229)",
              _("Blinking white: a pending count, entered but not yet pegged")]);
  box.replaceChildren(...items.map(([kind, fill, text]) => {
    const item = document.createElement("li");
    item.dataset.kind = kind;
    const dot = document.createElement("span");
    dot.className = "dot";
    dot.style.background = fill;
    item.append(dot, text);
    return item;
  }));
}

function showState(state) {
  if ($("#players").children.length !== state.players) buildPlayers(state.players);
  const over = state.winner !== null;
  showTable(current, state);
  showLegend(state);
  for (const card of $("#players").children) {
    const p = +card.dataset.player;
    card.querySelector(".front").textContent = state.front[p];
    const toGo = card.querySelector(".to-go");
    toGo.hidden = over;
    toGo.textContent = _("%(points)d to go", { points: Math.max(0, state.target - state.front[p]) });
    const { lap, laps } = lapsOf({ front: state.front[p], players: state.players, target: state.target });
    const values = { back: state.back[p], lap, laps, games: state.games[p] };
    card.querySelector(".meta").textContent = laps > 1 && lap === laps
      ? _("back %(back)d · lap %(lap)d of %(laps)d, the last · games %(games)d", values)
      : _("back %(back)d · lap %(lap)d of %(laps)d · games %(games)d", values);
    const pending = card.querySelector(".pending");
    pending.hidden = !state.pending[p];
    pending.textContent = _("+%(points)d pending", { points: state.pending[p] });
    card.querySelector(".crib").hidden = state.dealer !== p;
    const winner = card.querySelector(".winner");
    winner.hidden = state.winner !== p;
    winner.textContent = result(state);
    card.classList.toggle("won", state.winner === p);
    for (const control of card.querySelectorAll("button, input")) control.disabled = over;
  }
  $("#undo").disabled = state.undo === 0;
  // Match play (protocol 1.4: a board without it has no game number); the box follows the
  // board's skunk rule when the board's changes, not while someone ticks it.
  $(".match-game").hidden = state.game === null || state.game === undefined;
  $("#match-end").hidden = !state.match;
  const skunks = $("#match-skunks");
  if (skunks.dataset.board !== String(state.skunk_double)) {
    skunks.dataset.board = String(state.skunk_double);
    skunks.checked = Boolean(state.skunk_double);
  }
  $("#board").setAttribute("aria-label", describeBoard(state));
  announce(current, state);
  $("#target").value = String(state.target);
  $("#player-count").value = String(state.players);
  document.body.dataset.rev = state.rev;
}

// The game controls offer what the board accepts (/protocol.json's limits, from cribcore).
function buildGameControls() {
  const option = (value, text) => Object.assign(document.createElement("option"), { value, text });
  const [target, players] = [$("#target").value, $("#player-count").value];
  $("#target").replaceChildren(...[...limits.targets].reverse().map((t) => option(t, String(t))));
  $("#player-count").replaceChildren(...limits.player_counts.map((n) =>
    option(n, n_("%(count)d player", "%(count)d players", n))));
  if (target) $("#target").value = target;
  if (players) $("#player-count").value = players;
  const form = $("#match-form").value;
  const forms = [];
  for (let n = 3; n <= limits.match_most; n += 2) forms.push(option(`best_of:${n}`, matchForm("best_of", n)));
  for (let n = 2; n <= limits.match_most; n++) forms.push(option(`first_to:${n}`, matchForm("first_to", n)));
  $("#match-form").replaceChildren(...forms);
  if (form) $("#match-form").value = form;
}

// The language menu: each language by its own name.
function buildLanguageMenu() {
  const select = $("#lang-select");
  const names = languageNames();
  select.replaceChildren(...Object.entries(names).map(([code, name]) =>
    Object.assign(document.createElement("option"), { value: code, text: name })));
  select.value = language();
  select.hidden = Object.keys(names).length < 2;
}

// Every word on the page again, in the language now chosen; the board's drawing is kept.
function showText() {
  for (const [selector, where, text] of PAGE_TEXT) {
    const node = $(selector);
    if (where === "text") node.textContent = _(text);
    else node.setAttribute(where, _(text));
  }
  $("#lang-select").value = language();
  status(statusShown.text, statusShown.live, statusShown.values);
  if (!limits) return;
  buildGameControls();
  if (states[current]) {
    buildPlayers(states[current].players);
    showState(states[current]);
  }
  if (boardsShown.length) showBoards(boardsShown);
}

// --- boards ------------------------------------------------------------------------------

function showBoards(boards) {
  boardsShown = boards;
  const select = $("#board-select");
  const ids = boards.map((b) => b.id);
  if (!current || !ids.includes(current)) current = ids[0] || null;
  if (link) link.board = current;
  select.replaceChildren(...boards.map((b) => {
    const o = document.createElement("option");
    o.value = b.id;
    o.textContent = b.connected ? `${b.id}: ${b.port}`
      : _("%(board)s: %(port)s (not connected)", { board: b.id, port: b.port });
    return o;
  }));
  select.value = current || "";
  select.hidden = boards.length < 2;
  if (!boards.length) status(N_("waiting for a board…"), false);
}

function selectBoard(id) {
  current = id;
  if (link) link.board = id;
  if (records) records.boardChanged();
  if (states[id]) showState(states[id]);
  if (frames[id]) view.show(frames[id]);
}

async function useLink(next) {
  if (link) link.close();
  link = next;
  window.cribboard.link = next;
  next.on("boards", (m) => showBoards(m.boards))
    .on("state", (m) => {
      if (m.board === current) tellUndo(states[m.board], m.state);
      states[m.board] = m.state;
      followDeal(m.board, m.state);
      if (m.board === current) showState(m.state);
    })
    .on("frame", (m) => { frames[m.board] = m.rgb; if (m.board === current) view.show(m.rgb); })
    .on("button", (m) => {
      if (m.board === current) log(_("button %(name)s: %(action)s", { name: m.name, action: m.action }));
    })
    .on("hello", (m) => { if (m.board === current) log(_("the board restarted")); })
    .on("restored", (m) => { if (m.board === current) log(restoredLine(m.fields)); })
    .on("status", (m) => status(m.text, m.live, m.values || {}));
  await next.start();
}

async function connectBluetooth() {
  try {
    status(N_("Bluetooth: choose the board…"), false);
    current = "ble";
    await useLink(new BleLink(codec));
  } catch (err) {
    status(N_("Bluetooth: %(error)s"), false, { error: err.message });
  }
}

// --- start -------------------------------------------------------------------------------

async function main() {
  useLargeText(largeTextChosen(), false);
  $("#large-text").addEventListener("click", () =>
    useLargeText($("#large-text").getAttribute("aria-pressed") !== "true"));
  await startLanguage();
  buildLanguageMenu();
  showText();
  onLanguage(showText);
  $("#lang-select").addEventListener("change", (e) => setLanguage(e.target.value));
  const [layoutData, protocol] = await Promise.all([fetchJson("layout.json"), fetchJson("protocol.json")]);
  layout = layoutData;
  limits = protocol.limits;
  codec = makeCodec(protocol);
  buildGameControls();
  window.cribboard = { codec, layout, states, link: null };
  view = new BoardView($("#board"), layout);
  const portrait = matchMedia("(orientation: portrait) and (max-width: 900px)");
  view.orient(portrait.matches);
  portrait.addEventListener("change", (e) => view.orient(e.matches));

  $("#legend-box").open = !portrait.matches; // on a phone, a tap away
  $("#undo").addEventListener("click", () => act(() => link.undo()));
  $("#deal").addEventListener("click", () => act(() => link.deal()));
  $("#new").addEventListener("click", () => act(() =>
    link.newGame(+$("#target").value, +$("#player-count").value)));
  $("#match-start").addEventListener("click", () => {
    const [kind, length] = $("#match-form").value.split(":");
    act(() => link.startMatch(kind, +length, $("#match-skunks").checked));
  });
  $("#match-end").addEventListener("click", () => act(() => link.endMatch()));
  $("#board-select").addEventListener("change", (e) => selectBoard(e.target.value));
  const ble = $("#ble");
  ble.hidden = !navigator.bluetooth;
  ble.addEventListener("click", connectBluetooth);

  if (params.has("ble")) {
    status(navigator.bluetooth ? N_("press Bluetooth to connect a board")
                               : N_("this browser has no Web Bluetooth (Chrome has)"), false);
    return;
  }
  if (await servedByBoard()) { // the board's own page: its WebSocket
    await useLink(new BoardSocketLink(codec));
    return;
  }
  try {
    await useLink(new BridgeLink());
  } catch (err) {
    link = null;
    status(navigator.bluetooth ? N_("no bridge here: connect a board over Bluetooth")
                               : N_("no bridge here, and this browser has no Web Bluetooth"), false);
    return;
  }
  // Through a bridge: its record of games (the players' names, the history).
  records = await import("./records.js");
  records.startRecords({
    link, layout, board: () => current, log,
    players: () => (states[current] ? states[current].players : 2),
    onNames: (list) => {
      names[current] = list;
      if (states[current]) showTitles(states[current].players);
    },
  });
}

main().catch((err) => status(N_("cannot start: %(error)s"), false, { error: err.message }));
