package watch

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// watchMask is what every directory watch asks for: entry changes, the
// directory's own attributes, and its own deletion or move. IN_CLOSE_WRITE
// reports a file written through a shared memory mapping, which raises no
// IN_MODIFY, once its last writable descriptor and mapping are gone.
// IN_EXCL_UNLINK drops events of files already unlinked; IN_DONT_FOLLOW
// and IN_ONLYDIR refuse a symlink or file that replaced the directory.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// errSharedInode is the add error for a directory whose inode is already
// watched under another path (a bind mount, or a move not yet read).
var errSharedInode = errors.New("watch: directory already watched under another path")

// inotify is the Linux backend: one kernel watch per captured directory and
// a reader goroutine that drains the queue as events arrive.
type inotify struct {
	root string
	opts Options
	wake int           // eventfd that interrupts the reader's poll
	done chan struct{} // closed when the reader has returned

	mu struct {
		sync.Mutex
		fd      int   // inotify descriptor; -1 when none could be created
		retired []int // descriptors replaced by a reset; the reader closes them
		closed  bool
		tree    *dirNode
		wds     map[int32]*dirNode
		failed  map[*dirNode]struct{}
		rules   map[int32][]string // rule-file watches: the names that matter there
		p       pending
		mounts  *mountTable
		audit   *auditLog // the running audit's log, nil when none
		clock   clockCheck
		st      Stats
		buf     []byte
		// ended holds the watches of deleted directories, which the
		// kernel ends itself, until their IN_IGNORED.
		ended map[int32]struct{}
	}
}

// newBackend starts the inotify backend, or the always-walk one when the
// kernel gives no inotify instance (the per-user instance limit).
func newBackend(root string, opts Options) backend {
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return &walkAlways{why: ReasonUnsupported, detail: "no eventfd: " + err.Error()}
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		unix.Close(wake)
		return &walkAlways{why: ReasonUnsupported, detail: "no inotify instance: " + err.Error()}
	}
	b := &inotify{root: root, opts: opts, wake: wake, done: make(chan struct{})}
	b.mu.fd = fd
	b.mu.buf = make([]byte, 64<<10)
	b.mu.clock = newClockCheck(opts.clock)
	b.mu.p = newPending()
	b.mu.p.markAll(ReasonStart)
	b.mu.mounts = openMountTable(root)
	b.startTreeLocked()
	go b.run()
	return b
}

// startTreeLocked forgets every watch and adds the root's and the rule
// files' watches on the current descriptor.
func (b *inotify) startTreeLocked() {
	b.mu.tree = &dirNode{}
	b.mu.wds = map[int32]*dirNode{}
	b.mu.failed = map[*dirNode]struct{}{}
	b.mu.rules = map[int32][]string{}
	b.mu.ended = map[int32]struct{}{}
	if b.mu.fd < 0 {
		return
	}
	if wd, err := unix.InotifyAddWatch(b.mu.fd, b.root, watchMask); err == nil {
		b.mu.tree.wd = int32(wd)
		b.mu.wds[int32(wd)] = b.mu.tree
	}
	b.armRulesLocked()
}

// armRulesLocked watches, for every rule file, the nearest existing
// directory on its path, remembering the name that leads to the file.
func (b *inotify) armRulesLocked() {
	for wd := range b.mu.rules {
		if b.mu.wds[wd] == nil {
			unix.InotifyRmWatch(b.mu.fd, uint32(wd))
		}
	}
	b.mu.rules = map[int32][]string{}
	for _, f := range b.opts.RuleFiles {
		dir, name := filepath.Dir(f), filepath.Base(f)
		for {
			wd, err := unix.InotifyAddWatch(b.mu.fd, dir, watchMask)
			if err == nil {
				b.mu.rules[int32(wd)] = append(b.mu.rules[int32(wd)], name)
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
			dir, name = filepath.Dir(dir), filepath.Base(dir)
		}
	}
}

func (b *inotify) watch(rel string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.closed || b.mu.fd < 0 {
		return
	}
	n := b.mu.tree.lookup(rel, true)
	if n.wd != 0 {
		return
	}
	if err := b.addLocked(n, rel); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			// No longer a directory at this path: its parent's re-read
			// settles what is there now.
			b.mu.p.markDirty(rel)
			b.mu.p.markDirty(parentRel(rel))
			n.prune()
			return
		}
		if !n.failed {
			n.failed = true
			b.mu.failed[n] = struct{}{}
		}
		return
	}
	if n.failed {
		n.failed = false
		delete(b.mu.failed, n)
	}
}

