//go:build linux

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// agent makes the edits of a long coding task, deterministically from its
// seed: each step changes a few lines in a few source files, the files
// drawn from a Zipf law over a shuffled order (so a handful of files are
// edited hundreds of times in 1,000 steps and most never), and now and
// then adds a file or deletes one.
type agent struct {
	ws    string
	r     *rand.Rand
	files []string // workspace-relative text files, the hottest first
	zipf  *rand.Zipf
	dirs  []string
	step  int
	edits map[string]int // edits per file
}

// Shape of a step.
const (
	agentMaxFiles   = 3       // files edited per step: 1..agentMaxFiles
	agentMaxLines   = 4       // lines changed per edited file: 1..agentMaxLines
	agentAddEvery   = 20      // one step in this many also adds a file
	agentDropEvery  = 50      // one step in this many also deletes a file
	agentZipfS      = 1.1     // the Zipf exponent: higher, hotter hot files
	agentNewFileLen = 40      // lines of an added file
	agentMaxSize    = 1 << 16 // text files larger than this are not edited
)

// newAgent prepares the edits of text (workspace-relative text files) and
// dirs (where new files go) in ws.
func newAgent(ws string, text, dirs []string, seed uint64) (*agent, error) {
	a := &agent{ws: ws, r: rand.New(rand.NewPCG(seed, 0x10e6)), dirs: dirs, edits: map[string]int{}}
	for _, p := range text {
		if info, err := os.Stat(filepath.Join(ws, p)); err == nil && info.Size() <= agentMaxSize && info.Size() > 0 {
			a.files = append(a.files, p)
		}
	}
	if len(a.files) < 2 || len(dirs) == 0 {
		return nil, fmt.Errorf("long-task: %d editable text files and %d directories, want more", len(a.files), len(dirs))
	}
	a.r.Shuffle(len(a.files), func(i, j int) { a.files[i], a.files[j] = a.files[j], a.files[i] })
	a.zipf = rand.NewZipf(a.r, agentZipfS, 1, uint64(len(a.files)-1))
	return a, nil
}

func (a *agent) perFile() map[string]int { return a.edits }

// stepCounts is what one step did.
type stepCounts struct{ edited, added, deleted int }

// act performs the next step's edits on the workspace.
func (a *agent) act() (stepCounts, error) {
	a.step++
	var c stepCounts
	n := 1 + a.r.IntN(agentMaxFiles)
	for range n {
		if err := a.edit(a.files[a.zipf.Uint64()]); err != nil {
			return c, err
		}
		c.edited++
	}
	if a.r.IntN(agentAddEvery) == 0 {
		if err := a.add(); err != nil {
			return c, err
		}
		c.added++
	}
	if a.r.IntN(agentDropEvery) == 0 && len(a.files) > 2 {
		// A cold file: the hot ones stay for the edits to come.
		i := len(a.files)/2 + a.r.IntN(len(a.files)/2)
		if err := os.Remove(filepath.Join(a.ws, a.files[i])); err != nil {
			return c, err
		}
		a.files = slices.Delete(a.files, i, i+1)
		a.zipf = rand.NewZipf(a.r, agentZipfS, 1, uint64(len(a.files)-1))
		c.deleted++
	}
	return c, nil
}

// edit replaces, inserts or deletes a few lines of the file at rel.
func (a *agent) edit(rel string) error {
	p := filepath.Join(a.ws, rel)
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	a.edits[rel]++
	lines := strings.SplitAfter(string(data), "\n")
	for k := range 1 + a.r.IntN(agentMaxLines) {
		i := a.r.IntN(len(lines))
		line := fmt.Sprintf("\t// step %d, change %d: %s\n", a.step, k, a.words(4+a.r.IntN(6)))
		switch a.r.IntN(4) {
		case 0: // insert
			lines = slices.Insert(lines, i, line)
		case 1: // delete
			if len(lines) > 1 {
				lines = slices.Delete(lines, i, i+1)
				continue
			}
			lines[i] = line
		default: // change
			lines[i] = line
		}
	}
	return os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644)
}

// add writes a new source file into one of the directories; later steps
// may edit it.
func (a *agent) add() error {
	dir := a.dirs[a.r.IntN(len(a.dirs))]
	rel := filepath.Join(dir, fmt.Sprintf("task_step%04d.go", a.step))
	var b strings.Builder
	fmt.Fprintf(&b, "package task\n\n// Step%d is written by step %d of the task.\nfunc Step%d() {\n", a.step, a.step, a.step)
	for range agentNewFileLen {
		fmt.Fprintf(&b, "\t_ = %q\n", a.words(3+a.r.IntN(5)))
	}
	b.WriteString("}\n")
	if err := os.WriteFile(filepath.Join(a.ws, rel), []byte(b.String()), 0o644); err != nil {
		return err
	}
	a.files = append(a.files, rel) // a new file is cold until the law draws it
	a.zipf = rand.NewZipf(a.r, agentZipfS, 1, uint64(len(a.files)-1))
	return nil
}

// agentWords are the words of the lines an agent writes.
var agentWords = strings.Fields(`the a to of in for is on that by this with it from as be are
value error result config handler request response buffer index cache token parse read write
update check return state context count offset length name path file store save`)

// words returns n words drawn at random.
func (a *agent) words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = agentWords[a.r.IntN(len(agentWords))]
	}
	return strings.Join(w, " ")
}
