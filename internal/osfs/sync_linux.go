package osfs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

func dataSync(f *os.File) error { return dataSyncFd(int(f.Fd())) }

func dataSyncFd(fd int) error {
	for {
		err := unix.Fdatasync(fd)
		if err != unix.EINTR {
			return err
		}
	}
}

// syncFd is SyncFd: fsync(2), since fdatasync may leave a mode change unwritten.
func syncFd(fd int) error { return fsyncFd(fd) }

func syncFilesystem(f *os.File) error {
	for {
		err := unix.Syncfs(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

// soundSyncfs are the file systems whose syncfs writes out every file's
// data and metadata.
var soundSyncfs = map[int64]bool{unix.EXT4_SUPER_MAGIC: true, unix.XFS_SUPER_MAGIC: true,
	unix.BTRFS_SUPER_MAGIC: true, unix.F2FS_SUPER_MAGIC: true, unix.TMPFS_MAGIC: true}

// syncfsReportsErrors: from Linux 5.8 a syncfs reports the write-back
// errors raised since its descriptor was opened; before, none.
var syncfsReportsErrors = sync.OnceValue(func() bool {
	var u unix.Utsname
	return unix.Uname(&u) == nil && kernelAtLeast(unix.ByteSliceToString(u.Release[:]), 5, 8)
})

func soundFilesystemSync(f *os.File, dir string) bool {
	var st unix.Statfs_t
	if !syncfsReportsErrors() || unix.Fstatfs(int(f.Fd()), &st) != nil ||
		!soundSyncfs[int64(uint32(st.Type))] { // Type's width and sign vary by architecture
		return false
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	return err == nil && !mountedBelow(real, string(mounts))
}

// kernelAtLeast reports whether a kernel release ("6.1.0-18-amd64")
// is major.minor or later.
func kernelAtLeast(release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	digits := func(s string) int {
		n := 0
		for _, r := range s {
			if r < '0' || r > '9' {
				break
			}
			n = n*10 + int(r-'0')
		}
		return n
	}
	ma, mi := digits(parts[0]), digits(parts[1])
	return ma > major || ma == major && mi >= minor
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
