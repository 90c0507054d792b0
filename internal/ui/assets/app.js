// The page's state and wiring: tasks and their loaded checkpoint pages, the
// selected checkpoint, live updates.

import { get, el, fmtBytes, fmtTime, short } from "./api.js";
import { draw } from "./timeline.js";
import { openDiff, closeDiff } from "./diffview.js";
import { confirmRestore, undoBar } from "./restore.js";

const PAGE = 200;

const state = {
  tasks: [],
  pages: {},      // task → {cps: [newest first], next}
  task: null,
  selected: null, // checkpoint object
};

const $ = id => document.getElementById(id);

async function loadTasks() {
  state.tasks = (await get("/api/tasks")).tasks;
  if (!state.task || !state.tasks.some(t => t.name === state.task)) {
    const def = state.tasks.find(t => t.name === "default");
    state.task = (def || state.tasks[0] || {}).name || null;
  }
  const sel = $("task-select");
  sel.replaceChildren(...state.tasks.map(t => el("option", { value: t.name, selected: t.name === state.task }, `${t.name} (${t.checkpoints})`)));
}

// loadFirstPage fetches the newest page of task, keeping older pages the
// user already loaded when they still connect.
async function loadFirstPage(task) {
  const p = await get("/api/checkpoints", { task, limit: PAGE });
  const old = state.pages[task];
  if (old && p.next && old.cps.length > p.checkpoints.length) {
    const oldest = p.checkpoints[p.checkpoints.length - 1].seq;
    const rest = old.cps.filter(c => c.seq < oldest);
    state.pages[task] = { cps: p.checkpoints.concat(rest), next: rest.length ? old.next : p.next };
  } else {
    state.pages[task] = { cps: p.checkpoints, next: p.next };
  }
}

async function loadOlder() {
  const pg = state.pages[state.task];
  if (!pg || !pg.next) return;
  const p = await get("/api/checkpoints", { task: state.task, before: pg.next, limit: PAGE });
  pg.cps = pg.cps.concat(p.checkpoints);
  pg.next = p.next;
  render();
}

async function refresh() {
  await loadTasks();
  await Promise.all(state.tasks.map(t => loadFirstPage(t.name)));
  if (state.selected) {
    const cur = (state.pages[state.task]?.cps || []).find(c => c.id === state.selected.id);
    state.selected = cur || null;
  }
  render();
}

function byTask() {
  const m = {};
  for (const [k, v] of Object.entries(state.pages)) m[k] = v.cps;
  return m;
}

function render() {
  draw($("lanes"), state.tasks, byTask(), state.task, state.selected?.id, pick);
  renderList();
  renderDetail();
}

function pick(task, cp) {
  state.task = task;
  $("task-select").value = task;
  state.selected = cp;
  render();
}

function chips(cp) {
  if (cp.empty) return [el("span", { class: "chip none" }, "no change")];
  return [
    cp.added ? el("span", { class: "chip add" }, "+" + cp.added) : null,
    cp.modified ? el("span", { class: "chip mod" }, "~" + cp.modified) : null,
    cp.deleted ? el("span", { class: "chip del" }, "−" + cp.deleted) : null,
    el("span", { class: "chip bytes" }, fmtBytes(cp.bytes)),
  ];
}

// renderList shows the loaded pages of the current task; older pages load
// on demand, so a task of any length renders one page at a time.
function renderList() {
  const pg = state.pages[state.task] || { cps: [], next: 0 };
  const task = state.tasks.find(t => t.name === state.task);
  const total = task?.checkpoints || 0;
  $("list-title").textContent = `${state.task || "No tasks"} · ${pg.cps.length} of ${total} checkpoints`;
  $("cp-list").replaceChildren(...pg.cps.map(cp => el("li", {
    class: ["cp", cp.kind, cp.empty ? "empty" : "", cp.id === state.selected?.id ? "selected" : ""].join(" "),
    dataset: { id: cp.id, seq: String(cp.seq) },
    onclick: () => pick(state.task, cp),
  },
  el("span", { class: "seq" }, "@" + cp.seq),
  el("span", { class: "msg" }, cp.kind === "backup" ? el("span", { class: "tag backup" }, "backup") : null, cp.head ? el("span", { class: "tag head" }, "head") : null,
    cp.id === task?.first_bad ? el("span", { class: "tag first-bad" }, "first bad") : null, cp.message || el("em", {}, "no message")),
  el("span", { class: "when" }, fmtTime(cp.time)),
  el("span", { class: "chips" }, chips(cp)))));
  $("older").hidden = !pg.next;
}

