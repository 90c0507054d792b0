// Restores from the page: a dry-run plan shown in a confirmation dialog,
// then the restore, then an undo bar that restores the backup.

import { post, el, short, shownPaths } from "./api.js";

const $ = id => document.getElementById(id);
const SHOW = 200; // paths listed per section; the rest are counted

function pathList(title, cls, paths) {
  if (!paths.length) return null;
  const shown = paths.slice(0, SHOW);
  return el("section", { class: "plan " + cls },
    el("h3", {}, `${title} (${paths.length})`),
    el("ul", { class: "mono" }, shown.map(p => el("li", {}, p)),
      paths.length > SHOW ? el("li", { class: "muted" }, `… and ${paths.length - SHOW} more`) : null));
}

function planBody(req, plan, label) {
  const conflicts = plan.conflicts.map(c => `${c.path} (${c.reason})`);
  const nothing = !plan.write.length && !plan.delete.length;
  const named = shownPaths(req);
  return [
    el("p", {}, `Restore ${named.length ? named.join(", ") + " from " : ""}${label(req.ref)} in task ${req.task}.`),
    el("label", { class: "only" }, "Restore ",
      el("select", { id: "only", "aria-label": "what to restore" },
        ["workspace", "state", "both"].map(o => el("option", { value: o, selected: o === req.only },
          o === "workspace" ? "files" : o === "state" ? "state only" : "files and state")))),
    plan.backup ? el("p", { class: "backup-note" }, "The current workspace is saved as a backup checkpoint first (or its last checkpoint, when nothing changed since), so this restore can be undone.") : el("p", { class: "warn" }, "No backup will be taken."),
    plan.state ? el("p", {}, "The task's state is rewound too.") : null,
    nothing ? el("p", { class: "muted", id: "plan-nothing" }, "No files will change.") : null,
    pathList("Will write", "write", plan.write),
    pathList("Will delete", "delete", plan.delete),
    pathList("Conflicts, left alone", "conflict", conflicts),
  ];
}

// confirmRestore shows the dry-run plan of req and, when confirmed, restores.
// It resolves to {req, res}: the request as confirmed (its scope may have
// changed in the dialog) and the restore's result; null when cancelled.
export async function confirmRestore(req, label) {
  const dlg = $("confirm");
  $("notice").hidden = true;
  for (;;) {
    const plan = await post("/api/plan", req);
    $("confirm-title").textContent = "Restore " + label(req.ref) + "?";
    $("confirm-body").replaceChildren(...planBody(req, plan, label).filter(Boolean));
    const changed = new Promise(resolve => $("only").addEventListener("change", e => resolve(e.target.value), { once: true }));
    const closed = new Promise(resolve => dlg.addEventListener("close", () => resolve(null), { once: true }));
    if (!dlg.open) dlg.showModal();
    const only = await Promise.race([changed, closed]);
    if (only) { req = { ...req, only }; continue; }
    if (dlg.returnValue !== "ok") return null;
    return { req, res: await post("/api/restore", req) };
  }
}

// undoBar announces a finished restore with an undo button.
export function undoBar(host, req, res, label, undo) {
  host.hidden = false;
  const named = shownPaths(req);
  const what = named.length ? `${named.join(", ")} from ${label(res.restored)}` : label(res.restored);
  const conflicts = res.conflicts.length ? ` · ${res.conflicts.length} conflict(s) left alone` : "";
  host.replaceChildren(
    el("span", { id: "restored-msg" }, `Restored ${what}: ${res.written.length} written, ${res.deleted.length} deleted${conflicts}.`),
    res.backup ? el("span", { class: "muted" }, ` Backup ${short(res.backup)}.`) : null,
    res.backup ? el("button", { id: "undo", onclick: undo }, "Undo") : null,
    el("button", { class: "ghost", onclick: () => { host.hidden = true; } }, "Dismiss"));
}
