// The record of games on the bridge's page: the players' names of the board's game (a field a
// seat, kept by the bridge in its record) and the history (each player's games won and lost,
// skunks, hands, pegging; head to head; the classic game graph of a finished game, both sides'
// scores deal by deal; a player's hand counts), drawn as SVG. Loaded only when the page talks to
// a bridge: a board serving its own page keeps no record (and does not have this file).

import { N_, _, n_, onLanguage } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";
const GAMES = 20; // finished games offered in the graph's menu
const HAND_COUNTS = 30; // a hand or crib counts 0..29
const $ = (selector) => document.querySelector(selector);

let app; // what the page gives: the link, the layout, the board shown, where to say things
let history = null; // the last statistics read
let namesShown = [];
let maxName = 24; // the longest name the bridge takes (its names reply says it)

// --- small helpers ------------------------------------------------------------------------

function element(tag, attributes = {}, text = null) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== null) node.textContent = text;
  return node;
}

function svgElement(tag, attributes = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

async function getJson(path) {
  const r = await fetch(path, { credentials: "same-origin" });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.message || r.statusText);
  return body;
}

const colour = (side) => _(app.layout.players[side].name);
const colourHex = (side) => app.layout.players[side].color;

// A player as the history shows them: the name, or a seat without one by its colour.
function whoText(who) {
  return who.name !== null ? who.name : _("(%(colour)s)", { colour: colour(who.side) });
}

function sideText(players, side) {
  return players.length ? players.map(whoText).join(" & ") : _("(%(colour)s)", { colour: colour(side) });
}

// --- the players' names -------------------------------------------------------------------

function boardPath(what) {
  const board = app.board();
  return board ? `api/boards/${encodeURIComponent(board)}/${what}` : `api/${what}`;
}

// One field a seat: blue, orange (purple); with four players, the partners of each colour.
function buildNameFields(names) {
  const box = $("#names-fields");
  const players = app.players();
  const seats = Math.max(names.length, players);
  box.replaceChildren();
  for (let seat = 0; seat < seats; seat++) {
    const side = seat % players;
    const label = seats > players
      ? _("%(colour)s %(number)d", { colour: colour(side), number: Math.floor(seat / players) + 1 })
      : colour(side);
    const field = element("input", {
      type: "text", maxlength: String(maxName), autocomplete: "off",
      spellcheck: "false", "data-seat": String(seat),
    });
    field.value = names[seat] || "";
    const wrap = element("label", { class: "name-field" });
    wrap.style.setProperty("--pc", colourHex(side));
    wrap.append(element("span", { class: "swatch" }), element("span", {}, label), field);
    box.appendChild(wrap);
  }
}

function showNames(names) {
  namesShown = names;
  app.onNames(names);
  if (!$("#names-form").contains(document.activeElement)) buildNameFields(names);
}

async function loadNames() {
  try {
    const reply = await getJson(boardPath("names"));
    maxName = reply.max_name || maxName;
    showNames(reply.names);
  } catch {
    buildNameFields([]); // no state seen yet: the fields come empty
  }
}

async function saveNames(event) {
  event.preventDefault();
  const fields = [...document.querySelectorAll("#names-fields input")];
  const sent = fields.map((field) => field.value);
  const names = sent.map((text) => text.trim() || null);
  try {
    const r = await fetch(boardPath("names"), {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify({ names }),
    });
    const reply = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(reply.message || r.statusText);
    // A name typed again while the answer was on its way stays as typed (the fields are made
    // again from the names kept only when nobody is typing in them).
    if (fields.every((field, seat) => field.value === sent[seat])) document.activeElement.blur();
    showNames(reply.names);
    app.log(_("names kept for the record: %(names)s",
              { names: reply.names.map((n, seat) => n || colour(seat % app.players())).join(", ") }));
  } catch (err) {
    // The bridge's own words (English, as the API's) say what was wrong with a name.
    app.log(_("names not kept: %(error)s", { error: err.message }), true);
  }
}

// --- the history ----------------------------------------------------------------------------

function figures(p) {
  const average = (c) => (c.average === null ? "–" : `${c.average.toFixed(1)} (${c.best})`);
  return [
    whoText(p.player),
    String(p.won),
    String(p.lost),
    `${p.skunks_given}/${p.skunks_taken}`,
    `${p.matches_won}-${p.matches - p.matches_won}`,
    average(p.hands),
    average(p.cribs),
    p.pegging.per_deal === null ? "–" : p.pegging.per_deal.toFixed(1),
    `${p.muggins.taken} (${p.muggins.points})`,
  ];
}

