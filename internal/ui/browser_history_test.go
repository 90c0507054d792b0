package ui_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/testtree"
)

// A file's history sits beside its diff, one of its checkpoints opening
// that checkpoint's own change, and the first bad checkpoint the last
// bisect recorded is marked on the timeline and in the list.
func TestBrowserFileHistoryAndBisectMark(t *testing.T) {
	b := newBrowser(t)
	s := timelineStore(t)
	s.advance(3 * time.Minute)
	s.save("default", "shout the greeting", testtree.Dir{"main.go": testtree.File{Content: strings.Replace(mainV2, "hello, ", "HELLO, ", 1)}})
	res, err := s.e.Bisect(context.Background(), engine.BisectOptions{Task: "default",
		Test: func(_ context.Context, dir string, _ engine.CheckpointInfo) (engine.BisectVerdict, error) {
			if _, err := os.Stat(filepath.Join(dir, "vendor", "big.txt")); err == nil {
				return engine.BisectBad, nil
			}
			return engine.BisectGood, nil
		}})
	if err != nil || res.FirstBad.Seq != 3 {
		t.Fatalf("bisect: %v, first bad %+v", err, res)
	}
	b.open(s.b)

	t.Log("the bisect's first bad checkpoint is marked on the timeline and in the list")
	if got := b.eval(`[...document.querySelectorAll(".point.first-bad")].map(p => p.closest(".lane").dataset.task + "@" + p.dataset.seq).join()`); got != "default@3" {
		t.Fatalf("first-bad marks %q, want default@3", got)
	}
	if got := b.eval(`[...document.querySelectorAll("#cp-list .tag.first-bad")].map(t => t.closest("li").dataset.seq).join()`); got != "3" {
		t.Fatalf("first-bad tags in the list %q, want 3", got)
	}

	t.Log("a file's diff shows the checkpoints that changed it, the one shown marked")
	b.clickPoint("default", 5)
	b.wait(`document.getElementById("detail-title")?.textContent === "shout the greeting"`)
	b.click("#diff-parent")
	b.click(`.leaf[data-path="main.go"]`)
	b.wait(`document.querySelectorAll("#history-list li").length === 3`)
	history := `[...document.querySelectorAll("#history-list li")].map(l => l.dataset.seq + (l.classList.contains("current") ? "*" : "")).join()`
	if got := b.eval(history); got != "5*,2,1" {
		t.Fatalf("history of main.go %q, want 5*,2,1", got)
	}
	b.click(`#history-list li[data-seq="2"]`)
	b.wait(`document.getElementById("diff-title")?.innerText.includes("@1") && !!document.getElementById("code")?.innerText.includes('greet("ckpt")')`)
	b.wait(`document.querySelector("#history-list li.current")?.dataset.seq === "2"`)
	if got := b.eval(`document.getElementById("file-path").textContent`); got != "main.go" {
		t.Fatalf("the file shown is %q", got)
	}
	b.screenshot("ui-history.png")
}
