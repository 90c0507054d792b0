package index

import (
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// gateFS is the file system pebble runs on. Once the DB has failed, it
// holds every new file pebble tries to create until Close releases it:
// pebble retries a failed flush at once and for ever, and a retry parked
// here costs no CPU, where one failing at once would spin.
//
// It also keeps pebble from panicking, which it does (on its own
// goroutines, beyond any recover) when a directory fsync or a write-ahead
// log write, sync, close or creation fails: such a failure is recorded and
// the goroutine meeting it is parked for good instead (wedge). The DB is
// then of no further use, and Close leaves it to the process's exit.
type gateFS struct {
	vfs.FS
	h *health
}

// Create waits for the release of a failed DB, then refuses.
func (g gateFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err := g.h.parkIfFailed(name); err != nil {
		return nil, err
	}
	f, err := g.FS.Create(name, category)
	return g.logFile(name, f, err)
}

// ReuseForWrite waits for the release of a failed DB, then refuses.
func (g gateFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err := g.h.parkIfFailed(newname); err != nil {
		return nil, err
	}
	f, err := g.FS.ReuseForWrite(oldname, newname, category)
	return g.logFile(newname, f, err)
}

// OpenDir wraps the directory so that a failed fsync wedges the DB.
func (g gateFS) OpenDir(name string) (vfs.File, error) {
	f, err := g.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return dirFile{File: f, h: g.h}, nil
}

// logFile wraps a write-ahead log so that its failures wedge the DB.
func (g gateFS) logFile(name string, f vfs.File, err error) (vfs.File, error) {
	if !strings.HasSuffix(name, ".log") {
		return f, err
	}
	if err != nil {
		g.h.wedge(err)
	}
	return logFile{File: f, h: g.h}, nil
}

type dirFile struct {
	vfs.File
	h *health
}

func (f dirFile) Sync() error { return f.h.wedgeOn(f.File.Sync()) }

type logFile struct {
	vfs.File
	h *health
}

func (f logFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	return n, f.h.wedgeOn(err)
}

func (f logFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	return n, f.h.wedgeOn(err)
}

func (f logFile) Sync() error     { return f.h.wedgeOn(f.File.Sync()) }
func (f logFile) SyncData() error { return f.h.wedgeOn(f.File.SyncData()) }
func (f logFile) Close() error    { return f.h.wedgeOn(f.File.Close()) }

func (f logFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	return full, f.h.wedgeOn(err)
}

// wedgeOn wedges the DB on a non-nil err and returns nil otherwise.
func (h *health) wedgeOn(err error) error {
	if err != nil {
		h.wedge(err)
	}
	return nil
}

// wedge records err as the DB's failure and parks the calling goroutine
// for good.
func (h *health) wedge(err error) {
	h.fail(err)
	h.mu.Lock()
	h.mu.wedged = true
	h.checkStuckLocked()
	h.mu.Unlock()
	select {}
}

// isWedged reports whether a pebble goroutine is parked for good.
func (h *health) isWedged() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mu.wedged
}

// parkIfFailed returns nil on a healthy DB; on a failed one it waits for
// release and returns the failure, except for a new write-ahead log,
// whose failed creation pebble does not survive: that wedges.
func (h *health) parkIfFailed(name string) error {
	err := h.err()
	if err != nil {
		if strings.HasSuffix(name, ".log") {
			h.wedge(err)
		}
		<-h.released
	}
	return err
}

// release lets parked file creations fail, so that pebble's background
// work can wind down for Close. It is idempotent.
func (h *health) release() {
	h.releaseOnce.Do(func() { close(h.released) })
}
