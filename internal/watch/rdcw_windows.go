package watch

import (
	"errors"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/windows"
)

// notifyFilter asks for every change an entry can undergo: names (files
// and directories), attributes, size, last write, creation time and
// security descriptor. Last access is left out: reads are not changes.
const notifyFilter = windows.FILE_NOTIFY_CHANGE_FILE_NAME | windows.FILE_NOTIFY_CHANGE_DIR_NAME |
	windows.FILE_NOTIFY_CHANGE_ATTRIBUTES | windows.FILE_NOTIFY_CHANGE_SIZE | windows.FILE_NOTIFY_CHANGE_LAST_WRITE |
	windows.FILE_NOTIFY_CHANGE_CREATION | windows.FILE_NOTIFY_CHANGE_SECURITY

// notifyBufSize is the buffer of one ReadDirectoryChangesW call (tests make
// it small to overflow it); 64 KiB is
// the most a call may ask for on a network redirector, and more than a
// burst of a few hundred changes needs between two reads.
var notifyBufSize = 64 << 10

// rdcw is the Windows backend: one ReadDirectoryChangesW handle on the
// root with bWatchSubtree, read with overlapped I/O by one goroutine locked
// to its OS thread (the thread that issues an overlapped read is the one
// its completion is delivered to). Every directory below the root is
// covered by that one handle, so Watch only records which directories the
// caller reads, to map an event to the nearest of them.
type rdcw struct {
	root     string
	longRoot string // root without 8.3 short components
	opts     Options
	wake     windows.Handle
	sync     chan chan struct{} // Changes' barrier requests to the I/O thread
	done     chan struct{}      // closed when the I/O thread has returned
	// syncMu serialises barrier requests, so sync never holds more than one.
	syncMu sync.Mutex

	mu struct {
		sync.Mutex
		closed bool
		open   bool // the root's handle is open
		marks  subtreeMarks
		p      pending
		clock  clockCheck
		st     Stats
	}
}

// newBackend starts the ReadDirectoryChangesW backend, or the always-walk
// one on a network share (whose server may drop or never send changes)
// or when the root cannot be watched at all.
func newBackend(root string, opts Options) backend {
	if remoteVolume(root) {
		return &walkAlways{why: ReasonUnsupported, detail: "network share: changes made by other hosts are not reported"}
	}
	wake, err := windows.CreateEvent(nil, 0, 0, nil)
	if err != nil {
		return &walkAlways{why: ReasonUnsupported, detail: "no event: " + err.Error()}
	}
	b := &rdcw{root: root, longRoot: root, opts: opts, wake: wake, sync: make(chan chan struct{}, 1), done: make(chan struct{})}
	if long, err := longName(root); err == nil {
		b.longRoot = long
	}
	b.mu.marks = newSubtreeMarks(root, opts, underWine())
	b.mu.clock = newClockCheck(opts.clock)
	b.mu.p = newPending()
	b.mu.p.markAll(ReasonStart)
	started := make(chan error, 1)
	go b.run(started)
	if err := <-started; err != nil {
		<-b.done
		windows.CloseHandle(wake)
		return &walkAlways{why: ReasonUnsupported, detail: "ReadDirectoryChangesW: " + err.Error()}
	}
	return b
}

// remoteVolume reports whether root lies on a network drive or share.
func remoteVolume(root string) bool {
	p, err := windows.UTF16PtrFromString(root)
	if err != nil {
		return false
	}
	vol := make([]uint16, windows.MAX_PATH+1)
	if windows.GetVolumePathName(p, &vol[0], uint32(len(vol))) != nil {
		return false
	}
	return windows.GetDriveType(&vol[0]) == windows.DRIVE_REMOTE
}

func (b *rdcw) watch(rel string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.closed || !b.mu.open {
		return
	}
	b.mu.marks.watch(rel)
}

// changes runs the ordering barrier on the I/O thread, then takes the
// interval's marks.
func (b *rdcw) changes() Changes {
	b.syncMu.Lock()
	b.mu.Lock()
	closed := b.mu.closed
	b.mu.Unlock()
	if !closed {
		reply := make(chan struct{})
		b.sync <- reply
		windows.SetEvent(b.wake)
		select {
		case <-reply:
		case <-b.done:
		}
	}
	b.syncMu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.closed {
		return Changes{All: true, Reasons: ReasonClosed}
	}
	if b.mu.clock.jumped() {
		b.mu.p.markAll(ReasonClockJump)
	}
	b.mu.marks.rescanAdrift(&b.mu.p)
	return b.mu.p.take(nil)
}

func (b *rdcw) stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.mu.st
	st.Backend = BackendRDCW
	if b.mu.open {
		st.Watches = 1
	}
	return st
}

