package walker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ckpt/ckpt/walker/ignore"
)

// node is one included directory between being listed and being visited.
// Its fd stays open until every subdirectory has been opened relative to it
// (see openSub: a directory swapped for a symlink is never followed); its entries live until its own visit returns.
type node[T any] struct {
	parent *node[T]
	name   string // name in parent; "" for the root
	dir    Dir
	rules  *ignore.Rules
	fd     dirFD

	mu       sync.Mutex
	pending  int // subdirectories not yet visited or dropped
	unopened int // subdirectories not yet opened (each needs fd)
	sub      map[string]T
}

// releaseFD records that one subdirectory no longer needs n's fd.
func (n *node[T]) releaseFD() {
	n.mu.Lock()
	n.unopened--
	last := n.unopened == 0
	n.mu.Unlock()
	if last {
		closeDir(n.fd)
	}
}

// walk is the state of one Walk call. Workers take directories from a LIFO
// stack (depth first, which keeps the directories in flight, and so memory
// and open fds, proportional to depth times fan-out of the current path).
// A directory is visited by whichever worker completes its last
// subdirectory, so no worker ever waits for children and the bounded pool
// cannot deadlock.
type walk[T any] struct {
	cfg    *config
	ctx    context.Context
	cancel context.CancelFunc
	visit  VisitFunc[T]

	mu     sync.Mutex
	cond   sync.Cond
	stack  []*node[T]
	done   bool
	err    error
	result T

	skipMu  sync.Mutex
	skipped []Skipped
}

func run[T any](parent context.Context, cfg *config, visit VisitFunc[T]) (T, []Skipped, error) {
	var zero T
	fd, st, err := openRoot(cfg.root)
	if err != nil {
		return zero, nil, fmt.Errorf("open workspace: %w", err)
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	w := &walk[T]{cfg: cfg, ctx: ctx, cancel: cancel, visit: visit}
	w.cond.L = &w.mu
	stop := context.AfterFunc(parent, func() { w.fail(parent.Err()) })
	defer stop()

	root := &node[T]{fd: fd, dir: Dir{Mode: st.mode}}
	if err := w.list(root); err != nil {
		closeDir(fd)
		return zero, nil, fmt.Errorf("list workspace: %w", err)
	}
	var wg sync.WaitGroup
	for range cfg.workers {
		wg.Go(w.worker)
	}
	w.schedule(root)
	wg.Wait()
	for _, n := range w.stack {
		n.parent.releaseFD()
	}
	if w.err != nil {
		return zero, nil, w.err
	}
	sort.Slice(w.skipped, func(i, j int) bool { return w.skipped[i].Path < w.skipped[j].Path })
	return w.result, w.skipped, nil
}

func (w *walk[T]) worker() {
	for {
		n := w.pop()
		if n == nil {
			return
		}
		w.process(n)
	}
}

// pop returns the next directory to list, or nil once the walk is over.
func (w *walk[T]) pop() *node[T] {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.stack) == 0 && !w.done {
		w.cond.Wait()
	}
	if w.done {
		return nil
	}
	n := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	return n
}

// fail ends the walk with err unless it has already ended.
func (w *walk[T]) fail(err error) {
	w.mu.Lock()
	if !w.done {
		w.done, w.err = true, err
	}
	w.mu.Unlock()
	w.cond.Broadcast()
	w.cancel()
}

// process opens and lists one directory below the root.
func (w *walk[T]) process(n *node[T]) {
	fd, err := w.cfg.openDir(n.parent.fd, n.name)
	n.parent.releaseFD()
	if err != nil {
		err = &fs.PathError{Op: "open", Path: n.dir.Path, Err: err}
	} else {
		n.fd = fd
		if err = w.list(n); err != nil {
			closeDir(fd)
		}
	}
	if err != nil {
		unread := w.report(n.dir.Path, err)
		var zero T
		w.finishFrom(w.complete(n, zero, false, unread))
		return
	}
	w.schedule(n)
}

