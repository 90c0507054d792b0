package ui_test

import (
	"bytes"
	"context"
	"flag"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/internal/ui"
)

var screenshotDir = flag.String("screenshots", "", "write the timeline and diff screenshots into this directory (../../docs refreshes the committed ones)")

// browser is a headless chromium tab driven by the test.
type browser struct {
	t   *testing.T
	ctx context.Context
}

// chromium is the one headless chromium the browser tests open their tabs
// in: started by the first newBrowser (starting one per test cost each
// a second or two of CPU), closed by TestMain.
var chromium struct {
	once  sync.Once
	ctx   context.Context // the browser's first tab, which it lives as long as
	close func()
	err   error
}

// startChromium starts the browser at path with a user data directory of
// its own and an empty first tab.
func startChromium(path string) {
	dir, err := os.MkdirTemp("", "ckpt-ui-chromium")
	if err != nil {
		chromium.err = err
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 760))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	chromium.ctx = ctx
	chromium.close = func() { cancel(); cancelAlloc(); os.RemoveAll(dir) }
	// The first action starts the browser, which lives as long as the
	// context it ran on.
	chromium.err = chromedp.Do(ctx, chromedp.EmulateViewport(1280, 760))
}

func TestMain(m *testing.M) {
	code := m.Run()
	if chromium.close != nil {
		chromium.close()
	}
	os.Exit(code)
}

// newBrowser opens a tab of its own for t, closed when t ends.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install -y chromium); CI installs it")
	}
	chromium.once.Do(func() { startChromium(path) })
	if chromium.err != nil {
		t.Fatalf("start chromium: %v", chromium.err)
	}
	ctx, cancel := chromedp.NewContext(chromium.ctx)
	// The one bound of every step: a step waits for its condition, however
	// slowly a loaded machine under -race gets there, but not for ever.
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel() })
	// The first action opens the tab, which lives as long as the context
	// it ran on: run it on the test's own, not a per-step one.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 760)); err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, ctx: ctx}
}

// open serves backend with Serve until the test ends and loads the page
// from the address Serve printed.
func (b *browser) open(backend ui.Backend) (url string) {
	b.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	url, wait, err := ui.Serve(ctx, "", backend)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() {
		cancel()
		if err := wait(); err != nil {
			b.t.Error(err)
		}
	})
	b.do(chromedp.Navigate(url))
	b.wait(`document.body.dataset.ready === "1"`)
	return url
}

// do runs steps; the browser's bound ends one waiting for an element that
// never comes.
func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatal(err)
	}
}

// eval runs a JavaScript expression and returns its value as a string.
func (b *browser) eval(expr string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`String(`+expr+`)`))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// wait blocks until the JavaScript predicate holds (or the browser's bound
// ends).
func (b *browser) wait(pred string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](pred, chromedp.WithPollingTimeout(0))); err != nil {
		b.t.Fatalf("waiting for %s: %v (page: %.300s)", pred, err, b.eval(`document.body.innerText`))
	}
}

// click clicks the element like a user does, with the mouse. The page
// re-renders a panel when data or a live event arrives, which can replace
// the element between finding and clicking it: then it is found again,
// until the browser's bound ends.
func (b *browser) click(css string) {
	b.t.Helper()
	for {
		b.wait(`!!document.querySelector(` + jsString(css) + `)`)
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(css)))
		cancel()
		if err == nil {
			return
		}
		if b.ctx.Err() != nil {
			b.t.Fatalf("click %s: %v", css, err)
		}
	}
}

// clickPoint clicks a timeline mark (an SVG group, which may sit under a
// neighbour's, so the event goes to it directly).
func (b *browser) clickPoint(task string, seq int) {
	b.t.Helper()
	sel := `.lane[data-task="` + task + `"] .point[data-seq="` + itoa(uint64(seq)) + `"]`
	b.wait(`!!document.querySelector(` + jsString(sel) + `)`)
	b.eval(`document.querySelector(` + jsString(sel) + `).dispatchEvent(new MouseEvent("click", {bubbles: true}))`)
}

