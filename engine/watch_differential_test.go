//go:build linux || windows || darwin

package engine

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine/internal/save"
	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/internal/watch"
	"github.com/ckpt/ckpt/objects"
)

// The differential test of watched saves runs where a watcher exists. The
// platform parts (the default round count, how a file is replaced
// atomically, how a kernel queue is flooded) are in
// watch_differential_{unix,windows}_test.go.

var (
	watchRounds = flag.Int("engine.watch-rounds", 0, "mutation rounds of TestWatchedSaveDifferential (0: 40, or the platform's default with "+testbound.LongEnv+"=1)")
	watchSeed   = flag.Uint64("engine.watch-seed", 0, "seed of TestWatchedSaveDifferential (0: time-based)")
	// A seed recorded before restores joined the rounds replays its
	// rounds only without them.
	watchRestoreEvery = flag.Int("engine.watch-restore-every", 9, "TestWatchedSaveDifferential restores an earlier checkpoint after every this many rounds (0: never)")
)

// churn applies random changes to a workspace; away is a directory outside
// it where subtrees leave to and come back from.
type churn struct {
	rng  *rand.Rand
	ws   string
	away string
	n    int
	ops  []string
	dest string // where the last operation moved its entry, "" when nowhere
	// movesDirsAway: a directory is never removed, it is moved to away
	// instead (see removeDir).
	movesDirsAway bool
}

// removeDir removes directory dir, or, with movesDirsAway, moves it out
// of the workspace: to the watcher both are a directory gone, but a moved
// directory's inode number is not free for the next directory made.
func (c *churn) removeDir(dir string) error {
	if c.movesDirsAway {
		return c.move(dir, filepath.Join(c.away, fmt.Sprint("r", c.n)))
	}
	return os.RemoveAll(dir)
}

// move renames from to to and notes where the entry went.
func (c *churn) move(from, to string) error {
	c.dest = strings.TrimPrefix(to, c.ws)
	return os.Rename(from, to)
}

func (c *churn) label() string {
	c.n++
	if c.rng.IntN(3) == 0 {
		return fmt.Sprintf("m%d", c.n)
	}
	pool := [...]string{"a", "b", "src", "lib", "x.go", "notes.txt", "node_modules", "build", ".gitignore", ".ckptignore"}
	return pool[c.rng.IntN(len(pool))]
}

func (c *churn) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'A' + byte(c.rng.IntN(26))
	}
	return b
}

// calmDir is the subtree no round but a calm one changes, two levels
// below the workspace root.
const calmDir = "calm/a/b"

// inventory lists every directory and non-directory under the workspace
// but the calm subtree.
func (c *churn) inventory() (dirs, others []string) {
	calm := filepath.Join(c.ws, strings.Split(calmDir, "/")[0])
	filepath.WalkDir(c.ws, func(p string, d fs.DirEntry, err error) error {
		switch {
		case p == calm:
			return filepath.SkipDir
		case err != nil:
		case d.IsDir():
			dirs = append(dirs, p)
		default:
			others = append(others, p)
		}
		return nil
	})
	return dirs, others
}

func any1(rng *rand.Rand, list []string) string { return list[rng.IntN(len(list))] }

// calm writes one file two levels down and changes nothing else: the save
// after it prunes every other subtree and replays the directories on the
// way from the root. The test ends with two calm rounds, after the random
// ones, whose sequence a seed still reproduces. Rounds are milliseconds
// apart, so the workspace repository's rule files, which a round rewrites
// one time in three, are nearly always within the engine's racy window,
// and every save after one walks everything; with settle, calm first gives
// them and their directories an old mtime, so that the next save but one
// trusts them.
func (c *churn) calm(settle bool) {
	c.ops = c.ops[:0]
	if settle {
		old := time.Unix(1<<30, 0)
		for _, p := range []string{".git/info/exclude", ".git/info", ".git"} {
			// Absent until a round writes info/exclude: nothing to settle then.
			err := os.Chtimes(filepath.Join(c.ws, filepath.FromSlash(p)), old, old)
			c.ops = append(c.ops, fmt.Sprintf("back-date %s: %v", p, err))
		}
	}
	c.n++
	err := os.WriteFile(filepath.Join(c.ws, filepath.FromSlash(calmDir), fmt.Sprint("f", c.n)), c.bytes(20), 0o644)
	c.ops = append(c.ops, fmt.Sprintf("calm write in %s: %v", calmDir, err))
}