func (b *rdcw) close() error {
	b.mu.Lock()
	if b.mu.closed {
		b.mu.Unlock()
		return nil
	}
	b.mu.closed = true
	b.mu.Unlock()
	windows.SetEvent(b.wake)
	<-b.done
	return windows.CloseHandle(b.wake)
}

// run is the I/O thread. It reports on started whether the root's handle
// could be opened and read, then serves completions and barrier requests
// until the watcher is closed.
func (b *rdcw) run(started chan<- error) {
	defer close(b.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := &dirReader{}
	err := d.open(b.root)
	if err == nil {
		err = d.issue()
	}
	var f *fence
	if err == nil {
		f, err = newFence()
	}
	started <- err
	defer d.release()
	if err != nil {
		return
	}
	if f != nil {
		defer f.close()
	}
	b.mu.Lock()
	b.mu.open = true
	b.mu.Unlock()
	for {
		handles := []windows.Handle{b.wake}
		if d.reading {
			handles = append(handles, d.ov.HEvent)
		}
		ev, err := windows.WaitForMultipleObjects(handles, false, windows.INFINITE)
		b.mu.Lock()
		closed := b.mu.closed
		b.mu.Unlock()
		switch {
		case closed:
			return
		case err != nil:
			b.failed(d, err)
		case ev == windows.WAIT_OBJECT_0+1:
			b.apply(d, d.finish(true))
			b.rearm(d)
		}
		select {
		case reply := <-b.sync:
			if f != nil && !f.pass() {
				b.failed(d, errFence)
			}
			b.barrier(d)
			close(reply)
		default:
		}
	}
}

// errFence is the failure of a fence (see fence) to pass in time.
var errFence = errors.New("watch: Wine's change reports did not catch up")

// barrier makes every change of an operation that completed before it
// began part of the pending marks. A file system reports a change to a
// directory handle inside the operation that makes it: into the read
// pending on the handle, which completes, or, when none is pending, into
// the handle's own buffer, which the next read returns at once. So the
// barrier cancels the pending read and takes what it holds, then issues
// reads until one stays pending. It also re-checks that the handle still
// is the directory at the root's path.
func (b *rdcw) barrier(d *dirReader) {
	if !d.valid() || !d.sameAs(b.root) {
		b.reopen(d, ReasonRootLost)
		return
	}
	if d.reading {
		windows.CancelIoEx(d.h, &d.ov)
		b.apply(d, d.finish(true))
	}
	b.rearm(d)
}

// rearm issues reads until one stays pending, applying each that
// completes at once.
func (b *rdcw) rearm(d *dirReader) {
	for d.valid() && !d.reading {
		if err := d.issue(); err != nil {
			b.failed(d, err)
			return
		}
		// A zero wait lets a completion already due be delivered.
		if ev, _ := windows.WaitForSingleObject(d.ov.HEvent, 0); ev != windows.WAIT_OBJECT_0 {
			return
		}
		b.apply(d, d.finish(true))
	}
}

// failed handles a handle that can no longer be read: everything is in
// doubt, and the handle is replaced when the root is there.
func (b *rdcw) failed(d *dirReader, err error) {
	b.mu.Lock()
	b.mu.st.Resets++
	b.mu.Unlock()
	b.reopen(d, ReasonReadError)
}

// reopen closes the handle and opens the root again, reporting All for
// why. While the root is missing (or another directory than the one
// watched stands at its path and cannot be opened) every Changes reports
// All.
func (b *rdcw) reopen(d *dirReader, why Reason) {
	d.close()
	b.mu.Lock()
	b.mu.p.markAll(why)
	b.mu.marks.reset()
	b.mu.open = false
	b.mu.Unlock()
	if d.open(b.root) != nil || d.issue() != nil {
		d.close()
		return
	}
	b.mu.Lock()
	b.mu.open = true
	b.mu.Unlock()
}

// apply turns the outcome of one read into marks.
func (b *rdcw) apply(d *dirReader, r readResult) {
	switch {
	case r.err != nil && errors.Is(r.err, windows.ERROR_OPERATION_ABORTED):
	case r.overflow:
		b.mu.Lock()
		b.overflowLocked()
		b.mu.Unlock()
	case r.err != nil:
		b.failed(d, r.err)
	default:
		b.mu.Lock()
		for action, name := range records(r.data) {
			if !b.eventLocked(action, strings.ReplaceAll(name, `\`, "/")) {
				break
			}
		}
		b.mu.Unlock()
	}
}

// overflowLocked handles lost changes: everything is in doubt. The handle
// stays: it reports every change from here on.
func (b *rdcw) overflowLocked() {
	b.mu.st.Overflows++
	b.mu.st.Resets++
	b.mu.p.markAll(ReasonOverflow)
	b.mu.marks.reset()
}
