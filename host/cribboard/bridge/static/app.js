// The cribboard page: the board mirrored live, per-player controls. Through the bridge when the
// page comes from one (cribboard serve), or straight to a board over Web Bluetooth.

import { makeCodec } from "./codec.js";
import { BoardView, screenColor } from "./board.js";
import { BleLink, BridgeLink } from "./links.js";

const $ = (selector) => document.querySelector(selector);
const params = new URLSearchParams(location.search);
const QUICK_POINTS = [1, 2, 3, 4, 5, 6];
const RESULTS = { won: "wins", skunk: "wins, skunk", double_skunk: "wins, double skunk" };

// The page's own words: whole sentences with named {placeholders}, ready to be translated.
const TEXT = {
  deal: "Deal {deal} · {dealer} deals and has the crib · {pone} leads and counts first",
  show: "The show counts {hands}, then {crib}",
  hand: "{player}'s hand",
  crib: "{player}'s crib",
  over: "{winner} {result}: New game starts the next one",
  meta: "back {back} · lap {lap} of {laps} · games {games}",
  metaLast: "back {back} · lap {lap} of {laps}, the last · games {games}",
  legendFront: "Bright: the front peg, the score",
  legendBack: "Dim: the back peg, the score before the last count",
  legendGlow: "A whole track glowing faintly: that player is on the second lap",
  legendLaps: "The bottom row counts laps: a hole for each lap started (blue, orange, purple from the left)",
  legendSkunk: "White hole on a trailing player's track: the skunk line ({skunk}), or the double skunk line ({double}), that the leader has passed",
  legendSkunkOnly: "White hole on a trailing player's track: the skunk line ({skunk}) that the leader has passed",
  legendWin: "The game hole: faint in the dealer's colour; pulsing for the winner",
  legendCount: "Blinking white: a count being entered on the board's buttons",
};

function say(template, values = {}) {
  return template.replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
}

let layout, limits, codec, view, link;
let current = params.get("board");
const states = {};
const frames = {};
const deals = {};
const logLines = [];

async function fetchJson(path) {
  const r = await fetch(path, { credentials: "same-origin" });
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return r.json();
}

function status(text, live) {
  const node = $("#status");
  node.textContent = text;
  node.classList.toggle("live", Boolean(live));
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

async function act(what) {
  if (!link) return;
  try {
    await what();
  } catch (err) {
    log(err.code === "denied"
      ? "the board asks who this is: tap its deal button (its win hole blinks) to let this device score"
      : err.message, true);
  }
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
    card.querySelector(".name").textContent = info.name;
    card.querySelector(".front").id = `score-${p}`;
    const pegs = card.querySelector(".pegs");
    for (const n of QUICK_POINTS) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = "+" + n;
      b.dataset.player = p;
      b.dataset.points = n;
      b.setAttribute("aria-label", `${info.name} pegs ${n}`);
      b.addEventListener("click", () => act(() => link.peg(p, n)));
      pegs.appendChild(b);
    }
    const form = card.querySelector(".more");
    form.querySelector("input").max = limits.max_points;
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const n = parseInt(form.querySelector("input").value, 10);
      act(() => link.peg(p, n));
    });
    box.appendChild(card);
  }
}

// --- the game: laps, the deal, whose count is next ----------------------------------------

function lapLength(players) {
  return layout.tracks[String(players)][0].length;
}