// round applies 1..12 operations; failures (a taken name, a move into
// itself) are expected and only logged.
func (c *churn) round() {
	c.ops = c.ops[:0]
	for range 1 + c.rng.IntN(12) {
		dirs, others := c.inventory()
		dir := any1(c.rng, dirs)
		op := c.rng.IntN(17)
		if len(others) == 0 || len(dirs) < 40 && c.rng.IntN(4) == 0 {
			op = 8
		}
		var err error
		var at string
		c.dest = ""
		if op < 6 {
			at = any1(c.rng, others)
			err = c.onFile(op, at, dir)
		} else {
			at = dir
			err = c.onDir(op, dir, dirs)
		}
		line := fmt.Sprintf("op %d at %s: %v", op, strings.TrimPrefix(at, c.ws), err)
		if c.dest != "" {
			line += " (to " + c.dest + ")"
		}
		c.ops = append(c.ops, line)
	}
}

func (c *churn) onFile(op int, f, dir string) error {
	switch op {
	case 0: // same length, new bytes, usually within the mtime tick of the last write
		fi, err := os.Lstat(f)
		if err != nil || !fi.Mode().IsRegular() {
			return err
		}
		return os.WriteFile(f, c.bytes(int(fi.Size())), fi.Mode().Perm())
	case 1:
		return os.Remove(f)
	case 2:
		name := c.label()
		if fi, err := os.Lstat(f); err == nil && fi.Mode()&fs.ModeNamedPipe != 0 {
			name = pipeName(c.n) // never a name the churn writes to: opening a pipe to write waits for a reader
		}
		return c.move(f, filepath.Join(dir, name))
	case 3:
		return os.Chmod(f, os.FileMode(0o644|c.rng.IntN(2)*0o111))
	case 4:
		return c.replace(f, dir)
	default: // back-dated mtime
		return os.Chtimes(f, time.Now(), time.Unix(int64(c.rng.IntN(1<<30)), 0))
	}
}

func (c *churn) onDir(op int, dir string, dirs []string) error {
	top := dir == c.ws
	switch {
	case op <= 7:
		return os.WriteFile(filepath.Join(dir, c.label()), c.bytes(c.rng.IntN(80)), 0o644)
	case op == 8: // created and filled before any watch can be added
		d := filepath.Join(dir, c.label(), "p", "q")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		for i := range 4 {
			os.WriteFile(filepath.Join(d, fmt.Sprint(i)), c.bytes(6), 0o644)
			os.WriteFile(filepath.Join(filepath.Dir(d), fmt.Sprint(i)), c.bytes(6), 0o644)
		}
		return nil
	case op == 9: // ignore rules that exclude or re-include
		var rules []string
		for range c.rng.IntN(3) {
			rules = append(rules, c.label())
		}
		if c.rng.IntN(3) == 0 {
			rules = append(rules, "!"+c.label())
		}
		return os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(strings.Join(rules, "\n")), 0o644)
	case op == 10:
		return c.infoExclude()
	case op == 16: // a file no save captures, which every save reports skipped
		return c.unsaveable(dir)
	case op == 11 && (top || c.rng.IntN(2) == 0): // a subtree comes back in
		back, _ := os.ReadDir(c.away)
		if len(back) == 0 {
			return nil
		}
		return c.move(filepath.Join(c.away, back[0].Name()), filepath.Join(dir, c.label()))
	case top:
		return nil
	case op == 11: // a subtree leaves
		return c.move(dir, filepath.Join(c.away, fmt.Sprint("t", c.n)))
	case op == 12:
		return c.move(dir, filepath.Join(any1(c.rng, dirs), c.label()))
	case op == 13:
		return c.removeDir(dir)
	case op == 14: // same name, new directory
		c.removeDir(dir)
		if err := os.MkdirAll(filepath.Join(dir, "new"), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "new", "f"), c.bytes(3), 0o644)
	default:
		return os.Chmod(dir, os.FileMode(0o700|c.rng.IntN(2)*0o055))
	}
}

