package engine

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// record is one checkpoint of a generated history and the files it holds.
type record struct {
	id    ID
	task  string
	seq   uint64
	time  time.Time
	files map[string]string
}

// history drives a fixture through generated saves with a controlled clock.
type history struct {
	f       *fixture
	rng     *rand.Rand
	pool    []string // contents files are drawn from, so checkpoints and tasks share them
	minute  int      // the clock, in minutes after base
	base    time.Time
	files   map[string]string // the workspace now
	records []record
}

var historyBase = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// newHistory opens a fixture whose clock the history controls. Contents
// are random bytes (at least 64), which zstd cannot shrink, and small
// enough to be stored in group records.
func newHistory(t *testing.T, seed uint64, poolSize int) *history {
	h := &history{rng: rand.New(rand.NewPCG(seed, 7)), base: historyBase, files: map[string]string{}}
	for range poolSize {
		b := make([]byte, 64+h.rng.IntN(1500))
		for i := range b {
			b[i] = byte(h.rng.Uint32())
		}
		h.pool = append(h.pool, string(b))
	}
	h.f = newFixture(t, testtree.Dir{})
	h.f.open(Options{Now: h.now})
	return h
}

func (h *history) now() time.Time { return h.base.Add(time.Duration(h.minute) * time.Minute) }

// step changes one to three files (rewrites, new files, deletions; none
// when the pool is empty) and saves into task.
func (h *history) step(task string) record {
	h.f.t.Helper()
	for i := 1 + h.rng.IntN(3); i > 0 && len(h.pool) > 0; i-- {
		rel := fmt.Sprintf("d%d/f%d", h.rng.IntN(3), h.rng.IntN(8))
		if _, ok := h.files[rel]; ok && h.rng.IntN(5) == 0 {
			if err := os.Remove(filepath.Join(h.f.ws, rel)); err != nil {
				h.f.t.Fatal(err)
			}
			delete(h.files, rel)
			continue
		}
		c := h.pool[h.rng.IntN(len(h.pool))]
		h.f.write(rel, c)
		h.files[rel] = c
	}
	h.minute++
	res, err := h.f.e.Save(context.Background(), SaveOptions{Task: task, AllowEmpty: true, Message: fmt.Sprint(h.minute)})
	if err != nil {
		h.f.t.Fatal(err)
	}
	r := record{id: res.ID, task: task, seq: res.Seq, time: h.now(), files: maps.Clone(h.files)}
	h.records = append(h.records, r)
	return r
}

// recordBytes is the pack bytes of the records that hold the distinct
// contents of recs, as e's index places them now: each record counted
// once, so a group record holding several of the contents (or contents
// of other checkpoints too) counts whole, once.
func recordBytes(t *testing.T, e *Engine, recs []record) int64 {
	t.Helper()
	type at struct {
		pack   uint32
		offset int64
	}
	seen := map[at]bool{}
	var n int64
	for _, r := range recs {
		for _, c := range r.files {
			loc, found, err := e.db.Locator(objects.Sum([]byte(c)))
			if err != nil || !found {
				t.Fatalf("locator of a %d-byte content: found %v, %v", len(c), found, err)
			}
			if k := (at{loc.Pack, loc.Offset}); !seen[k] {
				seen[k] = true
				n += int64(loc.Length)
			}
		}
	}
	return n
}

// packHeaderBytes is the length of the header every pack starts with (the
// pack format, objects/internal/pack): a pack holding no record is that long.
const packHeaderBytes int64 = 12

// packFiles returns the sizes of the pack files of a store directory.
func packFiles(t *testing.T, store string) []int64 {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(store, "packs"))
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, e := range ents {
		if filepath.Ext(e.Name()) != ".pack" {
			continue // a deferred pack's mark
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, fi.Size())
	}
	return sizes
}

func sum(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}

// checkContents reads every file of each record back through Cat and
// compares it with what the history wrote.
func checkContents(t *testing.T, e *Engine, recs []record) {
	t.Helper()
	for _, r := range recs {
		ls := lsAll(t, e, r, "")
		if !slices.Equal(ls, sortedKeys(r.files)) {
			t.Fatalf("checkpoint %s @%d lists %v, want %v", r.id.Short(), r.seq, ls, sortedKeys(r.files))
		}
		for rel, want := range r.files {
			rc, _, err := e.Cat(context.Background(), r.task, r.id.String(), rel)
			if err != nil {
				t.Fatalf("cat %s %s: %v", r.id.Short(), rel, err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || string(got) != want {
				t.Fatalf("checkpoint %s %s: content differs", r.id.Short(), rel)
			}
		}
	}
}

func lsAll(t *testing.T, e *Engine, r record, dir string) []string {
	t.Helper()
	ents, err := e.Ls(context.Background(), r.task, r.id.String(), dir)
	if err != nil {
		t.Fatalf("ls %s %q: %v", r.id.Short(), dir, err)
	}
	var out []string
	for _, ent := range ents {
		if string(ent.Kind) == "dir" {
			out = append(out, lsAll(t, e, r, ent.Path)...)
		} else {
			out = append(out, ent.Path)
		}
	}
	slices.Sort(out)
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// mustVerify runs a full Verify and fails on any problem.
func mustVerify(t *testing.T, e *Engine) *VerifyReport {
	t.Helper()
	rep, err := e.Verify(context.Background(), VerifyOptions{})
	if err != nil {
		if rep != nil {
			t.Fatalf("verify: %v\n%v", err, rep.Problems)
		}
		t.Fatalf("verify: %v", err)
	}
	return rep
}
