// Small wrappers over the server's JSON API. The token travels in an
// HttpOnly cookie set when the page was first opened.

async function check(res) {
  if (!res.ok) {
    let msg = res.status + " " + res.statusText;
    try { msg = (await res.json()).error || msg; } catch (_) { /* not JSON */ }
    throw new Error(msg);
  }
  return res.json();
}

export function get(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "") q.set(k, v);
  }
  return fetch(path + "?" + q.toString(), { credentials: "same-origin" }).then(check);
}

export function post(path, body) {
  return fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  }).then(check);
}

// A name that is not valid UTF-8 arrives as path (with U+FFFD for each bad
// byte, so two names can read alike) and path_base64 (its bytes). The page
// shows path, tells files apart by pathKey and names them to the server by
// pathParams or restorePaths, losing no byte.

// pathKey tells files apart: their bytes when their names read alike.
export function pathKey(f) { return f.path_base64 ? "\0" + f.path_base64 : f.path; }

// pathParams names file f in a query.
export function pathParams(f) { return f.path_base64 ? { path_base64: f.path_base64 } : { path: f.path }; }

// restorePaths names file f in a restore request.
export function restorePaths(f) { return f.path_base64 ? { paths: [], paths_base64: [f.path_base64] } : { paths: [f.path] }; }

// shownPaths are the names a restore request gives, for a person.
export function shownPaths(req) {
  const dec = new TextDecoder(); // U+FFFD for a bad byte, as the server's path
  const bytes = b => Uint8Array.from(atob(b), c => c.charCodeAt(0));
  return [...req.paths, ...(req.paths_base64 || []).map(b => dec.decode(bytes(b)))];
}

export function rawURL(params) {
  return "/api/raw?" + new URLSearchParams(params).toString();
}

// el builds an element: el("div", {class: "x", onclick: f}, child, "text").
export function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(n.dataset, v);
    else n.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    n.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return n;
}

export function fmtBytes(n) {
  if (n < 1024) return n + " B";
  const u = ["KiB", "MiB", "GiB", "TiB"];
  let i = -1;
  do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
  return n.toFixed(n < 10 ? 1 : 0) + " " + u[i];
}

export function fmtTime(s) {
  const d = new Date(s);
  return d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export function short(id) { return id ? id.slice(0, 12) : ""; }
