//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/ckpt/ckpt/bench/corpus"
)

// options are the command-line settings of one benchmark run.
type options struct {
	scale string
	seed  uint64
	reps  int
	cold  bool
	dir   string // parent of the temporary work directory
	keep  bool   // keep the corpus and stores afterwards
	edits int
	added int
	// restores is how many times each edit cycle restores the first
	// checkpoint and redoes the edit: each pair costs shadow git two
	// seconds and ckpt a tenth of one, and a restore's few tens of
	// milliseconds vary more from one to the next than a save's.
	restores int
	// pause is left, untimed, between the edit and its save: the time an
	// agent's host takes between a tool's writes and the checkpoint after
	// them, which a resident server spends reading ahead.
	pause      time.Duration
	profileDir string
	systems    string // comma-separated subset of git,ckpt-cli,ckpt-lib,ckpt-server,ckpt-server-nowatch,ckpt-rpc,ckpt-server-settled,stash
	gc         bool
	corpus     string // a directory to copy as the corpus, or "gomodcache" (realmods.go)
	inPlace    bool   // measure the corpus directory itself: read-only operations only
	// deferCompression opens the library's engine with DeferCompression and
	// recompresses its store after the last repetition (as git gc).
	deferCompression bool
}

// asked reports whether -systems names system.
func (o options) asked(system string) bool {
	return strings.Contains(","+o.systems+",", ","+system+",")
}

// progress reports on stderr.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// bench is one run in progress.
type bench struct {
	opts    options
	ws      string
	m       *corpus.Manifest
	report  *Report
	systems []system
	git     *shadowGit
	sp      *spawner
	// edit is the change of the latest edit cycle, whose restore the
	// restore's floor measures.
	edit *corpus.Mutation
}

// run generates the corpus, then measures every system and the floors,
// interleaved, opts.reps times.
func run(ctx context.Context, opts options) (*Report, error) {
	var cfg corpus.Config
	if opts.corpus == "" {
		c, err := corpus.ForScale(opts.scale, opts.seed)
		if err != nil {
			return nil, err
		}
		cfg = c
	}
	work, err := os.MkdirTemp(opts.dir, "ckpt-bench-")
	if err != nil {
		return nil, err
	}
	if !opts.keep {
		defer os.RemoveAll(work)
	} else {
		progress("keeping %s", work)
	}
	b := &bench{opts: opts, ws: filepath.Join(work, "ws"), report: newReport(opts)}
	start := time.Now()
	if b.m, err = b.makeCorpus(ctx, cfg); err != nil {
		return nil, err
	}
	b.ws = b.m.Root
	b.report.setCorpus(b.m, time.Since(start))
	progress("corpus of %d files (%d captured, %.0f MiB) ready in %s", b.m.Files, b.m.Captured, mib(b.m.Bytes), time.Since(start).Round(time.Millisecond))
	if err := b.setup(ctx, work); err != nil {
		return nil, err
	}
	defer b.sp.close()
	defer b.closeServers()
	for rep := range opts.reps {
		if err := b.floors(rep); err != nil {
			return nil, err
		}
		for i, sys := range b.systems {
			err := b.sequence(ctx, rep, sys)
			// Left running, a resident process would compress its first
			// save's packs while the next system is timed.
			closeResident(sys)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sys.name(), err)
			}
			// Once, after the first system's cycle has brought the
			// workspace back to its content and no process watches it:
			// the floor's own writes would otherwise be a watcher's
			// foreign changes in the middle of a resident system's cycle.
			if i == 0 && b.edit != nil {
				if err := b.restoreFloor(rep, *b.edit); err != nil {
					return nil, err
				}
			}
		}
	}
	b.report.finish()
	return b.report, nil
}

// closeServers stops the resident processes of the systems that keep one.
func (b *bench) closeServers() {
	for _, s := range b.systems {
		closeResident(s)
	}
}

// closeResident stops s's resident process, if it keeps one.
func closeResident(s system) {
	if r, ok := s.(interface{ close() }); ok {
		r.close()
	}
}

