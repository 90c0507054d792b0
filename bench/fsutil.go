//go:build linux

package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// diskUsage sums the allocated blocks (st_blocks × 512, as du counts) of
// every entry under root.
func diskUsage(root string) (int64, error) {
	return sumTree(root, func(info fs.FileInfo) int64 {
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			return st.Blocks * 512
		}
		return 0
	})
}

// apparentSize sums the lengths of the regular files under root (du
// --apparent-size): what a store holds whatever its files have
// preallocated.
func apparentSize(root string) (int64, error) {
	return sumTree(root, func(info fs.FileInfo) int64 {
		if info.Mode().IsRegular() {
			return info.Size()
		}
		return 0
	})
}

// sumTree sums size over every entry under root.
func sumTree(root string, size func(fs.FileInfo) int64) (int64, error) {
	var total int64
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += size(info)
		return nil
	})
	return total, err
}

// fileStamp identifies one version of a file on disk: a rewrite in place
// changes its ctime, an atomic replace its inode.
type fileStamp struct {
	ino   uint64
	ctime syscall.Timespec
}

// stampTree records the stamp of every file and symlink under root,
// skipping .git directories.
func stampTree(root string) (map[string]fileStamp, error) {
	out := map[string]fileStamp{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			out[p] = fileStamp{ino: st.Ino, ctime: st.Ctim}
		}
		return nil
	})
	return out, err
}

// countChanges compares two stamp sets: written counts files and symlinks
// that are new or whose inode or ctime changed, deleted those that vanished.
// This is how files written by a restore are counted for every system.
func countChanges(before, after map[string]fileStamp) (written, deleted int) {
	for p, a := range after {
		if b, ok := before[p]; !ok || a != b {
			written++
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			deleted++
		}
	}
	return written, deleted
}

// dropCaches empties the page, dentry and inode caches (root only) so that
// the next operation runs cold.
func dropCaches() error {
	syscall.Sync()
	err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0o200)
	if errors.Is(err, fs.ErrPermission) {
		return errors.New("bench: -cold needs root to write /proc/sys/vm/drop_caches")
	}
	return err
}
