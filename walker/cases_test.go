package walker

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// ignoreCase is one workspace for the ignore conformance test. Cases with
// neither exclude, extra nor profile are batched as subdirectories of one
// repository: a .gitignore applies only below its directory, so a case in
// c0042/ behaves exactly as it would at a repository root.
type ignoreCase struct {
	name    string
	files   tree
	exclude string   // content of .git/info/exclude
	extra   []string // Options.Extra, and git ls-files --exclude
	profile string   // walker profile; its list is appended to info/exclude for git
}

func (c ignoreCase) batchable() bool {
	return c.exclude == "" && c.extra == nil && c.profile == ""
}

// commonFiles is a spread of names every hand-written case is checked on.
var commonFiles = []string{
	"bar", "c", "two", "foo.txt", "foo.log", "a/foo", "a/bar", "a/c", "a/b/foo", "a/b/c/foo",
	"b/foo", "foo/bar", "foo/baz/bar", "x/foo/y", "doc/frotz", "doc/a/frotz",
	"a.1", "a.2", "a.3", "one/a.1", "one/a.3", "one/two/a.2", "#hash", "!bang", "sp ace",
	"trail ", "x\\y", "[ab]", "star*", "q?", "data/x.txt", "data/deep/y.txt", "data/deep/z.bin",
}

func withCommon(extra tree) tree {
	tr := tree{}
	for _, f := range commonFiles {
		tr[f] = "x"
	}
	for k, v := range extra {
		tr[k] = v
	}
	return tr
}

