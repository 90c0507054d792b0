//go:build unix

package blindspot

import "golang.org/x/sys/unix"

// MmapRewrite overwrites the start of file path through a shared writable
// mapping and syncs it. It closes the descriptor before writing; with
// keep it returns the mapping still in place (the kernel then reports no
// close-write event until it is unmapped), else it unmaps it.
func MmapRewrite(path string, data []byte, keep bool) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Size == 0 {
		unix.Close(fd)
		return nil, err
	}
	m, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	unix.Close(fd)
	if err != nil {
		return nil, err
	}
	copy(m, data)
	if err := unix.Msync(m, unix.MS_SYNC); err != nil {
		unix.Munmap(m)
		return nil, err
	}
	if keep {
		return m, nil
	}
	return nil, unix.Munmap(m)
}
