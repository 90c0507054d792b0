//go:build linux

package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ckpt/ckpt/engine"
)

// settled reports whether a save by a fresh engine of store, walking the
// workspace instead of watching it, finds nothing to add: the watched
// saves of the steps captured every edit.
func settled(ctx context.Context, ws, store string) (bool, error) {
	e, err := engine.Open(ctx, ws, engine.Options{StoreDir: store, Profile: "cline"})
	if err != nil {
		return false, err
	}
	res, err := e.Save(ctx, engine.SaveOptions{Message: "check"})
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	return !res.Created, nil
}

// longTaskStores measures both stores of workspace ws: ckpt's before and after its gc
// (every checkpoint kept), git's as is, after `git gc` and after `git gc
// --aggressive`.
func longTaskStores(ctx context.Context, r *LongTask, ws, store string, git *shadowGit) error {
	var err error
	if r.CkptMiB, err = duMiB(store); err != nil {
		return err
	}
	e, err := engine.Open(ctx, ws, engine.Options{StoreDir: store, MustExist: true})
	if err != nil {
		return err
	}
	_, err = e.GC(ctx, engine.GCOptions{Policy: &engine.RetentionPolicy{}})
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("ckpt gc: %w", err)
	}
	// Opened and closed again, as by the next CLI command: opening the
	// index flushes what its log holds into tables.
	if e, err = engine.Open(ctx, ws, engine.Options{StoreDir: store, MustExist: true}); err != nil {
		return err
	}
	if err := e.Close(); err != nil {
		return err
	}
	if r.CkptGCMiB, err = duMiB(store); err != nil {
		return err
	}
	packs, err := apparentSize(filepath.Join(store, "packs"))
	if err != nil {
		return err
	}
	all, err := apparentSize(store)
	if err != nil {
		return err
	}
	r.CkptGCPacksMiB, r.CkptGCIndexMiB = mib(packs), mib(all-packs)
	if r.GitMiB, err = duMiB(git.gitDir); err != nil {
		return err
	}
	progress("git gc")
	if err := git.gc(ctx); err != nil {
		return err
	}
	if r.GitGCMiB, err = duMiB(git.gitDir); err != nil {
		return err
	}
	progress("git gc --aggressive")
	if _, err := git.untimed(ctx, "gc", "-q", "--aggressive"); err != nil {
		return err
	}
	r.GitAggressiveMiB, err = duMiB(git.gitDir)
	return err
}

// duMiB is diskUsage in MiB.
func duMiB(root string) (float64, error) {
	n, err := diskUsage(root)
	return mib(n), err
}

// headCommit is the commit of the tree the bench runs from, "" outside a
// git checkout.
func headCommit(ctx context.Context) string {
	r, err := runProc(ctx, ".", os.Environ(), "git", "rev-parse", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(r.Stdout))
}

func sumSeconds(d []time.Duration) float64 {
	var s time.Duration
	for _, x := range d {
		s += x
	}
	return s.Seconds()
}

func medianMs(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(d))
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

// WriteMarkdown prints the result as a markdown table.
func (r *LongTask) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "Long task at %s on %s: %d files (%.0f MiB), %d steps of %s edits (seed %d): %d edits of %d files (the hottest %d times), %d files added, %d deleted; load %s\n\n",
		r.Commit, r.Corpus, r.Files, r.BaseMiB, r.Steps, cmp.Or(r.Edits, editsAgent), r.Seed, r.Edited, r.Distinct, r.Hottest, r.Added, r.Deleted, r.LoadAvg)
	fmt.Fprintln(w, "| | ckpt (library, watcher) | shadow git | git / ckpt |")
	fmt.Fprintln(w, "|---|--:|--:|--:|")
	fmt.Fprintf(w, "| first save (base) | %.2f s | %.2f s | %.1fx |\n", r.CkptFirstS, r.GitFirstS, r.GitFirstS/r.CkptFirstS)
	fmt.Fprintf(w, "| its recompression, idle | %.2f s | | |\n", r.CkptRecompressS)
	fmt.Fprintf(w, "| %d step saves, total | %.1f s | %.1f s | %.1fx |\n", r.Steps, r.CkptStepsS, r.GitStepsS, r.GitStepsS/r.CkptStepsS)
	fmt.Fprintf(w, "| step save, median | %.1f ms | %.1f ms | %.1fx |\n", r.CkptStepMedianMs, r.GitStepMedianMs, r.GitStepMedianMs/r.CkptStepMedianMs)
	fmt.Fprintf(w, "| store after the base | %.1f MiB | %.1f MiB | %.2fx |\n", r.CkptBaseMiB, r.GitBaseMiB, r.GitBaseMiB/r.CkptBaseMiB)
	fmt.Fprintf(w, "| store at the end | %.1f MiB | %.1f MiB | %.2fx |\n", r.CkptMiB, r.GitMiB, r.GitMiB/r.CkptMiB)
	fmt.Fprintf(w, "| growth over the steps, as is | %.1f MiB | %.1f MiB | %.2fx |\n", r.CkptMiB-r.CkptBaseMiB, r.GitMiB-r.GitBaseMiB, (r.GitMiB-r.GitBaseMiB)/(r.CkptMiB-r.CkptBaseMiB))
	fmt.Fprintf(w, "| after `ckpt gc` / `git gc` | %.1f MiB | %.1f MiB | %.2fx |\n", r.CkptGCMiB, r.GitGCMiB, r.GitGCMiB/r.CkptGCMiB)
	fmt.Fprintf(w, "| after `ckpt gc` / `git gc --aggressive` | %.1f MiB | %.1f MiB | %.2fx |\n", r.CkptGCMiB, r.GitAggressiveMiB, r.GitAggressiveMiB/r.CkptGCMiB)
	fmt.Fprintf(w, "| ckpt after gc as file lengths: packs + index | %.2f + %.2f MiB | | |\n", r.CkptGCPacksMiB, r.CkptGCIndexMiB)
	fmt.Fprintf(w, "\nA save without the watcher after the last step found nothing new: %v.\n", r.Settled)
}
