package watch

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/testbound"
)

var (
	diffRounds = flag.Int("watch.rounds", 0, "mutation rounds of TestDifferential (0: 60, or 300 with "+testbound.LongEnv+"=1)")
	diffSeed   = flag.Uint64("watch.seed", 0, "seed of TestDifferential (0: time-based)")
	diffLimit  = flag.Int("watch.limit", 0, "injected watch limit of TestDifferential (0: the kernel's)")
)

// mutator applies random file system operations to a workspace and keeps
// a staging directory outside it to move trees out and back in.
type mutator struct {
	rng     *rand.Rand
	root    string
	outside string
	seq     int
	log     []string
}

// paths lists the directories and non-directories below root on disk,
// ignored ones included.
func (m *mutator) paths() (dirs, files []string) {
	filepath.WalkDir(m.root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		} else {
			files = append(files, p)
		}
		return nil
	})
	return dirs, files
}

func (m *mutator) pick(list []string) string { return list[m.rng.IntN(len(list))] }

func (m *mutator) name() string {
	names := []string{"a", "b", "c", "d", "src", "lib", "x.go", "y.txt", "node_modules", ".gitignore", "z"}
	m.seq++
	if m.rng.IntN(3) == 0 {
		return fmt.Sprintf("n%d", m.seq)
	}
	return names[m.rng.IntN(len(names))]
}

func (m *mutator) content(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + m.rng.IntN(26))
	}
	return b
}

// step applies one random operation. Failures (a name taken, a directory
// moved into itself) are part of the game and ignored.
func (m *mutator) step() {
	dirs, files := m.paths()
	dir := m.pick(dirs)
	op := m.rng.IntN(15)
	if len(files) == 0 && op < 8 || len(dirs) < 60 && m.rng.IntN(3) == 0 {
		op = 9 // keep the tree from shrinking away
	}
	var err error
	if op < 6 {
		f := m.pick(files)
		err = m.fileOp(op, f, dir)
		dir = f
	} else {
		err = m.treeOp(op, dir, dirs)
	}
	m.log = append(m.log, fmt.Sprintf("op %d in %s: %v", op, dir, err))
}

// fileOp changes the file f, or moves it to dir.
func (m *mutator) fileOp(op int, f, dir string) error {
	switch op {
	case 0: // same-size rewrite, inside one timestamp tick more often than not
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
			return os.WriteFile(f, m.content(int(fi.Size())), fi.Mode().Perm())
		}
	case 1:
		return os.Remove(f)
	case 2: // rename a file across the tree, maybe over another
		return os.Rename(f, filepath.Join(dir, m.name()))
	case 3:
		return os.Chmod(f, os.FileMode(0o600|m.rng.IntN(2)*0o111))
	case 4: // symlink swap: a new link renamed over an existing name
		tmp := filepath.Join(dir, fmt.Sprintf(".tmp%d", m.seq))
		if err := os.Symlink(m.name(), tmp); err != nil {
			return err
		}
		return os.Rename(tmp, f)
	case 5:
		return os.Chtimes(f, time.Now(), time.Unix(int64(m.rng.IntN(1<<30)), 0))
	}
	return nil
}

