package osfs

import "testing"

func TestMeminfoDirtySumsDirtyAndWriteback(t *testing.T) {
	const meminfo = "MemTotal:       24604764 kB\nDirty:              1996 kB\nWriteback:            12 kB\nWritebackTmp:          7 kB\n"
	if n, ok := meminfoDirty(meminfo); !ok || n != (1996+12)<<10 {
		t.Fatalf("meminfoDirty = %d, %v; want %d", n, ok, (1996+12)<<10)
	}
	for _, bad := range []string{"Dirty: 5 kB\n", "Dirty: x kB\nWriteback: 0 kB\n", ""} {
		if _, ok := meminfoDirty(bad); ok {
			t.Errorf("meminfoDirty(%q) is ok", bad)
		}
	}
}

func TestDirtyBytesReadsThisSystemsFigure(t *testing.T) {
	if _, ok := DirtyBytes(); !ok {
		t.Fatal("DirtyBytes cannot read /proc/meminfo")
	}
}

// A syncfs flushes a file system that keeps its files (here the test's
// temporary directory, on this machine's disk or a tmpfs), and is not
// counted on where the file system's own sync does nothing (procfs here,
// a FUSE mount elsewhere).
func TestFilesystemSyncIsSoundWhereSyncfsWritesEverything(t *testing.T) {
	s, err := OpenFilesystemSync(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Sync(); err != nil || !s.Sound() {
		t.Fatalf("temporary directory: Sync %v, Sound %v", err, s.Sound())
	}
	proc, err := OpenFilesystemSync("/proc")
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Close()
	if proc.Sound() {
		t.Fatal("procfs's syncfs counted as sound")
	}
}
