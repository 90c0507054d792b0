package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testbound"
)

// gcCrashEnv carries "store|workspace|N|op" to the child process that runs
// op (crashOp) and kills itself before its Nth store-changing step.
const gcCrashEnv = "CKPT_TEST_GC_CRASH"

// crashPolicy is what the crash test collects with.
var crashPolicy = RetentionPolicy{KeepLast: 3}

// TestGCCrashChild is the child half of TestGCCrashSafety.
func TestGCCrashChild(t *testing.T) {
	t.Parallel()
	spec := os.Getenv(gcCrashEnv)
	if spec == "" {
		t.Skip("runs only as the child process of TestGCCrashSafety")
	}
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[2])
	ops := 0
	e, err := Open(context.Background(), parts[1], Options{StoreDir: parts[0], hooks: testHooks{gcStep: func(string) {
		if ops++; ops == n {
			killSelf()
		}
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := crashOp(e, parts[3]); err != nil {
		t.Fatal(err)
	}
	e.Close()
}

// crashOp runs the maintenance a crash test interrupts: "gc" collects
// with crashPolicy, "recompress" recompresses the deferred packs.
func crashOp(e *Engine, op string) error {
	if op == "recompress" {
		_, err := e.Recompress(context.Background())
		return err
	}
	_, err := e.GC(context.Background(), GCOptions{Policy: &crashPolicy, RewriteBelow: 1})
	return err
}

// TestGCCrashSafety kills a GC process before each of a spread of its
// store-changing steps (every step that is not a record copy or regroup,
// copies at the start and middle, the first and last regroup), then checks
// the store verifies, every checkpoint it still lists reads back
// byte-exact, no survivor of the policy was lost, and a second GC leaves
// exactly the survivors' records. It runs on a store whose first save
// compressed as it wrote, and on one whose first save deferred compression
// (Options.DeferCompression), which the GC then also recompresses.
func TestGCCrashSafety(t *testing.T) {
	testbound.Long(t, "kills a collecting process before each of its steps")
	t.Parallel()
	for _, deferred := range []bool{false, true} {
		t.Run(fmt.Sprintf("deferred=%v", deferred), func(t *testing.T) {
			t.Parallel()
			gcCrashSafety(t, deferred)
		})
	}
}

func gcCrashSafety(t *testing.T, deferred bool) {
	h := newHistory(t, 9, 24)
	crashTest(t, deferred, "gc", Options{Now: h.now, DeferCompression: deferred}, h)
}

// crashTest kills op (crashOp) before each of a spread of its
// store-changing steps on copies of h's store, opened with opts, and
// checks what each kill left.
func crashTest(t *testing.T, deferred bool, op string, opts Options, h *history) {
	h.f.open(opts)
	for i := range 24 {
		h.step([]string{"a", "b"}[i%2])
	}
	h.f.e.Close()
	h.f.e = nil
	template := h.f.store
	if marks, _ := filepath.Glob(filepath.Join(template, "packs", "*.raw")); (len(marks) > 0) != deferred {
		t.Fatalf("deferred=%v, yet the store's deferred packs are %v", deferred, marks)
	}
	survivors := map[ID]bool{}
	for _, task := range []string{"a", "b"} {
		var own []record
		for _, r := range h.records {
			if r.task == task {
				own = append(own, r)
			}
		}
		for _, r := range own[len(own)-crashPolicy.KeepLast:] {
			survivors[r.id] = true
		}
	}
	var kept []record
	for _, r := range h.records {
		if survivors[r.id] {
			kept = append(kept, r)
		}
	}

	ops := gcOps(t, template, h.f.ws, op)
	var points []int
	first, last := -1, -1
	for i, op := range ops {
		if op == "regroup" && first < 0 {
			first = i
		}
		if op == "regroup" {
			last = i
		}
	}
	for i, op := range ops {
		if (op != "copy" && op != "regroup") || i == 0 || i == len(ops)/2 || i == first || i == last {
			points = append(points, i+1)
		}
	}
	if op == "recompress" && !slices.Contains(ops, "delta") {
		t.Fatalf("the recompression tried no delta (steps %v)", ops)
	}
	t.Logf("%d crash points of %d steps", len(points), len(ops))
	for _, n := range points {
		store := filepath.Join(t.TempDir(), "store")
		copyDir(t, template, store)
		cmd := exec.Command(os.Args[0], "-test.run=^TestGCCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d|%s", gcCrashEnv, store, h.f.ws, n, op))
		out, err := cmd.CombinedOutput()
		if !hardKilled(err) {
			t.Fatalf("child killed before step %d (%s): %v\n%s", n, ops[n-1], err, out)
		}
		checkAfterCrash(t, store, h.f.ws, h.records, kept, fmt.Sprintf("step %d (%s)", n, ops[n-1]))
	}
}

// gcOps runs the collection once on a copy of template and returns its
// store-changing steps in order.
func gcOps(t *testing.T, template, ws, op string) []string {
	store := filepath.Join(t.TempDir(), "store")
	copyDir(t, template, store)
	var ops []string
	e, err := Open(context.Background(), ws, Options{StoreDir: store, hooks: testHooks{gcStep: func(op string) { ops = append(ops, op) }}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := crashOp(e, op); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"regroup", "sync", "commit", "remove"} {
		if !slices.Contains(ops, want) {
			t.Fatalf("the fixture's collection has no %q step: %v", want, ops)
		}
	}
	return ops
}

// checkAfterCrash opens a store a killed GC left and checks it.
func checkAfterCrash(t *testing.T, store, ws string, all, kept []record, what string) {
	t.Helper()
	e, err := Open(context.Background(), ws, Options{StoreDir: store})
	if err != nil {
		t.Fatalf("%s: open: %v", what, err)
	}
	defer e.Close()
	if rep, err := e.Verify(context.Background(), VerifyOptions{}); err != nil {
		t.Fatalf("%s: verify: %v %v", what, err, rep)
	}
	var listed []record
	for _, task := range []string{"a", "b"} {
		log, err := e.List(context.Background(), task)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range log.Checkpoints {
			i := slices.IndexFunc(all, func(r record) bool { return r.id == c.ID })
			if i < 0 {
				t.Fatalf("%s: unknown checkpoint %s listed", what, c.ID.Short())
			}
			listed = append(listed, all[i])
		}
	}
	for _, r := range kept {
		if !slices.ContainsFunc(listed, func(l record) bool { return l.id == r.id }) {
			t.Fatalf("%s: survivor %s @%d lost", what, r.id.Short(), r.seq)
		}
	}
	checkContents(t, e, listed)
	if _, err := e.GC(context.Background(), GCOptions{Policy: &crashPolicy, RewriteBelow: 1}); err != nil {
		t.Fatalf("%s: gc after the crash: %v", what, err)
	}
	sizes := packFiles(t, store)
	if got, want := sum(sizes), recordBytes(t, e, kept)+packHeaderBytes*int64(len(sizes)); got != want {
		t.Fatalf("%s: after a second gc the packs hold %d bytes, want %d", what, got, want)
	}
}

// copyDir copies the regular files of a store directory tree.
func copyDir(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, src); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
