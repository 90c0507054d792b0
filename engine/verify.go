package engine

import (
	"context"
	"fmt"
)

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Quick checks structure only: every tree decodes and hashes to its id,
	// every referenced blob and chunk has a locator inside an existing pack
	// whose header is sound, chunk lists are well formed, deltas name a stored base. Without it,
	// every reachable blob is also read back (a delta through its chain) and re-hashed.
	Quick bool
	// Progress, when set, is called as the check advances.
	Progress func(PhaseProgress)
}

// VerifyReport is the outcome of Verify.
type VerifyReport struct {
	Checkpoints int
	Trees       int
	Blobs       int   // distinct blobs and chunks reachable
	Locators    int   // locators checked (reachable or not)
	BytesHashed int64 // content re-hashed (0 with Quick)
	Problems    []Problem
	Packs       int
	Quick       bool
}

// OK reports whether no problem was found.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 }

// Verify checks the store: every task head exists, every checkpoint a task
// lists → tree → blob/chunk exists and (unless Quick) hashes correctly,
// and every locator in the index points inside an existing pack whose
// header is sound. Each
// problem is reported once, with the checkpoint and workspace path through
// which the damaged object was first reached. When problems are found the
// report lists them and the error wraps ErrCorrupt; other errors (I/O,
// cancellation) come with a nil report. Verify changes nothing and is
// serialised with the Engine's writes.
func (e *Engine) Verify(ctx context.Context, opts VerifyOptions) (*VerifyReport, error) {
	rep, err := e.verify(ctx, opts)
	return rep, translate(err, e.storeDir)
}

func (e *Engine) verify(ctx context.Context, opts VerifyOptions) (*VerifyReport, error) {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	c, err := e.maintStore().Verify(ctx, opts.Quick, progressFunc(opts.Progress))
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{Checkpoints: c.Checkpoints, Trees: c.Trees, Blobs: c.Blobs, Locators: c.Locators,
		BytesHashed: c.BytesHashed, Packs: c.Packs, Quick: opts.Quick}
	for _, p := range c.Problems {
		if e.leftOnRemote(p) {
			continue
		}
		rep.Problems = append(rep.Problems, publicProblem(p))
	}
	if n := len(rep.Problems); n > 0 {
		return rep, &CorruptError{Store: e.storeDir, Object: rep.Problems[0].Object,
			Err: fmt.Errorf("verify found %d problem(s); first: %s", n, rep.Problems[0])}
	}
	return rep, nil
}
