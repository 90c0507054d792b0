package ui_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/internal/ui"
)

// longTask builds a store whose default task has bigTask checkpoints: one
// small file edited per save, every tenth save empty. bigTask is more than
// one DefaultPage, and 10,000 (ten MaxPages) with the long tests.
func longTask(t *testing.T) (s *store, bigTask uint64) {
	t.Helper()
	bigTask = uint64(testbound.Scale(ui.DefaultPage+100, 10000))
	s = newStore(t, testtree.Dir{"a.txt": testtree.File{Content: "0"}, "b.txt": testtree.File{Content: "b"}})
	for i := uint64(1); i <= bigTask; i++ {
		if i%10 != 0 {
			if err := overlay(s.ws, testtree.Dir{"a.txt": testtree.File{Content: itoa(i)}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.e.Save(context.Background(), engine.SaveOptions{Message: "step " + itoa(i), AllowEmpty: true}); err != nil {
			t.Fatal(err)
		}
	}
	return s, bigTask
}

// TestALongTaskLoadsOnePageAtATime checks the work a first load costs on a
// long task: the server asks the backend for one page, never for diffs,
// and the page renders that page only.
func TestALongTaskLoadsOnePageAtATime(t *testing.T) {
	s, bigTask := longTask(t)
	t.Run("server", func(t *testing.T) {
		c := &countingBackend{Backend: s.b}
		srv := serve(t, c)
		var tasks struct{ Tasks []ui.Task }
		getJSON(t, srv.URL+"/api/tasks", &tasks)
		if len(tasks.Tasks) != 1 || uint64(tasks.Tasks[0].Checkpoints) != bigTask {
			t.Fatalf("tasks %+v", tasks.Tasks)
		}
		var p ui.Page
		if code := getJSON(t, srv.URL+"/api/checkpoints?task=default", &p); code != http.StatusOK {
			t.Fatalf("first page: %d", code)
		}
		if len(p.Checkpoints) != ui.DefaultPage || p.Checkpoints[0].Seq != bigTask || p.Next != bigTask-ui.DefaultPage+1 {
			t.Fatalf("first page: %d checkpoints from @%d, next %d", len(p.Checkpoints), p.Checkpoints[0].Seq, p.Next)
		}
		// The server caps an oversized limit before the backend sees it
		// (the limits checked below); the long task is long enough to show
		// the cap in the page too.
		getJSON(t, srv.URL+"/api/checkpoints?task=default&limit=100000", &p)
		if want := min(bigTask, ui.MaxPage); uint64(len(p.Checkpoints)) != want {
			t.Fatalf("an oversized limit returned %d checkpoints, want %d", len(p.Checkpoints), want)
		}
		if c.count("Checkpoints") != 2 || c.limits[0] != ui.DefaultPage || c.limits[1] != ui.MaxPage || c.count("Diff")+c.count("File") != 0 {
			t.Fatalf("backend calls %v with limits %v", c.calls, c.limits)
		}
	})
	t.Run("browser", func(t *testing.T) {
		testbound.Long(t, "drives chromium over a long task")
		b := newBrowser(t)
		c := &countingBackend{Backend: s.b}
		b.open(c)
		if n := b.eval(laneCount("default", "")); n != itoa(ui.DefaultPage) {
			t.Fatalf("the lane draws %s points, want one page of %d", n, ui.DefaultPage)
		}
		if c.count("Checkpoints") != 1 || c.checkpoints != ui.DefaultPage {
			t.Fatalf("first load: %d page requests, %d checkpoints", c.count("Checkpoints"), c.checkpoints)
		}
		b.click("#older")
		b.wait(`document.querySelectorAll("#cp-list li").length === ` + itoa(2*ui.DefaultPage))
		if got := b.eval(`document.querySelector("#cp-list li:last-child").dataset.seq`); got != itoa(bigTask-2*ui.DefaultPage+1) {
			t.Fatalf("the second page ends at @%s", got)
		}
		if c.count("Checkpoints") != 2 || c.checkpoints != 2*ui.DefaultPage {
			t.Fatalf("after one older page: %d page requests, %d checkpoints", c.count("Checkpoints"), c.checkpoints)
		}
	})
}
