// The diff view: the changed files as a tree with status badges (loaded a
// page at a time), and one file at a time, fetched when opened, side by
// side or unified, with images before/after and binaries summarised.

import { get, el, rawURL, fmtBytes, pathKey, pathParams, restorePaths } from "./api.js";
import { diffLines, hunks, pairRows } from "./linediff.js";
import { highlighter } from "./highlight.js";

const FILE_PAGE = 1000;
const BADGE = { added: "A", modified: "M", deleted: "D", renamed: "R", typechange: "T", mode: "P" };

let cur = null; // {task, from, to, label, restore, files, total, mode, open}

const $ = id => document.getElementById(id);

export function closeDiff() {
  $("diff").hidden = true;
  cur = null;
}

export async function openDiff(opts) {
  cur = { ...opts, files: [], total: 0, mode: cur?.mode || "split", open: null };
  $("diff").hidden = false;
  $("diff-title").replaceChildren(side(opts.from), el("span", { class: "arrow" }, "→"), side(opts.to));
  $("tree").replaceChildren(el("p", { class: "muted" }, "Comparing…"));
  $("file").replaceChildren(el("p", { class: "muted" }, "Select a file."));
  $("history").replaceChildren();
  await loadFiles(0);
}

function side(ref) {
  return el("span", { class: "side" }, el("b", {}, cur.label(ref)), " ", el("span", { class: "muted" }, cur.describe(ref)));
}

async function loadFiles(offset) {
  const mine = cur;
  const p = await get("/api/diff", { task: mine.task, from: mine.from, to: mine.to, offset, limit: FILE_PAGE });
  if (cur !== mine) return;
  mine.files = mine.files.concat(p.files);
  mine.total = p.total;
  mine.counts = p.counts;
  renderTree();
}

function buildTree(files) {
  const root = { dirs: new Map(), files: [] };
  for (const f of files) {
    const parts = f.path.split("/");
    let n = root;
    for (const d of parts.slice(0, -1)) {
      if (!n.dirs.has(d)) n.dirs.set(d, { dirs: new Map(), files: [] });
      n = n.dirs.get(d);
    }
    n.files.push({ name: parts[parts.length - 1], f });
  }
  return root;
}

function treeNodes(n) {
  const out = [];
  for (const [name, d] of [...n.dirs].sort((a, b) => a[0].localeCompare(b[0]))) {
    // Chains of single directories read better folded: a/b/c.
    let label = name, node = d;
    while (node.files.length === 0 && node.dirs.size === 1) {
      const [[k, v]] = node.dirs;
      label += "/" + k;
      node = v;
    }
    const kids = el("ul", {}, treeNodes(node));
    const head = el("div", { class: "dir", onclick: () => li.classList.toggle("closed") }, el("span", { class: "caret" }), label + "/");
    const li = el("li", {}, head, kids);
    out.push(li);
  }
  for (const { name, f } of n.files) {
    out.push(el("li", {},
      el("div", { class: "leaf" + (cur.open === pathKey(f) ? " open" : ""), dataset: { path: f.path, status: f.status }, onclick: () => openFile(f) },
        el("span", { class: "badge " + f.status, title: f.status }, BADGE[f.status] || "?"),
        el("span", { class: "fname" }, name),
        f.old_path ? el("span", { class: "muted small" }, " ← " + f.old_path) : null)));
  }
  return out;
}

function renderTree() {
  const c = cur.counts || {};
  const summary = el("div", { class: "summary" },
    `${cur.total} file${cur.total === 1 ? "" : "s"} changed`,
    ...Object.entries(c).map(([s, n]) => el("span", { class: "badge " + s }, `${BADGE[s]} ${n}`)));
  const more = cur.files.length < cur.total
    ? el("button", { class: "ghost", id: "more-files", onclick: () => loadFiles(cur.files.length) }, `Load more files (${cur.files.length} of ${cur.total})`)
    : null;
  const body = cur.total === 0 ? el("p", { class: "muted" }, "No differences.") : el("ul", { class: "root" }, treeNodes(buildTree(cur.files)));
  $("tree").replaceChildren(...[summary, body, more].filter(Boolean));
}

async function openFile(f) {
  const mine = cur;
  mine.open = pathKey(f);
  renderTree();
  $("file").replaceChildren(el("p", { class: "muted" }, "Loading " + f.path + "…"));
  const [v] = await Promise.all([
    get("/api/file", { task: mine.task, from: mine.from, to: mine.to, ...pathParams(f) }),
    loadHistory(mine, f),
  ]);
  if (cur !== mine || mine.open !== pathKey(f)) return;
  mine.view = v;
  renderFile();
}

// loadHistory lists, beside the file, the checkpoints of the task in which
// it changed, newest first; one of them opens its own change of the file.
async function loadHistory(mine, f) {
  $("history").replaceChildren(el("p", { class: "muted" }, "Loading history…"));
  const { entries } = await get("/api/history", { task: mine.task, ...pathParams(f) });
  if (cur !== mine || mine.open !== pathKey(f)) return;
  const item = ({ checkpoint: cp, change }) => el("li", {
    class: [cp.id === mine.to ? "current" : "", cp.id === mine.firstBad ? "first-bad" : ""].join(" "),
    dataset: { seq: String(cp.seq), id: cp.id },
    title: `${change.status}, ${fmtBytes(change.before_size)} → ${fmtBytes(change.after_size)}`,
    onclick: cp.parent ? () => showChange(mine, cp, change) : undefined,
  },
  el("span", { class: "badge " + change.status }, BADGE[change.status] || "?"),
  el("span", { class: "seq" }, "@" + cp.seq),
  el("span", { class: "msg" }, cp.message || "(no message)"));
  $("history").replaceChildren(el("h3", {}, "History of ", el("span", { class: "mono" }, f.path)),
    entries.length ? el("ol", { id: "history-list" }, entries.map(item)) : el("p", { class: "muted" }, "No checkpoint changed it."));
}

