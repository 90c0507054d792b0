//go:build linux

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/ckpt/ckpt/engine"
)

// workerResult is what a worker prints: the operation's duration measured
// from engine.Open to Close, and what the engine reported.
type workerResult struct {
	Nanos   int64  `json:"ns"`
	ID      string `json:"id,omitempty"`
	Files   int    `json:"files,omitempty"`
	Written int    `json:"written"`
	Deleted int    `json:"deleted"`
}

// runWorker performs one library operation in this process and prints its
// workerResult as JSON on stdout.
func runWorker(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	op := fs.String("op", "", "save, restore, diff or recompress")
	ws := fs.String("ws", "", "workspace")
	store := fs.String("store", "", "store directory")
	msg := fs.String("msg", "", "save: checkpoint message")
	from := fs.String("from", "", "restore: target; diff: old side")
	to := fs.String("to", "", "diff: new side")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the operation to this file")
	heapprofile := fs.String("heapprofile", "", "write a heap profile taken near the operation's peak heap to this file")
	deferred := fs.Bool("defer-compression", false, "open the engine with DeferCompression (a first save stores raw; op recompress compresses)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *heapprofile != "" {
		stop := watchHeap(*heapprofile)
		defer stop()
	}
	start := time.Now()
	e, err := engine.Open(ctx, *ws, engine.Options{StoreDir: *store, Profile: "cline", DeferCompression: *deferred})
	if err != nil {
		return err
	}
	res, err := workerOp(ctx, e, *op, *msg, *from, *to)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	res.Nanos = time.Since(start).Nanoseconds()
	return json.NewEncoder(os.Stdout).Encode(res)
}

// workerOp runs the operation itself on an open engine.
func workerOp(ctx context.Context, e *engine.Engine, op, msg, from, to string) (workerResult, error) {
	switch op {
	case "save":
		r, err := e.Save(ctx, engine.SaveOptions{Message: msg})
		if err != nil {
			return workerResult{}, err
		}
		return workerResult{ID: r.ID.String()}, nil
	case "restore":
		r, err := e.Restore(ctx, from, engine.RestoreOptions{})
		if err != nil {
			return workerResult{}, err
		}
		return workerResult{Written: len(r.Written), Deleted: len(r.Deleted)}, nil
	case "recompress":
		_, err := e.Recompress(ctx)
		return workerResult{}, err
	case "diff":
		d, err := e.Diff(ctx, from, to, engine.DiffOptions{})
		if err != nil {
			return workerResult{}, err
		}
		for _, c := range d.Changes {
			for _, after := range []bool{false, true} {
				if _, err := d.Content(c, after); err != nil {
					return workerResult{}, err
				}
			}
		}
		return workerResult{Files: len(d.Changes)}, nil
	}
	return workerResult{}, fmt.Errorf("worker: unknown operation %q", op)
}

// watchHeap samples the live heap every 50 ms and, each time it grows 10%
// past the largest seen, rewrites the heap profile at path, so the file ends
// up holding a profile taken near the peak. The returned stop function ends
// the sampling.
func watchHeap(path string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var peak uint64
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc < peak+peak/10 {
				continue
			}
			peak = ms.HeapAlloc
			if f, err := os.Create(path); err == nil {
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}()
	return func() { close(done); <-finished }
}
