package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

type tasksJSON struct {
	Tasks []struct {
		Name        string `json:"name"`
		Checkpoints int    `json:"checkpoints"`
		Exclusive   int64  `json:"exclusive_bytes"`
	} `json:"tasks"`
}

type gcJSON struct {
	Policy struct {
		KeepLast int   `json:"keep_last"`
		MaxSize  int64 `json:"max_size"`
	} `json:"policy"`
	Dropped []struct {
		Task   string `json:"task"`
		Seq    uint64 `json:"seq"`
		Reason string `json:"reason"`
	} `json:"dropped"`
	Reclaimed int64 `json:"reclaimed"`
}

type verifyJSON struct {
	OK       bool `json:"ok"`
	Problems []struct {
		Checkpoint string `json:"checkpoint"`
		Path       string `json:"path"`
		Message    string `json:"message"`
	} `json:"problems"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}

func TestCLITasksDropGCStats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("shared.txt", strings.Repeat("shared by both tasks\n", 50))
	for i := range 4 {
		e.write("own.txt", strings.Repeat("x", 100+i))
		e.ok("save", "-q", "--task", "one")
		e.write("own.txt", strings.Repeat("y", 300+i))
		e.ok("save", "-q", "--task", "two")
	}
	tasks := decode[tasksJSON](t, e.ok("tasks", "--json"))
	if len(tasks.Tasks) != 2 || tasks.Tasks[1].Name != "two" || tasks.Tasks[1].Exclusive == 0 {
		t.Fatalf("tasks = %+v", tasks)
	}
	drop := decode[struct {
		Task        string   `json:"task"`
		Checkpoints []string `json:"checkpoints"`
		Exclusive   int64    `json:"exclusive_bytes"`
	}](t, e.ok("drop", "two", "--json"))
	if drop.Task != "two" || len(drop.Checkpoints) != 4 || drop.Exclusive != tasks.Tasks[1].Exclusive {
		t.Fatalf("drop = %+v", drop)
	}
	if r := e.run("", "drop", "two"); r.code != protocol.ExitUsage {
		t.Fatalf("dropping an unknown task: exit %d %s", r.code, r.stderr)
	}

	gc := decode[gcJSON](t, e.ok("gc", "--keep-last", "2", "--rewrite-below", "1", "--json"))
	if gc.Policy.KeepLast != 2 || len(gc.Dropped) != 2 || gc.Dropped[0].Seq != 1 || gc.Reclaimed < drop.Exclusive {
		t.Fatalf("gc = %+v", gc)
	}
	again := decode[gcJSON](t, e.ok("gc", "--max-size", "1MiB", "--json"))
	if again.Policy.KeepLast != 2 || again.Policy.MaxSize != 1<<20 || len(again.Dropped) != 0 {
		t.Fatalf("second gc = %+v, want the remembered keep-last", again)
	}
	if r := e.run("", "gc", "--max-size", "lots"); r.code != protocol.ExitUsage {
		t.Fatalf("bad size: exit %d", r.code)
	}
	if got := decode[verifyJSON](t, e.ok("verify", "--json")); !got.OK || got.Error != nil {
		t.Fatalf("verify = %+v", got)
	}

	stats := decode[struct {
		Packs       int     `json:"pack_count"`
		Checkpoints int     `json:"checkpoints"`
		Logical     int64   `json:"logical_bytes"`
		Dedup       float64 `json:"dedup_ratio"`
		Compression float64 `json:"compression_ratio"`
		Tasks       []struct {
			Name string `json:"name"`
		} `json:"tasks"`
	}](t, e.ok("stats", "--json"))
	if stats.Checkpoints != 2 || stats.Packs == 0 || stats.Dedup <= 1 || stats.Compression <= 1 || len(stats.Tasks) != 1 {
		t.Fatalf("stats = %+v", stats)
	}
	if out := e.ok("stats"); !strings.Contains(out, "dedup ratio") {
		t.Fatalf("stats output:\n%s", out)
	}
}

func TestCLIVerifyCorruptionExit5(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	content := strings.Repeat("0123456789abcdef", 64)
	e.write("src/data.bin", content)
	e.ok("save", "-q")
	packs, _ := filepath.Glob(filepath.Join(e.store, "packs", "*.pack"))
	b, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-5] ^= 1 // inside the last record written: the file's content
	if err := os.WriteFile(packs[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "verify", "--json")
	v := decode[verifyJSON](t, r.stdout)
	if r.code != protocol.ExitCorrupted || v.OK || v.Error == nil || v.Error.Code != protocol.ExitCorrupted || len(v.Problems) == 0 {
		t.Fatalf("verify of a flipped byte: exit %d %s", r.code, r.stdout)
	}
	if p := v.Problems[0]; p.Path != "src/data.bin" || p.Checkpoint == "" {
		t.Fatalf("problem = %+v, want the path and checkpoint", p)
	}
	r = e.run("", "verify")
	if r.code != protocol.ExitCorrupted || !strings.Contains(r.stdout, "src/data.bin") || !strings.HasPrefix(r.stderr, "ckpt: ") {
		t.Fatalf("human verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "verify", "--quick"); r.code != 0 {
		t.Fatalf("quick verify re-hashed content: exit %d %s", r.code, r.stderr)
	}
	os.Remove(packs[0])
	if r := e.run("", "verify", "--quick"); r.code != protocol.ExitCorrupted || !strings.Contains(r.stdout, "missing") {
		t.Fatalf("verify of a missing pack: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestCLIGCWhileSaveWaits runs gc and saves at once: whichever holds the
// lock first, the other waits for it, and the store verifies afterwards.
func TestCLIGCWhileSaveWaits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 6 {
		e.write("f.txt", strings.Repeat("v", 200+i))
		e.ok("save", "-q")
	}
	var wg sync.WaitGroup
	results := make([]result, 3)
	for i, args := range [][]string{{"gc", "--keep-last", "1"}, {"save", "--allow-empty", "-q"}, {"gc"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.run("", args...)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("process %d: exit %d %s", i, r.code, r.stderr)
		}
	}
	e.ok("verify")
}

// A restore the store cannot give the content of (a damaged pack) fails
// with exit 5 and says it was abandoned; the commands after it work, cold
// and through a live server, where its journal used to stop every write.
func TestCLIRestoreOfDamagedContentIsAbandoned(t *testing.T) {
	t.Parallel()
	for _, served := range []bool{false, true} {
		t.Run(fmt.Sprintf("served=%v", served), func(t *testing.T) {
			e := newEnv(t)
			content := make([]byte, 4096) // incompressible: stored as it is
			rand.NewChaCha8([32]byte{1}).Read(content)
			e.write("src/data.bin", string(content))
			e.ok("save", "-q", "-m", "one")
			e.write("src/data.bin", "changed\n")
			e.ok("save", "-q", "-m", "two")
			packs, _ := filepath.Glob(filepath.Join(e.store, "packs", "*.pack"))
			b, err := os.ReadFile(packs[0])
			if err != nil {
				t.Fatal(err)
			}
			i := bytes.Index(b, content[:64])
			if i < 0 {
				t.Fatal("the first version is not stored as it is")
			}
			b[i+2000] ^= 1
			if err := os.WriteFile(packs[0], b, 0o600); err != nil {
				t.Fatal(err)
			}
			if served {
				e.listenServer()
			}
			r := e.run("", "restore", "@1")
			if r.code != protocol.ExitCorrupted || !strings.Contains(r.stderr, "abandoned") || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("restore of damaged content: exit %d %q", r.code, r.stderr)
			}
			e.write("new.txt", "new work\n")
			if out := e.ok("save", "-m", "after"); !strings.Contains(out, "1 added") {
				t.Fatalf("save after the abandoned restore: %q", out)
			}
		})
	}
}
