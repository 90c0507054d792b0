package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ckpt/ckpt/engine"
)

// progressDelay is how long work runs before a progress line appears, so
// quick commands print nothing extra.
const progressDelay = time.Second

// progressLine draws a one-line progress indicator on a terminal's stderr.
type progressLine struct {
	w     io.Writer
	mu    sync.Mutex
	shown bool
}

// newProgressLine returns nil unless stderr is a terminal and output is wanted.
func (a *app) newProgressLine() *progressLine {
	if a.quiet || a.json || !isTerminal(a.stderr) {
		return nil
	}
	return &progressLine{w: a.stderr}
}

// clearingWriter erases the progress line before output is written, so
// results never share a line with it.
type clearingWriter struct {
	w io.Writer
	p *progressLine
}

func (c clearingWriter) Write(b []byte) (int, error) {
	c.p.clear()
	return c.w.Write(b)
}

// update redraws the line with a scan's progress once the scan has run for
// progressDelay.
func (p *progressLine) update(sp engine.ScanProgress) {
	if sp.Elapsed < progressDelay {
		return
	}
	p.draw(fmt.Sprintf("ckpt: scanning: %d files, %s hashed, %.0fs", sp.Files, humanBytes(int64(sp.BytesHashed)), sp.Elapsed.Seconds()))
}

// draw replaces the line's text.
func (p *progressLine) draw(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "\r\033[K%s", text)
	p.shown = true
}

// phaseProgress returns a reporter that draws gc's or verify's phases on
// the progress line, or nil when no line is drawn (not a terminal, -q, --json).
func (a *app) phaseProgress(verb string) func(engine.PhaseProgress) {
	p := a.progress
	if p == nil {
		return nil
	}
	return func(ph engine.PhaseProgress) {
		if ph.Total > 0 {
			p.draw(fmt.Sprintf("ckpt %s: %s %d/%d", verb, ph.Phase, ph.Done, ph.Total))
		} else {
			p.draw(fmt.Sprintf("ckpt %s: %s %d", verb, ph.Phase, ph.Done))
		}
	}
}

// clear erases the line if it was drawn. A nil line does nothing.
func (p *progressLine) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}