// handCases are modelled on git's own tests (t0008-ignores,
// t3001-ls-files-others-exclude) and on corners of dir.c.
func handCases() []ignoreCase {
	gi := func(name, content string, more ...string) ignoreCase {
		tr := tree{".gitignore": content}
		for i := 0; i+1 < len(more); i += 2 {
			tr[more[i]] = more[i+1]
		}
		return ignoreCase{name: name, files: withCommon(tr)}
	}
	cases := []ignoreCase{
		gi("literal", "foo\n"),
		gi("anchored", "/foo\n"),
		gi("dir only", "foo/\n"),
		gi("anchored dir only", "/a/b/\n"),
		gi("middle slash anchors", "a/foo\n"),
		gi("star ext", "*.log\n*.txt\n"),
		gi("negation", "*.txt\n!foo.txt\n"),
		gi("negation order", "!foo.txt\n*.txt\n"),
		gi("reinclude under excluded dir", "a/\n!a/foo\n"),
		gi("reinclude via dir star", "a/*\n!a/b/\n"),
		gi("data negated dirs", "/data/**\n!/data/**/\n!/data/**/*.txt\n"),
		gi("data star star", "data/**\n!data/**/\n!data/**/*.txt\n"),
		gi("leading star star", "**/foo\n"),
		gi("leading star star dir", "**/b/\n"),
		gi("trailing star star", "a/**\n"),
		gi("middle star star", "a/**/foo\n"),
		gi("star star no slash", "a**foo\nfoo**\n"),
		gi("single star dir", "*/foo\n"),
		gi("question", "?\nfo?\n"),
		gi("class", "[ab]\n[!f]oo\n"),
		gi("class caret", "[^a]\n"),
		gi("escaped hash", "\\#hash\n"),
		gi("comment hash", "#hash\n"),
		gi("escaped bang", "\\!bang\n"),
		gi("trailing spaces trimmed", "foo   \nbar \t\n"),
		gi("escaped trailing space", "trail\\ \n"),
		gi("escaped star", "star\\*\n"),
		gi("escaped question", "q\\?\n"),
		gi("literal brackets escaped", "\\[ab]\n"),
		gi("backslash in name", "x\\\\y\n"),
		gi("space in name", "sp ace\n"),
		gi("crlf", "foo\r\nbar\r\n"),
		gi("bom", "\xef\xbb\xbffoo\n"),
		gi("blank lines", "\n\n   \nfoo\n\n"),
		gi("lone bang", "!\nfoo\n"),
		gi("lone slash", "/\n"),
		gi("star", "*\n!*/\n!*.txt\n"),
		gi("everything", "*\n"),
		gi("doc frotz", "doc/frotz/\n"),
		gi("doc frotz file", "doc/frotz\n"),
		gi("numbered t3001", "*.1\n/*.3\n!*.6\n",
			"one/.gitignore", "*.2\ntwo/*.4\n!*.7\n*.8\n",
			"one/two/.gitignore", "!*.2\n!*.8\n",
			"one/a.6", "x", "one/a.7", "x", "one/a.8", "x", "one/two/a.8", "x", "one/two/a.4", "x", "a.6", "x"),
		gi("t0008 layout", "one\nignored-*\ntop-level-dir/\n",
			"a/.gitignore", "two*\n*three\n",
			"a/b/.gitignore", "four\nfive\n# comment\nsix\nignored-dir/\n\n!on*\n!two\n",
			"a/one", "x", "a/not-ignored", "x", "a/b/on", "x", "a/b/one", "x", "a/b/one one", "x",
			"a/b/one\"three", "x", "a/b/two", "x", "a/b/twooo", "x", "a/b/ignored-dir/foo", "x",
			"a/b/ignored-and-untracked", "x", "top-level-dir/f", "x", "a/top-level-dir/f", "x",
			"a/3-three", "x", "a/three-not-this-one", "x"),
		gi("deeper wins", "*.txt\n", "a/.gitignore", "!*.txt\n", "a/x.txt", "x", "a/b/y.txt", "x"),
		gi("deeper excludes", "!*.txt\n", "a/.gitignore", "*.txt\n", "a/x.txt", "x"),
		gi("nested anchored", "", "a/.gitignore", "/foo\n/b/c/\n"),
		gi("nested double star", "", "a/.gitignore", "**/foo\n"),
		gi("subdir pattern does not escape", "", "a/.gitignore", "../foo\nfoo/../bar\n"),
		gi("symlink not a dir", "lnk/\n", "lnk", "->a", "lnk2", "->a"),
		gi("symlink by name", "lnk\n", "lnk", "->a"),
		gi("gitignore ignored itself", ".gitignore\n"),
		gi("ignored subdir gitignore unread", "a/\n", "a/.gitignore", "!foo\n"),
		gi("symlinked gitignore not read", "", "a/.gitignore", "->../foo.txt", "foo.txt", "foo\n"),
		gi("unicode", "héllo*\n日本/\n", "héllo.txt", "x", "日本/語", "x", "日本語", "x"),
		gi("newline name", "new*\n", "new\nline", "x", "old\nline", "x"),
		gi("posix classes", "[[:digit:]]*\n[[:upper:]][[:lower:]]\n", "1x", "x", "Ab", "x", "AB", "x"),
		gi("broken class", "[[:nope:]]\n[a\n", "[a", "x", "n", "x"),
		gi("range", "[a-c].[0-9]\n", "b.1", "x", "d.1", "x"),
		gi("escape at end", "foo\\\n"),
		gi("dir star slash", "a/*/\n"),
		gi("double star slash only", "**/\n"),
		gi("triple star", "***/foo\na/***\n"),
		gi("anchored negation below ignored glob", "/*\n!/a\n/a/*\n!/a/b\n"),
	}
	return append(cases, specialCases()...)
}

