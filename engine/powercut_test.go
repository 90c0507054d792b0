package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/testbound"
)

// powerCutSample is how many sync points of each scenario the bounded
// sweep explores (testbound.LongTests, which CI sets, explores all), spread evenly over the scenario (the first and the
// last always among them).
const powerCutSample = 4

// pcWorld is a workspace on the real file system and a store on a strict
// in-memory one (faultfs.MemFS), through the store's seam. The store's
// directory also exists, empty but for the lock, on the real file system:
// the lock is a kernel lock on an open file, which no power cut outlives.
type pcWorld struct {
	t     *testing.T
	ws    string
	store string
	mem   *faultfs.MemFS
	files map[string]string // the workspace now

	remote string // a file remote's directory (another machine's disk: no power cut reaches it)

	mu       sync.Mutex
	events   []pcEvent // what completed calls reported, in order
	cuts     []pcCut
	snapWS   bool // record the workspace (and remote) at each cut
	crash    faultfs.CrashConfig
	restored *pcRestore // the restore the scenario ran, if any
}

// pcEvent is a checkpoint a completed call reported, or (drop) one the
// scenario is about to let a gc or drop remove, which no cut after it
// requires.
type pcEvent struct {
	rec  record
	drop bool
}

// pcCut is what a power cut just before one sync (or after the last)
// leaves: the store's file system and, for scenarios that change the
// workspace, the workspace.
type pcCut struct {
	before string // the sync cut off ("" after the scenario)
	fs     *faultfs.MemFS
	events int // how many of the world's events came before the cut
	ws     map[string]string
	remote map[string]string
}

// pcRestore is a restore a scenario ran: the workspace before and the
// target's files.
type pcRestore struct {
	before, target map[string]string
	targetID       ID
}

func newPCWorld(t *testing.T, files map[string]string) *pcWorld {
	w := &pcWorld{t: t, ws: t.TempDir(), store: t.TempDir(), mem: faultfs.NewMem(), files: map[string]string{}}
	w.write(files)
	return w
}

// write changes the workspace ("" removes a file).
func (w *pcWorld) write(change map[string]string) {
	w.t.Helper()
	for rel, c := range change {
		p := filepath.Join(w.ws, rel)
		if c == "" {
			delete(w.files, rel)
			if err := os.Remove(p); err != nil {
				w.t.Fatal(err)
			}
			continue
		}
		w.files[rel] = c
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
}

// open opens the engine on the store's file system fsys.
func (w *pcWorld) open(fsys *faultfs.MemFS, inj faultfs.Injector, opts Options) (*Engine, error) {
	opts.StoreDir = w.store
	opts.hooks.storeFS = fsys
	if inj != nil {
		opts.hooks.storeFS = faultfs.Wrap(fsys, inj)
	}
	return Open(context.Background(), w.ws, opts)
}

// save saves task and records the checkpoint as reported.
func (w *pcWorld) save(e *Engine, task string, opts SaveOptions) {
	w.t.Helper()
	opts.Task = task
	res, err := e.Save(context.Background(), opts)
	if err != nil {
		w.t.Fatalf("save %s: %v", task, err)
	}
	w.report(record{id: res.ID, task: res.Task, seq: res.Seq, files: maps.Clone(w.files)})
}

func (w *pcWorld) report(r record) {
	w.mu.Lock()
	w.events = append(w.events, pcEvent{rec: r})
	w.mu.Unlock()
}

// forget releases the reported checkpoints keep refuses: the scenario is
// about to let a gc or drop remove them.
func (w *pcWorld) forget(keep func(r record) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.required(len(w.events)) {
		if !keep(r) {
			w.events = append(w.events, pcEvent{rec: r, drop: true})
		}
	}
}

// required returns the checkpoints the first n events leave required.
func (w *pcWorld) required(n int) []record {
	var out []record
	for _, ev := range w.events[:n] {
		if ev.drop {
			out = slices.DeleteFunc(out, func(r record) bool { return r.id == ev.rec.id && r.task == ev.rec.task })
		} else {
			out = append(out, ev.rec)
		}
	}
	return out
}

// MaybeError takes a cut before every sync; it fails nothing.
func (w *pcWorld) MaybeError(op faultfs.Op) error {
	if op.Kind == faultfs.OpFileSync {
		w.cut(op.String())
	}
	return nil
}

func (w *pcWorld) cut(before string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := pcCut{before: before, fs: w.mem.Crash(w.crash), events: len(w.events)}
	if w.snapWS {
		c.ws = readWorkspace(w.t, w.ws)
		if w.remote != "" {
			c.remote = readWorkspace(w.t, w.remote)
		}
	}
	w.cuts = append(w.cuts, c)
}

// readWorkspace returns the files under dir, by slash path; a file that
// vanishes while it is read (a restore renaming it) is left out.
func readWorkspace(t *testing.T, dir string) map[string]string {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Error(err)
	}
	return files
}

