package jsonrpc

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func TestThousandRequestsRunConcurrently(t *testing.T) {
	const n = 1000
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	barrier := Method("barrier", func(_ context.Context, p echoParams) (int, error) {
		arrived.Done()
		<-all // only returns once all n handlers run at the same time
		return p.N * 2, nil
	})
	p := startPeer(t, Options{Concurrency: n, MaxInFlight: n}, barrier)
	go func() {
		for i := range n {
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"barrier","params":{"n":%d}}`, i, i))
		}
	}()
	seen := make(map[string]bool, n)
	for range n {
		r := p.recv()
		var id int
		fmt.Sscan(string(r.ID), &id)
		wantResult(t, r, fmt.Sprint(id), fmt.Sprint(id*2))
		seen[string(r.ID)] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct replies, want %d", len(seen), n)
	}
}

func TestConcurrencyAndInFlightAreBounded(t *testing.T) {
	const n, workers = 1000, 3
	var running, peak atomic.Int32
	started := make(chan struct{}, n)
	release := make(chan struct{})
	work := Method("work", func(context.Context, struct{}) (bool, error) {
		now := running.Add(1)
		for {
			old := peak.Load()
			if now <= old || peak.CompareAndSwap(old, now) {
				break
			}
		}
		started <- struct{}{}
		<-release
		running.Add(-1)
		return true, nil
	})
	p := startPeer(t, Options{Concurrency: workers, MaxInFlight: 16}, work)
	go func() {
		for i := range n {
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"work"}`, i))
		}
	}()
	for range workers {
		<-started
	}
	close(release)
	for range n {
		if r := p.recv(); r.Error != nil {
			t.Fatalf("reply %+v", r.Error)
		}
	}
	if got := peak.Load(); got != workers {
		t.Fatalf("peak concurrency %d, want %d", got, workers)
	}
}