// setup builds the ckpt binary and creates the systems.
func (b *bench) setup(ctx context.Context, work string) error {
	bin, err := buildCkpt(ctx, work)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	sp, err := startSpawner(ctx, self)
	if err != nil {
		return err
	}
	b.sp = sp
	b.report.Machine.SpawnBaselineMiB = float64(sp.base) / 1024
	home := filepath.Join(work, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	b.git = newShadowGit(sp, b.ws, filepath.Join(work, "shadow"), home)
	env := b.git.env
	all := []system{
		b.git,
		&ckptCLI{sp: sp, bin: bin, ws: b.ws, store: filepath.Join(work, "store-cli"), env: env},
		&ckptLib{sp: sp, self: self, ws: b.ws, store: filepath.Join(work, "store-lib"), env: env, profileDir: b.opts.profileDir,
			deferred: b.opts.deferCompression},
	}
	all = append(all, newServers(bin, b.ws, work, env)...)
	all = append(all, newRPC(bin, b.ws, work, env))
	if b.opts.asked(sysServerSettled) {
		// Only on request: its wait for the idle recompression lasts a
		// minute or so per repetition on the 100k corpus.
		all = append(all, newSettledServer(bin, b.ws, work, env))
	}
	if b.opts.asked("stash") {
		// Only on request: it makes the workspace a git repository.
		all = append(all, newStashFlow(sp, b.ws, home))
	}
	for _, s := range all {
		if b.opts.systems == "" || b.opts.asked(s.name()) {
			b.systems = append(b.systems, s)
		}
	}
	if out, err := exec.Command("git", "--version").Output(); err == nil {
		b.report.Machine.Git = strings.TrimSpace(string(out))
	}
	return nil
}

// buildCkpt builds the ckpt CLI into dir and returns its path.
func buildCkpt(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "ckpt")
	progress("building the ckpt CLI")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/ckpt/ckpt/cmd/ckpt").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w: %s", err, out)
	}
	return bin, nil
}

// makeCorpus generates the corpus of cfg, copies the directory of
// -corpus, fetches the pinned module set, or surveys the directory itself
// with -corpus-in-place.
func (b *bench) makeCorpus(ctx context.Context, cfg corpus.Config) (*corpus.Manifest, error) {
	switch {
	case b.opts.corpus == "":
		progress("generating the %s corpus (seed %d) in %s", b.opts.scale, b.opts.seed, b.ws)
		return corpus.Generate(ctx, b.ws, cfg)
	case b.opts.corpus == realModulesCorpus:
		if err := fetchModules(ctx, b.ws); err != nil {
			return nil, err
		}
		return corpus.Survey(ctx, b.ws, realModulesCorpus)
	case b.opts.inPlace:
		progress("measuring %s in place (read-only operations)", b.opts.corpus)
		return corpus.Survey(ctx, b.opts.corpus, b.opts.corpus)
	}
	progress("copying %s to %s", b.opts.corpus, b.ws)
	return corpus.Copy(ctx, b.opts.corpus, b.ws)
}

// floors measures the parallel stat walk and the BLAKE3+zstd pass.
func (b *bench) floors(rep int) error {
	generated := b.m.Source == ""
	skip := corpus.IgnoredDirNames
	if !generated {
		skip = []string{".git"} // a real tree's ignore rules are its own: walk it all
	}
	d, files, err := statFloor(b.ws, skip)
	if err != nil {
		return fmt.Errorf("stat floor: %w", err)
	}
	b.report.add("floor", opNoChange, qSeconds, d.Seconds())
	captured := files[:0:0]
	for _, f := range files {
		if !generated || !strings.HasSuffix(f, ".o") { // the generated corpus's ignored objects beside the sources
			captured = append(captured, f)
		}
	}
	h, n, err := hashFloor(captured)
	if err != nil {
		return fmt.Errorf("hash floor: %w", err)
	}
	b.report.add("floor", opFirst, qSeconds, h.Seconds())
	progress("[%d] floors: stat walk %s (%d files), BLAKE3+zstd %s (%.0f MiB)", rep+1, d.Round(time.Millisecond), len(files), h.Round(time.Millisecond), mib(n))
	return nil
}

