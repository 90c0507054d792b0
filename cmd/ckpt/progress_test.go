package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine"
)

func TestProgressLineWaitsThenClearsBeforeOutput(t *testing.T) {
	var term bytes.Buffer
	p := &progressLine{w: &term}
	p.update(engine.ScanProgress{Files: 10, Elapsed: progressDelay / 2})
	if term.Len() != 0 {
		t.Fatalf("drew %q before the delay", term.String())
	}
	p.update(engine.ScanProgress{Files: 12345, BytesHashed: 3 << 20, Elapsed: 2 * time.Second})
	if !strings.Contains(term.String(), "12345 files, 3.0 MiB hashed") {
		t.Fatalf("line = %q", term.String())
	}
	out := clearingWriter{w: &term, p: p}
	out.Write([]byte("result\n"))
	if !strings.HasSuffix(term.String(), "\r\033[Kresult\n") {
		t.Fatalf("output not preceded by an erase: %q", term.String())
	}
	n := term.Len()
	out.Write([]byte("more\n"))
	if term.Len() != n+len("more\n") {
		t.Fatal("erased a line that was not drawn")
	}
}

func TestPhaseProgressDrawsOnTheSameLine(t *testing.T) {
	var term bytes.Buffer
	a := &app{}
	if a.phaseProgress("gc") != nil {
		t.Fatal("a reporter without a progress line")
	}
	a.progress = &progressLine{w: &term}
	report := a.phaseProgress("gc")
	report(engine.PhaseProgress{Phase: "mark", Done: 3, Total: 10})
	report(engine.PhaseProgress{Phase: "sweep", Done: 7})
	if got := term.String(); got != "\r\033[Kckpt gc: mark 3/10\r\033[Kckpt gc: sweep 7" {
		t.Fatalf("line = %q", got)
	}
}
