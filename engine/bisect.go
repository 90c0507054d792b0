package engine

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/objects"
)

// BisectVerdict is what a bisect's test says of one checkpoint.
type BisectVerdict int

// Verdicts, as git bisect run reads exit codes: 0 good, 125 skip, else bad.
const (
	BisectGood BisectVerdict = iota // the checkpoint does not show the problem
	BisectBad                       // it does
	BisectSkip                      // it cannot be tested
)

// String returns "good", "bad" or "skip".
func (v BisectVerdict) String() string {
	switch v {
	case BisectGood:
		return "good"
	case BisectBad:
		return "bad"
	}
	return "skip"
}

// BisectOptions configure Bisect.
type BisectOptions struct {
	Task string // "" is DefaultTask
	// Good is a checkpoint known not to show the problem ("" is the
	// task's first checkpoint); Bad one known to show it ("" is the
	// task's head). Good must be an ancestor of Bad. An end given is
	// trusted, not tested; an end left to its default is tested first,
	// and a bisect whose default end does not hold (the head passes, the
	// first checkpoint fails) stops with ErrNoBisection.
	Good, Bad string
	// Dir is the scratch directory each step's checkpoint is exported
	// into: it must not exist or be empty, and is left holding the last
	// tested checkpoint. "" uses a temporary directory removed afterwards.
	Dir string
	// Paths, when given, limit what is exported to these paths.
	Paths []string
	// Test runs the check in dir, which holds checkpoint cp's files.
	Test func(ctx context.Context, dir string, cp CheckpointInfo) (BisectVerdict, error)
}

// BisectStep is one tested checkpoint.
type BisectStep struct {
	Checkpoint CheckpointInfo
	Verdict    BisectVerdict
}

// BisectResult is where the problem first appears.
type BisectResult struct {
	// FirstBad is the first checkpoint that shows the problem; Diff its
	// changes against the checkpoint before it.
	FirstBad CheckpointInfo
	Diff     *DiffResult
	// Candidates, when skipped checkpoints hide which one came first,
	// lists every checkpoint that may be the first bad one, FirstBad last.
	Candidates []CheckpointInfo
	Steps      []BisectStep
}

// Bisect binary-searches the checkpoints between opts.Good and opts.Bad
// for the first one at which opts.Test fails, exporting each tested
// checkpoint into a scratch directory (by difference from the last one
// there) and never touching the workspace, the head or the journal. It
// runs at most ceil(log2(n)) tests for n checkpoints after Good, plus one
// per skipped checkpoint and one per end left to its default. The first
// bad checkpoint found becomes the task's bisect mark (see BisectMark);
// when skipped checkpoints hide which came first (Candidates), none
// does.
func (e *Engine) Bisect(ctx context.Context, opts BisectOptions) (*BisectResult, error) {
	res, err := e.bisect(ctx, opts)
	return res, translate(err, e.storeDir)
}

func (e *Engine) bisect(ctx context.Context, opts BisectOptions) (*BisectResult, error) {
	if opts.Test == nil {
		return nil, fmt.Errorf("%w: bisect needs a test", ErrBadRequest)
	}
	chain, err := e.bisectChain(ctx, opts)
	if err != nil {
		return nil, err
	}
	filter, err := parsePathFilter(opts.Paths)
	if err != nil {
		return nil, err
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "ckpt-bisect-"); err != nil {
			return nil, fmt.Errorf("bisect: %w", err)
		}
		defer os.RemoveAll(dir)
	}
	abs, err := prepareExportDir(dir)
	if err != nil {
		return nil, err
	}
	s := &bisection{e: e, chain: chain, lo: 0, hi: len(chain) - 1, skipped: map[int]bool{},
		scratch: &scratchDir{exporter: exporter{e: e, dir: abs, filter: filter}}}
	if err := s.checkDefaultEnds(ctx, opts); err != nil {
		return nil, err
	}
	if err := s.run(ctx, opts.Test); err != nil {
		return nil, err
	}
	res, err := s.result(ctx, filter)
	if err != nil || len(res.Candidates) > 0 {
		return res, err
	}
	return res, e.recordBisectMark(res.FirstBad)
}

