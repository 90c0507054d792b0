package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIRoundTripIsByteExact saves files whose bytes a text-mode tool
// would change (CRLF, lone CR, mixed endings, no final newline, every byte
// value), edits them, diffs, and restores each checkpoint: every file comes
// back byte for byte, on Linux and with ckpt.exe under Wine.
func TestCLIRoundTripIsByteExact(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var all strings.Builder
	for b := range 256 {
		all.WriteByte(byte(b))
	}
	gens := []map[string]string{{
		"crlf.txt":       "one\r\ntwo\r\n",
		"lf.txt":         "one\ntwo\n",
		"mixed.txt":      "a\r\nb\nc\rd",
		"sub/bytes.bin":  all.String(),
		"sub/empty.txt":  "",
		"sub/deep/x.txt": "x\r\n",
	}, {
		"crlf.txt":       "one\r\nTWO\r\n",
		"lf.txt":         "one\r\ntwo\r\n",
		"mixed.txt":      "a\nb\r\nc\rd\r",
		"sub/bytes.bin":  all.String()[1:] + "\x00",
		"sub/empty.txt":  "\r\n",
		"sub/deep/x.txt": "x\n",
	}}
	for _, g := range gens {
		for rel, content := range g {
			e.write(rel, content)
		}
		e.ok("save")
	}
	if got := e.ok("diff", "@1", "@2", "--name-status"); strings.Count(got, "M\t") != len(gens[0]) {
		t.Fatalf("diff @1 @2 --name-status = %q, want every file modified", got)
	}
	if patch := e.ok("diff", "@1", "@2", "--", "crlf.txt"); !strings.Contains(patch, "-two\r\n+TWO\r\n") {
		t.Fatalf("patch does not keep the CRLF bytes: %q", patch)
	}
	for _, step := range []int{0, 1, 0} {
		e.ok("restore", []string{"@1", "@2"}[step])
		for rel, want := range gens[step] {
			got, err := os.ReadFile(filepath.Join(e.ws, filepath.FromSlash(rel)))
			if err != nil || string(got) != want {
				t.Fatalf("after restore @%d: %s = %q (%v), want %q", step+1, rel, got, err, want)
			}
		}
	}
}