function playersTable(players) {
  const headings = [
    _("player"), _("won"), _("lost"),
    // Translators: skunks given / taken, in the history's table.
    _("skunks +/-"), _("matches"), _("hand (best)"), _("crib (best)"),
    // Translators: the play's points per deal, in the history's table.
    _("pegging/deal"), _("muggins"),
  ];
  const table = element("table", { class: "figures" });
  table.appendChild(element("caption", { class: "visually-hidden" }, _("Each player's games")));
  const head = element("tr");
  headings.forEach((text, i) => head.appendChild(element("th", { scope: "col" }, text)));
  table.appendChild(element("thead")).appendChild(head);
  const body = table.appendChild(element("tbody"));
  for (const p of players) {
    const row = element("tr");
    figures(p).forEach((text, i) => row.appendChild(element(i ? "td" : "th", i ? {} : { scope: "row" }, text)));
    body.appendChild(row);
  }
  // Wider than a phone: it scrolls sideways, and the keyboard can scroll it.
  const scroller = element("div", { class: "table-scroll", tabindex: "0", role: "region",
                                    "aria-label": _("Each player's games") });
  scroller.appendChild(table);
  return scroller;
}

function headToHead(pairs) {
  const list = element("ul", { class: "plain" });
  const key = (who) => (who.name !== null ? `0${who.name.toLowerCase()}` : `1${who.side}`);
  for (const pair of pairs) {
    if (key(pair.player) >= key(pair.opponent)) continue; // each pair once
    list.appendChild(element("li", {}, _("%(player)s against %(opponent)s: %(won)d won, %(lost)d lost", {
      player: whoText(pair.player), opponent: whoText(pair.opponent), won: pair.won, lost: pair.lost,
    })));
  }
  return list;
}

function matchText(match) {
  const sides = match.sides.map(sideText).join(" – ");
  const kind = match.kind === "best_of"
    ? _("best of %(games)d", { games: match.length })
    : _("first to %(games)d", { games: match.length });
  const score = match.score.join("-");
  if (match.winner === null) return _("%(sides)s, %(kind)s: %(score)s, going on", { sides, kind, score });
  return _("%(sides)s, %(kind)s: %(score)s, won by %(winner)s",
           { sides, kind, score, winner: sideText(match.sides[match.winner], match.winner) });
}

function gameText(game) {
  const scores = game.sides.map((players, side) => `${sideText(players, side)} ${game.front[side]}`).join(" · ");
  return `#${game.id} ${(game.ended || game.started).slice(0, 10)} ${scores}`;
}

function resultText(game) {
  if (game.winner === null) return "";
  const winner = sideText(game.sides[game.winner], game.winner);
  if (game.result === "skunk") return _("%(winner)s won, a skunk", { winner });
  if (game.result === "double_skunk") return _("%(winner)s won, a double skunk", { winner });
  return _("%(winner)s won", { winner });
}

// The classic game graph: each side's score when each deal began, and at the end. The y axis's
// labels carry their value (data-value) at their height: a reader of the picture gets the
// scores back from the lines' points.
export function drawGameGraph(graph) {
  const width = 360, height = 230, left = 34, right = 12, top = 10, bottom = 34;
  const target = graph.game.target;
  const rows = graph.scores;
  const steps = Math.max(1, rows.length - 1);
  const x = (i) => left + (i * (width - left - right)) / steps;
  const y = (score) => top + ((target - score) * (height - top - bottom)) / target;
  const svg = svgElement("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart game-graph",
                                  role: "img", "data-game": graph.game.id });
  const ticks = target === 121 ? [0, 30, 60, 90, 121] : [0, 15, 30, 45, 61];
  for (const value of ticks) {
    svg.appendChild(svgElement("line", { x1: left, x2: width - right, y1: y(value), y2: y(value), class: "grid" }));
    svg.appendChild(svgElement("text", { x: left - 5, y: y(value) + 4, class: "tick y", "text-anchor": "end",
                                         "data-value": value }, String(value)));
  }
  const [double, skunk] = graph.skunk_lines;
  for (const line of [double, skunk].filter((v) => v > 0)) {
    svg.appendChild(svgElement("line", { x1: left, x2: width - right, y1: y(line), y2: y(line),
                                         class: "skunk-line", "data-value": line }));
  }
  const every = Math.ceil(rows.length / 9); // a label every few deals: no crowding on a phone
  rows.forEach((_row, i) => {
    const last = i === rows.length - 1 && i >= graph.dealers.length;
    if (i % every && !last) return;
    svg.appendChild(svgElement("text", { x: x(i), y: height - bottom + 16, class: "tick x",
                                         "text-anchor": "middle" }, last ? _("end") : String(i + 1)));
  });
  svg.appendChild(svgElement("text", { x: (left + width - right) / 2, y: height - 4, class: "axis",
                                       "text-anchor": "middle" }, _("deal")));
  graph.game.sides.forEach((_players, side) => {
    const points = rows.map((row, i) => `${x(i).toFixed(1)},${y(row[side]).toFixed(1)}`).join(" ");
    svg.appendChild(svgElement("polyline", { points, class: "score-line", "data-side": side,
                                             stroke: colourHex(side) }));
    const [lastX, lastY] = points.split(" ").pop().split(",");
    svg.appendChild(svgElement("circle", { cx: lastX, cy: lastY, r: 3.5, fill: colourHex(side) }));
  });
  const finals = graph.game.sides.map((players, side) => `${sideText(players, side)} ${graph.game.front[side]}`);
  svg.setAttribute("aria-label", _("Game graph of game %(game)s: %(scores)s after %(deals)s; %(result)s", {
    game: `#${graph.game.id}`, scores: finals.join(", "),
    deals: n_("%(count)d deal", "%(count)d deals", graph.dealers.length), result: resultText(graph.game),
  }));
  return svg;
}

