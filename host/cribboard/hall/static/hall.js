// The hall's projector page: the standings, who plays whom at which table, and every table's
// board in miniature (drawn by the shared board.js from the frame the server renders with the
// firmware's renderer). Everything arrives on one WebSocket: a snapshot, then each change.

import { BoardView } from "../board/board.js";

const $ = (selector) => document.querySelector(selector);
const RESULTS = { won: "wins", skunk: "wins, skunk", double_skunk: "wins, double skunk" };

let layout;
let round = null;
const cards = new Map(); // table number -> { node, view, state, online }
let updates = 0;

// A player's name as text, never as formatting: a control or direction character (U+202E shows
// one name as another and turns the line around) is written out as \u202e. The names reach the
// page inert already; this is for a broker that is not the director's.
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
function inert(text) {
  return String(text).replace(UNSAFE, (c) => (c === "\u200c" || c === "\u200d")
    ? c : `\\u${c.codePointAt(0).toString(16).padStart(4, "0")}`);
}

function status(text, live) {
  const node = $("#status");
  node.textContent = text;
  node.classList.toggle("live", Boolean(live));
}

function namesAt(table) {
  const entry = round && round.tables.find((t) => t.table === table);
  return entry ? entry.players : null;
}

// --- the tables ----------------------------------------------------------------------------

function card(table) {
  let entry = cards.get(table);
  if (entry) return entry;
  const node = $("#table-card").content.firstElementChild.cloneNode(true);
  node.dataset.table = table;
  node.querySelector(".table-no").textContent = `Table ${table}`;
  node.querySelectorAll(".seat").forEach((seat) => {
    seat.style.setProperty("--pc", layout.players[+seat.dataset.seat].color);
  });
  const svg = node.querySelector(".mini-board");
  svg.setAttribute("aria-label", `the board of table ${table}`); // with the scores in drawCard
  entry = { node, view: new BoardView(svg, layout), state: null, online: null };
  cards.set(table, entry);
  // Keep the cards in table order.
  const box = $("#tables");
  const after = [...box.children].find((n) => +n.dataset.table > table);
  box.insertBefore(node, after || null);
  drawCard(table);
  return entry;
}

function drawCard(table) {
  const { node, state, online } = cards.get(table);
  const names = namesAt(table);
  node.classList.toggle("offline", online === false);
  node.classList.toggle("idle", !names);
  node.querySelector(".online").textContent = online === false ? "offline" : online ? "" : "…";
  node.querySelectorAll(".seat").forEach((seat) => {
    const s = +seat.dataset.seat;
    seat.querySelector(".name").textContent = names ? inert(names[s]) : ["blue", "orange"][s];
    seat.querySelector(".score").textContent = state ? state.front[s] : "";
    const won = state && state.winner === s;
    seat.classList.toggle("won", Boolean(won));
    seat.title = won ? RESULTS[state.result] || "wins" : "";
  });
  // The board in words, for a screen reader: who sits there and their scores.
  const who = names || ["blue", "orange"];
  const scores = state ? who.map((n, s) => `${n} ${state.front[s]}`).join(", ") : who.join(" v ");
  const over = state && state.winner !== null && state.winner !== undefined
    ? `; ${who[state.winner]} ${RESULTS[state.result] || "wins"}` : "";
  node.querySelector(".mini-board").setAttribute(
    "aria-label", `the board of table ${table}: ${scores}${over}${online === false ? " (offline)" : ""}`);
}

function showTable(m) {
  const entry = card(m.table);
  entry.state = m.state;
  entry.online = m.online;
  if (m.rgb) entry.view.show(m.rgb);
  drawCard(m.table);
}

// --- the round and the standings -----------------------------------------------------------

function showRound(r) {
  round = r;
  $("#round-title").textContent = `· round ${r.round}`;
  $("#pairings-title").textContent = `Round ${r.round}: tables`;
  $("#pairings").replaceChildren(...r.tables.map((t) => {
    const li = document.createElement("li");
    li.dataset.table = t.table;
    const no = document.createElement("span");
    no.className = "no";
    no.textContent = t.table;
    const who = document.createElement("span");
    who.className = "who";
    who.append(name(t.players[0], 0), " v ", name(t.players[1], 1));
    li.append(no, who);
    return li;
  }));
  const bye = $("#bye");
  bye.hidden = !r.bye;
  bye.replaceChildren(...(r.bye ? ["Bye: ", isolated(r.bye)] : []));
  for (const t of r.tables) card(t.table);
  for (const table of cards.keys()) drawCard(table);
}

function isolated(text) {
  const span = document.createElement("span");
  span.className = "pname";
  span.textContent = inert(text);
  return span;
}

function name(text, seat) {
  const span = isolated(text);
  span.style.setProperty("--pc", layout.players[seat].color);
  return span;
}

function showStandings(s) {
  const rows = s.standings.map((line) => {
    const tr = document.createElement("tr");
    const cells = [line.rank, line.player, line.points, line.won, line.skunks,
                   (line.spread > 0 ? "+" : "") + line.spread];
    cells.forEach((value, i) => {
      const td = document.createElement("td");
      td.textContent = i === 1 ? inert(value) : value;
      if (i === 0) td.className = "rank";
      if (i === 1) td.className = "player";
      tr.appendChild(td);
    });
    return tr;
  });
  $("#standings tbody").replaceChildren(...rows);
  $("#no-standings").hidden = rows.length > 0;
  // Results the director has not counted (not consistent with the round's game), and why.
  const held = (s.held || []).map((h) => {
    const li = document.createElement("li");
    li.textContent = inert(`Round ${h.round}, table ${h.table}: ${h.result} (${h.reason})`);
    return li;
  });
  $("#held-list").replaceChildren(...held);
  $("#held").hidden = held.length === 0;
}

// --- the connection ------------------------------------------------------------------------

function take(m) {
  if (m.type === "hall") {
    $("#hall-name").textContent = m.hall;
    document.title = `${m.hall}: cribboard hall`;
  } else if (m.type === "round") showRound(m.round);
  else if (m.type === "standings") showStandings(m.standings);
  else if (m.type === "table") showTable(m);
  document.body.dataset.updates = ++updates;
}

function connect(delay = 500) {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/api/ws`);
  ws.onopen = () => { status("live", true); delay = 500; };
  ws.onmessage = (e) => take(JSON.parse(e.data));
  ws.onclose = () => {
    status("reconnecting…", false);
    setTimeout(() => connect(Math.min(delay * 2, 5000)), delay);
  };
}

async function main() {
  const r = await fetch("layout.json");
  layout = await r.json();
  connect();
}

main().catch((err) => status("cannot start: " + err.message, false));
