package walker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ckpt/ckpt/walker/ignore"
)

// devIno identifies a directory independently of the path used to reach it.
type devIno struct{ dev, ino uint64 }

// hooks inject faults in tests; nil fields mean the real system call.
type hooks struct {
	// openDir replaces openSub for subdirectories.
	openDir func(parent dirFD, name string) (dirFD, error)
	// access replaces the platform's access check (on Unix, faccessat
	// when mode bits deny access).
	access func(dirfd dirFD, name string, mode uint32) error
}

// config is everything a walk needs that does not change during it.
type config struct {
	root    string // absolute, symlink-free
	global  ignore.Set
	exclude map[devIno]bool
	maxSize int64
	workers int
	perm    permChecker
	openDir func(parent dirFD, name string) (dirFD, error)
	prune   func(rel string) bool
	replay  func(rel string) ([]Entry, []string, bool)
}

func newConfig(root string, opts *Options) (*config, error) {
	real, err := resolve(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	global, err := globalPatterns(real, opts)
	if err != nil {
		return nil, err
	}
	c := &config{
		root:    real,
		global:  global,
		exclude: make(map[devIno]bool),
		maxSize: opts.MaxFileSize,
		workers: opts.workers(),
		perm:    newPermChecker(),
		openDir: openSub,
		prune:   opts.Prune,
		replay:  opts.Replay,
	}
	if h := opts.hooks; h != nil {
		if h.openDir != nil {
			c.openDir = h.openDir
		}
		if h.access != nil {
			c.perm.access = h.access
		}
	}
	for _, d := range opts.ExcludeDirs {
		if id, err := statDir(d); err == nil {
			c.exclude[id] = true
		}
	}
	return c, nil
}

// globalPatterns collects the patterns that apply from the root down: the
// profile, the workspace repository's info/exclude and the caller's extras.
func globalPatterns(root string, opts *Options) (ignore.Set, error) {
	var s ignore.Set
	prof, err := ProfilePatterns(opts.Profile)
	if err != nil {
		return s, err
	}
	s[ignore.LayerProfile] = prof
	s[ignore.LayerExtra] = ignore.ParseStrings(opts.Extra)
	exclude, err := readInfoExclude(root)
	if err != nil {
		return s, err
	}
	s[ignore.LayerInfoExclude] = exclude
	return s, nil
}

// readInfoExclude reads root/.git/info/exclude when root/.git is a
// directory; a missing or non-regular file yields no patterns.
func readInfoExclude(root string) ([]ignore.Pattern, error) {
	gitDir := filepath.Join(root, ignore.GitDir)
	if fi, err := os.Lstat(gitDir); err != nil || !fi.IsDir() {
		return nil, nil
	}
	path := filepath.Join(gitDir, "info", "exclude")
	data, err := readPatternPath(path)
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) || errors.Is(err, fs.ErrInvalid) {
		return nil, nil // absent, or not a regular file (never block on a FIFO)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return ignore.ParseLines(data), nil
}

// NewMatcher returns an ignore.Matcher that answers, for single paths, what
// Walk would decide for the workspace at root with these options: the same
// profile, info/exclude, per-directory files and extras, .git at every
// depth, and the ExcludeDirs that lie inside root. Size caps and special
// files are not its concern. Close the Matcher when done.
func NewMatcher(root string, opts Options) (*ignore.Matcher, error) {
	real, err := resolve(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	global, err := globalPatterns(real, &opts)
	if err != nil {
		return nil, err
	}
	for _, d := range opts.ExcludeDirs {
		rd, err := resolve(d)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(real, rd)
		if err != nil || rel == "." || rel == ".." || filepath.IsAbs(rel) || len(rel) > 2 && rel[:3] == "../" {
			continue
		}
		p, _ := ignore.ParsePattern(ignore.Escape(filepath.ToSlash(rel)) + "/")
		global[ignore.LayerForced] = append(global[ignore.LayerForced], p)
	}
	return ignore.NewMatcher(real, global)
}