// checkDefaultEnds tests the ends opts leaves to their defaults, the
// head (bad) first: each must give its end's verdict (a skip does not: an
// end the test cannot tell is no end to bisect from).
func (s *bisection) checkDefaultEnds(ctx context.Context, opts BisectOptions) error {
	ends := []struct {
		given bool
		at    int
		want  BisectVerdict
		what  string
	}{{opts.Bad != "", s.hi, BisectBad, "passes at the task's head"}, {opts.Good != "", s.lo, BisectGood, "fails at the task's first checkpoint"}}
	for _, end := range ends {
		if end.given {
			continue
		}
		v, err := s.test(ctx, opts.Test, end.at)
		if err != nil {
			return err
		}
		if v != end.want {
			cp := s.chain[end.at]
			what := end.what
			if v == BisectSkip {
				what = "cannot tell" + strings.TrimPrefix(strings.TrimPrefix(what, "passes"), "fails")
			}
			return fmt.Errorf("%w: the test %s (@%d %s), which the bisect took as its %s end", ErrNoBisection, what, cp.Seq, cp.ID.Short(), end.want)
		}
	}
	return nil
}

// bisectChain is the chain from Good to Bad, oldest first, both included.
func (e *Engine) bisectChain(ctx context.Context, opts BisectOptions) ([]CheckpointInfo, error) {
	log, err := e.list(ctx, opts.Task)
	if err != nil {
		return nil, err
	}
	if len(log.Checkpoints) == 0 {
		return nil, fmt.Errorf("%w: task %q has no checkpoints", ErrUnknownRef, log.Task)
	}
	byID := make(map[ID]CheckpointInfo, len(log.Checkpoints))
	for _, cp := range log.Checkpoints {
		byID[cp.ID] = cp
	}
	end := func(ref string, dflt ID) (ID, error) {
		if ref == "" {
			return dflt, nil
		}
		id, _, err := e.resolveCheckpoint(log.Task, ref)
		return ID(id), err
	}
	good, err := end(opts.Good, log.Checkpoints[0].ID)
	if err != nil {
		return nil, err
	}
	bad, err := end(opts.Bad, log.Head)
	if err != nil {
		return nil, err
	}
	var chain []CheckpointInfo
	for id := bad; ; {
		cp, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("%w: the good checkpoint %s is not an ancestor of the bad one %s", ErrBadRequest, good.Short(), bad.Short())
		}
		chain = append(chain, cp)
		if id == good {
			break
		}
		id = cp.Parent
	}
	if len(chain) < 2 {
		return nil, fmt.Errorf("%w: the good and the bad checkpoint are the same (%s)", ErrBadRequest, good.Short())
	}
	slices.Reverse(chain)
	return chain, nil
}

// bisection is the search's state: chain[lo] is good, chain[hi] bad.
type bisection struct {
	e       *Engine
	chain   []CheckpointInfo
	lo, hi  int
	skipped map[int]bool
	steps   []BisectStep
	scratch *scratchDir
}

func (s *bisection) run(ctx context.Context, test func(context.Context, string, CheckpointInfo) (BisectVerdict, error)) error {
	for {
		mid, ok := s.next()
		if !ok {
			return nil
		}
		v, err := s.test(ctx, test, mid)
		if err != nil {
			return err
		}
		switch v {
		case BisectGood:
			s.lo = mid
		case BisectBad:
			s.hi = mid
		default:
			s.skipped[mid] = true
		}
	}
}

// test runs test on chain[i] in the scratch directory and records the step.
func (s *bisection) test(ctx context.Context, test func(context.Context, string, CheckpointInfo) (BisectVerdict, error), i int) (BisectVerdict, error) {
	cp := s.chain[i]
	if err := s.scratch.show(ctx, objects.ID(cp.Root)); err != nil {
		return 0, err
	}
	v, err := test(ctx, s.scratch.dir, cp)
	if err != nil {
		return 0, err
	}
	s.steps = append(s.steps, BisectStep{Checkpoint: cp, Verdict: v})
	return v, nil
}

// next picks the untested checkpoint strictly between lo and hi nearest
// their middle; false when none is left.
func (s *bisection) next() (int, bool) {
	mid := (s.lo + s.hi) / 2
	for d := 0; d <= s.hi-s.lo; d++ {
		for _, i := range []int{mid - d, mid + d} {
			if i > s.lo && i < s.hi && !s.skipped[i] {
				return i, true
			}
		}
	}
	return 0, false
}

func (s *bisection) result(ctx context.Context, filter diffview.PathFilter) (*BisectResult, error) {
	res := &BisectResult{FirstBad: s.chain[s.hi], Steps: s.steps}
	if s.hi-s.lo > 1 {
		res.Candidates = slices.Clone(s.chain[s.lo+1 : s.hi+1])
	}
	var err error
	res.Diff, err = s.e.chainDiff(ctx, s.e.save.TreeSource(nil), s.e.storeLoader(ctx), res.FirstBad, s.chain[s.hi-1].Root, filter)
	return res, err
}
