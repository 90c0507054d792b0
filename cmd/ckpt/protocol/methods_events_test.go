package protocol

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine"
)

// The engine's one scan-progress callback reaches exactly the requests
// running a scan, and none after they end.
func TestScanHubReachesRunningRequestsOnly(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]scanValue{}
	reporter := func(name string) context.Context {
		return withReporter(context.Background(), func(v any) {
			mu.Lock()
			got[name] = append(got[name], v.(scanValue))
			mu.Unlock()
		})
	}
	h := &ScanHub{}
	endA := h.add(reporter("a"))
	endB := h.add(reporter("b"))
	h.Send(engine.ScanProgress{Files: 10, BytesHashed: 100, Elapsed: time.Second})
	endA()
	h.Send(engine.ScanProgress{Files: 20})
	endB()
	h.Send(engine.ScanProgress{Files: 30})
	mu.Lock()
	defer mu.Unlock()
	if len(got["a"]) != 1 || got["a"][0] != (scanValue{Phase: "scan", Files: 10, BytesHashed: 100, ElapsedMs: 1000}) {
		t.Errorf("a got %+v", got["a"])
	}
	if len(got["b"]) != 2 || got["b"][1].Files != 20 {
		t.Errorf("b got %+v", got["b"])
	}
}
