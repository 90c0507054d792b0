//go:build linux

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bench history on a small repository: the edits' history costs the packs
// a delta's bytes per edit, far less than the edited files compressed
// whole, and the shadow repository shrinks under git gc.
func TestHistoryOnASmallRepository(t *testing.T) {
	src := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("func return err nil if for range package import store pack blob chunk index tree save restore diff")
	for i := range 40 {
		var b strings.Builder
		for line := range 150 {
			fmt.Fprintf(&b, "%d", line)
			for range 6 {
				fmt.Fprintf(&b, " %s%d", words[rng.IntN(len(words))], rng.IntN(100))
			}
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%02d.go", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}} {
		if out, err := exec.Command("git", append([]string{"-C", src}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v: %s", args[0], err, out)
		}
	}
	measure := func(checkpoints int) history {
		h := history{checkpoints: checkpoints, edits: 3, hot: 5, hotShare: 0.8, seed: 1}
		if err := h.run(context.Background(), src, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		return h
	}
	first, long := measure(0), measure(12)
	if long.files != 40 || long.text != 40 {
		t.Fatalf("copied %d files, %d of them text; want 40 and 40", long.files, long.text)
	}
	edits := int64(12 * 3)
	grown := long.packs - first.packs
	t.Logf("%d one-line edits grew the packs by %d bytes", edits, grown)
	if grown <= 0 || grown > edits*400 {
		t.Fatalf("%d one-line edits grew the packs by %d bytes, want under %d (a delta each)", edits, grown, edits*400)
	}
	if long.index <= 0 || long.shadowGC <= 0 || long.shadowGC >= long.shadow {
		t.Fatalf("index %d bytes, shadow .git %d, after git gc %d", long.index, long.shadow, long.shadowGC)
	}
}
