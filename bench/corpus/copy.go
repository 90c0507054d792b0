package corpus

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/ckpt/ckpt/walker"
	"golang.org/x/sync/errgroup"
)

// editableExt are the extensions of the files Copy offers for edits: source
// text whatever the language, so that an inserted line keeps it text.
var editableExt = []string{".go", ".c", ".h", ".cc", ".cpp", ".rs", ".py", ".js", ".ts", ".tsx", ".java",
	".rb", ".proto", ".md", ".txt", ".yaml", ".yml", ".json", ".toml", ".sh", ".html", ".css", ".s"}

// maxEditable bounds the size of a file offered for edits.
const maxEditable = 1 << 20

// Copy copies the directory tree src into dst (created; it should not
// exist) and returns the manifest of the copy, for benchmarking on a real
// tree. src is only read. Directories, regular files (with their
// permission bits, plus the owner's write bit so that edits can go
// anywhere, as in a working tree) and symlinks are copied; every .git entry is left out,
// so dst is a plain working tree, and special files are skipped. The
// manifest is Survey's.
func Copy(ctx context.Context, src, dst string) (*Manifest, error) {
	src, err := filepath.Abs(src)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(2 * runtime.GOMAXPROCS(0))
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := gctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.Name() == ".git" && rel != "." {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			g.Go(func() error { return copyFile(p, to, info.Mode().Perm()|0o200) })
		}
		return nil
	})
	if werr := g.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return nil, fmt.Errorf("corpus: copy %s: %w", src, err)
	}
	return Survey(ctx, dst, src)
}

// copyFile copies one regular file with its permission bits.
func copyFile(from, to string, perm fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Survey returns the manifest of the real tree at root, which came from
// source (recorded in the manifest): Files counts its regular files outside
// .git, the other counts are those of the files ckpt's "cline" profile
// captures (Ignored is the rest), and Text lists the captured, writable
// source files up to 1 MiB in path order, from which Mutate picks its edits
// deterministically.
func Survey(ctx context.Context, root, source string) (*Manifest, error) {
	m := &Manifest{Root: root, Source: source}
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".git":
			return filepath.SkipDir
		case d.Type().IsRegular() && d.Name() != ".git":
			m.Files++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("corpus: survey %s: %w", root, err)
	}
	all, _, err := walker.Walk(ctx, m.Root, walker.Options{Profile: "cline"},
		func(_ context.Context, d *walker.Dir, sub map[string]Manifest) (Manifest, error) {
			var f Manifest
			if d.Path != "" {
				f.Dirs = append(f.Dirs, d.Path)
			}
			for _, e := range d.Entries {
				f.countEntry(d.Path, e)
			}
			for _, s := range sub {
				f.Text, f.Dirs = append(f.Text, s.Text...), append(f.Dirs, s.Dirs...)
				f.Captured, f.Bytes, f.Executables, f.Symlinks = f.Captured+s.Captured, f.Bytes+s.Bytes,
					f.Executables+s.Executables, f.Symlinks+s.Symlinks
			}
			return f, nil
		})
	if err != nil {
		return nil, fmt.Errorf("corpus: survey %s: %w", root, err)
	}
	m.Text, m.Dirs = slices.Sorted(slices.Values(all.Text)), slices.Sorted(slices.Values(all.Dirs))
	if len(m.Dirs) == 0 {
		m.Dirs = []string{"."}
	}
	m.Captured, m.Bytes, m.Executables, m.Symlinks = all.Captured, all.Bytes, all.Executables, all.Symlinks
	m.Ignored = m.Files - m.Captured
	return m, nil
}

// countEntry adds one captured entry of directory dir to m.
func (m *Manifest) countEntry(dir string, e walker.Entry) {
	switch e.Kind {
	case walker.KindFile:
		m.Captured++
		m.Bytes += e.Size
		if e.Mode&0o111 != 0 {
			m.Executables++
		}
		if e.Size > 0 && e.Size <= maxEditable && e.Mode&0o200 != 0 &&
			slices.Contains(editableExt, strings.ToLower(path.Ext(e.Name))) {
			m.Text = append(m.Text, path.Join(dir, e.Name))
		}
	case walker.KindSymlink:
		m.Symlinks++
	}
}
