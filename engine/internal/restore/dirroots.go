package restore

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ckpt/ckpt/objects"
)

// dirRoots keeps directories of the workspace open, so that an operation
// on "a/b/c/name" is one call relative to the open
// directory instead of a walk from the workspace root, one openat per path
// component, for each of the lookups, creations and renames that writing
// one file takes (a restore of many files in deep trees spent most of its
// system time there).
//
// A directory is opened from the workspace's own, never through a symlink,
// and no name with a ".." element is taken, so it is inside the workspace
// when opened, as an os.Root lookup is: where the kernel resolves a whole
// path beneath a directory without symlinks (Linux's openat2), in one call;
// elsewhere one name at a time, through its parent (opened the same way),
// each with O_NOFOLLOW. Removing or renaming
// a path forgets every open directory at or below it, so a directory that
// is removed and made again is reopened, never written through its old
// handle. At most maxOpen directories stay open when unused; one in use is
// closed only once its last user releases it.
type dirRoots struct {
	root *os.Root
	top  *dirRoot // the workspace's directory itself: never dropped, closed by close
	// beneath is openBeneath, or a test's stand-in that makes every
	// directory open through its parent; noBeneath is set once it failed
	// with errNoBeneath.
	beneath   func(top dirHandle, dir string) (dirHandle, error)
	noBeneath atomic.Bool

	mu   sync.Mutex
	open map[string]*dirRoot
	// under counts, for each path, the entries of open at or below it, so
	// that forgetting a path nothing is open under (a file) costs one
	// lookup instead of a pass over open.
	under   map[string]int
	idle    []*dirRoot // unused and still open, least recently released first
	maxOpen int
}

type dirRoot struct {
	dir       string
	handle    dirHandle // the open directory, which the platform works through (dirhandle_*.go)
	users     int
	forgotten bool // no longer in open: closed when users reaches 0
}

// maxOpenDirs bounds the directories kept open while unused, where the
// process may open enough files (openDirsBound): enough for the
// directories a restore of a few hundred files writes into and, where they
// are opened through their parents, their ancestors (the bench's edit, 120
// files, reaches some 500 on the 100k corpus; with 256 the restore reopened
// most of them, 8 ms of 35), each of which it may use again when it renames
// their files into place.
const maxOpenDirs = 1024

// errNoBeneath is openBeneath's failure where the platform cannot open a
// directory below another in one call.
var errNoBeneath = errors.New("no openat2")

// minOpenDirs is the bound where the process may open few files.
const minOpenDirs = 64

func newDirRoots(root *os.Root) (*dirRoots, error) {
	h, err := openDirHandle(root)
	if err != nil {
		return nil, err
	}
	return &dirRoots{root: root, top: &dirRoot{handle: h}, beneath: openBeneath, open: map[string]*dirRoot{}, under: map[string]int{}, maxOpen: openDirsBound()}, nil
}

// in runs fn with the directory that holds name and name's last element:
// the workspace's own for a top-level name, else its open directory. An
// error names the whole path, as the workspace's root would have.
func (d *dirRoots) in(name string, fn func(dr *dirRoot, base string) error) error {
	if objects.ValidPath(name) != nil {
		// An empty, "." or ".." element, which the descriptors below
		// would take where os.Root refused it: in is their one gate.
		return &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	dir, base := path.Split(name)
	if dir == "" {
		return fn(d.top, base)
	}
	dr, err := d.acquire(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return err
	}
	defer d.release(dr)
	err = fn(dr, base)
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		pe.Path = path.Join(dir, pe.Path)
	case errors.As(err, &le):
		le.Old, le.New = path.Join(dir, le.Old), path.Join(dir, le.New)
	}
	return err
}