// How often a player's hands and cribs counted each score, stacked bars 0..29.
export function drawHandChart(counts) {
  const width = 360, height = 200, left = 30, right = 8, top = 10, bottom = 34;
  const totals = counts.hands.map((h, i) => h + counts.cribs[i]);
  const most = Math.max(1, ...totals);
  const step = most <= 5 ? 1 : Math.ceil(most / 4);
  const top_ = Math.ceil(most / step) * step;
  const band = (width - left - right) / HAND_COUNTS;
  const y = (value) => top + ((top_ - value) * (height - top - bottom)) / top_;
  const svg = svgElement("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart hand-chart", role: "img" });
  for (let value = 0; value <= top_; value += step) {
    svg.appendChild(svgElement("line", { x1: left, x2: width - right, y1: y(value), y2: y(value), class: "grid" }));
    svg.appendChild(svgElement("text", { x: left - 4, y: y(value) + 4, class: "tick y", "text-anchor": "end",
                                         "data-value": value }, String(value)));
  }
  for (let points = 0; points < HAND_COUNTS; points++) {
    const hands = counts.hands[points], cribs = counts.cribs[points];
    const x0 = left + points * band + 1;
    if (hands) {
      svg.appendChild(svgElement("rect", { x: x0, width: band - 2, y: y(hands), height: y(0) - y(hands),
                                           class: "bar hand", "data-count": points, "data-hands": hands }));
    }
    if (cribs) {
      svg.appendChild(svgElement("rect", { x: x0, width: band - 2, y: y(hands + cribs), height: y(hands) - y(hands + cribs),
                                           class: "bar crib", "data-count": points, "data-cribs": cribs }));
    }
    if (points % 5 === 0) {
      svg.appendChild(svgElement("text", { x: x0 + band / 2 - 1, y: height - bottom + 15, class: "tick x",
                                           "text-anchor": "middle" }, String(points)));
    }
  }
  svg.appendChild(svgElement("text", { x: (left + width - right) / 2, y: height - 4, class: "axis",
                                       "text-anchor": "middle" }, _("points a hand or crib counted")));
  const handCount = counts.hands.reduce((a, b) => a + b, 0);
  const cribCount = counts.cribs.reduce((a, b) => a + b, 0);
  const usual = (list) => list.indexOf(Math.max(...list));
  svg.setAttribute("aria-label", _("%(player)s's hand counts: %(hands)s, most often %(usual)d; %(cribs)s", {
    player: whoText(counts.player),
    hands: n_("%(count)d hand", "%(count)d hands", handCount),
    usual: usual(counts.hands),
    cribs: n_("%(count)d crib", "%(count)d cribs", cribCount),
  }));
  return svg;
}

function chartLegend(items) {
  const list = element("ul", { class: "chart-legend" });
  for (const [fill, text] of items) {
    const item = element("li");
    const dot = element("span", { class: "dot" });
    dot.style.background = fill;
    item.append(dot, text);
    list.appendChild(item);
  }
  return list;
}

async function showGraph(id) {
  const box = $("#game-graph");
  try {
    const graph = await getJson(`api/history/games/${encodeURIComponent(id)}`);
    box.replaceChildren(
      drawGameGraph(graph),
      chartLegend(graph.game.sides.map((players, side) =>
        [colourHex(side), `${sideText(players, side)}: ${graph.game.front[side]}`])),
      element("p", { class: "dim" }, resultText(graph.game)),
    );
  } catch (err) {
    box.replaceChildren(element("p", { class: "dim" }, err.message));
  }
}

