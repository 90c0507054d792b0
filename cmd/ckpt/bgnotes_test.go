package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/engine"
)

// A command's background errors print once each, after it ends, without
// those its own error tells; a resident command's print as they come.
func TestBackgroundNotesTellEachFailureOnce(t *testing.T) {
	full := &engine.BackgroundError{Err: errors.New("write 000005.sst: no space left on device")}
	other := &engine.BackgroundError{Err: errors.New("compaction: EIO")}

	var out bytes.Buffer
	n := newBackgroundNotes(&out, "save")
	n.note(full)
	n.note(other)
	n.note(full)
	if out.Len() != 0 {
		t.Fatalf("a command's notes printed before it ended: %q", out.String())
	}
	n.flush(errors.New("open index: index flush: write 000005.sst: no space left on device"))
	if want := "ckpt: index background work: compaction: EIO\n"; out.String() != want {
		t.Fatalf("notes after the command failed: %q, want %q", out.String(), want)
	}

	// The same full disk on another file (pebble's next MANIFEST): the
	// command's error already tells it.
	out.Reset()
	n = newBackgroundNotes(&out, "save")
	n.note(&engine.BackgroundError{Err: &fs.PathError{Op: "write", Path: "MANIFEST-000017", Err: syscall.ENOSPC}})
	n.flush(fmt.Errorf("open index: %w", &fs.PathError{Op: "write", Path: "MANIFEST-000015", Err: syscall.ENOSPC}))
	if out.Len() != 0 {
		t.Fatalf("a full disk told twice: %q", out.String())
	}

	out.Reset()
	n = newBackgroundNotes(&out, "list")
	n.note(full)
	n.flush(nil)
	if want := "ckpt: index background work: write 000005.sst: no space left on device\n"; out.String() != want {
		t.Fatalf("notes after the command succeeded: %q, want %q", out.String(), want)
	}

	// A server prints them as they come, a repeat only after another.
	out.Reset()
	n = newBackgroundNotes(&out, "serve")
	n.note(other)
	n.note(other)
	n.note(full)
	n.note(other)
	if want := "ckpt: index background work: compaction: EIO\n" + "ckpt: " + full.Error() + "\n" + "ckpt: index background work: compaction: EIO\n"; out.String() != want {
		t.Fatalf("a server's notes: %q, want %q", out.String(), want)
	}
}
