package watch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"

	"golang.org/x/sys/unix"
)

// drainLocked reads the inotify descriptor without blocking until the
// kernel queue is empty (EAGAIN) and applies every event read.
func (b *inotify) drainLocked() {
	for {
		n, err := unix.Read(b.mu.fd, b.mu.buf)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return
		case err != nil || n <= 0:
			b.resetLocked(ReasonReadError)
			return
		}
		if !b.parseLocked(b.mu.buf[:n]) {
			return
		}
	}
}

// parseLocked applies the events of one read. It returns false when an
// event reset the watcher, which makes the rest of the buffer moot.
func (b *inotify) parseLocked(buf []byte) bool {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		wd := int32(binary.NativeEndian.Uint32(buf[off:]))
		mask := binary.NativeEndian.Uint32(buf[off+4:])
		cookie := binary.NativeEndian.Uint32(buf[off+8:])
		nameLen := int(binary.NativeEndian.Uint32(buf[off+12:]))
		start := off + unix.SizeofInotifyEvent
		if start+nameLen > len(buf) {
			b.resetLocked(ReasonReadError)
			return false
		}
		name := string(bytes.TrimRight(buf[start:start+nameLen], "\x00"))
		off = start + nameLen
		if !b.eventLocked(wd, mask, cookie, name) {
			return false
		}
	}
	return true
}

// eventLocked applies one event; false means the watcher was reset.
func (b *inotify) eventLocked(wd int32, mask, cookie uint32, name string) bool {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		return b.overflowLocked()
	}
	if names, ok := b.mu.rules[wd]; ok && ruleEvent(names, mask, name) {
		b.mu.p.markAll(ReasonRuleFile)
		b.armRulesLocked()
	}
	n := b.mu.wds[wd]
	if n == nil {
		b.unmappedLocked(wd, mask, name)
		return true
	}
	if a := b.mu.audit; a != nil {
		a.add(Event{Dir: n.rel(), Name: name, Op: eventOp(mask), IsDir: mask&unix.IN_ISDIR != 0, Cookie: cookie})
	}
	if name == "" {
		if !b.selfEventLocked(n, mask) {
			return false
		}
	} else {
		b.childEventLocked(n, mask, name)
	}
	if m := b.opts.MaxPending; m > 0 && b.mu.p.size() > m {
		return b.overflowLocked()
	}
	return true
}

// unmappedLocked handles an event of a watch that maps no directory: a
// watch already dropped, or a rule-file watch only. The last events of a
// deleted directory's watch, which the kernel ends itself, tell nothing
// new: its IN_DELETE_SELF (which comes when the directory's last user lets
// it go, maybe long after its parent reported its deletion) and the
// IN_IGNORED that ends it. Of any other, an audit cannot tell what it was
// about.
func (b *inotify) unmappedLocked(wd int32, mask uint32, name string) {
	_, ended := b.mu.ended[wd]
	switch {
	case ended && mask&unix.IN_IGNORED != 0:
		delete(b.mu.ended, wd)
	case ended && name == "" && mask&unix.IN_DELETE_SELF != 0:
	case b.mu.audit != nil:
		b.mu.audit.complete = false
	}
}

// eventOp says what an event with mask did to the entry it names.
func eventOp(mask uint32) Op {
	switch {
	case mask&unix.IN_CREATE != 0:
		return OpCreated
	case mask&(unix.IN_MODIFY|unix.IN_CLOSE_WRITE) != 0:
		return OpWritten
	case mask&unix.IN_ATTRIB != 0:
		return OpAttrib
	case mask&(unix.IN_DELETE|unix.IN_DELETE_SELF) != 0:
		return OpRemoved
	case mask&unix.IN_MOVED_FROM != 0:
		return OpMovedFrom
	case mask&unix.IN_MOVED_TO != 0:
		return OpMovedTo
	}
	return OpOther
}

// overflowLocked handles a lost event stream: every watch is dropped and
// the next Changes reports All. It returns false, as eventLocked does
// after a reset.
func (b *inotify) overflowLocked() bool {
	b.mu.st.Overflows++
	b.resetLocked(ReasonOverflow)
	return false
}

