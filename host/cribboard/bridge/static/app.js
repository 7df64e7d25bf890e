// The cribboard page: the board mirrored live, per-player controls. Through the bridge when the
// page comes from one (cribboard serve), or straight to a board over Web Bluetooth.

import { makeCodec } from "./codec.js";
import { BoardView } from "./board.js";
import { BleLink, BridgeLink } from "./links.js";

const $ = (selector) => document.querySelector(selector);
const params = new URLSearchParams(location.search);
const QUICK_POINTS = [1, 2, 3, 4, 5, 6];
const RESULTS = { won: "wins", skunk: "wins, skunk", double_skunk: "wins, double skunk" };

let layout, limits, codec, view, link;
let current = params.get("board");
const states = {};
const frames = {};
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

function showState(state) {
  if ($("#players").children.length !== state.players) buildPlayers(state.players);
  const over = state.winner !== null;
  for (const card of $("#players").children) {
    const p = +card.dataset.player;
    card.querySelector(".front").textContent = state.front[p];
    card.querySelector(".meta").textContent = `back ${state.back[p]} · games ${state.games[p]}`;
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
    .on("state", (m) => { states[m.board] = m.state; if (m.board === current) showState(m.state); })
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
