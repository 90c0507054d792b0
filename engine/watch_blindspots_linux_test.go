package engine

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ckpt/ckpt/internal/blindspot"
	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/internal/watch"
	"github.com/ckpt/ckpt/walker"
)

// The blind spots of inotify the engine covers on Linux (files with
// another hard link, writes through a shared mapping, mounts inside the
// tree) and the re-verification that bounds whatever else goes unseen.

var blindRounds = flag.Int("engine.blind-rounds", 60, "rounds of TestWatchedSaveBlindSpotsDifferential")

// mountNSEnv marks a test process re-executed in a private mount
// namespace (see inMountNamespace).
const mountNSEnv = "CKPT_TEST_MOUNT_NS"

// inMountNamespace runs the calling test again in a private mount
// namespace, where it may mount without touching the machine's mounts,
// and reports true in that process. In the calling process it reports
// false and why the namespace is not available ("" when the test ran in
// it: the caller then returns).
func inMountNamespace(t *testing.T) (inside bool, unavailable string) {
	if os.Getenv(mountNSEnv) == "1" {
		return true, ""
	}
	if os.Geteuid() != 0 {
		return false, "mounting needs root"
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return false, "no unshare(1) to make a private mount namespace"
	}
	if out, err := exec.Command(unshare, "-m", "--propagation", "private", "true").CombinedOutput(); err != nil {
		return false, fmt.Sprintf("unshare -m refused: %v %s", err, out)
	}
	args := []string{"-m", "--propagation", "private", os.Args[0], "-test.run", "^" + t.Name() + "$", "-test.count", "1", "-test.v"}
	for _, name := range []string{"engine.blind-rounds", "engine.watch-seed"} {
		if f := flag.Lookup(name); f != nil {
			args = append(args, "-"+name, f.Value.String())
		}
	}
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), mountNSEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("in a private mount namespace:\n%s", out)
	if err != nil {
		t.Fatalf("the test failed in its mount namespace: %v", err)
	}
	return false, ""
}

// blind adds the blind-spot operations to a churn.
type blind struct {
	*churn
	watched *Engine  // the watched Engine, whose captured directories a link made inside goes to
	outside string   // a directory outside the workspace holding other links
	links   []string // outside links to workspace files, made before the last save
	fresh   []string // outside links made since the last save (see saved)
	mounts  []string // mount points inside the workspace, newest last
	// mountedLast is where the last mount or unmount was, for the report.
	mountedLast string
	mount       bool // mounting is allowed
	// remounted: this round changed the mount table already.
	remounted bool
	counts    map[string]int
	seed      uint64 // the churn's, for the report
}

// op applies one blind-spot operation, logged in c.ops.
func (b *blind) op() {
	kinds := []string{"link", "link-inside", "write-link", "mmap"}
	if b.mount {
		kinds = append(kinds, "mount", "unmount")
	}
	if only := os.Getenv("CKPT_TEST_BLIND_ONLY"); only != "" {
		kinds = strings.Split(only, ",")
	}
	kind := kinds[b.rng.IntN(len(kinds))]
	if (kind == "mount" || kind == "unmount") && b.remounted {
		kind = "mmap" // one change of the mount table per round (see the report)
	}
	b.remounted = b.remounted || kind == "mount" || kind == "unmount"
	var err error
	switch kind {
	case "link": // the file gets a second link outside
		err = b.link()
	case "link-inside": // the file gets a second link in another directory of the workspace
		err = b.linkInside()
	case "write-link": // written through a link: an outside one made before the last save, or one inside
		err = b.writeLink()
	case "mmap":
		err = b.mmapWrite()
	case "mount":
		err = b.mountOne()
	case "unmount":
		err = b.unmountOne()
	}
	b.counts[kind]++
	where := ""
	if kind == "mount" || kind == "unmount" {
		where = " at " + strings.TrimPrefix(b.mountedLast, b.ws)
	}
	b.ops = append(b.ops, fmt.Sprintf("blind %s%s: %v", kind, where, err))
}

// regular picks a regular file of the workspace, "" when there is none.
func (b *blind) regular() string {
	_, others := b.inventory()
	b.rng.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
	for _, f := range others {
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return f
		}
	}
	return ""
}