// specialCases need their own repository: info/exclude, extras, profiles.
func specialCases() []ignoreCase {
	return []ignoreCase{
		{name: "info exclude", files: withCommon(nil), exclude: "*.txt\nfoo\n"},
		{name: "info exclude below gitignore", files: withCommon(tree{".gitignore": "!foo.txt\n"}), exclude: "*.txt\n"},
		{name: "info exclude anchored", files: withCommon(nil), exclude: "/a/b\n"},
		{name: "extra highest", files: withCommon(tree{".gitignore": "*.log\n"}), extra: []string{"!foo.log", "a/"}},
		{name: "extra anchored", files: withCommon(nil), extra: []string{"/foo", "b/foo"}},
		{name: "profile cline", profile: "cline", files: withCommon(tree{
			"build/x": "x", "src/build/y": "x", "pic.png": "x", "env/a": "x", ".env.local": "x", "target/dependency/z": "x",
			"a/.vscode/s": "x", "yarn-error.log.1": "x", ".gitignore": "!*.png\n",
		})},
		{name: "profile roo", profile: "roo", files: withCommon(tree{
			"pkg/x": "x", "dump.sql": "x", "a/node_modules/m": "x", ".terraform/t": "x", "ok.go": "x",
		}), exclude: "!dump.sql\n"},
		{name: "profile default", profile: "default", files: withCommon(tree{
			"node_modules/m": "x", "a/__pycache__/c": "x", ".DS_Store": "x", "a/.DS_Store": "x",
			".gitignore": "!node_modules/\n",
		})},
	}
}

