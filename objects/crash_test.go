package objects

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testbound"
)

// crashEnv names the store directory the re-executed test binary writes to
// before it is killed.
const crashEnv = "CKPT_OBJECTS_CRASH_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashEnv); dir != "" {
		if err := crashChild(dir); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(2)
		}
		select {} // wait for SIGKILL
	}
	os.Exit(m.Run())
}

// crashBlob is the content of blob i of the crash test: text from 20 bytes
// to 60 KB and, every tenth, a record larger than the pack writer's buffer
// (1.5 MiB, 3 MiB with the long tests); then (from 60, the blobs never
// synced) incompressible 100 KiB blobs whose records straddle buffer
// flushes, so the crash tears one.
func crashBlob(i int) []byte {
	if i >= 60 {
		return randomBytes(uint64(i), 100<<10+i)
	}
	if i%10 == 9 {
		return randomBytes(uint64(i), testbound.Scale(3<<19, 3<<20)+i)
	}
	return textBytes(uint64(i), 20+i*997)
}

// crashChild commits blobs 0..59 through a file-backed index (one line per
// placement, written after Sync), then writes blobs 60..99 without Sync,
// tells the parent, and waits to be killed.
func crashChild(dir string) error {
	s, err := Open(dir, newMapIndex(), Options{})
	if err != nil {
		return err
	}
	b := s.NewBatch()
	for i := range 60 {
		if _, err := b.PutBytes(crashBlob(i)); err != nil {
			return err
		}
		if i%20 != 19 {
			continue
		}
		ps, err := b.Sync()
		if err != nil {
			return err
		}
		if err := appendCommitted(dir, ps); err != nil {
			return err
		}
	}
	for i := 60; i < 100; i++ {
		if _, err := b.PutBytes(crashBlob(i)); err != nil {
			return err
		}
	}
	fmt.Println("READY")
	return nil
}

// appendCommitted durably appends placements to DIR/committed.
func appendCommitted(dir string, ps []Placement) error {
	f, err := os.OpenFile(dir+"/committed", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range ps {
		fmt.Fprintf(f, "%s %s\n", p.ID, hex.EncodeToString(p.Loc.AppendBinary(nil)))
	}
	return f.Sync()
}

func loadCommitted(t *testing.T, dir string) *mapIndex {
	idx := newMapIndex()
	data, err := os.ReadFile(dir + "/committed")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		idHex, locHex, _ := strings.Cut(line, " ")
		id, err := ParseID(idHex)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := hex.DecodeString(locHex)
		loc, err := ParseLocator(raw)
		if err != nil {
			t.Fatal(err)
		}
		idx.set(id, loc)
	}
	return idx
}

func TestCrashKeepsCommittedBlobs(t *testing.T) {
	dir := t.TempDir()
	var out io.ReadCloser
	cmd := testbound.Start(t, func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir)
		cmd.Stderr = os.Stderr
		var err error
		if out, err = cmd.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
		return cmd
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "READY\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q, %v", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); !killed(err) {
		t.Fatalf("child exited with %v, want killed", err)
	}

	idx := loadCommitted(t, dir)
	s, err := Open(dir, idx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 60 {
		mustGet(t, s, Sum(crashBlob(i)), crashBlob(i))
	}
	packs, _ := s.Packs()
	tornTail := false
	for _, n := range packs {
		var end int64
		if err := s.ScanPack(n, func(_ ID, loc Locator) error {
			end = loc.Offset + int64(loc.Length)
			return nil
		}); err != nil {
			t.Fatalf("scan pack %d after crash: %v", n, err)
		}
		fi, _ := os.Stat(s.PackPath(n))
		tornTail = tornTail || fi.Size() > end
	}
	if !tornTail {
		t.Fatal("the crash left no torn tail: the test exercises nothing")
	}
	// The store keeps working: a new save appends after the torn tail is cut.
	more := textBytes(1234, 10000)
	ids, _ := save(t, s, idx, more)
	mustGet(t, s, ids[0], more)
	for _, n := range packs {
		if err := s.ScanPack(n, func(ID, Locator) error { return nil }); err != nil {
			t.Fatalf("scan pack %d after resume: %v", n, err)
		}
	}
}