// ruleEvent reports whether an event on a rule-file watch touches one of
// the names leading to a rule file, or ends the watch itself.
func ruleEvent(names []string, mask uint32, name string) bool {
	if name == "" {
		return mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_UNMOUNT) != 0
	}
	return slices.Contains(names, name)
}

// selfEventLocked applies an event about a watched directory itself.
func (b *inotify) selfEventLocked(n *dirNode, mask uint32) bool {
	const lost = unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_IGNORED | unix.IN_UNMOUNT
	if n.parent == nil && mask&lost != 0 {
		b.resetLocked(ReasonRootLost)
		return false
	}
	rel := n.rel()
	switch {
	case mask&unix.IN_DELETE_SELF != 0:
		b.dropLocked(n, false)
	case mask&unix.IN_MOVE_SELF != 0:
		// The parent's IN_MOVED_FROM normally dropped the watch already;
		// still mapped means the parent did not see the move.
		b.mu.p.markDirty(parentRel(rel))
		b.mu.p.markRescan(rel, ReasonDropped)
		b.dropLocked(n, true)
	case mask&(unix.IN_IGNORED|unix.IN_UNMOUNT) != 0:
		// The kernel ended this watch (its IN_IGNORED is this one, or
		// follows): nothing more comes of it to wait for. The watches
		// below it, of directories that may well still be there, are
		// removed.
		b.mu.p.markRescan(rel, ReasonDropped)
		b.dropLocked(n, true)
	default:
		b.mu.p.markDirty(rel)
	}
	return true
}

// writtenMask is the events that show an entry's content changing, the
// first of which Options.Written hears of (a truncating open raises
// IN_MODIFY; IN_CLOSE_WRITE follows what those already told).
const writtenMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_MOVED_TO

// childEventLocked applies an event about the entry name of directory n.
// An event about a file, symlink or special file names that entry (see
// Changes.Entries); one about a subdirectory makes n dirty whole.
func (b *inotify) childEventLocked(n *dirNode, mask uint32, name string) {
	rel := n.rel()
	if slices.Contains(b.opts.RuleNames, name) {
		b.mu.p.markRescan(rel, ReasonRuleFile)
	}
	if mask&unix.IN_ISDIR == 0 {
		b.mu.p.markEntry(rel, name)
		if b.opts.Written != nil && mask&writtenMask != 0 {
			b.opts.Written(joinRel(rel, name))
		}
		return
	}
	b.mu.p.markDirty(rel)
	child := n.children[name]
	switch {
	case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		// Entries may be created in it before its watch exists, and a
		// watch still mapped at this name belonged to what was there.
		b.mu.p.markRescan(joinRel(rel, name), ReasonNewDir)
		if child != nil {
			b.dropLocked(child, true)
		}
	case mask&unix.IN_MOVED_FROM != 0 && child != nil:
		// Its watches now follow the directory elsewhere; their paths
		// are no longer true. Where it landed inside the tree, the
		// IN_MOVED_TO makes it a Rescan.
		b.dropLocked(child, true)
	case mask&unix.IN_DELETE != 0 && child != nil:
		b.dropLocked(child, false)
	}
}

// dropLocked forgets n and every node below it, removing their kernel
// watches when rm is set; without it they are a deleted directory's,
// which the kernel removes itself (see unmappedLocked).
func (b *inotify) dropLocked(n *dirNode, rm bool) {
	n.each(func(m *dirNode) {
		if m.wd != 0 {
			delete(b.mu.wds, m.wd)
			if _, rule := b.mu.rules[m.wd]; rm && !rule {
				unix.InotifyRmWatch(b.mu.fd, uint32(m.wd))
			} else if !rm {
				b.mu.ended[m.wd] = struct{}{}
			}
			m.wd = 0
		}
		if m.failed {
			delete(b.mu.failed, m)
			m.failed = false
		}
	})
	n.children = nil
	n.prune()
}