// addLocked adds the kernel watch of n, honouring Options.MaxWatches.
func (b *inotify) addLocked(n *dirNode, rel string) error {
	if m := b.opts.MaxWatches; m > 0 && len(b.mu.wds) >= m {
		return unix.ENOSPC
	}
	wd, err := unix.InotifyAddWatch(b.mu.fd, filepath.Join(b.root, filepath.FromSlash(rel)), watchMask)
	if err != nil {
		return err
	}
	if other := b.mu.wds[int32(wd)]; other != nil && other != n {
		return errSharedInode
	}
	n.wd = int32(wd)
	b.mu.wds[n.wd] = n
	return nil
}

func (b *inotify) changes() Changes {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changesLocked()
}

func (b *inotify) startAudit() (*auditLog, Changes) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.changesLocked()
	if b.mu.audit != nil { // an audit never ended: its log is moot
		b.mu.audit.complete = false
	}
	b.mu.audit = &auditLog{complete: !b.mu.closed && b.mu.fd >= 0}
	return b.mu.audit, c
}

func (b *inotify) endAudit(log *auditLog) Changes {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.changesLocked()
	if c.All {
		log.complete = false
	}
	if b.mu.audit == log {
		b.mu.audit = nil
	} else {
		log.complete = false
	}
	return c
}

// changesLocked is changes with the lock held.
func (b *inotify) changesLocked() Changes {
	if b.mu.closed {
		return Changes{All: true, Reasons: ReasonClosed}
	}
	if b.mu.fd >= 0 {
		b.drainLocked()
		b.mountsLocked()
	}
	if b.mu.clock.jumped() {
		b.mu.p.markAll(ReasonClockJump)
	}
	if b.mu.tree.wd == 0 {
		b.resetLocked(ReasonRootLost)
	}
	extra := make([]string, 0, len(b.mu.failed))
	for n := range b.mu.failed {
		extra = append(extra, n.rel())
	}
	if len(extra) > 0 {
		b.mu.p.reasons |= ReasonUnwatched
	}
	return b.mu.p.take(extra)
}

func (b *inotify) stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.mu.st
	st.Backend = BackendInotify
	st.Watches = len(b.mu.wds)
	st.Unwatched = len(b.mu.failed)
	return st
}

// resetLocked drops every watch by replacing the inotify descriptor (the
// events still queued on the old one are moot) and reports All.
func (b *inotify) resetLocked(why Reason) {
	b.mu.st.Resets++
	if b.mu.audit != nil {
		b.mu.audit.complete = false
	}
	b.mu.p.markAll(why)
	if b.mu.fd >= 0 {
		b.mu.retired = append(b.mu.retired, b.mu.fd)
		b.kick()
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		fd = -1
	}
	b.mu.fd = fd
	b.startTreeLocked()
}

// kick wakes the reader from its poll.
func (b *inotify) kick() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	unix.Write(b.wake, one[:])
}

// run is the reader goroutine: it polls the current descriptor and the
// wake eventfd, drains the queue under the lock, closes retired
// descriptors, and returns once the watcher is closed.
func (b *inotify) run() {
	defer close(b.done)
	for {
		b.mu.Lock()
		for _, fd := range b.mu.retired {
			unix.Close(fd)
		}
		b.mu.retired = nil
		fd, closed := b.mu.fd, b.mu.closed
		b.mu.Unlock()
		if closed {
			return
		}
		fds := []unix.PollFd{{Fd: int32(b.wake), Events: unix.POLLIN}, {Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if !errors.Is(err, unix.EINTR) {
				b.mu.Lock()
				b.resetLocked(ReasonReadError)
				b.mu.Unlock()
			}
			continue
		}
		if fds[0].Revents != 0 {
			var x [8]byte
			unix.Read(b.wake, x[:])
		}
		if fds[1].Revents != 0 {
			b.mu.Lock()
			if b.mu.fd == fd && !b.mu.closed {
				b.drainLocked()
			}
			b.mu.Unlock()
		}
	}
}

func (b *inotify) close() error {
	b.mu.Lock()
	if b.mu.closed {
		b.mu.Unlock()
		return nil
	}
	b.mu.closed = true
	b.kick()
	b.mu.Unlock()
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	var err error
	for _, fd := range append(b.mu.retired, b.mu.fd, b.wake) {
		if fd >= 0 {
			err = errors.Join(err, unix.Close(fd))
		}
	}
	b.mu.retired, b.mu.fd = nil, -1
	b.mu.mounts.close()
	return err
}