async function showHands(who) {
  const box = $("#hand-chart");
  const query = who.name !== null ? `player=${encodeURIComponent(who.name)}` : `colour=${who.side}`;
  try {
    const counts = await getJson(`api/history/hands?${query}`);
    box.replaceChildren(
      drawHandChart(counts),
      chartLegend([["var(--hand)", _("hands")], ["var(--crib)", _("cribs")]]),
    );
  } catch (err) {
    box.replaceChildren(element("p", { class: "dim" }, err.message));
  }
}

function picker(id, label, options, chosen, onChange) {
  const select = element("select", { id });
  options.forEach(([value, text]) => select.appendChild(element("option", { value }, text)));
  if (chosen !== undefined) select.value = chosen;
  select.addEventListener("change", () => onChange(select.value));
  const wrap = element("label", { class: "picker" });
  wrap.append(element("span", {}, label), select);
  return wrap;
}

function renderHistory() {
  const box = $("#history");
  if (!history) return;
  const parts = [
    element("p", { class: "history-summary" },
            `${n_("%(count)d game finished", "%(count)d games finished", history.finished)}, ` +
            n_("%(count)d left unfinished", "%(count)d left unfinished", history.unfinished)),
  ];
  if (!history.finished && !history.unfinished) {
    box.replaceChildren(element("p", {}, _("No games recorded yet: the games this bridge, keep and play drive are kept here.")));
    return;
  }
  parts.push(playersTable(history.players));
  if (history.head_to_head.length) {
    parts.push(element("h3", {}, _("Head to head")), headToHead(history.head_to_head));
  }
  if (history.matches.length) {
    const list = element("ul", { class: "plain" });
    history.matches.forEach((m) => list.appendChild(element("li", {}, matchText(m))));
    parts.push(element("h3", {}, _("Matches")), list);
  }
  if (history.games.length) {
    const chosen = $("#game-pick")?.value || String(history.games[0].id);
    parts.push(element("h3", {}, _("Game graph")),
               picker("game-pick", _("game"), history.games.map((g) => [String(g.id), gameText(g)]), chosen, showGraph),
               element("div", { id: "game-graph", class: "chart-box" }));
    setTimeout(() => showGraph(chosen));
  }
  const players = history.players.filter((p) => p.hands.count || p.cribs.count);
  if (players.length) {
    const key = (who) => (who.name !== null ? `n:${who.name}` : `c:${who.side}`);
    const chosen = $("#hand-pick")?.value || key(players[0].player);
    const byKey = Object.fromEntries(players.map((p) => [key(p.player), p.player]));
    parts.push(element("h3", {}, _("Hand counts")),
               picker("hand-pick", _("player"), players.map((p) => [key(p.player), whoText(p.player)]),
                      chosen, (value) => showHands(byKey[value])),
               element("div", { id: "hand-chart", class: "chart-box" }));
    setTimeout(() => showHands(byKey[chosen] || players[0].player));
  }
  box.replaceChildren(...parts);
}

async function loadHistory() {
  if (!$("#history-box").open) return;
  try {
    history = await getJson(`api/history?games=${GAMES}`);
    renderHistory();
  } catch (err) {
    $("#history").replaceChildren(element("p", { class: "dim" }, err.message));
  }
}

function showText() {
  $("#names-title").textContent = _("Players' names");
  $("#names-save").textContent = _("Keep the names");
  $("#names-help").textContent = _("For the record of games: a name follows a person from colour to colour and game to game. Leave a field empty for no name.");
  $("#history-title").textContent = _("History");
  buildNameFields(namesShown);
  renderHistory();
}

// Start the record's parts of the page (`given`: the page's link and what it knows).
export function startRecords(given) {
  app = given;
  $("#names-box").hidden = false;
  $("#history-box").hidden = false;
  $("#names-form").addEventListener("submit", saveNames);
  $("#history-box").addEventListener("toggle", loadHistory);
  app.link.on("names", (m) => { if (m.board === app.board()) showNames(m.names); })
    .on("state", (m) => {
      if (m.board !== app.board()) return;
      if (m.state.winner !== null) setTimeout(loadHistory, 300); // a game ended: it is counted
      if (namesShown.length === 0 && !$("#names-form").contains(document.activeElement)
          && $("#names-fields").children.length !== m.state.players) loadNames();
    });
  onLanguage(showText);
  showText();
  loadNames();
  if (new URLSearchParams(location.search).has("history")) $("#history-box").open = true;
}

// The board shown changed: its names.
export function boardChanged() {
  loadNames();
}