// schedule queues the subdirectories of a listed directory, or visits it
// at once when it has none. In a replayed directory each subdirectory not
// pruned is lstatted again first: one that is gone is left out of its
// entries, one that is no longer a directory stays as what it is now.
func (w *walk[T]) schedule(n *node[T]) {
	var subs []*node[T]
	var gone []string
	for i := range n.dir.Entries {
		e := &n.dir.Entries[i]
		if e.Kind != KindDir {
			continue
		}
		d := Dir{Path: join(n.dir.Path, e.Name), Mode: e.Mode}
		if w.cfg.prune != nil && w.cfg.prune(d.Path) {
			if !w.visitPruned(n, e.Name, &d) {
				closeDir(n.fd)
				return
			}
			continue
		}
		if n.dir.Replayed {
			fresh, ok := w.entry(n, e.Name, nil)
			if !ok {
				gone = append(gone, e.Name)
				continue
			}
			if *e = fresh; fresh.Kind != KindDir {
				continue
			}
			d.Mode = fresh.Mode
		}
		subs = append(subs, &node[T]{parent: n, name: e.Name, rules: n.rules, dir: d})
	}
	if len(gone) > 0 {
		n.dir.Entries = slices.DeleteFunc(n.dir.Entries, func(e Entry) bool { return slices.Contains(gone, e.Name) })
	}
	if len(subs) == 0 {
		closeDir(n.fd)
		w.finishFrom(n)
		return
	}
	n.pending, n.unopened = len(subs), len(subs)
	slices.Reverse(subs)
	w.mu.Lock()
	w.stack = append(w.stack, subs...)
	w.mu.Unlock()
	w.cond.Broadcast()
}

// visitPruned visits a subdirectory of n that Options.Prune vouched for
// and records its value in n; no other goroutine knows n's subdirectories
// yet. It reports false after failing the walk.
func (w *walk[T]) visitPruned(n *node[T], name string, d *Dir) bool {
	d.Pruned = true
	v, err := w.visit(w.ctx, d, map[string]T{})
	if err != nil {
		w.fail(err)
		return false
	}
	if n.sub == nil {
		n.sub = make(map[string]T)
	}
	n.sub[name] = v
	return true
}

// finishFrom visits n, then every ancestor whose last pending subdirectory
// that visit completed.
func (w *walk[T]) finishFrom(n *node[T]) {
	for n != nil && w.ctx.Err() == nil {
		sub := n.sub
		if sub == nil {
			sub = map[string]T{}
		}
		v, err := w.visit(w.ctx, &n.dir, sub)
		n.dir.Entries, n.sub = nil, nil
		if err != nil {
			w.fail(err)
			return
		}
		n = w.complete(n, v, true, false)
	}
}

// complete hands n's value (ok) or its removal (!ok; unread when it could
// not be read, see Dir.Unreadable) to its parent and returns the parent if
// that was its last pending subdirectory. For the root it records the
// result and ends the walk.
func (w *walk[T]) complete(n *node[T], v T, ok, unread bool) *node[T] {
	p := n.parent
	if p == nil {
		w.mu.Lock()
		if !w.done {
			w.done, w.result = true, v
		}
		w.mu.Unlock()
		w.cond.Broadcast()
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ok {
		if p.sub == nil {
			p.sub = make(map[string]T)
		}
		p.sub[n.name] = v
	} else if i, found := slices.BinarySearchFunc(p.dir.Entries, n.name, func(e Entry, name string) int {
		return strings.Compare(e.Name, name)
	}); found {
		p.dir.Entries = slices.Delete(p.dir.Entries, i, i+1)
		if unread {
			p.dir.Unreadable = append(p.dir.Unreadable, n.name)
		}
	}
	p.pending--
	if p.pending == 0 {
		return p
	}
	return nil
}

// report records a path that could not be included because of err, and
// says whether it was reported unreadable (rather than vanished). A path
// that no longer exists is not reported: the walk simply saw the
// directory a moment later.
func (w *walk[T]) report(path string, err error) (unread bool) {
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	reason := ReasonUnreadable
	if isVanished(err) {
		reason = ReasonVanished
	}
	w.skip(Skipped{Path: path, Reason: reason, Err: err})
	return reason == ReasonUnreadable
}

func (w *walk[T]) skip(s Skipped) {
	w.skipMu.Lock()
	w.skipped = append(w.skipped, s)
	w.skipMu.Unlock()
}

// join joins a slash-separated directory path relative to the root ("" for
// the root) and a name.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