func (b *blind) link() error {
	f := b.regular()
	if f == "" {
		return nil
	}
	l := filepath.Join(b.outside, fmt.Sprint("l", len(b.links)+len(b.fresh)))
	b.ops = append(b.ops, fmt.Sprintf("link %s to %s", strings.TrimPrefix(f, b.ws), l))
	if err := os.Link(f, l); err != nil {
		return err
	}
	b.fresh = append(b.fresh, l)
	// The new link count raises no event in the file's directory, so a
	// watched save learns of it only when something else makes it re-read
	// that directory (a link made unseen is the re-verification's blind
	// spot, see saved). A chmod to the same mode is such a change.
	fi, err := os.Lstat(f)
	if err != nil {
		return err
	}
	return os.Chmod(f, fi.Mode().Perm())
}

// linkInside links a file of the workspace under a new name in another
// of its directories that a save captures: the creation is reported, the
// link count's change in the file's own directory is not, and a write
// through either name changes the other's content with no event in its
// directory. The link may be written through at once (writeLink). A
// directory no save captures (one the ignore rules exclude, or the
// workspace repository's .git) is watched by no one: a link made there is
// one made from outside, which shows the file's directory no event (see
// link), so none is chosen.
func (b *blind) linkInside() error {
	f := b.regular()
	if f == "" {
		return nil
	}
	captured, err := capturedDirs(b.watched)
	if err != nil {
		return err
	}
	dirs, _ := b.inventory()
	dirs = slices.DeleteFunc(dirs, func(d string) bool {
		rel, err := filepath.Rel(b.ws, d)
		return err != nil || !captured[filepath.ToSlash(rel)] || d == filepath.Dir(f)
	})
	if len(dirs) == 0 {
		return nil
	}
	l := filepath.Join(any1(b.rng, dirs), fmt.Sprint("il", b.n, "-", len(b.links)))
	b.ops = append(b.ops, fmt.Sprintf("link %s to %s", strings.TrimPrefix(f, b.ws), strings.TrimPrefix(l, b.ws)))
	if err := os.Link(f, l); err != nil {
		return err
	}
	b.links = append(b.links, l)
	return nil
}

// capturedDirs returns the directories a save of e captures as the
// workspace stands now, slash-separated and relative to it ("." for the
// root): those its walk lists, under its rules.
func capturedDirs(e *Engine) (map[string]bool, error) {
	var mu sync.Mutex
	dirs := map[string]bool{}
	_, _, err := walker.Walk(context.Background(), e.workspace, e.save.Walk, func(_ context.Context, d *walker.Dir, _ map[string]struct{}) (struct{}, error) {
		mu.Lock()
		defer mu.Unlock()
		dirs[cmp.Or(d.Path, ".")] = true
		return struct{}{}, nil
	})
	return dirs, err
}

// saved notes that the workspace was saved: the links made since are
// now known to the watched Engine, which re-read their directories (see
// link). (A file linked from outside while its directory changes in no
// other way, then written through the link, shows its directory no event
// and no link count above one: that blind spot is the re-verification's.)
func (b *blind) saved() {
	b.links, b.fresh = append(b.links, b.fresh...), nil
}