// treeOp writes files into dir, or creates, moves, removes, replaces or
// re-rules directories.
func (m *mutator) treeOp(op int, dir string, dirs []string) error {
	switch {
	case op <= 8:
		fh, err := os.OpenFile(filepath.Join(dir, m.name()), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		fh.Write(m.content(m.rng.IntN(64)))
		return fh.Close()
	case op == 9: // a directory created and filled at once
		d := filepath.Join(dir, m.name())
		if err := os.MkdirAll(filepath.Join(d, "deep", "er"), 0o755); err != nil {
			return err
		}
		for i := range 5 {
			os.WriteFile(filepath.Join(d, "deep", fmt.Sprintf("f%d", i)), m.content(8), 0o644)
			os.WriteFile(filepath.Join(d, "deep", "er", fmt.Sprintf("g%d", i)), m.content(8), 0o644)
		}
	case op == 12: // .gitignore that excludes or re-includes some names
		var lines []string
		for range m.rng.IntN(3) {
			lines = append(lines, m.name())
		}
		return os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(strings.Join(lines, "\n")), 0o644)
	case op == 11 && (dir == m.root || m.rng.IntN(6) > 0):
		return os.Chmod(dir, os.FileMode(0o700|m.rng.IntN(2)*0o055))
	case op == 13 && (dir == m.root || m.rng.IntN(2) == 0): // a tree comes back in
		if out, _ := os.ReadDir(m.outside); len(out) > 0 {
			return os.Rename(filepath.Join(m.outside, out[0].Name()), filepath.Join(dir, m.name()))
		}
	case dir == m.root:
	case op == 10: // move a whole directory across the tree
		return os.Rename(dir, filepath.Join(m.pick(dirs), m.name()))
	case op == 11:
		return os.RemoveAll(dir)
	case op == 13: // a tree leaves the workspace
		return os.Rename(dir, filepath.Join(m.outside, fmt.Sprintf("o%d", m.seq)))
	case op == 14: // a directory replaced in place by another of the same name
		os.RemoveAll(dir)
		if err := os.MkdirAll(filepath.Join(dir, "again"), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "again", "f"), m.content(4), 0o644)
	}
	return nil
}

// burst queues more events than the kernel queue holds while the reader
// is held off, so the queue overflows.
func (m *mutator) burst(w *Watcher) {
	b := w.b.(*inotify)
	b.mu.Lock()
	defer b.mu.Unlock()
	// Two names alternate so the kernel cannot merge consecutive events.
	pair := [2]string{filepath.Join(m.root, "burst0"), filepath.Join(m.root, "burst1")}
	for _, p := range pair {
		os.WriteFile(p, nil, 0o644)
	}
	for i := range 17000 {
		os.Chmod(pair[i%2], os.FileMode(0o600|i/2%2*0o100))
	}
	m.log = append(m.log, "burst")
}

// TestDifferential checks that a listing kept up to date from Changes
// alone equals a cold full listing after every round of random mutations.
func TestDifferential(t *testing.T) {
	seed := *diffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rounds := *diffRounds
	if rounds == 0 {
		rounds = testbound.Scale(60, 300) // both cover a burst (round 50)
	}
	t.Logf("seed %d, rounds %d", seed, rounds)
	root, outside := t.TempDir(), t.TempDir()
	seedTree(t, root, 20, 5)
	w, err := Start(context.Background(), root, Options{MaxWatches: *diffLimit})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mir := &mirror{root: root, w: w, list: map[string]entry{}}
	mut := &mutator{rng: rand.New(rand.NewPCG(seed, 1)), root: root, outside: outside}
	var all, partial, reads, full int
	reasons := map[Reason]int{}
	start := time.Now()
	for round := range rounds {
		mut.log = mut.log[:0]
		switch {
		case round%97 == 50:
			mut.burst(w)
		default:
			for range 1 + mut.rng.IntN(12) {
				mut.step()
			}
		}
		c := w.Changes()
		mir.reads = 0
		if err := mir.apply(c); err != nil {
			t.Fatal(err)
		}
		want, err := listTree(root)
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(mir.list, want, 10); len(d) > 0 {
			t.Fatalf("round %d (seed %d): listing from %+v differs from a full walk:\n%s\nops:\n%s",
				round, seed, c, strings.Join(d, "\n"), strings.Join(mut.log, "\n"))
		}
		for r := Reason(1); r <= ReasonClosed; r <<= 1 {
			if c.Reasons&r != 0 {
				reasons[r]++
			}
		}
		if c.All {
			all++
		} else {
			partial++
			reads += mir.reads
			full += countDirs(want)
		}
	}
	st := w.Stats()
	t.Logf("%d rounds in %v: %d All, %d partial reading %d of %d directories; reasons %v; stats %+v",
		rounds, time.Since(start).Round(time.Millisecond), all, partial, reads, full, reasons, st)
	if st.Overflows == 0 && rounds > 50 {
		t.Errorf("no round overflowed the queue; the burst no longer tests overflow")
	}
}

func countDirs(l map[string]entry) int {
	n := 0
	for _, e := range l {
		if e.kind == 'd' {
			n++
		}
	}
	return n
}
