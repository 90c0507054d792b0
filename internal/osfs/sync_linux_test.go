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
