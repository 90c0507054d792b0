package osfs

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func dataSync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

func syncFilesystem(f *os.File) error {
	for {
		err := unix.Syncfs(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

// soundSyncfs are the file systems whose syncfs writes out every file's
// data and metadata (overlayfs: its upper file system's).
var soundSyncfs = map[int64]bool{unix.EXT4_SUPER_MAGIC: true, unix.XFS_SUPER_MAGIC: true,
	unix.BTRFS_SUPER_MAGIC: true, unix.F2FS_SUPER_MAGIC: true, unix.TMPFS_MAGIC: true,
	unix.OVERLAYFS_SUPER_MAGIC: true}

func soundFilesystemSync(f *os.File) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return false
	}
	return soundSyncfs[int64(st.Type)] // Type is narrower on some architectures
}

const hasFilesystemSync = true

func dirtyBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	return meminfoDirty(string(b))
}

// meminfoDirty sums the Dirty and Writeback lines of a /proc/meminfo text
// (in kB); ok is false unless it holds both, well formed.
func meminfoDirty(meminfo string) (n int64, ok bool) {
	found := 0
	for line := range strings.Lines(meminfo) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || name != "Dirty" && name != "Writeback" {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, false
		}
		n += kb << 10
		found++
	}
	return n, found == 2
}
