package engine

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/ckpt/ckpt/engine/internal/save"
	"github.com/ckpt/ckpt/objects"
)

// ProgressInterval is the least time between two Options.OnProgress calls.
const ProgressInterval = 200 * time.Millisecond

// ScanProgress is a snapshot of a running scan.
type ScanProgress struct {
	Files       uint64        // files and symlinks seen so far
	BytesHashed uint64        // bytes read and hashed so far
	Elapsed     time.Duration // since the scan started
}

// progressMeter rate-limits progress reports of one scan.
type progressMeter struct {
	report func(ScanProgress)
	start  time.Time
	next   atomic.Int64 // unix ns before which nothing is reported
}

func newProgressMeter(report func(ScanProgress)) *progressMeter {
	if report == nil {
		return nil
	}
	m := &progressMeter{report: report, start: time.Now()}
	m.next.Store(m.start.Add(ProgressInterval).UnixNano())
	return m
}

// tick reports the counters if the interval has passed; at most one caller
// per interval wins the report. A nil meter does nothing.
func (m *progressMeter) tick(files, hashed uint64) {
	if m == nil {
		return
	}
	now := time.Now()
	next := m.next.Load()
	if now.UnixNano() < next || !m.next.CompareAndSwap(next, now.Add(ProgressInterval).UnixNano()) {
		return
	}
	m.report(ScanProgress{Files: files, BytesHashed: hashed, Elapsed: now.Sub(m.start)})
}

// scan hashes the workspace as capture c reads it (nil: the Engine's own;
// see saveStore), storing nothing, with this Engine's progress reports;
// base is the root of the checkpoint the workspace is measured against
// (modes are carried from it where the file system has none).
func (e *Engine) scan(ctx context.Context, c *Capture, base objects.ID) (*save.Snapshot, error) {
	st, err := e.saveStore(c)
	if err != nil {
		return nil, err
	}
	return e.scanRoots(ctx, st, nil, base, nil)
}

// scanRoots runs the save package's scan through st with this Engine's
// progress reports, storing new content in put (nil: hash only), of only
// some roots of a multi-root workspace (none: all); the others keep their
// subtree from base.
func (e *Engine) scanRoots(ctx context.Context, st *save.Store, put *objects.Batch, base objects.ID, only []string) (*save.Snapshot, error) {
	return st.Scan(ctx, put, base, only, newProgressMeter(e.opts.OnProgress).tick)
}
