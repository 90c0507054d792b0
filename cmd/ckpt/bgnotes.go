package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"

	"github.com/ckpt/ckpt/engine"
)

// backgroundNotes prints the index's background errors on stderr. A
// command that ends (all but serve, mcp and ui) holds them until then,
// prints each once and leaves out those its own error already tells, so
// that one failure reads as one line: a full disk failed the index's
// background flush, then the command, with the same cause. A resident
// command prints them as they come, but not one just like the last.
type backgroundNotes struct {
	w    io.Writer
	hold bool
	mu   sync.Mutex
	seen map[string]bool // held: those noted
	last string          // resident: the last printed
	held []*engine.BackgroundError
}

// newBackgroundNotes prints to w, holding the notes of every command but
// the resident ones.
func newBackgroundNotes(w io.Writer, command string) *backgroundNotes {
	resident := residentCommands[command] || command == "ui"
	return &backgroundNotes{w: w, hold: !resident, seen: map[string]bool{}}
}

// note holds bg unless the same was held, or prints it unless it is the
// last printed.
func (n *backgroundNotes) note(bg *engine.BackgroundError) {
	n.mu.Lock()
	defer n.mu.Unlock()
	msg := bg.Error()
	switch {
	case n.hold && !n.seen[msg]:
		n.seen[msg] = true
		n.held = append(n.held, bg)
	case !n.hold && msg != n.last:
		n.last = msg
		fmt.Fprintf(n.w, "ckpt: %v\n", bg)
	}
}

// flush prints the held notes whose cause the command's own error (final,
// nil when it succeeded) does not already tell: its text, or the system's
// error number (a full disk that failed the index's background work on
// one file and the command on another).
func (n *backgroundNotes) flush(final error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, bg := range n.held {
		var errno syscall.Errno
		told := final != nil && (strings.Contains(final.Error(), bg.Err.Error()) || errors.As(bg.Err, &errno) && errors.Is(final, errno))
		if !told {
			fmt.Fprintf(n.w, "ckpt: %v\n", bg)
		}
	}
	n.held = nil
}
