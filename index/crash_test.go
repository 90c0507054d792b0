package index

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/objects"
)

const (
	crashDirEnv = "CKPT_INDEX_CRASH_DIR"
	crashReady  = "batch-b-built"
)

// crashChild commits batch A, fills batch B, tells the parent it is ready
// and then waits to be killed with B uncommitted.
func crashChild(dir string) error {
	db, err := Open(dir, Options{})
	if err != nil {
		return err
	}
	a := db.NewBatch()
	if _, err := a.PutCheckpoint(Checkpoint{Task: "t", Seq: 1, Kind: KindSave, Message: "A"}); err != nil {
		return err
	}
	a.SetConfig("batch", "A")
	if err := a.Commit(); err != nil {
		return err
	}
	b := db.NewBatch()
	for i := range 10000 {
		b.PutLocator(objects.Sum(fmt.Appendf(nil, "b%d", i)), objects.Locator{Pack: 2, Offset: int64(i)})
	}
	if _, err := b.PutCheckpoint(Checkpoint{Task: "t", Seq: 2, Kind: KindSave, Message: "B"}); err != nil {
		return err
	}
	b.SetConfig("batch", "B")
	fmt.Println(crashReady)
	_, err = io.Copy(io.Discard, os.Stdin) // block until killed
	return err
}

func TestCrashBeforeCommit(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		if err := crashChild(dir); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := t.TempDir()
	var stdin io.WriteCloser
	var stdout io.ReadCloser
	var stderr strings.Builder
	cmd := testbound.Start(t, func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashBeforeCommit$")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if stdout, err = cmd.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
		stderr.Reset()
		cmd.Stderr = &stderr
		return cmd
	})
	defer stdin.Close()
	ready := false
	var out strings.Builder
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		if sc.Text() == crashReady {
			ready = true
			break
		}
		out.WriteString(sc.Text() + "\n")
	}
	if !ready {
		_ = cmd.Wait()
		t.Fatalf("child exited before building batch B:\n%s%s", out.String(), stderr.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var exitErr *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exitErr) {
		t.Fatalf("child: %v, want killed", err)
	}

	db := openTest(t, dir)
	defer db.Close()
	if v, ok, err := db.Config("batch"); err != nil || !ok || v != "A" {
		t.Fatalf("after crash, config batch = %q, %v, %v; want A", v, ok, err)
	}
	ids, err := db.TaskCheckpoints("t")
	if err != nil || len(ids) != 1 {
		t.Fatalf("after crash, task checkpoints = %v, %v; want only A's", ids, err)
	}
	if c, err := db.Checkpoint(ids[0]); err != nil || c.Message != "A" {
		t.Fatalf("after crash, checkpoint = %+v, %v", c, err)
	}
	n := 0
	if err := db.EachLocator(func(objects.ID, objects.Locator) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("after crash, %d locators of batch B are visible (%v)", n, err)
	}
}