// wildmatchPairs are pattern/path pairs in the spirit of git's t3070; each
// becomes a case whose .gitignore holds the pattern, plus the path and a few
// neighbours as files.
var wildmatchPairs = [][2]string{
	{"foo", "foo"}, {"bar", "foo"}, {"???", "foo"}, {"??", "foo"}, {"*", "foo"}, {"f*", "foo"},
	{"*f", "foo"}, {"*foo*", "foo"}, {"*ob*a*r*", "foobar"}, {"*ab", "aaaaaaabababab"},
	{"foo\\*", "foo*"}, {"foo\\*bar", "foobar"}, {"f\\\\oo", "f\\oo"}, {"*[al]?", "ball"},
	{"[ten]", "ten"}, {"**[!te]", "ten"}, {"**[!ten]", "ten"}, {"t[a-g]n", "ten"},
	{"t[!a-g]n", "ten"}, {"t[!a-g]n", "ton"}, {"t[^a-g]n", "ton"}, {"a[]]b", "a]b"},
	{"a[]-]b", "a-b"}, {"a[]-]b", "a]b"}, {"a[]-]b", "aab"}, {"a[]a-]b", "aab"}, {"]", "]"},
	{"foo*bar", "foo/baz/bar"}, {"foo**bar", "foo/baz/bar"}, {"foo**bar", "foobazbar"},
	{"foo/**/bar", "foo/baz/bar"}, {"foo/**/**/bar", "foo/baz/bar"}, {"foo/**/bar", "foo/b/a/z/bar"},
	{"foo/**/**/bar", "foo/b/a/z/bar"}, {"foo/**/bar", "foo/bar"}, {"foo/**/**/bar", "foo/bar"},
	{"foo?bar", "foo/bar"}, {"foo[/]bar", "foo/bar"}, {"foo[^a-z]bar", "foo/bar"},
	{"f[^eiu][^eiu][^eiu][^eiu][^eiu]r", "foo/bar"}, {"f[^eiu][^eiu][^eiu][^eiu][^eiu]r", "foo-bar"},
	{"**/foo", "foo"}, {"**/foo", "XXX/foo"}, {"**/foo", "bar/baz/foo"}, {"*/foo", "bar/baz/foo"},
	{"**/bar*", "foo/bar/baz"}, {"**/bar/*", "deep/foo/bar/baz"}, {"**/bar/**", "deep/foo/bar/baz/x"},
	{"**/bar/*", "deep/foo/bar"}, {"**/bar**", "foo/bar/baz"}, {"*/bar/**", "foo/bar/baz/x"},
	{"*/bar/**", "deep/foo/bar/baz/x"}, {"**/bar/*/*", "deep/foo/bar/baz/x"}, {"a[c-c]st", "acrt"},
	{"a[c-c]rt", "acrt"}, {"[!]-]", "]"}, {"[!]-]", "a"}, {"\\", ""}, {"\\\\", "\\"},
	{"*/\\\\", "x/\\"}, {"[\\-_]", "-"}, {"[\\]]", "]"}, {"[\\]]", "\\]"}, {"[\\]]", "\\"},
	{"a[]b", "ab"}, {"a[]b", "a[]b"}, {"ab[", "ab["}, {"[!", "ab"}, {"[-", "ab"}, {"[-]", "-"},
	{"[a-", "-"}, {"[!a-", "-"}, {"[--A]", "-"}, {"[--A]", "5"}, {"[ --]", " "}, {"[ --]", "$"},
	{"[ --]", "-"}, {"[ --]", "0"}, {"[---]", "-"}, {"[------]", "-"}, {"[a-e-n]", "j"},
	{"[a-e-n]", "-"}, {"[!------]", "a"}, {"[]-a]", "["}, {"[]-a]", "^"}, {"[!]-a]", "^"},
	{"[!]-a]", "["}, {"[a^bc]", "^"}, {"[a-]b]", "-b]"}, {"[\\]", "\\"}, {"[\\\\]", "\\"},
	{"[!\\\\]", "\\"}, {"[A-\\\\]", "G"}, {"b*a", "aaabbb"}, {"*ba*", "aabcaa"}, {"[,]", ","},
	{"[\\\\,]", ","}, {"[\\\\,]", "\\"}, {"[[-]]", "-]"}, {"[[-]]", "-"}, {"[[-]]", "["},
	{"[,-.]", "-"}, {"[,-.]", "+"}, {"[,-.]", "-.]"}, {"[\\1-\\3]", "2"}, {"[\\1-\\3]", "3"},
	{"[\\1-\\3]", "4"}, {"[[-\\]]", "\\"}, {"[[-\\]]", "["}, {"[[-\\]]", "]"}, {"[[-\\]]", "-"},
	{"-*-*-*-*-*-*-12-*-*-*-m-*-*-*", "-adobe-courier-bold-o-normal--12-120-75-75-m-70-iso8859-1"},
	{"-*-*-*-*-*-*-12-*-*-*-m-*-*-*", "-adobe-courier-bold-o-normal--12-120-75-75-X-70-iso8859-1"},
	{"-*-*-*-*-*-*-12-*-*-*-m-*-*-*", "-adobe-courier-bold-o-normal--12-120-75-75-/-70-iso8859-1"},
	{"XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*", "XXX/adobe/courier/bold/o/normal//12/120/75/75/m/70/iso8859/1"},
	{"XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*", "XXX/adobe/courier/bold/o/normal//12/120/75/75/X/70/iso8859/1"},
	{"**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txt"},
	{"**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txtz"},
	{"*/*/*", "foo/bba/arr"}, {"*/*/*", "foo/bb/aa/rr"}, {"**/**/**", "foo/bb/aa/rr"},
	{"*X*i", "abcXdefXghi"}, {"*X*i", "ab/cXd/efXg/hi"}, {"*/*X*/*/*i", "ab/cXd/efXg/hi"},
	{"**/*X*/**/*i", "ab/cXd/efXg/hi"}, {"[[:alpha:]][[:digit:]][[:upper:]]", "a1B"},
	{"[[:digit:][:upper:][:space:]]", "A"}, {"[[:digit:][:upper:][:space:]]", "1"},
	{"[[:digit:][:upper:][:space:]]", " x"}, {"[[:digit:][:upper:][:spaci:]]", "1"},
	{"[[:digit:][:punct:][:space:]]", ","}, {"[[:xdigit:]]", "5"}, {"[[:xdigit:]]", "f"},
	{"[[:xdigit:]]", "D"}, {"[[:xdigit:]]", "g"}, {"[a-c[:digit:]x-z]", "5"},
	{"[a-c[:digit:]x-z]", "b"}, {"[a-c[:digit:]x-z]", "y"}, {"[a-c[:digit:]x-z]", "q"},
	{"[[:lower:]]", "a"}, {"[![:lower:]]", "A"}, {"[[:punct:]]", ","}, {"[[:graph:]]", "~"},
	{"[[:print:]]", " "}, {"[[:blank:]]", "\t"}, {"[[:cntrl:]]", "\x7f"}, {"[[:space:]]", "\v"},
	{"[[:space:]]", "\f"}, {"[[:alnum:]]", "é"}, {"[[:", "[["}, {"[[:]", "["}, {"[[:a]", "a"},
	{"[a-z]", "\xc3"}, {"[\xc3-\xc4]*", "éa"}, {"*.[ch]", "main.c"}, {"**", "any/thing"},
	{"a/**", "a"}, {"a/**/", "a/b/c"}, {"/**/b", "a/b"}, {"**/", "a/b"},
}

