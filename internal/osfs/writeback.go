package osfs

// StartWriteback asks the system to begin writing the n bytes of the open
// file fd at off to its device now, without waiting for it: a writer that
// will sync the file later finds most of its data already written, instead
// of all of it dirty at once (sync_file_range(2) with SYNC_FILE_RANGE_WRITE
// on Linux; nothing elsewhere). It is a hint: it guarantees nothing about
// durability, a later sync still does, and its failures are ignored.
func StartWriteback(fd uintptr, off, n int64) { startWriteback(fd, off, n) }