// diffMaxFileSize is both engines' MaxFileSize in the differential test:
// above the big files it starts with.
const diffMaxFileSize = 2 << 20

// oversized writes a file over diffMaxFileSize in dir.
func (c *churn) oversized(dir string) error {
	return os.WriteFile(filepath.Join(dir, c.label()), make([]byte, diffMaxFileSize+1), 0o644)
}

// pipeName is the name of the churn's n-th named pipe.
func pipeName(n int) string { return fmt.Sprint("pipe", n) }

// infoExclude rewrites the workspace repository's info/exclude, a rule
// file outside every captured directory.
func (c *churn) infoExclude() error {
	info := filepath.Join(c.ws, ".git", "info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(info, "exclude"), []byte(c.label()+"\n"), 0o644)
}

// burst floods the watcher with events (flood), then creates more
// directories in the root than the watched engine's MaxPending, which
// takes the same path as an overflow: every watch dropped, a full walk,
// the watches added again during it. Half of them are kept, with a file
// in each, until the save: a directory already removed when the watcher
// reads its creation may be told as no more than a change of its parent
// (Windows names no kind of entry), and would not count. The other half
// is removed at once, which names stale paths. A file is also written in
// every directory, so the walk after the overflow has changes to find
// everywhere.
func (c *churn) burst() {
	c.flood()
	for i := range burstPending + 1 {
		kept := filepath.Join(c.ws, fmt.Sprintf("burst-%d-%d", c.n, i))
		os.Mkdir(kept, 0o755)
		os.WriteFile(filepath.Join(kept, "kept"), c.bytes(4), 0o644)
		gone := filepath.Join(c.ws, fmt.Sprintf("burst-%d-%d-gone", c.n, i))
		os.Mkdir(gone, 0o755)
		c.removeDir(gone)
	}
	dirs, _ := c.inventory()
	for _, d := range dirs {
		os.WriteFile(filepath.Join(d, "burst"), c.bytes(4), 0o644)
	}
	c.ops = append(c.ops, fmt.Sprintf("burst over %d directories", len(dirs)))
}

// burstPending is the watched engine's MaxPending in the differential test:
// above what a round of at most 12 operations dirties, below what a burst does.
const burstPending = 48

func rootOf(t *testing.T, e *Engine, res *SaveResult) objects.ID {
	t.Helper()
	cp, err := e.db.Checkpoint(objects.ID(res.ID))
	if err != nil {
		t.Fatal(err)
	}
	return cp.Root
}

func openAt(t testing.TB, ws string, opts Options) *Engine {
	t.Helper()
	opts.StoreDir = filepath.Join(t.TempDir(), "store")
	e, err := Open(context.Background(), ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func saveRoot(t *testing.T, e *Engine) (objects.ID, *SaveResult) {
	t.Helper()
	res, err := e.Save(context.Background(), SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rootOf(t, e, res), res
}

// TestWatchedSaveDifferential saves a randomly changing workspace with a
// watched Engine and with a cold one (own store, full walk) after every
// round of changes: the root tree ids must be equal. Every 25th round a
// fresh store (no stat cache at all) is the judge as well. Before each
// watched save a recompression slice of the deferred first save runs and
// is cancelled at a random point, as a resident server's request cancels
// it; the watched store verifies at the end.
func TestWatchedSaveDifferential(t *testing.T) {
	rounds := *watchRounds
	if rounds == 0 {
		// Both cover a fresh store's judgement (round 24) and a burst (round 30).
		rounds = testbound.Scale(40, defaultWatchRounds)
	}
	partial, replayed, st := watchedDifferential(t, rounds)
	if st.Backend == watch.BackendNone {
		t.Fatalf("the watched engine has no watcher (%s): the test compares walks with walks", st.Fallback)
	}
	if rounds > 30 && st.Overflows == 0 {
		t.Errorf("no round overflowed; the burst no longer tests the overflow path")
	}
	if rounds >= 10 && partial == 0 {
		t.Errorf("no watched save pruned anything; the watcher vouched for nothing")
	}
	if rounds >= 10 && replayed == 0 {
		t.Errorf("no watched save replayed a directory from the stat cache")
	}
}

// TestWatchedSaveDifferentialWithoutWatcher forces the always-walk backend
// (CKPT_WATCHER=none), the one of platforms without a watcher: the engine
// opened with Options.Watch then walks everything at every save and
// captures what a cold one does.
func TestWatchedSaveDifferentialWithoutWatcher(t *testing.T) {
	t.Setenv(watch.EnvBackend, watch.BackendNone)
	partial, replayed, st := watchedDifferential(t, 12)
	if st.Backend != watch.BackendNone || !strings.Contains(st.Fallback, watch.EnvBackend) {
		t.Fatalf("watch stats %+v, want the always-walk backend, forced", st)
	}
	if partial != 0 || replayed != 0 {
		t.Fatalf("%d saves without a watcher pruned subtrees, %d directories replayed", partial, replayed)
	}
}

// watchedDifferential runs rounds of TestWatchedSaveDifferential and
// returns how many watched saves listed fewer files than they captured,
// how many directories they replayed from the stat cache, and the
// watcher's stats.
func watchedDifferential(t *testing.T, rounds int) (int, uint64, WatchStats) {
	seed := *watchSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	ws, away := t.TempDir(), t.TempDir()
	for i := range 60 {
		rel := fmt.Sprintf("d%d/e%d", i%4, i) // not the path: the seed's rounds must not depend on the temporary directory's name
		d := filepath.Join(ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range 4 {
			os.WriteFile(filepath.Join(d, fmt.Sprint("f", j)), []byte(rel), 0o644)
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, filepath.FromSlash(calmDir)), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // over the group limit: a deferred pack each
		big := strings.Repeat(fmt.Sprintf("line %d of a larger file\n", i), 44_000)
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprint("d", i%4), fmt.Sprint("big", i)), []byte(big), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Files the watched engine's last scan listed, and directories its
	// scans replayed; a refresh after a restore scans on its own goroutine.
	var listed, replayed atomic.Uint64
	var partial, listedSum, coldSum int
	// The watched engine is a resident server's: its first save defers
	// compression, and an idle recompression slice runs before each save
	// and is cancelled at a random point, as a request arriving cancels it.
	opts := Options{Watch: true, Profile: "none", DeferCompression: true, MaxFileSize: diffMaxFileSize,
		hooks: testHooks{watchMaxPending: burstPending, packSize: 64 << 10}}
	opts.hooks.afterScan = func(s *save.Snapshot) { listed.Store(s.Files.Load()); replayed.Add(s.Replayed.Load()) }
	var refreshes, refreshed atomic.Int64 // refreshes after restores, and those that committed
	opts.hooks.refreshed = func(committed bool) {
		refreshes.Add(1)
		if committed {
			refreshed.Add(1)
		}
	}
	watched := openAt(t, ws, opts)
	cold := openAt(t, ws, Options{Profile: "none", MaxFileSize: diffMaxFileSize})
	c := &churn{rng: rand.New(rand.NewPCG(seed, 7)), ws: ws, away: away}
	if why := dirRemovalUnseen(); why != "" {
		c.movesDirsAway = true
		t.Logf("directories are moved out of the workspace instead of removed: %s", why)
	}
	var history []string // every round's operations
	var saved []ID       // the watched engine's checkpoints, restored now and then
	mismatches, sliceCancels, recompressed, restores, walkedNothing := 0, 0, 0, 0, 0
	// judged saves with both engines (and, with fresh, judges by a first
	// save into a fresh store too) and counts a mismatch; it returns the
	// watched save and whether its root matched.
	judged := func(round int, after string, fresh bool) (*SaveResult, bool) {
		got, res := saveRoot(t, watched)
		want, coldRes := saveRoot(t, cold)
		judge := "a cold full walk"
		if fresh {
			fresh := openAt(t, ws, Options{Profile: "none", MaxFileSize: diffMaxFileSize})
			first, _ := saveRoot(t, fresh)
			fresh.Close()
			if first != want {
				judge = fmt.Sprintf("a first save (the cold walk had %s)", want)
				want = first
			}
		}
		if got != want || res.Stats.Files != coldRes.Stats.Files {
			mismatches++
			t.Errorf("round %d%s (seed %d): watched save's root %s (%d files), %s's %s (%d files); watched only: %q, cold only: %q; ops of the last rounds:\n%s",
				round, after, seed, got, res.Stats.Files, judge, want, coldRes.Stats.Files,
				onlyIn(t, watched, got, cold, want), onlyIn(t, cold, want, watched, got),
				strings.Join(history[max(len(history)-40, 0):], "\n"))
			resync(t, watched, want)
			return res, false
		}
		if got, want := skippedPaths(res.Skipped), skippedPaths(coldRes.Skipped); !slices.Equal(got, want) {
			mismatches++
			t.Errorf("round %d%s (seed %d): the watched save reported skipped %q, the cold one %q; ops of the last rounds:\n%s",
				round, after, seed, got, want, strings.Join(history[max(len(history)-40, 0):], "\n"))
		}
		return res, true
	}
	start := time.Now()
	presaves := 0
	for round := range rounds + 2 { // the last two are calm
		// A round in four races a presave (as the presaver runs once the
		// writes it heard are quiet); in another its save follows one.
		racing := c.rng.IntN(4)
		var presaving chan error
		if racing == 0 {
			presaving = make(chan error, 1)
			go func() { presaving <- presaveNowForTest(watched) }()
		}
		switch {
		case round >= rounds:
			c.calm(round == rounds)
		case round%61 == 30:
			c.burst()
		default:
			c.round()
		}
		history = append(history, fmt.Sprintf("round %d:\n%s", round, strings.Join(c.ops, "\n")))
		if racing == 1 {
			presaving = make(chan error, 1)
			presaving <- presaveNowForTest(watched)
		}
		if presaving != nil {
			if err := <-presaving; err != nil {
				t.Fatalf("round %d (seed %d): presave: %v", round, seed, err)
			}
			presaves++
			history = append(history, "presave")
		}
		cancelled, packs := interruptRecompression(t, watched, c.rng)
		if cancelled {
			sliceCancels++
		}
		recompressed += packs
		res, ok := judged(round, "", round%25 == 24)
		if !ok {
			continue
		}
		if n := listed.Load(); n < res.Stats.Files {
			partial++
		}
		listedSum, coldSum = listedSum+int(listed.Load()), coldSum+int(res.Stats.Files) // equal to the cold save's
		saved = append(saved, res.ID)
		// Now and then the watched engine restores an earlier checkpoint:
		// the next round's changes then race its refresh of the stat cache.
		if every := *watchRestoreEvery; every > 0 && round < rounds && round%every == every/2 {
			to := saved[c.rng.IntN(len(saved))]
			r, err := watched.Restore(context.Background(), to.String(), RestoreOptions{})
			if err != nil { // paths it may not change are conflicts, not errors
				t.Fatalf("round %d (seed %d): restore of %s: %v; ops of the last rounds:\n%s", round, seed, to.Short(), err,
					strings.Join(history[max(len(history)-40, 0):], "\n"))
			}
			history = append(history, fmt.Sprintf("restore of %s: %d written, %d deleted, %d conflicts", to.Short(), len(r.Written), len(r.Deleted), len(r.Conflicts)))
			restores++
			// The save right after it may take the restore's vouch for its
			// target, walking nothing: it is judged as well.
			if _, ok := judged(round, " after the restore", false); ok && listed.Load() == 0 {
				walkedNothing++
			}
		}
	}
	mustVerify(t, watched)
	st, _ := watched.WatchStats()
	t.Logf("seed %d: %d rounds and 2 calm ones in %v, %d mismatches, %d presaves; %d watched saves pruned unchanged subtrees, listing %d files where the cold saves listed %d, and replayed %d directories from the stat cache; %d recompression slices cancelled, %d packs recompressed; %d restores, after which %d saves walked nothing, %d refreshes of the stat cache, %d committed; watcher %+v",
		seed, rounds, time.Since(start).Round(time.Millisecond), mismatches, presaves, partial, listedSum, coldSum, replayed.Load(), sliceCancels, recompressed, restores, walkedNothing, refreshes.Load(), refreshed.Load(), st)
	return partial, replayed.Load(), st
}

// presaveNowForTest does the presaver's work on e at once.
func presaveNowForTest(e *Engine) error {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	_, err := e.presaveLocked(context.Background())
	return err
}

// interruptRecompression runs a recompression slice on e and, two times
// in three, cancels it at one of its first checks of its context, picked
// by rng (a slice that checks fewer times runs to its end). It returns
// whether the slice was cancelled and how many packs it rewrote.
func interruptRecompression(t *testing.T, e *Engine, rng *rand.Rand) (cancelled bool, packs int) {
	t.Helper()
	ctx := &checkCounter{Context: context.Background()}
	if rng.IntN(3) > 0 {
		ctx.cancelAt = 1 + rng.Int64N(4)
	}
	res, err := e.RecompressNext(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("recompression slice: %v", err)
	}
	return err != nil, res.Packs
}

// resync brings the watched Engine back in step after a mismatch, so that
// later rounds test later changes: a re-verification must find what its
// watcher missed, and the save after it must capture want.
func resync(t *testing.T, watched *Engine, want objects.ID) {
	t.Helper()
	if _, err := watched.Reverify(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := saveRoot(t, watched); got != want {
		t.Fatalf("after a re-verification the watched save's root is %s, still not %s", got, want)
	}
}

// skippedPaths lists a save's skipped paths as "path (reason)", in its order.
func skippedPaths(s []Skipped) []string {
	out := make([]string, len(s))
	for i, k := range s {
		out[i] = fmt.Sprintf("%s (%s)", k.Path, k.Reason)
	}
	return out
}

// flatten lists every entry below tree id of e's store as "path kind mode id".
func flatten(t *testing.T, e *Engine, id objects.ID, dir string, out map[string]bool) {
	tree, err := e.db.Tree(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range tree.Entries {
		p := dir + "/" + ent.Name
		out[fmt.Sprintf("%s %d %o %.8s", p, ent.Kind, ent.Mode, ent.ID)] = true
		if ent.Kind == objects.KindDir {
			flatten(t, e, ent.ID, p, out)
		}
	}
}

// onlyIn lists the entries of a's tree that b's tree lacks.
func onlyIn(t *testing.T, a *Engine, aRoot objects.ID, b *Engine, bRoot objects.ID) []string {
	as, bs := map[string]bool{}, map[string]bool{}
	flatten(t, a, aRoot, "", as)
	flatten(t, b, bRoot, "", bs)
	var only []string
	for k := range as {
		if !bs[k] {
			only = append(only, k)
		}
	}
	slices.Sort(only)
	return only
}
