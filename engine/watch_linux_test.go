package engine

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt/ckpt/bench/corpus"
	"github.com/ckpt/ckpt/engine/internal/save"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// saveScansOnly is the presave delay of the tests whose assertions are
// about what each save's scan did: no presave runs before their end.
const saveScansOnly = time.Hour

// writeWide writes wideTree(n, 10) under ws/top.
func writeWide(t *testing.T, ws string, n int) {
	t.Helper()
	if err := testtree.Write(ws, testtree.Dir{"top": wideTree(n, 10, "v1")}); err != nil {
		t.Fatal(err)
	}
}

// The save right after the first lists nothing, and a watched save after
// one edit examines the edited directory and its ancestors only, and
// captures what a cold save captures.
func TestWatchedSaveReadsOnlyChangedDirs(t *testing.T) {
	ws := t.TempDir()
	writeWide(t, ws, 50)
	var listed uint64 // files the watched engine's last scan listed
	opts := Options{Watch: true}
	opts.hooks.afterScan = func(s *save.Snapshot) { listed = s.Files.Load() }
	opts.hooks.presaveDelay = saveScansOnly
	watched := openAt(t, ws, opts)
	cold := openAt(t, ws, Options{})
	saveRoot(t, watched) // walks everything, watching each directory before listing it
	if st, ok := watched.WatchStats(); !ok || st.Watches != 52 {
		t.Fatalf("watch stats %+v, %v; want 52 watches (root, top, 50 directories)", st, ok)
	}
	if _, res := saveRoot(t, watched); res.Created || listed != 0 || res.Stats.Files != 500 {
		t.Fatalf("no-change watched save: created %v, listed %d files, counts %d; want none listed of 500", res.Created, listed, res.Stats.Files)
	}
	if err := os.WriteFile(filepath.Join(ws, "top", "d007", "f003.txt"), []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, res := saveRoot(t, watched)
	want, _ := saveRoot(t, cold)
	if got != want || !res.Created {
		t.Fatalf("watched save root %s (created %v), cold save root %s", got, res.Created, want)
	}
	// top/d007's 10 files; the root's and top's entries are directories.
	if listed != 10 || res.Stats.Files != 500 {
		t.Errorf("watched save listed %d files and counts %d, want 10 of 500", listed, res.Stats.Files)
	}
}

// A watched save after an edit deep in the tree takes the listings of the
// directories on the way to it from the stat cache, and that of the
// directory of the edited file too, looking only that file up again; a
// directory whose own entries changed in other ways (a subdirectory's
// mode) is listed. Each save captures what a cold save captures.
func TestWatchedSaveReplaysTheWayToAChange(t *testing.T) {
	ws := t.TempDir()
	writeWide(t, ws, 20)
	for _, name := range []string{"README", "top/index.txt"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var replayed, listed uint64
	opts := Options{Watch: true}
	opts.hooks.afterScan = func(s *save.Snapshot) { replayed, listed = s.Replayed.Load(), s.Files.Load() }
	opts.hooks.presaveDelay = saveScansOnly
	watched := openAt(t, ws, opts)
	cold := openAt(t, ws, Options{})
	saveRoot(t, watched)
	steps := []struct {
		what             string
		change           func() error
		replayed, listed uint64
	}{
		{"an edit two levels down", func() error {
			return os.WriteFile(filepath.Join(ws, "top", "d007", "f003.txt"), []byte("edited"), 0o644)
		}, 3, 12}, // d007's 10 files, and the root's and top's one each, all from the cache
		{"a file added to top, a subdirectory of it chmodded and edited", func() error {
			if err := os.WriteFile(filepath.Join(ws, "top", "new.txt"), nil, 0o644); err != nil {
				return err
			}
			if err := os.Chmod(filepath.Join(ws, "top", "d003"), 0o700); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(ws, "top", "d003", "f001.txt"), []byte("edited"), 0o644)
		}, 1, 13}, // top and d003 listed (d003's mode changed), the root from the cache
	}
	for _, step := range steps {
		if err := step.change(); err != nil {
			t.Fatal(err)
		}
		got, res := saveRoot(t, watched)
		want, _ := saveRoot(t, cold)
		if got != want || !res.Created {
			t.Fatalf("%s: watched save root %s (created %v), cold save root %s", step.what, got, res.Created, want)
		}
		if replayed != step.replayed || listed != step.listed {
			t.Errorf("%s: %d directories replayed, %d files seen; want %d and %d", step.what, replayed, listed, step.replayed, step.listed)
		}
	}
}

// A watched save reports the paths it skips (a named pipe, files over the
// size cap) as a cold save does, also where it takes a directory's listing
// from the stat cache (the way to a change) or prunes a subtree, and stops
// reporting one once it is gone.
func TestWatchedSaveReportsTheSkippedPathsAColdSaveDoes(t *testing.T) {
	ws := t.TempDir()
	write := func(rel string, size int) {
		t.Helper()
		p := filepath.Join(ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("big", 2048)
	write("a/big", 2048)
	write("a/b/c.txt", 10)
	write("q/r/big", 2048)
	write("q/s.txt", 10)
	write("z/y/f.txt", 10) // never changes: pruned
	if err := syscall.Mkfifo(filepath.Join(ws, "q", "r", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	var replayed uint64
	var partial bool
	opts := Options{Watch: true, MaxFileSize: 1024}
	opts.hooks.afterScan = func(s *save.Snapshot) { replayed, partial = s.Replayed.Load(), s.Partial() }
	opts.hooks.presaveDelay = saveScansOnly
	watched := openAt(t, ws, opts)
	cold := openAt(t, ws, Options{MaxFileSize: 1024})
	steps := []struct {
		what            string
		change          func()
		replays, prunes bool // what the watched save must do
		want            []string
	}{
		{"the first save", func() {}, false, false, []string{"a/big (too large)", "big (too large)", "q/r/big (too large)", "q/r/pipe (fifo)"}},
		{"an edit in a/b", func() { write("a/b/c.txt", 11) }, true, true, []string{"a/big (too large)", "big (too large)", "q/r/big (too large)", "q/r/pipe (fifo)"}},
		{"nothing changed", func() {}, false, true, []string{"a/big (too large)", "big (too large)", "q/r/big (too large)", "q/r/pipe (fifo)"}},
		{"q/r/big gone, a new one in a/b", func() {
			if err := os.Remove(filepath.Join(ws, "q", "r", "big")); err != nil {
				t.Fatal(err)
			}
			write("a/b/big", 4096)
		}, true, true, []string{"a/b/big (too large)", "a/big (too large)", "big (too large)", "q/r/pipe (fifo)"}},
	}
	for _, step := range steps {
		step.change()
		_, res := saveRoot(t, watched)
		_, coldRes := saveRoot(t, cold)
		if got, want := skippedPaths(res.Skipped), skippedPaths(coldRes.Skipped); !slices.Equal(got, want) || !slices.Equal(got, step.want) {
			t.Errorf("%s: the watched save reported skipped %q, the cold one %q; want %q", step.what, got, want, step.want)
		}
		if (replayed > 0) != step.replays || partial != step.prunes {
			t.Errorf("%s: the watched save replayed %d directories, pruned some: %v; want replays %v, prunes %v",
				step.what, replayed, partial, step.replays, step.prunes)
		}
	}
}

// Changes a scan consumed but never committed (a workspace diff, a failed
// save) stay pending for the next save.
func TestWatchedChangesSurviveUncommittedScans(t *testing.T) {
	ws := t.TempDir()
	writeWide(t, ws, 5)
	watched := openAt(t, ws, Options{Watch: true})
	cold := openAt(t, ws, Options{})
	for range 2 {
		saveRoot(t, watched)
	}
	if err := os.WriteFile(filepath.Join(ws, "top", "d002", "new"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := watched.Diff(context.Background(), "HEAD", "", DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Changes) != 1 {
		t.Fatalf("workspace diff: %+v, want the one added file", d.Changes)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := watched.Save(ctx, SaveOptions{}); err == nil {
		t.Fatal("save with a cancelled context succeeded")
	}
	got, res := saveRoot(t, watched)
	want, _ := saveRoot(t, cold)
	if got != want || !res.Created {
		t.Fatalf("watched save after a diff and a failed save: root %s (created %v), cold %s", got, res.Created, want)
	}
}

// With fewer watches than directories (a low fs.inotify.max_user_watches),
// the directories left unwatched are listed at every save and the rest
// are still skipped; what a save captures does not change.
func TestWatchLimitBelowDirectoryCount(t *testing.T) {
	ws := t.TempDir()
	writeWide(t, ws, 50)
	var listed uint64
	opts := Options{Watch: true, hooks: testHooks{watchMaxWatches: 20}}
	opts.hooks.afterScan = func(s *save.Snapshot) { listed = s.Files.Load() }
	opts.hooks.presaveDelay = saveScansOnly
	watched := openAt(t, ws, opts)
	cold := openAt(t, ws, Options{})
	saveRoot(t, watched)
	st, _ := watched.WatchStats()
	if st.Watches != 20 || st.Unwatched != 32 {
		t.Fatalf("watch stats %+v; want 20 watches and 32 of 52 directories unwatched", st)
	}
	// The root and top hold the first watches; 18 of the 50 leaf
	// directories are watched, 32 are listed at every save.
	if _, res := saveRoot(t, watched); res.Created || listed != 320 {
		t.Fatalf("no-change save under the limit: created %v, listed %d files; want the 320 of the unwatched directories", res.Created, listed)
	}
	for _, d := range []string{"d000", "d049"} {
		if err := os.WriteFile(filepath.Join(ws, "top", d, "f000.txt"), []byte("edited "+d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, res := saveRoot(t, watched)
	want, _ := saveRoot(t, cold)
	if got != want || !res.Created || res.Stats.Modified != 2 {
		t.Fatalf("watched save under the limit: root %s (created %v, %+v), cold save root %s", got, res.Created, res.Stats, want)
	}
}

var limitFiles = flag.Int("engine.limit-files", 5000, "files in the workspace of BenchmarkNoChangeSaveWatchLimit")

// BenchmarkNoChangeSaveWatchLimit times a watched no-change save when the
// watcher may hold all, half or a tenth of the watches the workspace's
// directories need (as a low fs.inotify.max_user_watches would allow):
// each unwatched directory is listed at every save.
//
//	go test ./engine -run '^$' -bench NoChangeSaveWatchLimit -engine.limit-files 100000
func BenchmarkNoChangeSaveWatchLimit(b *testing.B) {
	m, err := corpus.Generate(context.Background(), filepath.Join(b.TempDir(), "ws"), corpus.Config{Files: *limitFiles, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	probe := openAt(b, m.Root, Options{Watch: true, Profile: "cline"})
	if _, err := probe.Save(context.Background(), SaveOptions{}); err != nil {
		b.Fatal(err)
	}
	st, _ := probe.WatchStats()
	probe.Close()
	for _, share := range []int{1, 2, 10} {
		limit := st.Watches / share
		b.Run(fmt.Sprintf("watches=1/%d", share), func(b *testing.B) {
			e := openAt(b, m.Root, Options{Watch: true, Profile: "cline", hooks: testHooks{watchMaxWatches: limit}})
			if _, err := e.Save(context.Background(), SaveOptions{}); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := e.Save(context.Background(), SaveOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			got, _ := e.WatchStats()
			b.ReportMetric(float64(got.Watches), "watches")
			b.ReportMetric(float64(got.Unwatched), "unwatched")
		})
	}
}

// warmLog records what a watched Engine read ahead (testHooks.prefetched),
// in order.
type warmLog struct {
	mu       sync.Mutex
	paths    []string
	ids      []objects.ID
	prepared []bool
	wake     chan struct{}
}

func newWarmLog(opts *Options) *warmLog {
	l := &warmLog{wake: make(chan struct{}, 1)}
	opts.hooks.prefetched = func(rel string, id objects.ID, prepared bool) {
		l.mu.Lock()
		l.paths, l.ids, l.prepared = append(l.paths, rel), append(l.ids, id), append(l.prepared, prepared)
		l.mu.Unlock()
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
	return l
}

// mark is how many reads ahead were logged so far.
func (l *warmLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.paths)
}

// warmRead is one read ahead: the stored version read, and whether the
// delta record of the file's content against it was prepared.
type warmRead struct {
	id       objects.ID
	prepared bool
}

// await returns the paths read ahead from position from up to and
// including the first read of rel (with prepared, the first that prepared
// a record: a read between a write's truncation and its data prepares
// none), and that read; it fails the test when there is none within a
// minute.
func (l *warmLog) await(t *testing.T, from int, rel string, prepared bool) ([]string, warmRead) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		l.mu.Lock()
		for i := from; i < len(l.paths); i++ {
			if l.paths[i] == rel && (l.prepared[i] || !prepared) {
				defer l.mu.Unlock()
				return slices.Clone(l.paths[from : i+1]), warmRead{l.ids[i], l.prepared[i]}
			}
		}
		l.mu.Unlock()
		select {
		case <-l.wake:
		case <-deadline:
			t.Fatalf("%s was not read ahead", rel)
		}
	}
}

// A watched Engine reads ahead, before the save, the stored version of a
// file written since the last save (what the save stores its new content
// as a delta against) and prepares that delta record, and reads nothing of
// the files a restore writes. The save after the edit captures what a cold
// save captures, and so does a save after the file changed again once its
// record was prepared.
func TestWatchedEngineReadsAheadTheWrittenFiles(t *testing.T) {
	ws := t.TempDir()
	source := func(extra string) []byte {
		return append(bytes.Repeat([]byte("\treturn fmt.Errorf(\"a line of source\")\n"), 64), extra...)
	}
	for _, rel := range []string{"a/b/edited.go", "a/b/kept.go", "zz/marker.go"} {
		p := filepath.Join(ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, source(""), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := Options{Watch: true}
	warmed := newWarmLog(&opts)
	e := openAt(t, ws, opts)
	cold := openAt(t, ws, Options{})
	_, first := saveRoot(t, e)
	ls, err := e.Ls(context.Background(), "", first.ID.String(), "a/b")
	if err != nil || len(ls) != 2 || ls[0].Name != "edited.go" {
		t.Fatalf("Ls = %+v, %v", ls, err)
	}

	if err := os.WriteFile(filepath.Join(ws, "a", "b", "edited.go"), source("// edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, r := warmed.await(t, 0, "a/b/edited.go", true); r.id != objects.ID(ls[0].ID) {
		t.Fatalf("read ahead %+v for the edited file, want its saved version %s", r, objects.ID(ls[0].ID).Short())
	}
	got, _ := saveRoot(t, e)
	if want, _ := saveRoot(t, cold); got != want {
		t.Fatalf("watched save root %s, cold save root %s", got.Short(), want.Short())
	}

	from := warmed.mark()
	if _, err := e.Restore(context.Background(), first.ID.String(), RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	// The marker's directory sorts after a/b: had the restore's writes been
	// heard, they would be read ahead before it.
	if err := os.WriteFile(filepath.Join(ws, "zz", "marker.go"), source("// marker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if paths, _ := warmed.await(t, from, "zz/marker.go", false); len(paths) != 1 {
		t.Fatalf("read ahead after the restore: %v, want only the marker", paths)
	}

	// A record prepared for content the file no longer holds is not taken.
	from = warmed.mark()
	if err := os.WriteFile(filepath.Join(ws, "a", "b", "edited.go"), source("// edited again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	warmed.await(t, from, "a/b/edited.go", true)
	release := e.prefetch.Hold()
	if err := os.WriteFile(filepath.Join(ws, "a", "b", "edited.go"), source("// and again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, res := saveRoot(t, e)
	release()
	if want, _ := saveRoot(t, cold); got != want {
		t.Fatalf("watched save root %s after a stale preparation, cold save root %s", got.Short(), want.Short())
	}
	rc, _, err := e.Cat(context.Background(), "", res.ID.String(), "a/b/edited.go")
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(data, source("// and again\n")) {
		t.Fatalf("saved content %q, %v", data, err)
	}
}