// sequence runs one system's checkpoint life on the workspace: first save
// into an empty store, a save with nothing changed, an agent-like edit and
// its save, the diff of the two checkpoints, the restore of the first and
// the redo of the edit.
// The workspace ends with the content it started with.
func (b *bench) sequence(ctx context.Context, rep int, sys system) error {
	if err := sys.reset(); err != nil {
		return err
	}
	name := sys.name()
	timed := func(op string, f func() (step, error)) (step, error) {
		if b.opts.cold {
			if err := dropCaches(); err != nil {
				return step{}, err
			}
		}
		// What the previous operations left to the kernel (shadow git
		// syncs nothing: its first save leaves hundreds of MiB to write
		// back) and the bench's own garbage (the tree stamps a restore is
		// checked with, the corpus model's edits) are dealt with before
		// the clock starts: no operation pays for another's writeback, nor
		// a call or a host's decoding of its reply in this process for the
		// bench's collections.
		syscall.Sync()
		runtime.GC()
		s, err := f()
		if err != nil {
			return s, fmt.Errorf("%s: %w", op, err)
		}
		b.report.add(name, op, qSeconds, s.Dur.Seconds())
		b.report.add(name, op, qRSS, float64(s.RSSKiB)/1024)
		if s.Watches > 0 {
			b.report.add(name, op, qWatches, float64(s.Watches))
		}
		if s.Decode > 0 {
			b.report.add(name, op, qDecode, s.Decode.Seconds())
		}
		if s.Phases != nil {
			b.report.addPhases(name, op, *s.Phases)
		}
		progress("[%d] %-8s %-15s %9s  rss %4.0f MiB  (%d processes)", rep+1, name, op, s.Dur.Round(time.Millisecond), float64(s.RSSKiB)/1024, s.Procs)
		return s, nil
	}
	first, err := timed(opFirst, func() (step, error) { return sys.save(ctx, "first") })
	if err != nil {
		return err
	}
	if first.Background > 0 {
		b.report.add(name, opFirst, qBackground, first.Background.Seconds())
		progress("[%d] %-8s background recompression ran %s after the first save", rep+1, name, first.Background.Round(time.Millisecond))
	}
	if err := b.recordStore(ctx, sys, first); err != nil {
		return err
	}
	if c, ok := sys.(*ckptServer); ok && c.settle {
		took, err := c.settled(ctx)
		if err != nil {
			return err
		}
		b.report.add(name, opFirst, qSettled, took.Seconds())
		progress("[%d] %-8s the first save's packs were compressed %s after it", rep+1, name, took.Round(time.Second))
	}
	if _, err := timed(opNoChange, func() (step, error) { return sys.save(ctx, "no change") }); err != nil {
		return err
	}
	if !b.opts.inPlace { // an in-place corpus is not ours to edit
		if err := b.editCycle(ctx, rep, sys, first, timed); err != nil {
			return err
		}
	}
	if g, ok := sys.(*shadowGit); ok && b.opts.gc && rep == b.opts.reps-1 {
		return b.gitGC(ctx, g)
	}
	if l, ok := sys.(*ckptLib); ok && l.deferred && b.opts.gc && rep == b.opts.reps-1 {
		return b.recompress(ctx, l)
	}
	return nil
}

// recompress compresses a store whose first save deferred compression and
// records its size (beside git's after git gc) and the time it took.
func (b *bench) recompress(ctx context.Context, l *ckptLib) error {
	s, err := l.run(ctx, "recompress")
	if err != nil {
		return fmt.Errorf("recompress: %w", err)
	}
	size, err := diskUsage(l.storeDir())
	if err != nil {
		return err
	}
	progress("%-8s recompress %9s  rss %4.0f MiB  store %.0f MiB", l.name(), s.Dur.Round(time.Millisecond), float64(s.RSSKiB)/1024, mib(size))
	b.report.add(l.name(), opFirst, qStoreGC, mib(size))
	return nil
}

// editCycle edits the workspace, pauses (-pause), saves, diffs the two
// checkpoints, restores the first one and redoes the edit (restores the
// second again), -restores times, then restores the first untimed, which
// brings the workspace back to its content; b.edit keeps the change for
// the restore's floor.
func (b *bench) editCycle(ctx context.Context, rep int, sys system, first step, timed func(string, func() (step, error)) (step, error)) error {
	name := sys.name()
	mu, err := corpus.Mutate(b.m, b.opts.seed, b.opts.edits, b.opts.added)
	if err != nil {
		return err
	}
	b.edit = &mu
	if b.opts.pause > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(b.opts.pause):
		}
	}
	edited, err := timed(opEdit, func() (step, error) { return sys.save(ctx, "after edits") })
	if err != nil {
		return err
	}
	d, err := timed(opDiff, func() (step, error) { return sys.diff(ctx, first.ID, edited.ID) })
	if err != nil {
		return err
	}
	b.report.add(name, opDiff, qFiles, float64(d.Files))
	if want := len(mu.Modified) + len(mu.Added); d.Files != want {
		return fmt.Errorf("diff found %d files, the edit changed %d", d.Files, want)
	}
	// A restore rewrites the edited files and deletes the added ones; the
	// redo rewrites the edited files and creates the added ones again.
	for range b.opts.restores {
		if err := b.timedRestore(ctx, sys, opRestore, first.ID, len(mu.Modified), 0, len(mu.Added), timed); err != nil {
			return err
		}
		if err := b.timedRestore(ctx, sys, opRedo, edited.ID, len(mu.Modified)+len(mu.Added), len(mu.Added), 0, timed); err != nil {
			return err
		}
	}
	if _, err := sys.restore(ctx, first.ID); err != nil {
		return fmt.Errorf("restore after the redo: %w", err)
	}
	return nil
}