// resetDir makes dir hold files exactly.
func resetDir(t *testing.T, dir string, files map[string]string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for rel, c := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pcScenario is one store operation explored under power cuts: setup runs
// on the in-memory store first, then run runs with a cut taken before each
// of its syncs (Open and Close included).
type pcScenario struct {
	name  string
	opts  Options
	files map[string]string
	setup func(w *pcWorld, e *Engine)
	run   func(w *pcWorld, e *Engine)
	// after, when set, checks more of the store a cut left (e is open on it).
	after func(t *testing.T, w *pcWorld, e *Engine)
}

// record runs sc and returns the world with its cuts.
func (sc pcScenario) record(t *testing.T, crash faultfs.CrashConfig) *pcWorld {
	w := newPCWorld(t, sc.files)
	w.crash = crash
	if sc.setup != nil {
		e, err := w.open(w.mem, nil, sc.opts)
		if err != nil {
			t.Fatal(err)
		}
		sc.setup(w, e)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	w.snapWS = true
	w.cut("open")
	e, err := w.open(w.mem, w, sc.opts)
	if err != nil {
		t.Fatal(err)
	}
	sc.run(w, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	w.cut("")
	return w
}

// check reopens the store a cut left, as the next writer would, and checks
// that it verifies, that every checkpoint reported before the cut is
// listed and reads back byte-exact, that every task's head is a checkpoint
// that exists, that the store takes a further save, and that this first
// write settled an interrupted restore: the workspace is the restore's
// start or its target.
func (w *pcWorld) check(t *testing.T, c pcCut, sc pcScenario) {
	resetDir(t, w.ws, c.ws)
	if w.remote != "" {
		resetDir(t, w.remote, c.remote)
	}
	e, err := w.open(c.fs.Clone(), nil, sc.opts)
	if err != nil {
		t.Fatalf("reopen after a power cut before %q: %v", c.before, err)
	}
	defer e.Close()
	mustVerify(t, e)
	reported := w.required(c.events)
	checkContents(t, e, reported)
	for _, r := range reported {
		if _, err := e.Show(context.Background(), r.task, r.id.String()); err != nil {
			t.Fatalf("reported checkpoint %s of task %s: %v", r.id.Short(), r.task, err)
		}
	}
	heads, err := e.Heads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for task, head := range heads {
		if _, err := e.Show(context.Background(), task, head.String()); err != nil {
			t.Fatalf("head %s of task %s: %v", head.Short(), task, err)
		}
	}
	after := fmt.Sprintf("written after the power cut before %q", c.before)
	if err := os.WriteFile(filepath.Join(w.ws, "after-cut"), []byte(after), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := e.Save(context.Background(), SaveOptions{Task: "after-cut", Message: "after the cut"})
	if err != nil {
		t.Fatalf("save after the power cut: %v", err)
	}
	if rs := w.restored; rs != nil {
		if e.PendingRestore() != nil {
			t.Fatal("the next write left the interrupted restore pending")
		}
		got := readWorkspace(t, w.ws)
		delete(got, "after-cut")
		if !maps.Equal(got, rs.target) && !maps.Equal(got, rs.before) {
			t.Fatalf("workspace after the power cut is neither the restore's start nor its target: %v", slices.Sorted(maps.Keys(got)))
		}
	}
	files := readWorkspace(t, w.ws)
	checkContents(t, e, []record{{id: res.ID, task: res.Task, seq: res.Seq, files: files}})
	mustVerify(t, e)
	if sc.after != nil {
		sc.after(t, w, e)
	}
}

// explore records sc and checks the cuts explored picks; it returns how
// many sync points the scenario has and how many cuts were checked.
func (sc pcScenario) explore(t *testing.T) (syncs, checked int) {
	w := sc.record(t, faultfs.CrashConfig{})
	for _, i := range testbound.Spread(len(w.cuts), powerCutSample) {
		c := w.cuts[i]
		t.Run(fmt.Sprintf("cut%03d", i), func(t *testing.T) { w.check(t, c, sc) })
		checked++
	}
	// Cut 0 is before Open, the last one after Close: the syncs are between.
	return len(w.cuts) - 2, checked
}

// TestPowerCutAtEverySyncLosesNothingReported runs each scenario on a
// strict in-memory store, cuts the power before each of its syncs (and
// after the last), and checks what the next writer finds (pcWorld.check).
// A cut right after sync k leaves what a cut right before sync k+1 does:
// only syncs change what survives. The bounded sweep checks an even sample
// of the cuts; with the long tests on (testbound.LongEnv) it checks every one.
func TestPowerCutAtEverySyncLosesNothingReported(t *testing.T) {
	t.Parallel()
	total, checked := 0, 0
	for _, sc := range powerCutScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			syncs, n := sc.explore(t)
			t.Logf("%s: %d sync points, %d power cuts checked", sc.name, syncs, n)
			total += syncs + 2
			checked += n
		})
	}
	t.Logf("%d power cuts possible, %d checked", total, checked)
}

// TestPowerCutDuringConcurrentSavesLosesNothingReported saves two tasks
// at once on the strict in-memory store; each seed cuts the power at a few
// random syncs with a random share of the unsynced writes surviving, as a
// disk may persist some of them on its own.
func TestPowerCutDuringConcurrentSavesLosesNothingReported(t *testing.T) {
	t.Parallel()
	seeds := 2
	if testbound.LongTests() {
		seeds = 10
	}
	for seed := range seeds {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 26))
			crash := faultfs.CrashConfig{UnsyncedPercent: rng.IntN(60), Rand: rng}
			w := concurrentSaves.record(t, crash)
			for range 3 {
				i := rng.IntN(len(w.cuts))
				t.Run(fmt.Sprintf("cut%03d", i), func(t *testing.T) { w.check(t, w.cuts[i], concurrentSaves) })
			}
		})
	}
}
