// A line diff: common prefix and suffix trimmed, then a longest common
// subsequence over the middle when it is small enough; a huge middle is
// shown as all removed and all added rather than stalling the page.

const MAX_CELLS = 4e6;

// diffLines returns ops: {t: "=", a, b} | {t: "-", a} | {t: "+", b}, with a
// and b 0-based line indexes into before and after.
export function diffLines(before, after) {
  const ops = [];
  let pre = 0;
  while (pre < before.length && pre < after.length && before[pre] === after[pre]) ops.push({ t: "=", a: pre, b: pre++ });
  let suf = 0;
  while (suf < before.length - pre && suf < after.length - pre &&
    before[before.length - 1 - suf] === after[after.length - 1 - suf]) suf++;
  const a = before.slice(pre, before.length - suf), b = after.slice(pre, after.length - suf);
  for (const op of middle(a, b)) {
    if (op.a !== undefined) op.a += pre;
    if (op.b !== undefined) op.b += pre;
    ops.push(op);
  }
  for (let i = suf; i > 0; i--) ops.push({ t: "=", a: before.length - i, b: after.length - i });
  return ops;
}

function middle(a, b) {
  const n = a.length, m = b.length;
  if (n * m > MAX_CELLS || n === 0 || m === 0) {
    return a.map((_, i) => ({ t: "-", a: i })).concat(b.map((_, j) => ({ t: "+", b: j })));
  }
  // lcs[i][j] = LCS length of a[i:] and b[j:], rows as typed arrays.
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    const row = lcs[i], next = lcs[i + 1];
    for (let j = m - 1; j >= 0; j--) {
      row[j] = a[i] === b[j] ? next[j + 1] + 1 : Math.max(next[j], row[j + 1]);
    }
  }
  const ops = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) ops.push({ t: "=", a: i++, b: j++ });
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) ops.push({ t: "-", a: i++ });
    else ops.push({ t: "+", b: j++ });
  }
  while (i < n) ops.push({ t: "-", a: i++ });
  while (j < m) ops.push({ t: "+", b: j++ });
  return ops;
}

// hunks folds runs of unchanged lines longer than 2*ctx into a gap marker
// {t: "gap", n}, keeping ctx lines of context on each side.
export function hunks(ops, ctx = 3) {
  const out = [];
  let i = 0;
  while (i < ops.length) {
    if (ops[i].t !== "=") { out.push(ops[i++]); continue; }
    let j = i;
    while (j < ops.length && ops[j].t === "=") j++;
    const run = j - i, head = i === 0 ? 0 : ctx, tail = j === ops.length ? 0 : ctx;
    if (run > head + tail + 1) {
      out.push(...ops.slice(i, i + head), { t: "gap", n: run - head - tail }, ...ops.slice(j - tail, j));
    } else {
      out.push(...ops.slice(i, j));
    }
    i = j;
  }
  return out;
}

// pairRows lines up removed and added runs for a side-by-side view:
// rows of {l: op|null, r: op|null} or a gap.
export function pairRows(ops) {
  const rows = [];
  let i = 0;
  while (i < ops.length) {
    const op = ops[i];
    if (op.t === "=" || op.t === "gap") { rows.push({ l: op, r: op }); i++; continue; }
    const dels = [], adds = [];
    while (i < ops.length && ops[i].t === "-") dels.push(ops[i++]);
    while (i < ops.length && ops[i].t === "+") adds.push(ops[i++]);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) rows.push({ l: dels[k] || null, r: adds[k] || null });
  }
  return rows;
}
