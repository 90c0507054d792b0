//go:build linux

package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ckpt/ckpt/bench/corpus"
	"github.com/ckpt/ckpt/engine"
)

// LongTask is the result of "bench long-task": one workspace, a base
// corpus and then Steps checkpoints of edits (Edits: an agent's,
// agent.go, or one-line edits, oneline.go), each saved by ckpt (the
// library, with its watcher, as a server saves: the base's save deferring
// its compression to the recompression a server runs while idle) and by
// the shadow git flow; the stores' sizes at the end.
type LongTask struct {
	Command  string  `json:"command"`
	Commit   string  `json:"commit"`
	Corpus   string  `json:"corpus"`
	Files    int     `json:"files"`    // captured files of the base
	BaseMiB  float64 `json:"base_mib"` // their bytes
	Steps    int     `json:"steps"`
	Edits    string  `json:"edits"` // the edit model: agent or oneline
	Seed     uint64  `json:"seed"`
	Edited   int     `json:"edited"`   // file edits over all steps
	Distinct int     `json:"distinct"` // files edited at least once
	Hottest  int     `json:"hottest"`  // edits of the most edited file
	Added    int     `json:"added"`
	Deleted  int     `json:"deleted"`
	LoadAvg  string  `json:"loadavg"` // at the start and the end

	// First saves of the base, and the sums and medians of the steps' saves.
	CkptFirstS, GitFirstS float64
	// CkptRecompressS is the recompression of the base's deferred packs,
	// which a server runs once it has had no request for a few seconds;
	// it is in no save's time.
	CkptRecompressS                   float64 `json:"ckpt_recompress_s"`
	CkptStepsS, GitStepsS             float64
	CkptStepMedianMs, GitStepMedianMs float64
	// Stores after the base's save, as they are (ckpt's recompressed).
	CkptBaseMiB, GitBaseMiB float64
	// Stores at the end: ckpt before and after `ckpt gc` (every checkpoint
	// kept), the shadow .git as is, after `git gc` and after `git gc
	// --aggressive`, in MiB as du counts.
	CkptMiB, CkptGCMiB float64
	// ckpt's store after its gc as file lengths (the index's log
	// preallocates, du counts that): its packs and the rest, the index.
	CkptGCPacksMiB, CkptGCIndexMiB     float64
	GitMiB, GitGCMiB, GitAggressiveMiB float64
	// Settled: a save by a fresh engine without watcher found nothing the
	// watched saves had missed.
	Settled bool `json:"settled"`
}

// runLongTask runs "bench long-task".
func runLongTask(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("long-task", flag.ContinueOnError)
	var o options
	steps := fs.Int("steps", 1000, "checkpoints of edits after the base")
	edits := fs.String("edits", editsAgent, "the edits of a step: agent (a few lines in a few files, Zipf-drawn; files added and deleted) or oneline (3 one-line edits, 80% in 30 hot files)")
	fs.StringVar(&o.corpus, "corpus", "", "the base: \"gomodcache\" (the pinned modules of bench/realmods.txt), a directory to copy, or \"\" for a generated corpus of -scale (default: gomodcache with -edits agent, this tree (.) with -edits oneline)")
	fs.StringVar(&o.scale, "scale", "10k", "with -corpus \"\": generated corpus size")
	fs.Uint64Var(&o.seed, "seed", 1, "corpus and edit seed")
	fs.StringVar(&o.dir, "dir", "", "parent of the temporary work directory")
	fs.BoolVar(&o.keep, "keep", false, "keep the workspace and both stores")
	jsonOut := fs.String("json", "", "write the result as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *steps < 1 {
		return fmt.Errorf("-steps must be at least 1")
	}
	base, ok := editModels[*edits]
	if !ok {
		return errEditModel(*edits)
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "corpus" })
	if !set {
		o.corpus = base
	}
	r, err := longTask(ctx, o, *edits, *steps)
	if err != nil {
		return err
	}
	r.Command = "go run ./bench long-task " + strings.Join(args, " ")
	r.WriteMarkdown(os.Stdout)
	if *jsonOut == "" {
		return nil
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(*jsonOut, append(data, '\n'), 0o644)
}

