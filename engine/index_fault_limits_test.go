package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/internal/testbound"
)

// limitChildEnv names the environment variable that turns a run of this
// test binary into the child of a resource-limit test: "<test>|<ws>|<store>".
const limitChildEnv = "CKPT_ENGINE_LIMIT_CHILD"

// limitChild returns the workspace and store of a child run of test, or
// ok=false in the parent.
func limitChild(test string) (ws, store string, ok bool) {
	parts := strings.Split(os.Getenv(limitChildEnv), "|")
	if len(parts) != 3 || parts[0] != test {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// runLimitChild runs test in a child process (argv prefix before the test
// binary, e.g. setpriv) and fails on its failure or after testbound.Hang.
func runLimitChild(t *testing.T, binary, test, ws, store string, prefix ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testbound.Hang)
	defer cancel()
	args := append(prefix, binary, "-test.run=^"+test+"$", "-test.v")
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), limitChildEnv+"="+test+"|"+ws+"|"+store)
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if ctx.Err() != nil {
		t.Fatalf("child still running after %v:\n%s", testbound.Hang, out)
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("child did not run %s:\n%s", test, out)
	}
}

// saveIn opens ws's store, saves, and closes.
func saveIn(ws, store, msg string) error {
	e, err := Open(context.Background(), ws, Options{StoreDir: store})
	if err != nil {
		return err
	}
	_, err = e.Save(context.Background(), SaveOptions{Message: msg})
	return errors.Join(err, e.Close())
}

// checkFirstCheckpoint verifies a copy of store and reads @1 back.
func checkFirstCheckpoint(t *testing.T, ws, store string, files map[string]string) {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "store")
	copyLiveStore(t, store, cp)
	e, err := Open(context.Background(), ws, Options{StoreDir: cp, ReadOnly: true})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer e.Close()
	mustVerify(t, e)
	id, err := e.Resolve(context.Background(), DefaultTask, "@1")
	if err != nil {
		t.Fatal(err)
	}
	checkContents(t, e, []record{{id: id, task: DefaultTask, seq: 1, files: files}})
}

func TestReadOnlyStoreRefusesWritersAtOnce(t *testing.T) {
	needDirPermissions(t)
	t.Parallel()
	const name = "TestReadOnlyStoreRefusesWritersAtOnce"
	if ws, store, ok := limitChild(name); ok {
		err := saveIn(ws, store, "refused")
		t.Logf("save: %v", err)
		if err == nil || !strings.HasPrefix(err.Error(), "store is not writable: ") || !errors.Is(err, os.ErrPermission) {
			t.Fatalf("save into a read-only store: %v, want \"store is not writable: …\"", err)
		}
		e, err := Open(context.Background(), ws, Options{StoreDir: store, ReadOnly: true})
		if err != nil {
			t.Fatalf("read-only open of a read-only store: %v", err)
		}
		defer e.Close()
		if log, err := e.List(context.Background(), DefaultTask); err != nil || len(log.Checkpoints) != 1 {
			t.Fatalf("list: %v %v", log, err)
		}
		return
	}
	base, err := os.MkdirTemp("", "ckpt-readonly-")
	if err != nil {
		t.Fatal(err)
	}
	ws, store := filepath.Join(base, "ws"), filepath.Join(base, "store")
	ro := []string{store, filepath.Join(store, "index"), filepath.Join(store, "packs")}
	t.Cleanup(func() {
		for _, d := range ro {
			os.Chmod(d, 0o700)
		}
		os.RemoveAll(base)
	})
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a"), []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := saveIn(ws, store, "one"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a"), []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	binary, prefix := unprivileged(t, base)
	for _, d := range append([]string{base}, ro...) {
		mode := os.FileMode(0o555)
		if d == base {
			mode = 0o755
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
	}
	// The lock files may not be written either (a store another user
	// lets others read): a lock needs only a descriptor to read through.
	for _, f := range []string{filepath.Join(store, "lock"), filepath.Join(store, "index", "LOCK")} {
		if err := os.Chmod(f, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	runLimitChild(t, binary, name, ws, store, prefix...)
}

// fileSizeLimit is the file-size limit (RLIMIT_FSIZE) the save of
// TestFileSizeLimitOnTheIndexFailsSaveCleanly runs under: above what the
// store's first save wrote to any file, below what a save of a few
// hundred files writes to the index's log.
const fileSizeLimit = 32 << 10

func TestFileSizeLimitOnTheIndexFailsSaveCleanly(t *testing.T) {
	t.Parallel()
	const name = "TestFileSizeLimitOnTheIndexFailsSaveCleanly"
	limitFileSize := fileSizeLimiter(t)
	if ws, store, ok := limitChild(name); ok {
		// Go ignores SIGXFSZ, so a write past the limit fails with EFBIG.
		limitFileSize(fileSizeLimit)
		err := saveIn(ws, store, "too big")
		t.Logf("save: %v", err)
		if !errors.Is(err, syscall.EFBIG) || !strings.Contains(err.Error(), "file too large") {
			t.Fatalf("save past the file-size limit: %v, want \"file too large\"", err)
		}
		return
	}
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	files := map[string]string{"a": "one"}
	if err := os.WriteFile(filepath.Join(ws, "a"), []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := saveIn(ws, store, "one"); err != nil {
		t.Fatal(err)
	}
	sameContentFiles(t, ws, 300) // their entries outgrow fileSizeLimit in the index's log
	runLimitChild(t, os.Args[0], name, ws, store)
	if err := os.RemoveAll(filepath.Join(ws, "many")); err != nil {
		t.Fatal(err)
	}
	checkFirstCheckpoint(t, ws, store, files)
}

func TestFullFilesystemFailsSaveCleanly(t *testing.T) {
	testbound.Long(t, "saves 12,000 files onto a full tmpfs")
	t.Parallel()
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	if err := os.Mkdir(store, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", store).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root and mount rights): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", store).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", store, err, out)
		}
	})
	files := map[string]string{"a": "one"}
	if err := os.WriteFile(filepath.Join(ws, "a"), []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := saveIn(ws, store, "one"); err != nil {
		t.Fatal(err)
	}
	sameContentFiles(t, ws, 12000)
	var err error
	testbound.Within(t, testbound.Hang, func() { err = saveIn(ws, store, "fills the disk") })
	t.Logf("save: %v", err)
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("save onto a full file system: %v, want \"no space left\"", err)
	}
	if err := os.RemoveAll(filepath.Join(ws, "many")); err != nil {
		t.Fatal(err)
	}
	checkFirstCheckpoint(t, ws, store, files)
}

// sameContentFiles writes n files of one content under ws/many: the
// packs gain a single blob while the index gains a record per file.
func sameContentFiles(t *testing.T, ws string, n int) {
	t.Helper()
	for i := range n {
		p := filepath.Join(ws, "many", fmt.Sprintf("d%03d", i/200), fmt.Sprintf("file-with-a-long-name-%06d", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("same"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// unprivileged returns how to run this test binary as a user whom
// permission bits bind: as it is, when not root; as root (which ignores
// them), a copy of it in base, run by setpriv as nobody, base and all in
// it made nobody's.
func unprivileged(t *testing.T, base string) (binary string, prefix []string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return os.Args[0], nil
	}
	binary = filepath.Join(base, "engine.test")
	copyFile(t, os.Args[0], binary)
	chownTree(t, base, 65534)
	return binary, []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

func chownTree(t *testing.T, root string, id int) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, id, id)
	})
	if err != nil {
		t.Fatal(err)
	}
}
