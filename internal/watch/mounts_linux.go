package watch

import (
	"bytes"
	"errors"
	"path"
	"path/filepath"
	"strings"

	"github.com/ckpt/ckpt/internal/osfs"
	"golang.org/x/sys/unix"
)

// mountInfoPath is the mount table of the watcher's mount namespace.
const mountInfoPath = "/proc/self/mountinfo"

// mountTable follows the mounts at, above and below the watched root:
// inotify reports no event when a file system is mounted on (or
// unmounted from) a directory of the tree, and the watches below the
// mount point then watch directories the paths no longer lead to.
//
// The kernel counts the changes of a mount namespace's table and a poll
// of the open table reports POLLPRI when the count moved since the
// previous poll; a mount or unmount moves it before its system call
// returns. Only Changes polls it (without waiting), so no change can be
// consumed by one poll and applied by nobody. The lines of the table do
// not identify a mount over time (the kernel reuses a freed mount id and
// device number at once: an unmount and a mount at the same point can
// leave an identical line), so after any change every mount point below
// the root is walked again, not only those whose lines differ.
type mountTable struct {
	root string
	fd   int               // the open mount table; -1 when it cannot be read
	seen map[string]string // mount id -> mount point, for those that concern root (mounts may stack on one point)
	// files are the mount points below root that are not directories (a
	// file bind-mounted onto a workspace file): a write through such a
	// path raises its events in the mounted file's own directory, not
	// here, so its entry is looked up again at every scan (Changes).
	files []string
	buf   []byte
}

// openMountTable reads the current mounts of root; a table that cannot
// be opened leaves mounts unfollowed (fd -1), as inotify alone would.
func openMountTable(root string) *mountTable {
	m := &mountTable{root: root, fd: -1}
	fd, err := unix.Open(mountInfoPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return m
	}
	m.fd = fd
	if m.seen, err = m.read(); err != nil {
		m.close()
	}
	m.files = m.fileMounts()
	return m
}

// fileMounts returns the mount points of seen below root that are not
// directories.
func (m *mountTable) fileMounts() []string {
	var files []string
	for _, p := range m.seen {
		var st unix.Stat_t
		if strings.HasPrefix(p, m.root+"/") && unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			files = append(files, p)
		}
	}
	return files
}

// ready reports, without blocking, whether the table changed since the
// previous call (or the open); the report is consumed.
func (m *mountTable) ready() bool {
	fds := []unix.PollFd{{Fd: int32(m.fd), Events: unix.POLLPRI}}
	n, err := unix.Poll(fds, 0)
	return err != nil || (n > 0 && fds[0].Revents&(unix.POLLPRI|unix.POLLERR) != 0)
}

// changed re-reads the table and returns the mount points concerning root
// that appeared or went since the last read, and every one below root
// now. err is set
// when the table can no longer be read: the caller must then trust no
// directory (the table stays unfollowed afterwards).
func (m *mountTable) changed() (points []string, err error) {
	now, err := m.read()
	if err != nil {
		m.close()
		return nil, err
	}
	for id, p := range now {
		if m.seen[id] != p {
			points = append(points, p)
		}
	}
	for id, p := range m.seen {
		if _, ok := now[id]; !ok {
			points = append(points, p)
		}
	}
	for id, p := range now {
		if m.seen[id] == p && strings.HasPrefix(p, m.root+"/") {
			points = append(points, p)
		}
	}
	m.seen = now
	m.files = m.fileMounts()
	return points, nil
}

// read parses the whole table, keeping the mounts on root, on its ancestors and below it.
func (m *mountTable) read() (map[string]string, error) {
	if _, err := unix.Seek(m.fd, 0, 0); err != nil {
		return nil, err
	}
	data := m.buf[:0]
	for {
		if cap(data)-len(data) < 16<<10 {
			data = append(data, make([]byte, 64<<10)...)[:len(data)]
		}
		n, err := unix.Read(m.fd, data[len(data):cap(data)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		data = data[:len(data)+n]
	}
	m.buf = data
	mounts := map[string]string{}
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		f := bytes.Fields(line)
		if len(f) < 5 {
			continue
		}
		p := osfs.UnescapeMountPath(string(f[4]))
		if concerns(m.root, p) {
			mounts[string(f[0])] = p
		}
	}
	return mounts, nil
}

// concerns reports whether a mount on p changes what root shows: p is
// root, one of its ancestors, or below it.
func concerns(root, p string) bool {
	return p == root || strings.HasPrefix(root, strings.TrimSuffix(p, "/")+"/") || strings.HasPrefix(p, root+"/")
}

func (m *mountTable) close() {
	if m.fd >= 0 {
		unix.Close(m.fd)
		m.fd = -1
	}
}

// mountsLocked applies a change of the mount table since the last
// Changes: every mount point below the root that appeared, went or is
// there now is walked again from scratch (its old watches dropped, since
// they watch the directories the mount hid or uncovered), and its parent
// is re-read; a mount on the root or above it, or a table that can no
// longer be read, reports All.
func (b *inotify) mountsLocked() {
	defer b.fileMountsLocked()
	if b.mu.mounts.fd < 0 || !b.mu.mounts.ready() {
		return
	}
	points, err := b.mu.mounts.changed()
	if err != nil {
		b.resetLocked(ReasonReadError)
		return
	}
	for _, p := range points {
		rel, err := filepath.Rel(b.root, p)
		if err != nil || !strings.HasPrefix(p, b.root+"/") {
			b.resetLocked(ReasonRootLost)
			return
		}
		rel = filepath.ToSlash(rel)
		if n := b.mu.tree.lookup(rel, false); n != nil {
			b.dropLocked(n, true)
		}
		b.mu.p.markDirty(parentRel(rel))
		b.mu.p.markRescan(rel, ReasonMount)
	}
}

// fileMountsLocked names, as changed, every file mounted below the root
// (mountTable.files): no event in the workspace reports a write to one.
func (b *inotify) fileMountsLocked() {
	for _, p := range b.mu.mounts.files {
		if rel, err := filepath.Rel(b.root, p); err == nil {
			rel = filepath.ToSlash(rel)
			b.mu.p.markEntry(parentRel(rel), path.Base(rel))
		}
	}
}
