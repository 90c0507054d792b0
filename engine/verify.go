package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/ckpt/ckpt/internal/index"
	"github.com/ckpt/ckpt/internal/objects"
)

// VerifyOptions configure Verify.
type VerifyOptions struct {
	// Quick checks structure only: every tree decodes and hashes to its id,
	// every referenced blob and chunk has a locator inside an existing pack,
	// chunk lists are well formed. Without it, every reachable blob is also
	// read back and re-hashed.
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
// and every locator in the index points inside an existing pack. Each
// problem is reported once, with the checkpoint and workspace path through
// which the damaged object was first reached. When problems are found the
// report lists them and the error wraps ErrCorrupt; other errors (I/O,
// cancellation) come with a nil report. Verify changes nothing and is
// serialised with the Engine's writes.
func (e *Engine) Verify(ctx context.Context, opts VerifyOptions) (*VerifyReport, error) {
	rep, err := e.verify(ctx, opts)
	return rep, translate(err)
}

func (e *Engine) verify(ctx context.Context, opts VerifyOptions) (*VerifyReport, error) {
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	rep := &VerifyReport{Quick: opts.Quick}
	var mu sync.Mutex
	add := func(p Problem) {
		mu.Lock()
		rep.Problems = append(rep.Problems, p)
		mu.Unlock()
	}
	if err := e.verifyHeads(add); err != nil {
		return nil, err
	}
	g, err := e.loadGraph(ctx, add, opts.Progress)
	if err != nil {
		return nil, storeError(err, e.storeDir)
	}
	rep.Checkpoints, rep.Trees, rep.Blobs = len(g.cps), len(g.trees), len(g.blobs)
	bad, err := e.verifyLocators(g, rep, add)
	if err != nil {
		return nil, err
	}
	if !opts.Quick {
		if err := e.verifyContent(ctx, g, bad, rep, add, opts.Progress); err != nil {
			return nil, err
		}
	}
	if n := len(rep.Problems); n > 0 {
		return rep, &CorruptError{Store: e.storeDir, Object: rep.Problems[0].Object,
			Err: fmt.Errorf("verify found %d problem(s); first: %s", n, rep.Problems[0])}
	}
	return rep, nil
}

// verifyHeads checks that every task's head is a stored checkpoint.
func (e *Engine) verifyHeads(add func(Problem)) error {
	tasks, err := e.db.Tasks()
	if err != nil {
		return storeError(err, e.storeDir)
	}
	for _, task := range tasks {
		head, _, err := e.db.Task(task)
		if err == nil {
			_, err = e.db.Checkpoint(head.Head)
		}
		if err != nil {
			add(Problem{Task: task, Object: ID(head.Head), Kind: "task",
				Message: fmt.Sprintf("task %q: head %s: %s", task, head.Head.Short(), describe(err))})
		}
	}
	return nil
}

// verifyLocators checks that every locator in the index lies inside an
// existing pack, past its header. It returns the blobs whose locator is
// bad, so that their content is not reported twice.
func (e *Engine) verifyLocators(g *refGraph, rep *VerifyReport, add func(Problem)) (map[objects.ID]bool, error) {
	sizes := map[uint32]int64{}
	nums, err := e.blobs.Packs()
	if err != nil {
		return nil, err
	}
	for _, n := range nums {
		fi, err := os.Stat(e.blobs.PackPath(n))
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		sizes[n] = fi.Size()
	}
	rep.Packs = len(nums)
	bad := map[objects.ID]bool{}
	err = e.db.EachLocator(func(id objects.ID, loc objects.Locator) error {
		rep.Locators++
		size, ok := sizes[loc.Pack]
		var msg string
		switch {
		case !ok:
			msg = fmt.Sprintf("pack %s missing", e.blobs.PackPath(loc.Pack))
		case loc.Offset < objects.PackHeaderSize || loc.Offset+int64(loc.Length) > size:
			msg = fmt.Sprintf("record at %d+%d lies outside pack %s (%d bytes)", loc.Offset, loc.Length, e.blobs.PackPath(loc.Pack), size)
		default:
			return nil
		}
		bad[id] = true
		p := Problem{Object: ID(id), Kind: "locator", Message: "blob " + id.Short() + ": " + msg}
		if b := g.blobs[id]; b != nil && b.site.cp != nil {
			p.Checkpoint, p.Task, p.Seq, p.Path = ID(b.site.cp.id), b.site.cp.cp.Task, b.site.cp.cp.Seq, b.site.path
		}
		add(p)
		return nil
	})
	return bad, storeError(err, e.storeDir)
}

// verifyContent re-reads and re-hashes every reachable blob (a chunked
// file is streamed through its chunks and its whole hash checked), in
// parallel.
func (e *Engine) verifyContent(ctx context.Context, g *refGraph, bad map[objects.ID]bool, rep *VerifyReport,
	add func(Problem), progress func(PhaseProgress)) error {
	var total int64
	for id, b := range g.blobs {
		if !b.missing && !bad[id] {
			total += b.loc.Size
		}
	}
	var done, blobs atomic.Int64
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for id, b := range g.blobs {
		if b.missing || bad[id] {
			continue
		}
		eg.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			n, err := e.hashBlob(id)
			if err != nil {
				if !isCorrupt(err) {
					return err
				}
				p := Problem{Object: ID(id), Kind: "blob", Path: b.site.path, Message: "blob " + id.Short() + ": " + plainText(err)}
				if b.site.cp != nil {
					p.Checkpoint, p.Task, p.Seq = ID(b.site.cp.id), b.site.cp.cp.Task, b.site.cp.cp.Seq
				}
				add(p)
			}
			d := done.Add(n)
			if progress != nil && blobs.Add(1)%64 == 0 {
				progress(PhaseProgress{Phase: "verify", Done: d, Total: total})
			}
			return nil
		})
	}
	err := eg.Wait()
	rep.BytesHashed = done.Load()
	return err
}

// hashBlob reads blob id back through the verifying reader.
func (e *Engine) hashBlob(id objects.ID) (int64, error) {
	r, _, err := e.blobs.Open(id)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return io.Copy(io.Discard, r)
}

// isCorrupt reports whether err says the store's data is damaged.
func isCorrupt(err error) bool {
	return errors.Is(err, objects.ErrCorrupt) || errors.Is(err, index.ErrCorrupt) || errors.Is(err, ErrCorrupt)
}
