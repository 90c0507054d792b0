package watch

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// provisionalWalkEvery is how often the FSEvents backend, not yet run in
// this project's tests on a Mac, reports All on its own: a change it
// missed is then seen at most this long after.
const provisionalWalkEvery = 5 * time.Minute

// fsevents is the macOS backend: one FSEvents stream on the root with
// per-file events (kFSEventStreamCreateFlagFileEvents), scheduled on a run
// loop that runs on a goroutine locked to its OS thread. Watch only
// records which directories the caller reads (see subtreeMarks).
type fsevents struct {
	root string // with symlinks resolved: FSEvents reports real paths
	opts Options
	info uintptr // the stream's key in cf.streams

	// stream and runLoop belong to the running stream; guarded by life.
	life    sync.Mutex
	stream  uintptr
	runLoop uintptr
	done    chan struct{} // closed when the run loop thread has returned
	rootFI  os.FileInfo   // the root directory the stream was started on

	mu struct {
		sync.Mutex
		closed   bool
		marks    subtreeMarks
		p        pending
		clock    clockCheck
		st       Stats
		lastFull time.Time // last All reported
	}
}

// newBackend starts the FSEvents backend, or the always-walk one when
// the frameworks or the stream cannot be had.
func newBackend(root string, opts Options) backend {
	if err := loadCF(); err != nil {
		return &walkAlways{why: ReasonUnsupported, detail: err.Error()}
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	b := &fsevents{root: root, opts: opts}
	b.info = register(b)
	b.mu.marks = newSubtreeMarks(root, opts, false)
	b.mu.clock = newClockCheck(opts.clock)
	b.mu.p = newPending()
	b.mu.p.markAll(ReasonStart)
	if err := b.start(); err != nil {
		unregister(b.info)
		return &walkAlways{why: ReasonUnsupported, detail: "FSEvents: " + err.Error()}
	}
	return b
}

var errStream = errors.New("stream could not be created or started")

// start creates the stream on the root and runs its run loop on a locked
// thread; the caller holds life or owns b alone.
func (b *fsevents) start() error {
	fi, err := os.Stat(b.root)
	if err != nil {
		return err
	}
	started := make(chan error, 1)
	b.done = make(chan struct{})
	go b.run(started)
	if err := <-started; err != nil {
		<-b.done
		return err
	}
	b.rootFI = fi
	return nil
}

// run is the run loop thread.
func (b *fsevents) run(started chan<- error) {
	defer close(b.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	path := cf.stringCreate(0, b.root, cfStringEncodingUTF8)
	// CFArrayCreate and FSEventStreamCreate copy what they are given.
	paths := cf.arrayCreate(0, &path, 1, 0)
	ctx := streamContext{info: b.info} // version 0
	stream := cf.streamCreate(0, cf.callback, &ctx, paths, fsEventSinceNow, streamLatency,
		fsFlagNoDefer|fsFlagWatchRoot|fsFlagFileEvents)
	cf.release(paths)
	cf.release(path)
	if stream == 0 {
		started <- errStream
		return
	}
	mode := cf.stringCreate(0, "kCFRunLoopDefaultMode", cfStringEncodingUTF8)
	defer cf.release(mode)
	rl := cf.runLoopGet()
	cf.streamSched(stream, rl, mode)
	if !cf.streamStart(stream) {
		cf.streamInval(stream)
		cf.streamRelease(stream)
		started <- errStream
		return
	}
	b.stream, b.runLoop = stream, rl
	started <- nil
	// CFRunLoopStop, from stop, ends the run (also when it comes first:
	// the run loop keeps the request); the stream is then taken down on
	// the thread it was scheduled on.
	cf.runLoopRun()
	cf.streamStop(stream)
	cf.streamInval(stream)
	cf.streamRelease(stream)
}

// stop ends the run loop, which takes the stream down, and waits for its
// thread; the caller holds life.
func (b *fsevents) stop() {
	if b.stream == 0 {
		return
	}
	cf.runLoopStop(b.runLoop)
	<-b.done
	b.stream, b.runLoop = 0, 0
}

func (b *fsevents) watch(rel string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.mu.closed {
		b.mu.marks.watch(rel)
	}
}

// changes flushes the stream (FSEventStreamFlushSync returns once the
// callback has seen every event that had occurred when it was called),
// checks that the root is still the directory the stream watches, and
// takes the interval's marks.
func (b *fsevents) changes() Changes {
	b.life.Lock()
	b.mu.Lock()
	closed := b.mu.closed
	b.mu.Unlock()
	if !closed {
		b.keepRoot()
	}
	b.life.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.closed {
		return Changes{All: true, Reasons: ReasonClosed}
	}
	if b.mu.clock.jumped() {
		b.mu.p.markAll(ReasonClockJump)
	}
	now := time.Now()
	if now.Sub(b.mu.lastFull) >= provisionalWalkEvery {
		b.mu.p.markAll(ReasonPeriodic)
	}
	if b.mu.p.all {
		b.mu.lastFull = now
	}
	return b.mu.p.take(nil)
}

// keepRoot flushes the running stream, or, when the root is gone or
// replaced, stops it and starts one on the root when it is back; the
// caller holds life.
func (b *fsevents) keepRoot() {
	fi, err := os.Stat(b.root)
	if b.stream != 0 && err == nil && os.SameFile(fi, b.rootFI) {
		cf.streamFlush(b.stream)
		return
	}
	b.stop()
	b.mu.Lock()
	b.mu.p.markAll(ReasonRootLost)
	b.mu.marks.reset()
	b.mu.Unlock()
	if err == nil {
		b.start() // on failure the stream stays 0: the root is lost again next time
	}
}

// eventLocked applies one event: its absolute path and flags. It returns
// false when the event made everything dirty, which makes the rest of
// the batch moot.
func (b *fsevents) eventLocked(path string, flags uint32) bool {
	if flags&fsLostEvents != 0 {
		b.mu.st.Overflows++
		b.mu.st.Resets++
		b.mu.p.markAll(ReasonOverflow)
		b.mu.marks.reset()
		return false
	}
	if flags&fsRootOrMountChanged != 0 {
		b.mu.p.markAll(ReasonRootLost)
		b.mu.marks.reset()
		return false
	}
	rel, ok := b.relOf(path)
	if !ok {
		// A path FSEvents should not report: on doubt, everything.
		b.mu.p.markAll(ReasonDropped)
		b.mu.marks.reset()
		return false
	}
	kind := changeModified
	if flags&fsNameChanged != 0 {
		kind = changeRemoved
		if _, err := os.Lstat(path); err == nil {
			kind = changeAdded
		}
	}
	if b.mu.marks.mark(&b.mu.p, kind, rel) == overPending {
		b.mu.st.Overflows++
		b.mu.st.Resets++
		b.mu.p.markAll(ReasonOverflow)
		b.mu.marks.reset()
		return false
	}
	return true
}

// relOf returns path relative to the root, slash-separated; false when
// path is not the root or below it. Names compare without case, as APFS
// and HFS+ do by default.
func (b *fsevents) relOf(path string) (string, bool) {
	if foldName(path) == foldName(b.root) {
		return "", true
	}
	prefix := b.root + "/"
	if len(path) <= len(prefix) || foldName(path[:len(prefix)]) != foldName(prefix) {
		return "", false
	}
	return strings.TrimSuffix(path[len(prefix):], "/"), true
}

func (b *fsevents) stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.mu.st
	st.Backend = BackendFSEvents
	st.Provisional = true
	st.Watches = 1
	return st
}

func (b *fsevents) close() error {
	b.life.Lock()
	defer b.life.Unlock()
	b.mu.Lock()
	if b.mu.closed {
		b.mu.Unlock()
		return nil
	}
	b.mu.closed = true
	b.mu.Unlock()
	b.stop()
	unregister(b.info)
	return nil
}
