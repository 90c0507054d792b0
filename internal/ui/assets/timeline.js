// The timeline: one lane per task, one mark per checkpoint, placed by time
// and sized by the bytes its save changed (log scale) so large steps stand
// out. Backups are diamonds, checkpoints without changes hollow rings.

import { fmtBytes, fmtTime, short } from "./api.js";

const NS = "http://www.w3.org/2000/svg";
const LANE_H = 44, LABEL_W = 150, PAD = 18;

function svg(tag, attrs, ...kids) {
  const n = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "dataset") Object.assign(n.dataset, v); else n.setAttribute(k, v);
  }
  for (const k of kids) n.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return n;
}

// radius grows with log2 of the bytes changed: 1 KiB ≈ 8px, 1 MiB ≈ 14px.
export function radius(cp) {
  if (cp.empty) return 4;
  return Math.min(18, 2.5 + Math.log2(1 + cp.bytes) / 1.8);
}

function tooltip(cp, firstBad) {
  const kind = cp.kind === "backup" ? "backup" : cp.empty ? "no change" : "checkpoint";
  return `@${cp.seq} ${short(cp.id)} · ${kind}${cp.head ? " · head" : ""}${firstBad ? " · first bad (bisect)" : ""}\n${cp.message || "(no message)"}\n` +
    `${fmtTime(cp.time)}\n+${cp.added} ~${cp.modified} −${cp.deleted} · ${fmtBytes(cp.bytes)}`;
}

// mark draws one checkpoint; the first bad one a bisect found gets a
// dashed red ring.
function mark(cp, x, y, selected, firstBad) {
  const r = radius(cp);
  const cls = ["point", cp.kind, cp.empty ? "empty" : "", cp.head ? "head" : "", selected ? "selected" : "", firstBad ? "first-bad" : ""].join(" ");
  const data = { id: cp.id, seq: String(cp.seq), kind: cp.kind, empty: String(cp.empty) };
  const shape = cp.kind === "backup"
    ? svg("rect", { x: x - r * 0.8, y: y - r * 0.8, width: r * 1.6, height: r * 1.6, transform: `rotate(45 ${x} ${y})` })
    : svg("circle", { cx: x, cy: y, r });
  const g = svg("g", { class: cls, dataset: data, tabindex: "0" }, shape, svg("title", {}, tooltip(cp, firstBad)));
  if (cp.head) g.prepend(svg("circle", { class: "halo", cx: x, cy: y, r: r + 4 }));
  if (firstBad) g.prepend(svg("circle", { class: "bad-ring", cx: x, cy: y, r: r + 7 }));
  return g;
}

function ticks(t0, t1, width) {
  const n = Math.max(2, Math.floor(width / 160));
  const out = [];
  for (let i = 0; i <= n; i++) out.push(t0 + (t1 - t0) * i / n);
  return out;
}

function tickLabel(t, span) {
  const d = new Date(t);
  if (span < 60e3) return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit", fractionalSecondDigits: span < 5e3 ? 2 : 1 });
  if (span < 2 * 86400e3) return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: span < 600e3 ? "2-digit" : undefined });
  return d.toLocaleDateString(undefined, { month: "short", day: "numeric" }) + " " + d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
}

// spread places a lane's marks by time, then pushes apart marks that a
// burst of saves would pile on one spot, keeping their order and the range
// [lo, hi]. It returns id → x.
function spread(cps, xOf, lo, hi) {
  const byTime = cps.slice().sort((a, b) => a.seq - b.seq);
  const n = byTime.length, xs = byTime.map(c => xOf(c.time));
  const gap = i => Math.min(radius(byTime[i - 1]) + radius(byTime[i]) + 2, (hi - lo) / Math.max(1, n));
  for (let i = 1; i < n; i++) xs[i] = Math.max(xs[i], xs[i - 1] + gap(i));
  if (n) xs[n - 1] = Math.min(xs[n - 1], hi);
  for (let i = n - 2; i >= 0; i--) xs[i] = Math.min(xs[i], xs[i + 1] - gap(i + 1));
  for (let i = 0; i < n; i++) xs[i] = Math.max(xs[i], lo);
  return new Map(byTime.map((c, i) => [c.id, xs[i]]));
}

// draw renders lanes for tasks (with their loaded checkpoints in
// byTask[name]) into host; onPick(task, cp) is called on a click.
export function draw(host, tasks, byTask, current, selectedID, onPick) {
  const width = Math.max(480, host.clientWidth || 900);
  const all = tasks.flatMap(t => byTask[t.name] || []);
  let t0 = Math.min(...all.map(c => Date.parse(c.time)));
  let t1 = Math.max(...all.map(c => Date.parse(c.time)));
  if (!isFinite(t0)) { t0 = Date.now() - 3600e3; t1 = Date.now(); }
  if (t1 - t0 < 1000) { t0 -= 500; t1 += 500; }
  const plotW = width - LABEL_W - 2 * PAD;
  const xOf = t => LABEL_W + PAD + (Date.parse(t) - t0) / (t1 - t0) * plotW;
  const height = tasks.length * LANE_H + 28;
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "lanes-svg", role: "img" });
  tasks.forEach((t, i) => {
    const y = i * LANE_H + LANE_H / 2;
    const lane = svg("g", { class: "lane" + (t.name === current ? " current" : ""), dataset: { task: t.name } });
    lane.append(svg("rect", { class: "lane-bg", x: 0, y: i * LANE_H, width, height: LANE_H }));
    lane.append(svg("text", { class: "lane-name", x: 12, y: y - 2 }, t.name));
    lane.append(svg("text", { class: "lane-count", x: 12, y: y + 13 }, `${t.checkpoints} checkpoint${t.checkpoints === 1 ? "" : "s"}`));
    lane.append(svg("line", { class: "lane-axis", x1: LABEL_W + 6, x2: width - 6, y1: y, y2: y }));
    const xs = spread(byTask[t.name] || [], xOf, LABEL_W + PAD, width - PAD);
    const cps = (byTask[t.name] || []).slice().sort((a, b) => b.bytes - a.bytes || a.seq - b.seq);
    for (const cp of cps) {
      const m = mark(cp, xs.get(cp.id), y, cp.id === selectedID, cp.id === t.first_bad);
      m.addEventListener("click", () => onPick(t.name, cp));
      m.addEventListener("keydown", e => { if (e.key === "Enter") onPick(t.name, cp); });
      lane.append(m);
    }
    lane.querySelector(".lane-name").addEventListener("click", () => onPick(t.name, null));
    root.append(lane);
  });
  const axisY = tasks.length * LANE_H + 18;
  let last = "";
  for (const t of ticks(t0, t1, plotW)) {
    const x = LABEL_W + PAD + (t - t0) / (t1 - t0) * plotW, text = tickLabel(t, t1 - t0);
    if (text === last) continue;
    last = text;
    const anchor = x < LABEL_W + PAD + 40 ? "start" : x > width - PAD - 40 ? "end" : "middle";
    root.append(svg("text", { class: "tick", x, y: axisY, "text-anchor": anchor }, text));
  }
  host.replaceChildren(root);
}
