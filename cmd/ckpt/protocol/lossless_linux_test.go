package protocol_test

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

// Two names that differ only in bytes that are not UTF-8 (Linux file
// systems take any bytes; macOS and Windows refuse such names, so this
// test is Linux only) stay apart on the wire: every result names them
// with path_base64 beside path, and a restore given a reported
// path_base64 restores exactly that file, through JSON-RPC and MCP. The
// lossy form, which names nothing, and an empty path are errors.
func TestNamesThatAreNotUTF8CrossTheWire(t *testing.T) {
	ws := t.TempDir()
	c, mcpCall := wireSession(t, ws)
	ff, fe := "a\xff", "a\xfe"
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	call := func(method string, params map[string]any) json.RawMessage {
		t.Helper()
		m, _ := c.Call(method, params)
		if m.Error != nil {
			t.Fatalf("%s %v: %+v", method, params, m.Error)
		}
		return m.Result
	}
	write(ff, "ff one\n")
	write(fe, "fe one\n")
	call("save", map[string]any{"message": "one"})
	write(ff, "ff two\n")
	write(fe, "fe two\n")
	call("save", map[string]any{"message": "two"})
	norm := &normaliser{ws: ws}

	ls := call("ls", map[string]any{"ref": "@2"})
	checkGolden(t, norm, "ls-lossless", ls)
	if sc := mcpCall("ls", map[string]any{"ref": "@2"}); !sameJSON(t, sc, ls) {
		t.Errorf("MCP ckpt_ls = %s, JSON-RPC ls = %s", sc, ls)
	}
	var entries protocol.LsJSON
	decode(t, ls, &entries)
	if got := lossless(t, entries.Entries, func(e protocol.EntryJSON) (string, *string) { return e.Path, e.PathBase64 }); !slices.Equal(got, []string{fe, ff}) {
		t.Fatalf("ls names %q, want %q", got, []string{fe, ff})
	}

	diff := call("diff", map[string]any{"from": "@1", "to": "@2"})
	checkGolden(t, norm, "diff-lossless", diff)
	var d protocol.HostDiffJSON
	decode(t, diff, &d)
	if got := lossless(t, d.Files, func(f protocol.FileJSON) (string, *string) { return f.Path, f.PathBase64 }); !slices.Equal(got, []string{fe, ff}) {
		t.Fatalf("diff names %q, want %q", got, []string{fe, ff})
	}
	var hist protocol.HistoryJSON
	decode(t, call("log", map[string]any{"paths_base64": []string{*entries.Entries[1].PathBase64}}), &hist)
	if len(hist.Entries) != 2 || len(hist.Entries[0].Changes) != 1 || *hist.Entries[0].Changes[0].PathBase64 != b64(ff) {
		t.Fatalf("log of %q = %+v", ff, hist)
	}

	// Restore each file by the lossless name ls reported: a\xff through
	// JSON-RPC, a\xfe through MCP.
	restore := call("restore", map[string]any{"ref": "@1", "paths_base64": []string{*entries.Entries[1].PathBase64}})
	checkGolden(t, norm, "restore-lossless", restore)
	if got := [2]string{readFile(t, ws, ff), readFile(t, ws, fe)}; got != [2]string{"ff one\n", "fe two\n"} {
		t.Fatalf("after restoring %q: contents %q", ff, got)
	}
	mcpCall("restore", map[string]any{"ref": "@1", "paths_base64": []string{*entries.Entries[0].PathBase64}})
	if got := readFile(t, ws, fe); got != "fe one\n" {
		t.Fatalf("after restoring %q through MCP: %q", fe, got)
	}
	var cat protocol.CatJSON
	decode(t, call("cat", map[string]any{"ref": "@2", "path_base64": b64(fe)}), &cat)
	if cat.Content == nil || *cat.Content != "fe two\n" || cat.PathBase64 == nil || *cat.PathBase64 != b64(fe) {
		t.Fatalf("cat by path_base64 = %+v", cat)
	}

	for _, filter := range []map[string]any{
		{"paths": []string{"a\ufffd"}},
		{"paths": []string{""}},
		{"paths_base64": []string{"not base64"}},
	} {
		for method, ref := range map[string]map[string]any{"restore": {"ref": "@1"}, "diff": {"from": "@1"}, "log": {}} {
			params := maps.Clone(filter)
			maps.Copy(params, ref)
			m, _ := c.Call(method, params)
			if m.Error == nil || m.Error.Data.Kind != "usage" || m.Error.Data.ExitCode != protocol.ExitUsage {
				t.Errorf("%s %v: error %+v, want invalid params", method, params, m.Error)
			}
		}
	}
	if got := [2]string{readFile(t, ws, ff), readFile(t, ws, fe)}; got != [2]string{"ff one\n", "fe one\n"} {
		t.Fatalf("a refused restore changed the files: %q", got)
	}
}

// lossless decodes the name of each item: path_base64 when given, else path.
func lossless[T any](t *testing.T, items []T, name func(T) (string, *string)) []string {
	t.Helper()
	var out []string
	for _, it := range items {
		p, p64 := name(it)
		if p64 != nil {
			b, err := base64.StdEncoding.DecodeString(*p64)
			if err != nil {
				t.Fatal(err)
			}
			p = string(b)
		}
		out = append(out, p)
	}
	return out
}

func b64(name string) string { return base64.StdEncoding.EncodeToString([]byte(name)) }

func decode(t *testing.T, doc []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(doc, v); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