func (b *blind) writeLink() error {
	if len(b.links) == 0 {
		return b.link()
	}
	l := b.links[b.rng.IntN(len(b.links))]
	b.ops = append(b.ops, "write through "+l)
	fi, err := os.Stat(l)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(l, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(b.bytes(int(max(fi.Size(), 1))), 0)
	return joinClose(err, f)
}

// mmapWrite rewrites a file's first bytes through a shared mapping,
// unmapped (and the descriptor closed) when it returns.
func (b *blind) mmapWrite() error {
	f := b.regular()
	if f == "" {
		return nil
	}
	_, err := blindspot.MmapRewrite(f, b.bytes(4096), false)
	return err
}

// mountOne mounts, on a directory of the workspace, a tmpfs or a bind of
// a directory outside it, each holding a file.
func (b *blind) mountOne() error {
	b.mountedLast = ""
	// One mount at a time on a directory of the workspace's own file
	// system: stacked and nested mounts make the cold walk's stat cache
	// unreliable too (another tmpfs can repeat an inode number and stamp).
	dirs, _ := b.inventory()
	dirs = dirs[1:] // not the root
	b.rng.Shuffle(len(dirs), func(i, j int) { dirs[i], dirs[j] = dirs[j], dirs[i] })
	var at string
	for _, d := range dirs {
		if !b.mountedAt(d) {
			at = d
			break
		}
	}
	if at == "" {
		return nil
	}
	if b.rng.IntN(2) == 0 {
		if err := unix.Mount("none", at, "tmpfs", 0, "size=1m"); err != nil {
			return err
		}
	} else {
		src := filepath.Join(b.outside, fmt.Sprint("bind", b.n))
		if err := os.MkdirAll(filepath.Join(src, "in"), 0o755); err != nil {
			return err
		}
		os.WriteFile(filepath.Join(src, "in", "f"), b.bytes(9), 0o644)
		if err := unix.Mount(src, at, "", unix.MS_BIND, ""); err != nil {
			return err
		}
	}
	b.mounts = append(b.mounts, at)
	b.mountedLast = at
	return os.WriteFile(filepath.Join(at, fmt.Sprint("mounted", b.n)), b.bytes(7), 0o644)
}

// mountedAt reports whether d is, or lies below or above, a mount the
// test made.
func (b *blind) mountedAt(d string) bool {
	for _, m := range b.mounts {
		if d == m || strings.HasPrefix(d, m+"/") || strings.HasPrefix(m, d+"/") {
			return true
		}
	}
	return false
}

func (b *blind) unmountOne() error {
	if len(b.mounts) == 0 {
		return b.mountOne()
	}
	at := b.mounts[len(b.mounts)-1]
	b.mounts = b.mounts[:len(b.mounts)-1]
	b.mountedLast = at
	return unix.Unmount(at, unix.MNT_DETACH)
}

// unmountBelow detaches every mount below the directories (renames took
// some away from where they were made), so they can be removed.
func unmountBelow(t *testing.T, dirs ...string) {
	for range 100 {
		b, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			t.Error(err)
			return
		}
		var points []string
		for line := range strings.SplitSeq(string(b), "\n") {
			f := strings.Fields(line)
			for _, d := range dirs {
				if len(f) > 4 && strings.HasPrefix(f[4], d+"/") {
					points = append(points, f[4])
				}
			}
		}
		if len(points) == 0 {
			return
		}
		for _, p := range points {
			unix.Unmount(p, unix.MNT_DETACH)
		}
	}
	t.Error("mounts below the test's directories would not go")
}

