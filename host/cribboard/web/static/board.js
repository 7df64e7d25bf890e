// The board drawn from the layout data (/layout.json, generated from cribcore/layout.py), its
// holes coloured with the board's LED frame. Landscape screens show it lying down, as on the
// table; portrait screens (phones) stand it up.

const SVG = "http://www.w3.org/2000/svg";
const MARGIN = 4; // mm around the board's edge in the picture

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

// LEDs are linear light; a screen is not. Lift the dim levels (a back peg is a quarter of a
// front peg, the dealer's glow far less) so they read on a screen as they do on the board.
export function screenColor(r, g, b) {
  const lift = (v) => Math.round(255 * Math.pow(v / 255, 1 / 2.2));
  return `rgb(${lift(r)},${lift(g)},${lift(b)})`;
}

export class BoardView {
  constructor(svg, layout) {
    this.svg = svg;
    this.layout = layout;
    this.holes = [];
    this.glows = [];
    const W = layout.width_mm, H = layout.height_mm;
    svg.replaceChildren();
    const defs = el("defs", {}, svg);
    const wood = el("linearGradient", { id: "wood", x1: 0, y1: 0, x2: 1, y2: 1 }, defs);
    el("stop", { offset: "0", "stop-color": "#4a3424" }, wood);
    el("stop", { offset: "1", "stop-color": "#2c1f16" }, wood);
    this.root = el("g", {}, svg);
    el("rect", { x: 0, y: 0, width: W, height: H, rx: 6, fill: "url(#wood)",
                 stroke: "#15100b", "stroke-width": 0.8 }, this.root);
    const r = layout.hole_diameter_mm * 0.62;
    for (const hole of layout.holes) {
      const glow = el("circle", { cx: hole.x, cy: hole.y, r: r * 1.9, fill: "none", opacity: 0.45 },
                      this.root);
      const c = el("circle", { cx: hole.x, cy: hole.y, r, class: "hole", "data-hole": hole.id,
                               fill: "#15100c", stroke: "#0b0806", "stroke-width": 0.5 }, this.root);
      if (hole.id === layout.win_hole) c.setAttribute("r", r * 1.35);
      this.glows.push(glow);
      this.holes.push(c);
    }
    this.orient(false);
  }

  orient(portrait) {
    const W = this.layout.width_mm, H = this.layout.height_mm;
    if (portrait) {
      // Stand the board up, the start end (and the win hole) at the top.
      this.svg.setAttribute("viewBox", `${-MARGIN} ${-MARGIN} ${H + 2 * MARGIN} ${W + 2 * MARGIN}`);
      this.root.setAttribute("transform", `translate(${H} 0) rotate(90)`);
    } else {
      this.svg.setAttribute("viewBox", `${-MARGIN} ${-MARGIN} ${W + 2 * MARGIN} ${H + 2 * MARGIN}`);
      this.root.removeAttribute("transform");
    }
    this.svg.classList.toggle("portrait", portrait);
  }

  // rgb: the frame's hex string, 6 digits per hole in hole order.
  show(rgb) {
    for (let i = 0; i < this.holes.length; i++) {
      const r = parseInt(rgb.substr(6 * i, 2), 16) || 0;
      const g = parseInt(rgb.substr(6 * i + 2, 2), 16) || 0;
      const b = parseInt(rgb.substr(6 * i + 4, 2), 16) || 0;
      const lit = r + g + b > 0;
      const color = lit ? screenColor(r, g, b) : "#15100c";
      const hole = this.holes[i];
      hole.setAttribute("fill", color);
      hole.setAttribute("data-rgb", rgb.substr(6 * i, 6));
      hole.classList.toggle("lit", lit);
      this.glows[i].setAttribute("fill", lit && Math.max(r, g, b) > 40 ? color : "none");
    }
  }
}