// timedRestore restores ref as operation op and checks, on the disk, that
// it wrote at least minWritten files, of which added are files the restore
// created, and deleted exactly deleted.
func (b *bench) timedRestore(ctx context.Context, sys system, op, ref string, minWritten, added, deleted int, timed func(string, func() (step, error)) (step, error)) error {
	name := sys.name()
	before, err := stampTree(b.ws)
	if err != nil {
		return err
	}
	r, err := timed(op, func() (step, error) { return sys.restore(ctx, ref) })
	if err != nil {
		return err
	}
	after, err := stampTree(b.ws)
	if err != nil {
		return err
	}
	written, gone := countChanges(before, after)
	b.report.add(name, op, qWritten, float64(written))
	b.report.add(name, op, qDeleted, float64(gone))
	if r.Written >= 0 {
		b.report.add(name, op, qReportedWritten, float64(r.Written))
	}
	if gone != deleted || written < minWritten || len(after) != len(before)+added-deleted {
		return fmt.Errorf("%s wrote %d and deleted %d files, want at least %d and %d", op, written, gone, minWritten, deleted)
	}
	return nil
}

// restoreFloor measures writing and syncing exactly the files a restore of
// mu changes (its edited files rewritten, its added files removed), on the
// workspace as it was before mu (the added files are made first), each
// synced and staged with a syncfs before and after their renames, the two
// ways a restore makes them durable, and records the quicker, -restores
// times.
func (b *bench) restoreFloor(rep int, mu corpus.Mutation) error {
	abs := func(rel []string) []string {
		out := make([]string, len(rel))
		for i, p := range rel {
			out[i] = filepath.Join(b.ws, filepath.FromSlash(p))
		}
		return out
	}
	for range b.opts.restores { // as many as the restores it is set against
		syscall.Sync() // as before every timed operation
		each, err := restoreFloor(abs(mu.Modified), abs(mu.Added), false)
		if err != nil {
			return fmt.Errorf("restore floor: %w", err)
		}
		syncfs, err := restoreFloor(abs(mu.Modified), abs(mu.Added), true)
		if err != nil {
			return fmt.Errorf("restore floor: %w", err)
		}
		b.report.add("floor", opRestore, qSeconds, min(each, syncfs).Seconds())
		progress("[%d] floors: restore's writes %s each synced, %s staged and synced with syncfs (%d files written, %d removed)",
			rep+1, each.Round(time.Millisecond), syncfs.Round(time.Millisecond), len(mu.Modified), len(mu.Added))
	}
	return nil
}

// gitGC compacts the shadow repository (untimed) and records its size: the
// fair comparison for a store ckpt keeps compact from the start. The
// repository then also holds the edit's checkpoint, about 120 more blobs.
func (b *bench) gitGC(ctx context.Context, g *shadowGit) error {
	progress("git gc of the shadow repository")
	if err := g.gc(ctx); err != nil {
		return err
	}
	size, err := diskUsage(g.storeDir())
	if err != nil {
		return err
	}
	b.report.add(g.name(), opFirst, qStoreGC, mib(size))
	return nil
}

// recordStore measures the store after the first save and, once, checks
// that the systems captured the same number of files.
func (b *bench) recordStore(ctx context.Context, sys system, first step) error {
	size, err := diskUsage(sys.storeDir())
	if err != nil {
		return err
	}
	b.report.add(sys.name(), opFirst, qStore, mib(size))
	switch s := sys.(type) {
	case *shadowGit:
		n, err := s.fileCount(ctx)
		if err != nil {
			return err
		}
		b.report.Corpus.GitFiles = n
	case *ckptCLI, *ckptServer, *ckptRPC:
		if b.report.Corpus.CkptFiles == 0 { // the first ckpt system's: any run without the CLI has one too
			b.report.Corpus.CkptFiles = first.Files
		}
	}
	return nil
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// machine describes where the run happened.
type machine struct {
	Cores int    `json:"cores"`
	CPU   string `json:"cpu"`
	OS    string `json:"os"`
	Go    string `json:"go"`
	Git   string `json:"git"`
	// SpawnBaselineMiB is the peak RSS reported for /bin/true started by the
	// helper that starts every measured process: the part of each RSS figure
	// that is the helper's, not the command's.
	SpawnBaselineMiB float64 `json:"spawn_baseline_mib"`
}

func describeMachine() machine {
	m := machine{Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}
