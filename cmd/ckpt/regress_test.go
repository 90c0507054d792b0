package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCLILsQuotesNames lists a checkpoint holding names with a newline, a
// tab and a quote: each must stay on its one line, C-quoted as diff quotes
// it, and JSON keeps the raw name.
func TestCLILsQuotesNames(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Windows file names cannot hold a newline, a tab or a quote")
	}
	e := newEnv(t)
	e.write("plain", "p")
	e.write("new\nline", "n")
	e.write("tab\there", "t")
	e.write(`say"hi`, "q")
	e.ok("save")
	out := e.ok("ls", "@1")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("ls printed %d lines, want 4:\n%s", len(lines), out)
	}
	for _, want := range []string{` "new\nline"`, ` "tab\there"`, ` "say\"hi"`, " plain"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("ls output lacks %q:\n%s", want, out)
		}
	}
	var ls struct {
		Entries []struct {
			Path string `json:"path"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(e.ok("ls", "--json", "@1")), &ls); err != nil || len(ls.Entries) != 4 || ls.Entries[0].Path != "new\nline" {
		t.Errorf("ls --json does not keep the raw name: %+v, %v", ls, err)
	}
}

// TestCLIVerifyFindsDamagedPackHeader flips one byte of a pack's magic:
// verify must report the store corrupt (exit 5), naming the pack.
func TestCLIVerifyFindsDamagedPackHeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("f", strings.Repeat("content ", 100))
	e.ok("save")
	packs, err := filepath.Glob(filepath.Join(e.store, "packs", "*.pack"))
	if err != nil || len(packs) != 1 {
		t.Fatalf("packs = %v, %v", packs, err)
	}
	f, err := os.OpenFile(packs[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	f.ReadAt(b, 2)
	b[0] ^= 0x20
	f.WriteAt(b, 2)
	f.Close()
	r := e.run("", "verify")
	if r.code != 5 || !strings.Contains(r.stdout+r.stderr, "bad pack header") || !strings.Contains(r.stdout+r.stderr, filepath.Base(packs[0])) {
		t.Fatalf("verify of a damaged pack header: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
