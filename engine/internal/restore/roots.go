package restore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// OpenRoots opens the directories of a multi-root workspace (dirs maps
// each root's name to its directory) as one FS, so that one plan, one
// journal and one applier cover every root. A name's first element picks
// the root and the rest is resolved in its directory, as OpenRoot's FS
// resolves it; a root's own name stands for its directory. Names outside
// every root (the top level a multi-root tree lists the roots in) fail
// with fs.ErrInvalid: a plan between two trees of the same roots never
// makes or removes a root. wrap, when set, wraps the whole.
func OpenRoots(dirs map[string]string, wrap func(FS) FS) (FS, func() error, error) {
	m := rootsFS{}
	closeAll := func() error {
		var errs []error
		for _, r := range m {
			errs = append(errs, r.close())
		}
		return errors.Join(errs...)
	}
	for name, dir := range dirs {
		fsys, closeFS, err := OpenRoot(dir, nil)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("root %s: %w", name, err)
		}
		m[name] = openRoot{fsys, closeFS}
	}
	var fsys FS = m
	if wrap != nil {
		fsys = wrap(fsys)
	}
	return fsys, closeAll, nil
}

type openRoot struct {
	FS
	close func() error
}

// rootsFS routes each name to the root its first element names.
type rootsFS map[string]openRoot

// in splits name into its root's FS and the name inside that root.
func (m rootsFS) in(name string) (FS, string, error) {
	first, rest, _ := strings.Cut(name, "/")
	r, ok := m[first]
	if !ok {
		return nil, "", &fs.PathError{Op: "resolve", Path: name, Err: fmt.Errorf("%w: outside every root", fs.ErrInvalid)}
	}
	if rest == "" {
		rest = "."
	}
	return r.FS, rest, nil
}

// do runs op on the root name is in, with the name inside it.
func (m rootsFS) do(name string, op func(fsys FS, rel string) error) error {
	fsys, rel, err := m.in(name)
	if err != nil {
		return err
	}
	return op(fsys, rel)
}

func (m rootsFS) Create(rel string) (TempFile, error) {
	fsys, in, err := m.in(rel)
	if err != nil {
		return nil, err
	}
	f, err := fsys.Create(in)
	if err != nil {
		return nil, err
	}
	first, _, _ := strings.Cut(rel, "/")
	return namedTemp{f, first + "/" + f.Name()}, nil
}

// namedTemp is a root's TempFile named from the top of the workspace.
type namedTemp struct {
	TempFile
	name string
}

func (t namedTemp) Name() string { return t.name }

// Rename renames within one root; a rename across roots fails with fs.ErrInvalid.
func (m rootsFS) Rename(oldname, newname string) error {
	oldFS, oldIn, err := m.in(oldname)
	if err != nil {
		return err
	}
	newFS, newIn, err := m.in(newname)
	if err != nil {
		return err
	}
	if oldFS != newFS {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fmt.Errorf("%w: across roots", fs.ErrInvalid)}
	}
	return oldFS.Rename(oldIn, newIn)
}

func (m rootsFS) Remove(name string) error {
	return m.do(name, func(f FS, rel string) error { return f.Remove(rel) })
}

func (m rootsFS) RemoveAll(name string) error {
	return m.do(name, func(f FS, rel string) error { return f.RemoveAll(rel) })
}

func (m rootsFS) Mkdir(name string, perm fs.FileMode) error {
	return m.do(name, func(f FS, rel string) error { return f.Mkdir(rel, perm) })
}

func (m rootsFS) Symlink(target, name string) error {
	return m.do(name, func(f FS, rel string) error { return f.Symlink(target, rel) })
}

func (m rootsFS) Chmod(name string, mode fs.FileMode) error {
	return m.do(name, func(f FS, rel string) error { return f.Chmod(rel, mode) })
}

func (m rootsFS) Lstat(name string) (fi fs.FileInfo, err error) {
	err = m.do(name, func(f FS, rel string) error {
		fi, err = f.Lstat(rel)
		return err
	})
	return fi, err
}

func (m rootsFS) DirNames(name string) (names []string, err error) {
	err = m.do(name, func(f FS, rel string) error {
		names, err = f.DirNames(rel)
		return err
	})
	return names, err
}

// SyncDir of the top level (".", "") syncs every root's directory.
func (m rootsFS) SyncDir(name string) error {
	if name == "" || name == "." {
		return m.each(func(f FS) error { return f.SyncDir(".") })
	}
	return m.do(name, func(f FS, rel string) error { return f.SyncDir(rel) })
}

func (m rootsFS) SyncFile(name string) error {
	return m.do(name, func(f FS, rel string) error { return f.SyncFile(rel) })
}

// Hold holds name in its root.
func (m rootsFS) Hold(name string) io.Closer {
	var c io.Closer
	_ = m.do(name, func(f FS, rel string) error {
		c = f.Hold(rel)
		return nil
	})
	return c
}

// SyncAll syncs the file system of every root.
func (m rootsFS) SyncAll() error { return m.each(FS.SyncAll) }

// SyncAllState is sound, and cheap, when it is for every root.
func (m rootsFS) SyncAllState() (sound, cheap bool) {
	sound, cheap = true, true
	for _, r := range m {
		s, c := r.FS.SyncAllState()
		sound, cheap = sound && s, cheap && c
	}
	return sound, cheap
}

func (m rootsFS) each(op func(FS) error) error {
	var errs []error
	for _, r := range m {
		errs = append(errs, op(r.FS))
	}
	return errors.Join(errs...)
}