function compareForm(cp) {
  const cps = state.pages[state.task]?.cps || [];
  const opt = (c, sel) => el("option", { value: c.id, selected: sel }, `@${c.seq} ${(c.message || "").slice(0, 40)}`);
  const from = el("select", { id: "cmp-from", "aria-label": "from" }, cps.map(c => opt(c, c.id === cp.id)));
  const to = el("select", { id: "cmp-to", "aria-label": "to" }, el("option", { value: "workspace" }, "live workspace"), cps.map(c => opt(c, false)));
  return el("div", { class: "compare" }, el("span", {}, "Compare"), from, el("span", {}, "→"), to,
    el("button", { id: "cmp-go", onclick: () => showDiff(from.value, to.value) }, "Diff"));
}

function renderDetail() {
  const cp = state.selected;
  const d = $("detail");
  if (!cp) { d.replaceChildren(el("p", { class: "muted" }, "Select a checkpoint on the timeline or in the list.")); return; }
  const kind = cp.kind === "backup" ? "Backup taken before a restore" : cp.empty ? "Checkpoint without file changes" : "Checkpoint";
  d.replaceChildren(
    el("div", { class: "kind " + cp.kind }, kind),
    el("h2", { id: "detail-title" }, cp.message || "(no message)"),
    el("dl", {},
      el("dt", {}, "id"), el("dd", { class: "mono" }, short(cp.id)),
      el("dt", {}, "task"), el("dd", {}, `${state.task} @${cp.seq}${cp.head ? " · head" : ""}`),
      el("dt", {}, "time"), el("dd", {}, fmtTime(cp.time)),
      el("dt", {}, "change"), el("dd", {}, chips(cp)),
      el("dt", {}, "files"), el("dd", {}, String(cp.files))),
    el("div", { class: "buttons" },
      el("button", { id: "diff-parent", disabled: !cp.parent, onclick: () => showDiff(cp.parent, cp.id) }, "Changes in this checkpoint"),
      el("button", { id: "diff-workspace", class: "ghost", onclick: () => showDiff(cp.id, "workspace") }, "Compare with workspace"),
      el("button", { id: "restore-btn", class: "danger", onclick: () => restore({ ref: cp.id }) }, cp.kind === "backup" ? "Restore this backup (undo)" : "Restore…")),
    compareForm(cp));
}

function showDiff(from, to) {
  $("browse").hidden = true;
  const firstBad = state.tasks.find(t => t.name === state.task)?.first_bad;
  openDiff({ task: state.task, from, to, label, describe, restore, firstBad });
}

function label(ref) {
  if (ref === "workspace") return "workspace";
  const cp = (state.pages[state.task]?.cps || []).find(c => c.id === ref);
  return cp ? `@${cp.seq}` : short(ref);
}

function describe(ref) {
  if (ref === "workspace") return "live files";
  const cp = (state.pages[state.task]?.cps || []).find(c => c.id === ref);
  return cp ? cp.message : "";
}

async function restore(req) {
  const done = await confirmRestore({ task: state.task, only: "workspace", paths: [], ...req }, label);
  if (!done) return;
  const { res } = done;
  undoBar($("notice"), done.req, res, label, () => restore({ ref: res.backup }));
  closeDiff();
  $("browse").hidden = false;
  await refresh();
}

function live() {
  const es = new EventSource("/api/events");
  let pending = null;
  const setLive = (on, text) => { $("live").classList.toggle("on", on); $("live-text").textContent = text; };
  es.onopen = () => setLive(true, "live");
  es.onerror = () => setLive(false, "reconnecting");
  const onEvent = () => {
    // Coalesce bursts of saves into one refresh.
    if (pending) return;
    pending = setTimeout(async () => { pending = null; await refresh(); }, 150);
  };
  es.addEventListener("checkpoint", onEvent);
  es.addEventListener("restore", onEvent);
}

$("task-select").addEventListener("change", e => pick(e.target.value, null));
$("older").addEventListener("click", loadOlder);
$("diff-back").addEventListener("click", () => { closeDiff(); $("browse").hidden = false; });
window.addEventListener("resize", () => draw($("lanes"), state.tasks, byTask(), state.task, state.selected?.id, pick));

refresh().then(() => { document.body.dataset.ready = "1"; live(); }, err => {
  $("notice").hidden = false;
  $("notice").textContent = "Could not load the store: " + err.message;
});
