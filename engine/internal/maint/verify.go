package maint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/ckpt/ckpt/objects"
)

// Checked counts what Verify looked at, and the problems it found.
type Checked struct {
	Checkpoints int
	Trees       int
	Blobs       int   // distinct blobs and chunks reachable
	Locators    int   // locators checked (reachable or not)
	BytesHashed int64 // content re-hashed (0 when quick)
	Packs       int
	Problems    []Problem
}

// Verify checks the store: every task head exists, every checkpoint a
// task lists → tree → blob/chunk exists, every locator in the index lies
// inside an existing pack past its header, and every pack a locator
// points into starts with a header this version reads. Unless quick,
// every reachable blob is also read back and re-hashed. Problems are
// reported in the result, once each; the error is for everything else
// (I/O, cancellation).
func (s *Store) Verify(ctx context.Context, quick bool, progress func(Progress)) (*Checked, error) {
	rep := &Checked{}
	var mu sync.Mutex
	add := func(p Problem) {
		mu.Lock()
		rep.Problems = append(rep.Problems, p)
		mu.Unlock()
	}
	if err := s.verifyHeads(add); err != nil {
		return nil, err
	}
	g, err := s.Load(ctx, add, progress)
	if err != nil {
		return nil, err
	}
	rep.Checkpoints, rep.Trees, rep.Blobs = len(g.cps), len(g.trees), len(g.blobs)
	bad, err := s.verifyLocators(g, rep, add)
	if err != nil {
		return nil, err
	}
	if !quick {
		if err := s.verifyContent(ctx, g, bad, rep, add, progress); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// verifyHeads checks that every task's head is a stored checkpoint.
func (s *Store) verifyHeads(add func(Problem)) error {
	tasks, err := s.DB.Tasks()
	if err != nil {
		return err
	}
	for _, task := range tasks {
		head, _, err := s.DB.Task(task)
		if err == nil {
			_, err = s.DB.Checkpoint(head.Head)
		}
		if err != nil {
			add(Problem{Task: task, Object: head.Head, Kind: "task",
				Message: fmt.Sprintf("task %q: head %s: %s", task, head.Head.Short(), describe(err))})
		}
	}
	return nil
}

// verifyLocators checks that every locator in the index lies inside an
// existing pack, past its header, and that the header of every pack a
// locator points into is sound. It returns the blobs whose locator is
// bad, so that their content is not reported twice.
func (s *Store) verifyLocators(g *Graph, rep *Checked, add func(Problem)) (map[objects.ID]bool, error) {
	files, nums, err := s.Blobs.PackFiles()
	if err != nil {
		return nil, err
	}
	rep.Packs = len(nums)
	headers := map[uint32]error{}
	bad := map[objects.ID]bool{}
	err = s.DB.EachLocator(func(id objects.ID, loc objects.Locator) error {
		rep.Locators++
		f, ok := files[loc.Pack]
		var msg string
		switch {
		case !ok:
			msg = fmt.Sprintf("pack %s missing", s.Blobs.PackPath(loc.Pack))
		case loc.Offset < f.Start || loc.Offset+int64(loc.Length) > f.Size:
			msg = fmt.Sprintf("record at %d+%d lies outside pack %s (%d bytes)", loc.Offset, loc.Length, s.Blobs.PackPath(loc.Pack), f.Size)
		default:
			herr, seen := headers[loc.Pack]
			if !seen {
				herr = s.Blobs.CheckPackHeader(loc.Pack)
				headers[loc.Pack] = herr
			}
			if herr == nil {
				return nil
			}
			if !errors.Is(herr, objects.ErrCorrupt) {
				return herr
			}
			msg = herr.Error()
		}
		bad[id] = true
		p := Problem{Object: id, Kind: "locator", Message: "blob " + id.Short() + ": " + msg}
		if b := g.blobs[id]; b != nil && b.site.cp != nil {
			p = b.site.at(p)
			p.Path = b.site.path
		}
		add(p)
		return nil
	})
	return bad, err
}

// verifyContent re-reads and re-hashes every reachable blob (a chunked
// file is streamed through its chunks and its whole hash checked), in
// parallel, in the order the blobs lie in the packs and through one read
// session, so that each group record is read and decoded once rather than
// once per member. A group record whose live members all check is then
// checked whole, as a push and fetch of it would be: damage to its dead
// members or its frame is a locator problem, as no file holds it.
func (s *Store) verifyContent(ctx context.Context, g *Graph, bad map[objects.ID]bool, rep *Checked,
	add func(Problem), progress func(Progress)) error {
	var total int64
	var todo []objects.ID
	for id, b := range g.blobs {
		if !b.missing && !bad[id] {
			total += b.loc.Size
			todo = append(todo, id)
		}
	}
	slices.SortFunc(todo, func(x, y objects.ID) int {
		a, b := g.blobs[x].loc, g.blobs[y].loc
		return cmp.Or(cmp.Compare(a.Pack, b.Pack), cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Member, b.Member))
	})
	reads := s.Blobs.SweepSession()
	var done, blobs atomic.Int64
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for len(todo) > 0 {
		// One record's blobs (a group's members) go to one goroutine.
		n := 1
		for n < len(todo) && sameRecord(g.blobs[todo[0]].loc, g.blobs[todo[n]].loc) {
			n++
		}
		record := todo[:n]
		todo = todo[n:]
		eg.Go(func() error {
			damaged := false
			for _, id := range record {
				if err := ctx.Err(); err != nil {
					return err
				}
				n, err := hashBlob(reads, id)
				switch {
				case err == nil:
				case !errors.Is(err, objects.ErrCorrupt):
					return err
				default:
					damaged = true
					if !g.reportedElsewhere(id, err) {
						b := g.blobs[id]
						add(b.site.at(Problem{Object: id, Kind: "blob", Path: b.site.path, Message: "blob " + id.Short() + ": " + err.Error()}))
					}
				}
				d := done.Add(n)
				if progress != nil && blobs.Add(1)%64 == 0 {
					progress(Progress{Phase: "verify", Done: d, Total: total})
				}
			}
			if loc := g.blobs[record[0]].loc; loc.Grouped() && !damaged {
				if err := reads.CheckGroup(loc); err != nil {
					if !errors.Is(err, objects.ErrCorrupt) {
						return err
					}
					add(Problem{Object: record[0], Kind: "locator", Message: "blob " + record[0].Short() + ": " + err.Error()})
				}
			}
			return nil
		})
	}
	err := eg.Wait()
	rep.BytesHashed = done.Load()
	return err
}

// reportedElsewhere reports whether err, damage met reading blob id, is
// damage to another reachable blob (a chunk of chunked blob id) that
// verify checks and reports itself, at the same file of the same
// checkpoint. A chunk shared with another file is reported at the first
// file that reached it only, so each other file's damage is its own.
func (g *Graph) reportedElsewhere(id objects.ID, err error) bool {
	var ce *objects.CorruptError
	if !errors.As(err, &ce) || ce.ID == id {
		return false
	}
	chunk := g.blobs[ce.ID]
	return chunk != nil && chunk.site == g.blobs[id].site
}

// sameRecord reports whether a and b locate blobs of one record.
func sameRecord(a, b objects.Locator) bool { return a.Pack == b.Pack && a.Offset == b.Offset }

// hashBlob reads blob id back through the verifying reader.
func hashBlob(reads *objects.ReadSession, id objects.ID) (int64, error) {
	r, _, err := reads.Open(id)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return io.Copy(io.Discard, r)
}