// longTask makes the base, saves it with both systems, then runs the
// steps of the edit model edits, each saved by both, and measures the
// stores.
func longTask(ctx context.Context, o options, edits string, steps int) (*LongTask, error) {
	var cfg corpus.Config
	if o.corpus == "" {
		c, err := corpus.ForScale(o.scale, o.seed)
		if err != nil {
			return nil, err
		}
		cfg = c
	}
	work, err := os.MkdirTemp(o.dir, "ckpt-longtask-")
	if err != nil {
		return nil, err
	}
	if o.keep {
		progress("keeping %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	b := &bench{opts: o, ws: filepath.Join(work, "ws")}
	m, err := b.makeCorpus(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r := &LongTask{Corpus: cmp.Or(o.corpus, "generated "+o.scale), Files: m.Captured, BaseMiB: mib(m.Bytes),
		Steps: steps, Edits: edits, Seed: o.seed, LoadAvg: loadAverage(), Commit: headCommit(ctx)}
	ed, err := newEditor(edits, m.Root, m.Text, m.Dirs, o.seed)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	sp, err := startSpawner(ctx, self)
	if err != nil {
		return nil, err
	}
	defer sp.close()
	store := filepath.Join(work, "ckpt-store")
	git := newShadowGit(sp, m.Root, filepath.Join(work, "shadow"), filepath.Join(work, "home"))
	e, err := engine.Open(ctx, m.Root, engine.Options{StoreDir: store, Profile: "cline", Watch: true, DeferCompression: true})
	if err != nil {
		return nil, err
	}
	defer func() {
		if e != nil {
			e.Close()
		}
	}()
	progress("long task on %s: %d files (%.0f MiB), %d steps of %s edits", r.Corpus, r.Files, r.BaseMiB, steps, edits)
	var ckptSteps, gitSteps []time.Duration
	for i := 0; i <= steps; i++ {
		if i > 0 {
			c, err := ed.act()
			if err != nil {
				return nil, err
			}
			r.Edited, r.Added, r.Deleted = r.Edited+c.edited, r.Added+c.added, r.Deleted+c.deleted
		}
		msg := fmt.Sprintf("step %d", i)
		start := time.Now()
		if _, err := e.Save(ctx, engine.SaveOptions{Message: msg}); err != nil {
			return nil, fmt.Errorf("ckpt save %d: %w", i, err)
		}
		ck := time.Since(start)
		gs, err := git.save(ctx, msg)
		if err != nil {
			return nil, fmt.Errorf("git save %d: %w", i, err)
		}
		if i == 0 {
			r.CkptFirstS, r.GitFirstS = ck.Seconds(), gs.Dur.Seconds()
			progress("recompressing the base, as an idle server does")
			rec, err := e.Recompress(ctx)
			if err != nil {
				return nil, fmt.Errorf("ckpt recompress: %w", err)
			}
			r.CkptRecompressS = rec.Duration.Seconds()
			if r.CkptBaseMiB, err = duMiB(store); err != nil {
				return nil, err
			}
			if r.GitBaseMiB, err = duMiB(git.gitDir); err != nil {
				return nil, err
			}
			continue
		}
		ckptSteps, gitSteps = append(ckptSteps, ck), append(gitSteps, gs.Dur)
		if i%100 == 0 {
			progress("step %d: ckpt %s, git %s", i, ck.Round(time.Millisecond), gs.Dur.Round(time.Millisecond))
		}
	}
	r.Distinct = len(ed.perFile())
	for _, n := range ed.perFile() {
		r.Hottest = max(r.Hottest, n)
	}
	r.CkptStepsS, r.CkptStepMedianMs = sumSeconds(ckptSteps), medianMs(ckptSteps)
	r.GitStepsS, r.GitStepMedianMs = sumSeconds(gitSteps), medianMs(gitSteps)
	if err := e.Close(); err != nil {
		return nil, err
	}
	e = nil
	if r.Settled, err = settled(ctx, m.Root, store); err != nil {
		return nil, err
	}
	if err := longTaskStores(ctx, r, m.Root, store, git); err != nil {
		return nil, err
	}
	r.LoadAvg += " → " + loadAverage()
	return r, nil
}
