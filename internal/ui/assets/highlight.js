// Line-level syntax highlighting: keywords, strings, comments and numbers
// for common languages, by file extension. A tokenizer per line, with block
// comments carried from one line to the next.

const C_LIKE = { line: "//", block: ["/*", "*/"], quotes: "\"'`" };
const HASH = { line: "#", block: null, quotes: "\"'" };

const KEYWORDS = {
  go: "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota",
  js: "async await break case catch class const continue debugger default delete do else export extends false finally for from function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while yield",
  py: "and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self",
  rs: "as async await break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while",
  c: "auto break case char const continue default do double else enum extern float for goto if int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class public private protected namespace template typename new delete virtual override bool true false nullptr",
  java: "abstract boolean break byte case catch char class const continue default do double else enum extends final finally float for if implements import instanceof int interface long native new null package private protected public return short static super switch synchronized this throw throws true false try void volatile while",
  sh: "if then else elif fi for while do done case esac in function return local export set unset echo exit",
  rb: "begin break case class def do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield",
  css: "important inherit initial unset auto none",
};

const LANGS = {
  go: ["go", C_LIKE], js: ["js", C_LIKE], mjs: ["js", C_LIKE], cjs: ["js", C_LIKE], ts: ["js", C_LIKE], tsx: ["js", C_LIKE], jsx: ["js", C_LIKE],
  json: ["js", C_LIKE], py: ["py", HASH], rs: ["rs", C_LIKE], c: ["c", C_LIKE], h: ["c", C_LIKE], cc: ["c", C_LIKE], cpp: ["c", C_LIKE], hpp: ["c", C_LIKE],
  java: ["java", C_LIKE], kt: ["java", C_LIKE], cs: ["java", C_LIKE], swift: ["java", C_LIKE], sh: ["sh", HASH], bash: ["sh", HASH], zsh: ["sh", HASH],
  rb: ["rb", HASH], yaml: ["sh", HASH], yml: ["sh", HASH], toml: ["sh", HASH], css: ["css", C_LIKE], scss: ["css", C_LIKE],
};

const sets = {};
function keywords(lang) {
  return sets[lang] || (sets[lang] = new Set(KEYWORDS[lang].split(" ")));
}

// highlighter returns a function(line, state) → {nodes, state} for path,
// or null when the language is unknown (the line is shown plain).
export function highlighter(path) {
  const ext = (path.split(".").pop() || "").toLowerCase();
  const spec = LANGS[ext];
  if (!spec) return null;
  const [lang, syn] = spec;
  const kw = keywords(lang);
  return (line, inBlock) => tokenize(line, inBlock, syn, kw);
}

function span(cls, text) {
  const s = document.createElement("span");
  s.className = cls;
  s.textContent = text;
  return s;
}

function tokenize(line, inBlock, syn, kw) {
  const out = [];
  let i = 0, plain = "";
  const flush = () => { if (plain) { out.push(document.createTextNode(plain)); plain = ""; } };
  while (i < line.length) {
    if (inBlock) {
      const end = line.indexOf(syn.block[1], i);
      const stop = end < 0 ? line.length : end + syn.block[1].length;
      out.push(span("tk-com", line.slice(i, stop)));
      i = stop;
      inBlock = end < 0;
      continue;
    }
    if (syn.block && line.startsWith(syn.block[0], i)) { flush(); inBlock = true; continue; }
    if (line.startsWith(syn.line, i)) { flush(); out.push(span("tk-com", line.slice(i))); break; }
    const ch = line[i];
    if (syn.quotes.includes(ch)) {
      flush();
      let j = i + 1;
      while (j < line.length && line[j] !== ch) j += line[j] === "\\" ? 2 : 1;
      out.push(span("tk-str", line.slice(i, j + 1)));
      i = j + 1;
      continue;
    }
    const word = /^[A-Za-z_$][\w$]*|^\d[\w.]*/.exec(line.slice(i, i + 200));
    if (word) {
      const w = word[0];
      if (/^\d/.test(w)) { flush(); out.push(span("tk-num", w)); }
      else if (kw.has(w)) { flush(); out.push(span("tk-kw", w)); }
      else plain += w;
      i += w.length;
      continue;
    }
    plain += ch;
    i++;
  }
  flush();
  return { nodes: out, inBlock };
}
