package engine

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
)

// pcFiles is the workspace the power-cut scenarios start from: text, a
// file in a nested directory and one of incompressible bytes large enough
// to fill several pack buffers.
func pcFiles() map[string]string {
	rng := rand.New(rand.NewPCG(26, 1))
	noise := make([]byte, 200<<10)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	return map[string]string{
		"README.md":        "power cut\n",
		"src/main.go":      "package main\n\nfunc main() {}\n",
		"src/lib/lib.go":   strings.Repeat("package lib // line\n", 300),
		"assets/noise.bin": string(noise),
	}
}

// pcEdit changes a file, adds one and removes one.
var pcEdit = map[string]string{"src/main.go": "package main\n\nfunc main() { println(2) }\n", "src/new.go": "package main // new\n", "README.md": ""}

func powerCutScenarios() []pcScenario {
	ctx := context.Background()
	saveFirst := func(w *pcWorld, e *Engine) { w.save(e, DefaultTask, SaveOptions{Message: "first"}) }
	saveEdit := func(w *pcWorld, e *Engine) {
		saveFirst(w, e)
		w.write(pcEdit)
		w.save(e, DefaultTask, SaveOptions{Message: "edit"})
	}
	restoreFirst := func(w *pcWorld, e *Engine) {
		w.restored = &pcRestore{before: maps.Clone(w.files), target: pcFiles()}
		if _, err := e.Restore(ctx, "@1", RestoreOptions{}); err != nil {
			w.t.Fatal(err)
		}
		w.files = pcFiles()
	}
	return []pcScenario{
		{name: "first-save", files: pcFiles(), run: saveFirst},
		{name: "edit-save", files: pcFiles(), setup: saveFirst, run: func(w *pcWorld, e *Engine) {
			w.write(pcEdit)
			w.save(e, DefaultTask, SaveOptions{Message: "edit"})
		}},
		{name: "save-with-auto-gc", files: pcFiles(), setup: func(w *pcWorld, e *Engine) {
			saveFirst(w, e)
			w.write(map[string]string{"src/second.go": "package main // 2\n"})
			w.save(e, DefaultTask, SaveOptions{Message: "second"})
			if err := e.SetRetention(ctx, RetentionPolicy{KeepLast: 1, MaxSize: 1}); err != nil {
				w.t.Fatal(err)
			}
		}, run: func(w *pcWorld, e *Engine) {
			// The save's automatic gc may drop every earlier checkpoint.
			w.forget(func(record) bool { return false })
			w.write(pcEdit)
			w.save(e, DefaultTask, SaveOptions{Message: "over the cap"})
		}},
		{name: "restore", files: pcFiles(), setup: saveEdit, run: restoreFirst},
		// The journal's file left by a restore there and back: the cut
		// restore writes over it in place.
		{name: "restore-again", files: pcFiles(), setup: func(w *pcWorld, e *Engine) {
			saveEdit(w, e)
			for _, ref := range []string{"@1", "@2"} {
				if _, err := e.Restore(ctx, ref, RestoreOptions{NoBackup: true}); err != nil {
					w.t.Fatal(err)
				}
			}
		}, run: restoreFirst},
		{name: "drop-and-gc", files: pcFiles(), setup: func(w *pcWorld, e *Engine) {
			saveFirst(w, e)
			w.write(pcEdit)
			w.save(e, "other", SaveOptions{Message: "other task"})
		}, run: func(w *pcWorld, e *Engine) {
			w.forget(func(r record) bool { return r.task != "other" })
			if _, err := e.Drop(ctx, "other"); err != nil {
				w.t.Fatal(err)
			}
			if _, err := e.GC(ctx, GCOptions{RewriteBelow: 1}); err != nil {
				w.t.Fatal(err)
			}
		}},
		{name: "recompression", files: pcFiles(), opts: Options{DeferCompression: true}, setup: saveFirst,
			run: func(w *pcWorld, e *Engine) {
				if _, err := e.Recompress(ctx); err != nil {
					w.t.Fatal(err)
				}
			}},
		{name: "push", files: pcFiles(), setup: func(w *pcWorld, e *Engine) {
			saveFirst(w, e)
			w.remote = w.t.TempDir()
			if err := e.AddRemote(ctx, "origin", remote.FileURL(w.remote)); err != nil {
				w.t.Fatal(err)
			}
		}, run: func(w *pcWorld, e *Engine) {
			pcPush(w.t, w, e)
		}, after: pcPush},
	}
}

// pcPush pushes the default task to the world's remote.
func pcPush(t *testing.T, w *pcWorld, e *Engine) {
	b, err := remote.OpenDir(w.remote)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := e.Push(context.Background(), b, PushOptions{Remote: "origin"}); err != nil {
		t.Fatalf("push: %v", err)
	}
}

// concurrentSaves saves two tasks at once, three checkpoints each, each
// with a state blob of its own so that both write packs.
var concurrentSaves = pcScenario{name: "concurrent-saves", files: pcFiles(),
	setup: func(w *pcWorld, e *Engine) { w.save(e, DefaultTask, SaveOptions{Message: "first"}) },
	run: func(w *pcWorld, e *Engine) {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, task := range []string{"a", "b"} {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(i), 2))
				for n := range 3 {
					state := make([]byte, 48<<10)
					for j := range state {
						state[j] = byte(rng.Uint32())
					}
					res, err := e.Save(context.Background(), SaveOptions{Task: task, AllowEmpty: true,
						Message: fmt.Sprintf("%s %d", task, n), State: strings.NewReader(string(state))})
					if err != nil {
						errs[i] = err
						return
					}
					w.report(record{id: res.ID, task: res.Task, seq: res.Seq, files: maps.Clone(w.files)})
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				w.t.Fatal(err)
			}
		}
	}}