// showChange opens checkpoint cp's own change of the file, from its parent.
async function showChange(mine, cp, change) {
  const { task, label, describe, restore, firstBad } = mine;
  await openDiff({ task, label, describe, restore, firstBad, from: cp.parent, to: cp.id });
  await openFile(change);
}

function fileHeader(v) {
  const restoreFrom = [cur.from, cur.to].filter(r => r !== "workspace");
  return el("div", { class: "file-head" },
    el("span", { class: "badge " + v.status }, BADGE[v.status]),
    el("span", { class: "mono path", id: "file-path" }, v.old_path ? `${v.old_path} → ${v.path}` : v.path),
    el("span", { class: "muted small" }, `${fmtBytes(v.before_size)} → ${fmtBytes(v.after_size)}`),
    el("span", { class: "spacer" }),
    restoreFrom.map(ref => el("button", {
      class: "small-btn", dataset: { ref },
      onclick: () => cur.restore({ ref, ...restorePaths(v) }),
    }, `Restore file from ${cur.label(ref)}`)));
}

function renderFile() {
  const v = cur.view;
  let body;
  if (v.image) body = imageView(v);
  else if (v.binary) body = el("p", { class: "binary" }, `binary, ${fmtBytes(v.before_size)} → ${fmtBytes(v.after_size)}`);
  else if (v.too_large) body = el("p", { class: "binary" }, `too large to show, ${fmtBytes(v.before_size)} → ${fmtBytes(v.after_size)}`);
  else body = textView(v);
  $("file").replaceChildren(fileHeader(v), body);
  $("file").scrollIntoView({ block: "nearest" });
}

function imageView(v) {
  const side = (which, exists) => el("figure", {},
    el("figcaption", {}, which === "before" ? cur.label(cur.from) : cur.label(cur.to)),
    exists ? el("img", { src: rawURL({ task: cur.task, from: cur.from, to: cur.to, ...pathParams(v), side: which }), alt: which }) : el("div", { class: "noimg" }, "none"));
  return el("div", { class: "images" }, side("before", v.status !== "added"), side("after", v.status !== "deleted"));
}

function splitLines(s) {
  if (s === null || s === undefined) return [];
  const lines = s.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

// highlightAll renders every line once, carrying block-comment state.
function highlightAll(lines, path) {
  const hl = highlighter(path);
  let inBlock = false;
  return lines.map(line => {
    if (!hl) return [document.createTextNode(line)];
    const r = hl(line, inBlock);
    inBlock = r.inBlock;
    return r.nodes;
  });
}

function textView(v) {
  const a = splitLines(v.before), b = splitLines(v.after);
  const ha = highlightAll(a, v.old_path || v.path), hb = highlightAll(b, v.path);
  const ops = hunks(diffLines(a, b));
  const cell = (nodes, cls) => el("td", { class: "code " + cls }, nodes ? nodes.map(n => n.cloneNode(true)) : "");
  const num = (i, cls) => el("td", { class: "ln " + cls }, i === undefined ? "" : String(i + 1));
  const gap = (n, span) => el("tr", { class: "gap" }, el("td", { colspan: span }, `⋯ ${n} unchanged line${n === 1 ? "" : "s"}`));
  let rows;
  if (cur.mode === "unified") {
    rows = ops.map(op => {
      if (op.t === "gap") return gap(op.n, 3);
      const cls = op.t === "-" ? "del" : op.t === "+" ? "add" : "ctx";
      return el("tr", { class: cls }, num(op.t === "+" ? undefined : op.a, cls), num(op.t === "-" ? undefined : op.b, cls),
        cell(op.t === "+" ? hb[op.b] : ha[op.a], cls));
    });
  } else {
    rows = pairRows(ops).map(({ l, r }) => {
      if (l && l.t === "gap") return gap(l.n, 4);
      const lc = !l ? "none" : l.t === "=" ? "ctx" : "del", rc = !r ? "none" : r.t === "=" ? "ctx" : "add";
      return el("tr", {}, num(l?.a, lc), cell(l ? ha[l.a] : null, lc), num(r?.b, rc), cell(r ? hb[r.b] : null, rc));
    });
  }
  if (rows.length === 0) rows = [el("tr", {}, el("td", { class: "muted" }, "Only the file's mode or name changed."))];
  return el("div", { class: "code-wrap" }, el("table", { class: "code-table " + cur.mode, id: "code" }, el("tbody", {}, rows)));
}

function setMode(mode) {
  if (!cur) return;
  cur.mode = mode;
  $("mode-split").classList.toggle("on", mode === "split");
  $("mode-unified").classList.toggle("on", mode === "unified");
  if (cur.view) renderFile();
}

$("mode-split").addEventListener("click", () => setMode("split"));
$("mode-unified").addEventListener("click", () => setMode("unified"));
