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

// A syncfs is counted on for a directory only where it reaches every file
// below it: not for procfs (whose sync does nothing), nor for "/", below
// which /proc and others are mounted. Sync itself works on any directory.
func TestFilesystemSyncIsSoundOnlyWhereItReachesEverything(t *testing.T) {
	s, err := OpenFilesystemSync(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"/proc", "/"} {
		s, err := OpenFilesystemSync(dir)
		if err != nil {
			t.Fatal(err)
		}
		if s.Sound() {
			t.Errorf("syncfs of %s counted as sound", dir)
		}
		s.Close()
	}
}

func TestMountedBelowReadsMountinfo(t *testing.T) {
	const mountinfo = `22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 0:35 / /work/ws/node\040modules rw - fuse.sshfs host: rw
`
	for dir, want := range map[string]bool{"/work/ws": true, "/work/ws/": true, "/work/w": false,
		"/work/ws/node modules": false, "/work/ws/node": false, "/": true, "/tmp": false} {
		if got := mountedBelow(dir, mountinfo); got != want {
			t.Errorf("mountedBelow(%q) = %v, want %v", dir, got, want)
		}
	}
}

func TestKernelAtLeast(t *testing.T) {
	for release, want := range map[string]bool{"6.1.0-18-amd64": true, "5.8.0": true, "5.15.0-91-generic": true,
		"5.7.19": false, "4.19.0": false, "5": false, "": false, "10.0.0": true} {
		if got := kernelAtLeast(release, 5, 8); got != want {
			t.Errorf("kernelAtLeast(%q, 5, 8) = %v, want %v", release, got, want)
		}
	}
}