func wildmatchCases() []ignoreCase {
	var out []ignoreCase
	for i, pr := range wildmatchPairs {
		pattern, path := pr[0], pr[1]
		tr := tree{".gitignore": pattern + "\n", "other": "x", "dir/other": "x"}
		if path != "" && !strings.Contains(path, "//") {
			tr[path] = "x"
			tr[path+"z"] = "x"
		}
		out = append(out, ignoreCase{name: fmt.Sprintf("wildmatch %d %q ~ %q", i, pattern, path), files: tr})
	}
	return out
}

// Random cases draw names and patterns from small alphabets so that
// patterns hit the files often and interact (negation, depth, anchoring).
var (
	randDirs    = []string{"a", "b", "ab", "d", "dd", "x.d"}
	randFiles   = []string{"a", "b", "ab", "c.txt", "d.log", "e.c", "foo", "ba", "[a]", "a b", "*"}
	randPieces  = []string{"a", "b", "ab", "d", "foo", "*", "?", "**", "a*", "*b", "*.txt", "*.c", "[ab]", "[!a]*", "[a-c]", "d?", "\\*", "[[:alpha:]]*"}
	randPrefix  = []string{"", "", "", "!", "/", "!/"}
	randSuffix  = []string{"", "", "", "/"}
	randIgnDirs = []string{"", "", "a", "b", "a/b", "d"}
)

func randomPath(r *rand.Rand) string {
	depth := r.IntN(4)
	parts := make([]string, 0, depth+1)
	for range depth {
		parts = append(parts, randDirs[r.IntN(len(randDirs))])
	}
	return strings.Join(append(parts, randFiles[r.IntN(len(randFiles))]), "/")
}

func randomPattern(r *rand.Rand) string {
	n := 1 + r.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = randPieces[r.IntN(len(randPieces))]
	}
	return randPrefix[r.IntN(len(randPrefix))] + strings.Join(parts, "/") + randSuffix[r.IntN(len(randSuffix))]
}

// randomCases generates n seeded cases.
func randomCases(seed uint64, n int) []ignoreCase {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]ignoreCase, 0, n)
	for i := range n {
		tr := tree{}
		for range 8 + r.IntN(25) {
			p := randomPath(r)
			if !conflicts(tr, p) {
				tr[p] = "x"
			}
		}
		for range 1 + r.IntN(3) {
			var lines []string
			for range 1 + r.IntN(5) {
				lines = append(lines, randomPattern(r))
			}
			p := join(randIgnDirs[r.IntN(len(randIgnDirs))], ".gitignore")
			if !conflicts(tr, p) {
				tr[p] = strings.Join(lines, "\n") + "\n"
			}
		}
		out = append(out, ignoreCase{name: fmt.Sprintf("random %d/%d", seed, i), files: tr})
	}
	return out
}

// conflicts reports whether adding file p to tr would need a path to be
// both a file and a directory.
func conflicts(tr tree, p string) bool {
	for q := range tr {
		if q == p || strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}