function lapsOf(state) {
  const length = lapLength(state.players);
  const lap = state.front === 0 ? 1 : Math.floor((state.front - 1) / length) + 1;
  return { lap, laps: Math.ceil((state.target - 1) / length) };
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

function tableLines(id, state) {
  const name = (p) => layout.players[p].name;
  if (state.winner !== null) {
    return [say(TEXT.over, { winner: name(state.winner), result: RESULTS[state.result] || "wins" })];
  }
  const dealer = state.dealer;
  const order = [];
  for (let i = 1; i <= state.players; i++) order.push((dealer + i) % state.players);
  const hands = order.map((p) => say(TEXT.hand, { player: name(p) })).join(", ");
  return [
    say(TEXT.deal, { deal: deals[id] ? deals[id].deal : 1, dealer: name(dealer), pone: name(order[0]) }),
    say(TEXT.show, { hands, crib: say(TEXT.crib, { player: name(dealer) }) }),
  ];
}

function showTable(id, state) {
  $("#table").replaceChildren(...tableLines(id, state).map((text) => {
    const line = document.createElement("span");
    line.textContent = text;
    return line;
  }));
}

// What the lights mean, for this game (two or three players, 61 or 121).
function showLegend(state) {
  const key = `${state.players}/${state.target}`;
  const box = $("#legend");
  if (box.dataset.game === key) return;
  box.dataset.game = key;
  const colour = layout.players[0].color;
  const rgb = [1, 3, 5].map((i) => parseInt(colour.substr(i, 2), 16));
  const dim = (level) => screenColor(...rgb.map((c) => (c * level) >> 8));
  const white = screenColor(...layout.line_rgb);
  const [double, skunk] = layout.skunk_lines[String(state.target)];
  const { laps } = lapsOf({ front: 0, players: state.players, target: state.target });
  const items = [
    ["front", colour, TEXT.legendFront],
    ["back", dim(layout.levels.back), TEXT.legendBack],
  ];
  if (state.players === 3) items.push(["laps", dim(layout.levels.back), TEXT.legendLaps]);
  else if (laps > 1) items.push(["glow", dim(layout.levels.glow), TEXT.legendGlow]);
  items.push(["skunk", white,
              say(double ? TEXT.legendSkunk : TEXT.legendSkunkOnly, { skunk, double })]);
  items.push(["win", dim(layout.levels.glow), TEXT.legendWin]);
  items.push(["count", "rgb(229,229,229)", TEXT.legendCount]);
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
    const { lap, laps } = lapsOf({ front: state.front[p], players: state.players, target: state.target });
    card.querySelector(".meta").textContent = say(laps > 1 && lap === laps ? TEXT.metaLast : TEXT.meta,
      { back: state.back[p], lap, laps, games: state.games[p] });
    const pending = card.querySelector(".pending");
    pending.hidden = !state.pending[p];
    pending.textContent = `+${state.pending[p]} being counted`;
    card.querySelector(".crib").hidden = state.dealer !== p;
    const winner = card.querySelector(".winner");
    winner.hidden = state.winner !== p;
    winner.textContent = RESULTS[state.result] || "wins";
    card.classList.toggle("won", state.winner === p);
    for (const control of card.querySelectorAll("button, input")) control.disabled = over;
  }
  $("#undo").disabled = state.undo === 0;
  $("#target").value = String(state.target);
  $("#player-count").value = String(state.players);
  document.body.dataset.rev = state.rev;
}

// The game controls offer what the board accepts (/protocol.json's limits, from cribcore).
function buildGameControls() {
  const option = (value, text) => Object.assign(document.createElement("option"), { value, text });
  $("#target").replaceChildren(...[...limits.targets].reverse().map((t) => option(t, String(t))));
  $("#player-count").replaceChildren(...limits.player_counts.map((n) => option(n, `${n} players`)));
}

// --- boards ------------------------------------------------------------------------------

function showBoards(boards) {
  const select = $("#board-select");
  const ids = boards.map((b) => b.id);
  if (!current || !ids.includes(current)) current = ids[0] || null;
  if (link) link.board = current;
  select.replaceChildren(...boards.map((b) => {
    const o = document.createElement("option");
    o.value = b.id;
    o.textContent = `${b.id}: ${b.port}${b.connected ? "" : " (not connected)"}`;
    return o;
  }));
  select.value = current || "";
  select.hidden = boards.length < 2;
  if (!boards.length) status("waiting for a board…", false);
  const board = boards.find((b) => b.id === current);
  if (board) $("#board").setAttribute("aria-label", `the LEDs of ${board.id} (${board.port})`);
}

function selectBoard(id) {
  current = id;
  if (link) link.board = id;
  if (states[id]) showState(states[id]);
  if (frames[id]) view.show(frames[id]);
}

async function useLink(next) {
  if (link) link.close();
  link = next;
  window.cribboard.link = next;
  next.on("boards", (m) => showBoards(m.boards))
    .on("state", (m) => {
      states[m.board] = m.state;
      followDeal(m.board, m.state);
      if (m.board === current) showState(m.state);
    })
    .on("frame", (m) => { frames[m.board] = m.rgb; if (m.board === current) view.show(m.rgb); })
    .on("button", (m) => { if (m.board === current) log(`button ${m.name}: ${m.action}`); })
    .on("hello", (m) => { if (m.board === current) log("the board restarted"); })
    .on("status", (m) => status(m.text, m.live));
  await next.start();
}

async function connectBluetooth() {
  try {
    status("Bluetooth: choose the board…", false);
    current = "ble";
    await useLink(new BleLink(codec));
  } catch (err) {
    status("Bluetooth: " + err.message, false);
  }
}

// --- start -------------------------------------------------------------------------------

async function main() {
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

  $("#undo").addEventListener("click", () => act(() => link.undo()));
  $("#deal").addEventListener("click", () => act(() => link.deal()));
  $("#new").addEventListener("click", () => act(() =>
    link.newGame(+$("#target").value, +$("#player-count").value)));
  $("#board-select").addEventListener("change", (e) => selectBoard(e.target.value));
  const ble = $("#ble");
  ble.hidden = !navigator.bluetooth;
  ble.addEventListener("click", connectBluetooth);

  if (params.has("ble")) {
    status(navigator.bluetooth ? "press Bluetooth to connect a board"
                               : "this browser has no Web Bluetooth (Chrome has)", false);
    return;
  }
  try {
    await useLink(new BridgeLink());
  } catch (err) {
    link = null;
    status(navigator.bluetooth ? "no bridge here: connect a board over Bluetooth"
                               : "no bridge here, and this browser has no Web Bluetooth", false);
  }
}

main().catch((err) => status("cannot start: " + err.message, false));
