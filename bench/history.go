//go:build linux

package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ckpt/ckpt/engine"
)

// runHistory measures what a long task's history costs on disk: a copy of
// a git checkout's files saved once, then checkpoints of a few one-line
// edits each (most in a few hot files), by the ckpt library and by a
// shadow git repository side by side; it prints ckpt's store after its GC
// against the shadow .git before and after `git gc --aggressive`, each
// the lengths of its files (the index's log preallocates).
//
//	go run ./bench history -corpus . -checkpoints 300
func runHistory(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	src := fs.String("corpus", ".", "a git checkout whose tracked files make the workspace")
	checkpoints := fs.Int("checkpoints", 300, "checkpoints after the first")
	edits := fs.Int("edits", 3, "one-line edits per checkpoint")
	hot := fs.Int("hot", 30, "files most edits go to")
	hotShare := fs.Float64("hot-share", 0.8, "share of the edits in the hot files")
	seed := fs.Uint64("seed", 1, "seed of the edits")
	dir := fs.String("dir", "", "parent of the temporary work directory (default: the system temp dir)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	h := history{checkpoints: *checkpoints, edits: *edits, hot: *hot, hotShare: *hotShare, seed: *seed}
	if err := h.run(ctx, *src, *dir); err != nil {
		return err
	}
	fmt.Printf("%d files (%d text), %d checkpoints of %d one-line edits (%.0f%% in %d hot files)\n\n",
		h.files, h.text, h.checkpoints, h.edits, 100*h.hotShare, h.hot)
	fmt.Println("| ckpt after gc | packs | index | shadow .git | after `git gc --aggressive` |")
	fmt.Println("|--:|--:|--:|--:|--:|")
	fmt.Printf("| %.2f MiB | %.2f MiB | %.2f MiB | %.2f MiB | %.2f MiB |\n",
		mib(h.packs+h.index), mib(h.packs), mib(h.index), mib(h.shadow), mib(h.shadowGC))
	return nil
}

// history is one run of bench history: its settings, then what it
// measured (bytes, as file lengths).
type history struct {
	checkpoints, edits, hot int
	hotShare                float64
	seed                    uint64

	files, text                    int
	packs, index, shadow, shadowGC int64
}

// run measures h on a copy of src's tracked files in a temporary
// directory under dir.
func (h *history) run(ctx context.Context, src, dir string) error {
	work, err := os.MkdirTemp(dir, "ckpt-history-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	ws, store := filepath.Join(work, "ws"), filepath.Join(work, "store")
	files, text, err := copyTracked(ctx, src, ws)
	if err != nil {
		return err
	}
	if len(text) < h.hot {
		return fmt.Errorf("%s has %d text files, fewer than -hot %d", src, len(text), h.hot)
	}
	h.files, h.text = files, len(text)
	git := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Env = append(os.Environ(), "GIT_DIR="+filepath.Join(work, "shadow.git"), "GIT_WORK_TREE="+ws)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, out)
		}
		return nil
	}
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "bench@ckpt"}, {"config", "user.name", "bench"},
		{"config", "gc.auto", "0"}, {"config", "core.autocrlf", "false"}} {
		if err := git(args...); err != nil {
			return err
		}
	}
	e, err := engine.Open(ctx, ws, engine.Options{StoreDir: store})
	if err != nil {
		return err
	}
	defer e.Close()
	rng := rand.New(rand.NewPCG(h.seed, 0x6869))
	perm := rng.Perm(len(text))
	hotFiles := make([]string, h.hot)
	for i := range hotFiles {
		hotFiles[i] = text[perm[i]]
	}
	for i := 0; i <= h.checkpoints; i++ {
		for k := 0; i > 0 && k < h.edits; k++ {
			f := text[rng.IntN(len(text))]
			if rng.Float64() < h.hotShare {
				f = hotFiles[rng.IntN(len(hotFiles))]
			}
			if err := editLine(filepath.Join(ws, f), rng, fmt.Sprintf(" // edit %d.%d", i, k)); err != nil {
				return err
			}
		}
		msg := fmt.Sprintf("checkpoint %d", i)
		if _, err := e.Save(ctx, engine.SaveOptions{Message: msg, AllowEmpty: true}); err != nil {
			return err
		}
		if err := git("add", "-A"); err != nil {
			return err
		}
		if err := git("commit", "-q", "--allow-empty", "-m", msg); err != nil {
			return err
		}
		if i%50 == 0 {
			progress("checkpoint %d of %d", i, h.checkpoints)
		}
	}
	if _, err := e.GC(ctx, engine.GCOptions{}); err != nil {
		return err
	}
	// Closed and opened again, as by the next CLI command: opening the
	// index flushes what its log holds into tables.
	if err := e.Close(); err != nil {
		return err
	}
	if e, err = engine.Open(ctx, ws, engine.Options{StoreDir: store}); err != nil {
		return err
	}
	if err := e.Close(); err != nil {
		return err
	}
	if h.packs, err = apparentSize(filepath.Join(store, "packs")); err != nil {
		return err
	}
	all, err := apparentSize(store)
	if err != nil {
		return err
	}
	h.index = all - h.packs
	if h.shadow, err = apparentSize(filepath.Join(work, "shadow.git")); err != nil {
		return err
	}
	if err := git("gc", "-q", "--aggressive", "--prune=now"); err != nil {
		return err
	}
	h.shadowGC, err = apparentSize(filepath.Join(work, "shadow.git"))
	return err
}

// copyTracked copies the files git tracks in src (symlinks and
// submodules left out) to dst, and returns how many it copied and the
// text files among them: those without a NUL byte and with at least five
// lines, the ones an edit of a line fits.
func copyTracked(ctx context.Context, src, dst string) (int, []string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", src, "ls-files", "-z").Output()
	if err != nil {
		return 0, nil, fmt.Errorf("list the files of %s: %w", src, err)
	}
	files := 0
	var text []string
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		fi, err := os.Lstat(filepath.Join(src, rel))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			return 0, nil, err
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return 0, nil, err
		}
		if err := os.WriteFile(filepath.Join(dst, rel), data, fi.Mode().Perm()); err != nil {
			return 0, nil, err
		}
		files++
		if !bytes.Contains(data, []byte{0}) && bytes.Count(data, []byte{'\n'}) >= 5 {
			text = append(text, rel)
		}
	}
	return files, text, nil
}

// editLine appends suffix to a line of the file at p, picked by rng.
func editLine(p string, rng *rand.Rand, suffix string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	lines := bytes.Split(data, []byte{'\n'})
	k := rng.IntN(len(lines))
	lines[k] = append(lines[k], suffix...)
	return os.WriteFile(p, bytes.Join(lines, []byte{'\n'}), 0o644)
}
