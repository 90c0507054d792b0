package engine

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/testbound"
)

// The crash loop's size. CI runs the defaults; a long run raises them, e.g.
//
//	go test ./engine -run '^TestCrashLoop$' -crashloop.kills=500 -crashloop.files=2000 -v
var (
	crashLoopKills = flag.Int("crashloop.kills", 12, "SIGKILLs the crash loop delivers")
	crashLoopFiles = flag.Int("crashloop.files", 80, "files in the crash loop's workspace")
	crashLoopSize  = flag.Int("crashloop.filesize", 32<<10, "largest file of the crash loop's workspace, in bytes")
	crashLoopSeed  = flag.Uint64("crashloop.seed", 1, "seed of the crash loop's choices")
)

// crashLoopEnv carries "op|store|workspace|arg" to the child process.
const crashLoopEnv = "CKPT_TEST_CRASHLOOP"

// crashLoopKeep is the retention the loop's gc applies.
const crashLoopKeep = 4

// TestCrashLoopChild is the child half of TestCrashLoop: it runs one
// operation, which the parent kills at a random moment.
func TestCrashLoopChild(t *testing.T) {
	t.Parallel()
	spec := os.Getenv(crashLoopEnv)
	if spec == "" {
		t.Skip("runs only as the child process of TestCrashLoop")
	}
	parts := strings.SplitN(spec, "|", 4)
	op, store, ws, arg := parts[0], parts[1], parts[2], parts[3]
	ctx := context.Background()
	e, err := Open(ctx, ws, Options{StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	switch op {
	case "save":
		_, err = e.Save(ctx, SaveOptions{Message: arg})
	case "restore":
		_, err = e.Restore(ctx, arg, RestoreOptions{NoBackup: true, Force: true})
	case "gc":
		_, err = e.GC(ctx, GCOptions{Policy: &RetentionPolicy{KeepLast: crashLoopKeep}, RewriteBelow: 1})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// crashWorkload is the workspace content of each generation: files whose
// presence and content change every few generations, staggered so each
// generation changes about a fifth of them.
type crashWorkload struct {
	ws       string
	files    int
	maxSize  int
	writtenG int // the generation on disk, -1 when the workspace holds something else
}

// state returns the content of every file of generation g.
func (w *crashWorkload) state(g int) map[string][]byte {
	out := map[string][]byte{}
	for i := range w.files {
		if (i*7+g/3)%11 == 0 {
			continue // absent in this generation
		}
		v := uint64((g + i%5) / 5)
		rng := rand.NewChaCha8([32]byte{byte(i), byte(i >> 8), byte(v), byte(v >> 8), byte(v >> 16)})
		b := make([]byte, 1+int(uint64(i)*2654435761+v*40503)%w.maxSize)
		rng.Read(b)
		out[fmt.Sprintf("d%d/f%d", i%13, i)] = b
	}
	return out
}

// write makes the workspace exactly generation g.
func (w *crashWorkload) write(t *testing.T, g int) {
	t.Helper()
	if w.writtenG == g {
		return
	}
	want := w.state(g)
	have := w.read(t)
	for rel := range have {
		if _, ok := want[rel]; !ok {
			if err := os.Remove(filepath.Join(w.ws, rel)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for rel, b := range want {
		if string(have[rel]) == string(b) {
			continue
		}
		p := filepath.Join(w.ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.writtenG = g
}

// read returns every regular file of the workspace.
func (w *crashWorkload) read(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(w.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(w.ws, p)
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// crashLoopStats counts what the loop did per operation.
type crashLoopStats struct {
	kills, completed map[string]int
	restores         int
}

// TestCrashLoop saves, restores and collects in child processes and
// SIGKILLs each at a random moment of its expected duration; after every
// child it verifies the store and restores every checkpoint still listed,
// comparing the workspace byte for byte with the generation it captured.
func TestCrashLoop(t *testing.T) {
	testbound.Long(t, "kills a process that saves, restores and collects, again and again")
	t.Parallel()
	ws := t.TempDir()
	store := filepath.Join(t.TempDir(), "store")
	w := &crashWorkload{ws: ws, files: *crashLoopFiles, maxSize: *crashLoopSize, writtenG: -1}
	rng := rand.New(rand.NewPCG(*crashLoopSeed, 11))
	// The expected duration of each operation, learnt from the children
	// that finished before their kill.
	expect := map[string]time.Duration{}
	st := crashLoopStats{kills: map[string]int{}, completed: map[string]int{}}
	gen, start := 0, time.Now()
	var listed []string // "id gen" of the checkpoints listed after the last check
	for total := 0; total < *crashLoopKills; {
		op, arg := "save", ""
		switch r := rng.IntN(4); {
		case r == 0 && len(listed) > 0:
			op, arg = "restore", strings.Fields(listed[rng.IntN(len(listed))])[0]
		case r == 1 && len(listed) > 0:
			op = "gc"
		default:
			gen++
			w.write(t, gen)
			arg = "gen-" + strconv.Itoa(gen)
		}
		if op != "save" {
			w.writtenG = -1 // the child changes the workspace (restore) or the check will
		}
		// One run in five (and the first of each operation) is left to
		// finish, to learn how long the operation takes.
		delay := time.Duration(-1)
		if st.completed[op] > 0 && rng.IntN(5) > 0 {
			delay = time.Duration(rng.Int64N(int64(expect[op])*11/10 + 1))
		}
		killed, took := runCrashChild(t, op, store, ws, arg, delay)
		if killed {
			st.kills[op]++
			total++
		} else {
			st.completed[op]++
			expect[op] = took
		}
		listed = checkCrashLoop(t, store, w, &st, fmt.Sprintf("after %s %s (killed: %v)", op, arg, killed))
	}
	t.Logf("crash loop: %d files, %v; kills %v, completed %v; %d checkpoint restores checked byte-exact",
		w.files, time.Since(start).Round(time.Second), st.kills, st.completed, st.restores)
}

// runCrashChild runs op in a child process and kills it after delay
// (never when delay is negative) unless it finished first; it reports
// whether it killed it and how long it ran.
func runCrashChild(t *testing.T, op, store, ws, arg string, delay time.Duration) (bool, time.Duration) {
	t.Helper()
	var out strings.Builder
	var begin time.Time
	cmd := testbound.Start(t, func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashLoopChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%s|%s", crashLoopEnv, op, store, ws, arg))
		out.Reset()
		cmd.Stdout, cmd.Stderr = &out, &out
		begin = time.Now()
		return cmd
	})
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(delay)
	defer timer.Stop()
	if delay < 0 {
		timer.Stop()
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s %s: child failed: %v\n%s", op, arg, err, out.String())
		}
		return false, time.Since(begin)
	case <-timer.C:
		hardKill(cmd.Process)
		err := <-done
		if err == nil {
			return false, time.Since(begin) // it finished as the kill was sent
		}
		if !hardKilled(err) {
			t.Fatalf("%s %s: child failed before its kill: %v\n%s", op, arg, err, out.String())
		}
		return true, time.Since(begin)
	}
}

// checkCrashLoop verifies the store, restores every listed checkpoint and
// compares the workspace with the generation the checkpoint's message names.
// It returns the listed checkpoints as "id gen".
func checkCrashLoop(t *testing.T, store string, w *crashWorkload, st *crashLoopStats, what string) []string {
	t.Helper()
	ctx := context.Background()
	e, err := Open(ctx, w.ws, Options{StoreDir: store})
	if err != nil {
		t.Fatalf("%s: open: %v", what, err)
	}
	defer e.Close()
	if rep, err := e.Verify(ctx, VerifyOptions{}); err != nil {
		t.Fatalf("%s: verify: %v %+v", what, err, rep)
	}
	log, err := e.List(ctx, DefaultTask)
	if err != nil {
		t.Fatalf("%s: list: %v", what, err)
	}
	var listed []string
	for _, c := range log.Checkpoints {
		g, err := strconv.Atoi(strings.TrimPrefix(c.Message, "gen-"))
		if err != nil {
			t.Fatalf("%s: checkpoint %s has message %q", what, c.ID.Short(), c.Message)
		}
		if _, err := e.Restore(ctx, c.ID.String(), RestoreOptions{NoBackup: true, Force: true}); err != nil {
			t.Fatalf("%s: restore %s (gen %d): %v", what, c.ID.Short(), g, err)
		}
		w.writtenG = -1
		got, want := w.read(t), w.state(g)
		if len(got) != len(want) {
			t.Fatalf("%s: restore of gen %d: %d files, want %d", what, g, len(got), len(want))
		}
		for rel, b := range want {
			if string(got[rel]) != string(b) {
				t.Fatalf("%s: restore of gen %d: %s differs", what, g, rel)
			}
		}
		st.restores++
		listed = append(listed, c.ID.String()+" "+strconv.Itoa(g))
	}
	return listed
}
