package faultfs

import (
	"io/fs"
	"sync"
	"syscall"
)

// Nth is the Injector of the fault suites: it numbers, from 0, the
// operations that change what is on disk (OpKind.Changes) and fails the
// one numbered FailAt with Errno (FailAt < 0 fails none and only counts).
// A failed write first writes half its bytes. Nth is safe for concurrent
// use; pass a pointer.
type Nth struct {
	FailAt int
	Errno  syscall.Errno
	// Fails, when set, decides instead of FailAt whether the n-th counted
	// operation fails.
	Fails func(n int, op Op) bool
	// Counts, when set, picks the operations numbered instead of
	// OpKind.Changes; the rest pass.
	Counts func(op Op) bool

	mu   sync.Mutex
	seen int
	hit  *Op
}

// Count returns an Nth that fails nothing and only counts.
func Count() *Nth { return &Nth{FailAt: -1} }

// MaybeError implements Injector.
func (h *Nth) MaybeError(op Op) error {
	if h.Counts != nil && !h.Counts(op) || h.Counts == nil && !op.Kind.Changes() {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.seen
	h.seen++
	fail := n == h.FailAt
	if h.Fails != nil {
		fail = h.Fails(n, op)
	}
	if !fail {
		return nil
	}
	h.hit = &op
	return &fs.PathError{Op: op.Kind.String(), Path: op.Path, Err: h.Errno}
}

// TearsWrites makes a failed write write half its bytes first.
func (h *Nth) TearsWrites() bool { return true }

// Seen returns how many counted operations were seen.
func (h *Nth) Seen() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen
}

// Hit returns the operation that failed, "" when none did.
func (h *Nth) Hit() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hit == nil {
		return ""
	}
	return h.hit.String()
}