func (b *browser) screenshot(name string) {
	b.t.Helper()
	b.eval(`window.scrollTo(0, 0)`)
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatal(err)
	}
	dir := *screenshotDir
	if dir == "" {
		dir = b.t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func square(c color.RGBA) string {
	img := image.NewRGBA(image.Rect(0, 0, 48, 48))
	for i := range 48 * 48 {
		img.Set(i%48, i/48, c)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.String()
}

const mainV1 = `package main

import "fmt"

func main() {
	fmt.Println("hello")
}
`

const mainV2 = `package main

import "fmt"

// greet says hello to name.
func greet(name string) string {
	return "hello, " + name
}

func main() {
	for i := 0; i < 3; i++ {
		fmt.Println(greet("ckpt"))
	}
}
`

// timelineStore is the fixture the browser tests open: three tasks saved
// minutes apart, the default one with an empty checkpoint and a large step.
func timelineStore(t *testing.T) *store {
	s := newStore(t, testtree.Dir{
		"main.go":   testtree.File{Content: mainV1},
		"README.md": testtree.File{Content: "# demo\n"},
		"logo.png":  testtree.File{Content: square(color.RGBA{53, 99, 233, 255})},
		"data.bin":  testtree.File{Content: "a\x00b"},
		"lib":       testtree.Dir{"util.py": testtree.File{Content: "def add(a, b):\n    return a + b\n"}},
	})
	steps := []struct {
		gap       time.Duration
		task, msg string
		tree      testtree.Dir
	}{
		{0, "default", "scaffold the project", nil},
		{9 * time.Minute, "default", "add greet and a loop", testtree.Dir{
			"main.go":   testtree.File{Content: mainV2},
			"logo.png":  testtree.File{Content: square(color.RGBA{224, 138, 30, 255})},
			"data.bin":  testtree.File{Content: "a\x00bc"},
			"notes.txt": testtree.File{Content: "todo: tests\n"},
			"lib":       testtree.Dir{"util.py": testtree.File{Content: "# Helpers.\ndef add(a, b):\n    \"\"\"Sum.\"\"\"\n    return a + b\n"}},
		}},
		{4 * time.Minute, "docs", "outline the guide", testtree.Dir{"docs": testtree.Dir{"guide.md": testtree.File{Content: "# Guide\n"}}}},
		{6 * time.Minute, "refactor", "extract helpers", testtree.Dir{"lib": testtree.Dir{"strings.py": testtree.File{Content: "def shout(s):\n    return s.upper()\n"}}}},
		{5 * time.Minute, "docs", "write the install section", testtree.Dir{"docs": testtree.Dir{"guide.md": testtree.File{Content: "# Guide\n\n## Install\n" + strings.Repeat("Run the installer.\n", 200)}}}},
		{8 * time.Minute, "default", "vendor a large dataset", testtree.Dir{"vendor": testtree.Dir{"big.txt": testtree.File{Content: strings.Repeat("0123456789abcdef\n", 40000)}}}},
		{2 * time.Minute, "default", "before running the tests", nil},
		{7 * time.Minute, "refactor", "rename module", testtree.Dir{"lib": testtree.Dir{"text.py": testtree.File{Content: "def shout(s):\n    return s.upper() + '!'\n"}}}},
		{3 * time.Minute, "docs", "fix a typo", testtree.Dir{"docs": testtree.Dir{"guide.md": testtree.File{Content: "# Guide\n\n## Installation\n" + strings.Repeat("Run the installer.\n", 200)}}}},
	}
	for _, st := range steps {
		s.advance(st.gap)
		s.save(st.task, st.msg, st.tree)
	}
	return s
}

func laneCount(task, extra string) string {
	return `document.querySelectorAll('.lane[data-task="` + task + `"] .point` + extra + `').length`
}

func TestBrowserTimelineDiffRestoreAndUndo(t *testing.T) {
	b := newBrowser(t)
	s := timelineStore(t)
	counted := &countingBackend{Backend: s.b}
	url := b.open(counted)
	checkLanes(t, b)

	t.Log("a save while the page is open appears live")
	s.advance(4 * time.Minute)
	s.save("default", "saved while watching", testtree.Dir{"README.md": testtree.File{Content: "# demo\n\nlive\n"}})
	b.wait(laneCount("default", "") + ` === 5`)

	checkDiff(t, b)
	checkRestoreAndUndo(t, b, s)
	checkFileRestore(t, b, s)
	checkCompare(t, b)
	b.clickPoint("default", 3)
	b.screenshot("ui-timeline.png")

	t.Log("the browser without the token is refused, and so is another page's POST")
	u := strings.Replace(strings.SplitN(url, "?", 2)[0], "127.0.0.1", "localhost", 1) // no cookie for this name
	b.do(chromedp.Navigate(u))
	b.wait(`document.body.innerText.startsWith("forbidden")`)
	restores := counted.count("Restore")
	crossOriginPOST(t, b, strings.SplitN(url, "/?", 2)[0], s)
	if n := counted.count("Restore"); n != restores {
		t.Fatalf("a cross-origin page made %d restores", n-restores)
	}
	assertFile(t, s.ws, "main.go", mainV1)
}

func checkLanes(t *testing.T, b *browser) {
	t.Log("the timeline shows a lane per task with its checkpoints, the empty one marked")
	if got := b.eval(`[...document.querySelectorAll('.lane')].map(l => l.dataset.task).join(",")`); got != "default,docs,refactor" {
		t.Fatalf("lanes %q", got)
	}
	if n := b.eval(laneCount("default", "")); n != "4" {
		t.Fatalf("default lane has %s points, want 4", n)
	}
	if n := b.eval(laneCount("refactor", "")); n != "2" {
		t.Fatalf("refactor lane has %s points, want 2", n)
	}
	if got := b.eval(`[...document.querySelectorAll('.lane[data-task="default"] .point.empty')].map(p => p.dataset.seq).join()`); got != "4" {
		t.Fatalf("empty points %q, want @4", got)
	}
	radius := func(seq string) string {
		return `+document.querySelector('.lane[data-task="default"] .point[data-seq="` + seq + `"] circle').getAttribute("r")`
	}
	if b.eval(radius("3")+" > "+radius("2")) != "true" {
		t.Fatalf("the large step's radius %s is not above a small one's %s", b.eval(radius("3")), b.eval(radius("2")))
	}
}

func checkDiff(t *testing.T, b *browser) {
	t.Log("the diff of a checkpoint lists its files and shows one highlighted")
	b.clickPoint("default", 2)
	b.wait(`document.getElementById("detail-title")?.textContent === "add greet and a loop"`)
	b.click("#diff-parent")
	b.click(`.leaf[data-path="main.go"]`)
	b.wait(`document.getElementById("code")?.innerText.includes('greet("ckpt")')`)
	if got := b.eval(`[...document.querySelectorAll('.leaf')].map(l => l.dataset.status[0] + ":" + l.dataset.path).join(" ")`); got != "m:lib/util.py m:data.bin m:logo.png m:main.go a:notes.txt" {
		t.Fatalf("changed files %q", got)
	}
	if got := b.eval(`[...document.querySelectorAll("#code .tk-kw")].map(k => k.textContent).slice(0, 4).join()`); got != "package,package,import,import" {
		t.Fatalf("keywords %q", got)
	}
	if n := b.eval(`document.querySelectorAll("#code td.code.add").length`); n == "0" {
		t.Fatal("no added lines marked")
	}
	b.screenshot("ui-diff.png")
	b.click("#mode-unified")
	b.wait(`document.querySelector("#code.unified") && document.querySelectorAll("#code tr.del").length === 1`)
	b.click(`.leaf[data-path="data.bin"]`)
	b.wait(`document.querySelector(".binary")?.textContent === "binary, 3 B → 4 B"`)
	b.click(`.leaf[data-path="logo.png"]`)
	b.wait(`[...document.querySelectorAll(".images img")].filter(i => i.complete && i.naturalWidth === 48).length === 2`)
	b.click("#diff-back")
}

func checkRestoreAndUndo(t *testing.T, b *browser, s *store) {
	t.Log("restoring a checkpoint shows the plan, writes the files and takes a backup of unsaved work")
	s.advance(5 * time.Minute)
	if err := overlay(s.ws, testtree.Dir{"scratch.txt": testtree.File{Content: "unsaved\n"}}); err != nil {
		t.Fatal(err)
	}
	b.clickPoint("default", 1)
	b.click("#restore-btn")
	b.wait(`document.getElementById("confirm").open && !!document.querySelector(".plan.delete")`)
	plan := b.eval(`document.getElementById("confirm-body").innerText`)
	for _, want := range []string{"Will write", "main.go", "Will delete", "notes.txt", "vendor/big.txt", "scratch.txt", "backup checkpoint"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("plan %q lacks %q", plan, want)
		}
	}
	assertFile(t, s.ws, "main.go", mainV2) // the plan wrote nothing
	b.click("#confirm-ok")
	b.wait(`!!document.getElementById("restored-msg")`)
	assertFile(t, s.ws, "main.go", mainV1)
	if _, err := os.Stat(filepath.Join(s.ws, "notes.txt")); !os.IsNotExist(err) {
		t.Fatalf("notes.txt survived the restore: %v", err)
	}
	b.wait(laneCount("default", `[data-kind="backup"]`) + ` === 1`)

	t.Log("undo restores the backup")
	b.click("#undo")
	b.wait(`document.getElementById("confirm").open && document.getElementById("confirm-body").innerText.includes("scratch.txt")`)
	b.click("#confirm-ok")
	b.wait(`document.getElementById("restored-msg")?.textContent.startsWith("Restored @6")`)
	assertFile(t, s.ws, "main.go", mainV2)
	assertFile(t, s.ws, "notes.txt", "todo: tests\n")
	assertFile(t, s.ws, "scratch.txt", "unsaved\n")
}

func checkFileRestore(t *testing.T, b *browser, s *store) {
	t.Log("a single file restores from a diff against the workspace")
	b.clickPoint("default", 1)
	b.click("#diff-workspace")
	b.click(`.leaf[data-path="main.go"]`)
	b.click(`.file-head button[data-ref]`)
	b.wait(`document.getElementById("confirm").open && document.getElementById("confirm-body").innerText.includes("Will write (1)")`)
	b.click("#confirm-ok")
	b.wait(`document.getElementById("restored-msg")?.textContent.startsWith("Restored main.go from @1: 1 written, 0 deleted")`)
	assertFile(t, s.ws, "main.go", mainV1)
	assertFile(t, s.ws, "notes.txt", "todo: tests\n")
}

func checkCompare(t *testing.T, b *browser) {
	t.Log("any two checkpoints compare from the detail panel")
	b.clickPoint("default", 3)
	// The detail panel re-renders when the selection (or a live event)
	// arrives: wait for @3's panel, then pick both sides and press Diff in
	// one step, so no re-render can swap the form in between.
	b.wait(`document.getElementById("detail").innerText.includes("default @3") && !!document.getElementById("cmp-go")`)
	b.eval(`(() => { const f = document.getElementById("cmp-from"), to = document.getElementById("cmp-to");
		f.value = [...f.options].find(o => o.text.startsWith("@1 ")).value;
		to.value = [...to.options].find(o => o.text.startsWith("@3 ")).value;
		document.getElementById("cmp-go").click(); })()`)
	b.wait(`!!document.querySelector('.leaf[data-path="vendor/big.txt"]')`)
	// main.go, logo.png, data.bin and lib/util.py changed; notes.txt, the
	// other tasks' docs/guide.md and lib/strings.py and vendor/big.txt appeared.
	if got := b.eval(`document.querySelectorAll(".leaf").length + " " + document.getElementById("diff-title").innerText`); !strings.HasPrefix(got, "8 @1 scaffold the project") {
		t.Fatalf("compare @1 → @3: %q", got)
	}
	b.click("#diff-back")
}

// crossOriginPOST opens a page on another origin of the same host (so the
// browser sends the SameSite cookie) that tries to restore through the API
// with a simple POST and a JSON fetch.
func crossOriginPOST(t *testing.T, b *browser, ui string, s *store) {
	t.Helper()
	ref, err := s.e.Resolve(context.Background(), "default", "@2")
	if err != nil {
		t.Fatal(err)
	}
	body := `{"task":"default","ref":"` + ref.String() + `"}`
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><script>
const target = ` + jsString(ui+"/api/restore") + `, body = ` + jsString(body) + `;
Promise.allSettled([
  fetch(target, {method: "POST", mode: "no-cors", credentials: "include", headers: {"Content-Type": "text/plain"}, body}),
  fetch(target, {method: "POST", credentials: "include", headers: {"Content-Type": "application/json"}, body}),
]).then(r => { document.title = "done:" + r.map(x => x.status).join(","); });
</script>`))
	}))
	defer evil.Close()
	b.do(chromedp.Navigate(evil.URL))
	b.wait(`document.title.startsWith("done:")`)
	if got := b.eval(`document.title`); got != "done:fulfilled,rejected" {
		t.Fatalf("cross-origin fetches: %s (want the opaque one sent and the CORS one blocked)", got)
	}
}