// acquire returns dir open, opening it when it is not (openIn): one call,
// where a walk from the workspace root takes one per component (a clone of
// 7,000 directories reopened most of them for its renames).
func (d *dirRoots) acquire(dir string) (*dirRoot, error) {
	d.mu.Lock()
	if dr := d.open[dir]; dr != nil {
		if dr.users == 0 {
			d.unidle(dr)
		}
		dr.users++
		d.mu.Unlock()
		return dr, nil
	}
	d.mu.Unlock()
	dr, err := d.openIn(dir)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if had := d.open[dir]; had != nil { // opened meanwhile by another caller
		dr.close()
		if had.users == 0 {
			d.unidle(had)
		}
		had.users++
		return had, nil
	}
	d.add(dr)
	return dr, nil
}

// openIn opens dir for one user: from the workspace's directory in one
// call where the platform can (openBeneath), else through its parent. An
// error names dir whole.
func (d *dirRoots) openIn(dir string) (*dirRoot, error) {
	err := errNoBeneath
	var h dirHandle
	if !d.noBeneath.Load() {
		if h, err = d.beneath(d.top.handle, dir); errors.Is(err, errNoBeneath) {
			d.noBeneath.Store(true) // not asked again in this restore
		}
	}
	if errors.Is(err, errNoBeneath) {
		h, err = d.openThroughParent(dir)
	}
	if err != nil {
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			pe.Path = dir
		}
		return nil, err
	}
	return &dirRoot{dir: dir, handle: h, users: 1}, nil
}

// openThroughParent opens dir's handle from its parent's, acquiring the
// parent the same way.
func (d *dirRoots) openThroughParent(dir string) (dirHandle, error) {
	parent, base := d.top, dir
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		p, err := d.acquire(dir[:i])
		if err != nil {
			return dirHandle{}, err
		}
		defer d.release(p)
		parent, base = p, dir[i+1:]
	}
	return openSubHandle(parent.handle, base)
}

// close closes dr's handle, which it replaces with closedHandle.
func (dr *dirRoot) close() {
	dr.handle.close()
	dr.handle = closedHandle
}

// add puts dr in open; d.mu is held.
func (d *dirRoots) add(dr *dirRoot) {
	d.open[dr.dir] = dr
	d.count(dr.dir, 1)
}

// drop takes dr out of open; d.mu is held.
func (d *dirRoots) drop(dr *dirRoot) {
	delete(d.open, dr.dir)
	d.count(dr.dir, -1)
}

// count adds delta to the counts of dir and each of its ancestors.
func (d *dirRoots) count(dir string, delta int) {
	for p := dir; ; {
		if d.under[p] += delta; d.under[p] == 0 {
			delete(d.under, p)
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return
		}
		p = p[:i]
	}
}

func (d *dirRoots) release(dr *dirRoot) {
	d.mu.Lock()
	defer d.mu.Unlock()
	dr.users--
	switch {
	case dr.users > 0:
	case dr.forgotten:
		dr.close()
	default:
		d.idle = append(d.idle, dr)
		for len(d.idle) > d.maxOpen {
			old := d.idle[0]
			d.idle = d.idle[1:]
			d.drop(old)
			old.close()
		}
	}
}

// unidle takes dr out of the idle list; d.mu is held.
func (d *dirRoots) unidle(dr *dirRoot) {
	for i, x := range d.idle {
		if x == dr {
			d.idle = append(d.idle[:i], d.idle[i+1:]...)
			return
		}
	}
}

// forget closes (or, when in use, marks for closing) every open
// directory at or below name, before name is removed or replaced.
func (d *dirRoots) forget(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.under[name] == 0 {
		return
	}
	for dir, dr := range d.open {
		if dir != name && !strings.HasPrefix(dir, name+"/") {
			continue
		}
		d.drop(dr)
		if dr.users > 0 {
			dr.forgotten = true
			continue
		}
		d.unidle(dr)
		dr.close()
	}
}

// close closes every open directory and the workspace's handle (not the
// workspace's root, which the seam closes); no operation may be running.
func (d *dirRoots) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, dr := range d.open {
		dr.close()
	}
	d.top.handle.close()
	d.open, d.under, d.idle = map[string]*dirRoot{}, map[string]int{}, nil
}