func joinClose(err error, f *os.File) error {
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// TestWatchedSaveBlindSpotsDifferential saves a workspace changing as in
// TestWatchedSaveDifferential, plus a blind-spot operation each round
// (a second link made outside, a write through it, a write through a
// shared mapping, a mount or unmount inside the tree where mounting is
// allowed), with a watched Engine and a cold one: the roots must be
// equal. Every fifth round also makes a change no event reports (a write
// through a mapping kept open) and checks that Reverify finds it, counts
// it and the next watched save captures it.
func TestWatchedSaveBlindSpotsDifferential(t *testing.T) {
	inside, unavailable := inMountNamespace(t)
	if !inside && unavailable == "" {
		return // it ran in its own mount namespace
	}
	blindDifferential(t, inside, unavailable)
}

// blindDifferential runs TestWatchedSaveBlindSpotsDifferential, with its
// mount rounds when mount is set; unavailable says why they are not.
func blindDifferential(t *testing.T, mount bool, unavailable string) {
	if !mount {
		t.Logf("mount rounds skipped: %s", unavailable)
	}
	seed := *watchSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	ws, away, outside := t.TempDir(), t.TempDir(), t.TempDir()
	for i := range 24 {
		rel := fmt.Sprintf("d%d/e%d", i%4, i) // not the path: the seed's rounds must not depend on the temporary directory's name
		d := filepath.Join(ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			os.WriteFile(filepath.Join(d, fmt.Sprint("f", j)), []byte(rel), 0o644)
		}
	}
	var missedEvents int
	opts := Options{Watch: true, Profile: "none", hooks: testHooks{watchMaxPending: burstPending, reverifyInterval: time.Hour},
		OnEvent: func(ev Event) {
			if ev.Type == EventMissedChanges {
				missedEvents += len(ev.Paths)
			}
		}}
	watched := openAt(t, ws, opts)
	cold := openAt(t, ws, Options{Profile: "none"})
	b := &blind{churn: &churn{rng: rand.New(rand.NewPCG(seed, 11)), ws: ws, away: away}, watched: watched, outside: outside,
		mount: mount, counts: map[string]int{}, seed: seed}
	defer unmountBelow(t, ws, away, outside)
	var history []string // the operations of every round so far
	compare := func(round int) {
		t.Helper()
		got, _ := saveRoot(t, watched)
		want, _ := saveRoot(t, cold)
		if got != want {
			t.Fatalf("round %d (seed %d): watched save's root %s, the cold one's %s; watched only: %q, cold only: %q; ops of the last rounds:\n%s",
				round, seed, got, want, onlyIn(t, watched, got, cold, want), onlyIn(t, cold, want, watched, got),
				strings.Join(append(history[max(len(history)-12, 0):], fmt.Sprintf("round %d (this one):", round), strings.Join(b.ops, "\n")), "\n"))
		}
	}
	unseen, reconciled := 0, 0
	start := time.Now()
	for round := range *blindRounds {
		b.round()
		b.remounted = false
		for range 1 + b.rng.IntN(3) {
			b.op()
		}
		compare(round)
		b.saved()
		history = append(history, fmt.Sprintf("round %d:\n%s", round, strings.Join(b.ops, "\n")))
		if round%5 == 4 {
			reconciled += b.unseenChange(t, watched, round)
			unseen++
			compare(round)
		}
	}
	st, _ := watched.WatchStats()
	if st.Missed != reconciled || missedEvents != reconciled || st.Reverified != unseen {
		t.Fatalf("watch stats %+v and %d paths in missed-changes events; want %d re-verifications finding %d",
			st, missedEvents, unseen, reconciled)
	}
	t.Logf("seed %d: %d rounds in %v, 0 differences; blind-spot operations %v; %d re-verifications reconciled %d missed changes",
		seed, *blindRounds, time.Since(start).Round(time.Millisecond), b.counts, st.Reverified, st.Missed)
}

// unseenChange writes a file through a shared mapping it keeps open, so no
// event reports it, and checks that Reverify finds its directory; it
// returns the missed changes Reverify reported.
func (b *blind) unseenChange(t *testing.T, e *Engine, round int) int {
	t.Helper()
	dir := filepath.Join(b.ws, fmt.Sprint("unseen", round))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("before the mapping"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A rule file changed within the last tick makes the next scan walk
	// everything, which vouches for nothing: back-date them first, and a
	// symlink among them as well as its target (the scans stat both).
	old := time.Now().Add(-time.Hour)
	stamp := unix.NsecToTimespec(old.UnixNano())
	for _, p := range []string{".git/info/exclude", ".git/info", ".git"} {
		os.Chtimes(filepath.Join(b.ws, p), old, old)
		unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(b.ws, p), []unix.Timespec{stamp, stamp}, unix.AT_SYMLINK_NOFOLLOW)
	}
	saveRoot(t, e)
	m, err := blindspot.MmapRewrite(f, []byte("AFTER"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	res, err := e.Reverify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rel := strings.TrimPrefix(dir, b.ws+"/")
	found := false
	for _, p := range res.Missed {
		found = found || p == rel
	}
	// Below an ignore-rule file with another hard link every save walks
	// (the file can change with no event), so the change need not be
	// missed there; the next save, compared after this, captures it.
	if !found && !ruleLinkedAbove(b.ws, dir) {
		t.Fatalf("round %d (seed %d): re-verification missed %s: %+v", round, b.seed, rel, res)
	}
	return len(res.Missed)
}

// ruleLinkedAbove reports whether dir, or a directory above it up to ws,
// holds an ignore-rule file with more than one hard link.
func ruleLinkedAbove(ws, dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		for _, name := range watch.DefaultRuleNames {
			var st unix.Stat_t
			if unix.Lstat(filepath.Join(d, name), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
				return true
			}
		}
		if d == ws || len(d) <= len(ws) {
			return false
		}
	}
}

// The watched Engine re-verifies on its own: a change no event reports is
// found by the periodic run and captured by the next save.
func TestPeriodicReverifyFindsAnUnreportedChange(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(ws, "a", "b", "f")
	if err := os.WriteFile(f, []byte("one two three"), 0o644); err != nil {
		t.Fatal(err)
	}
	events := make(chan Event, 16)
	opts := Options{Watch: true, hooks: testHooks{reverifyInterval: 20 * time.Millisecond}, OnEvent: func(ev Event) {
		if ev.Type == EventMissedChanges {
			events <- ev
		}
	}}
	e := openAt(t, ws, opts)
	first, _ := saveRoot(t, e)
	m, err := blindspot.MmapRewrite(f, []byte("ONE"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	select {
	case ev := <-events:
		if len(ev.Paths) != 1 || ev.Paths[0] != "a/b" {
			t.Fatalf("missed-changes event %+v, want a/b", ev)
		}
	case <-time.After(testbound.Hang):
		t.Fatalf("no periodic re-verification found the change within %v", testbound.Hang)
	}
	got, _ := saveRoot(t, e)
	cold := openAt(t, ws, Options{})
	want, _ := saveRoot(t, cold)
	if got != want || got == first {
		t.Fatalf("save after the re-verification: root %s, cold %s, before %s", got, want, first)
	}
	if st, _ := e.WatchStats(); st.Missed != 1 || st.Reverified == 0 {
		t.Fatalf("watch stats %+v, want one missed change", st)
	}
}

// A file saved while it had a second link outside the workspace, then
// written through that link, is saved with its new content by the
// watched Engine: no event reaches the workspace's watches.
func TestWatchedSaveSeesWriteThroughOutsideHardLink(t *testing.T) {
	t.Parallel()
	ws, outside := t.TempDir(), t.TempDir()
	f := filepath.Join(ws, "sub", "f")
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, []byte("version one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(f, filepath.Join(outside, "g")); err != nil {
		t.Fatal(err)
	}
	e := openAt(t, ws, Options{Watch: true, hooks: testHooks{reverifyInterval: time.Hour}})
	saveRoot(t, e)
	saveRoot(t, e) // nothing pending: the next save prunes what the watcher vouches for
	if err := os.WriteFile(filepath.Join(outside, "g"), []byte("version two"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := saveRoot(t, e)
	want, _ := saveRoot(t, openAt(t, ws, Options{}))
	if got != want {
		t.Fatalf("watched save %s, cold save %s: the write through the other link was missed", got, want)
	}
}

// An ignore-rule file saved while it had a second link outside the
// workspace, then rewritten through that link, changes what the watched
// Engine captures below its directory, as it does for a cold one: a
// directory the old rules excluded is saved, though no event reached the
// workspace's watches and nothing below changed. So it does when the old
// rules excluded the rule file itself.
func TestWatchedSaveSeesARuleFileRewrittenThroughOutsideHardLink(t *testing.T) {
	t.Parallel()
	for name, rules := range map[string]string{"captured": "b\n", "excluding itself": ".gitignore\nb\n"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ws, outside := t.TempDir(), t.TempDir()
			for rel, content := range map[string]string{"d/.gitignore": rules, "d/x/b/f": "excluded, then not", "d/x/g": "g"} {
				p := filepath.Join(ws, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Link(filepath.Join(ws, "d", ".gitignore"), filepath.Join(outside, "rules")); err != nil {
				t.Fatal(err)
			}
			e := openAt(t, ws, Options{Watch: true, Profile: "none", hooks: testHooks{reverifyInterval: time.Hour}})
			before, _ := saveRoot(t, e)
			saveRoot(t, e) // nothing pending: the next save prunes what the watcher vouches for
			if err := os.WriteFile(filepath.Join(outside, "rules"), []byte("other\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			got, _ := saveRoot(t, e)
			want, _ := saveRoot(t, openAt(t, ws, Options{Profile: "none"}))
			if got != want || got == before {
				t.Fatalf("watched save %s (before the rewrite %s), cold save %s: the rules rewritten through the other link were missed", got, before, want)
			}
		})
	}
}
