//go:build linux

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// editor makes a long task's edits in the workspace, one step at a time,
// deterministically from its seed.
type editor interface {
	// act performs the next step's edits.
	act() (stepCounts, error)
	// perFile is the number of edits of each file edited so far.
	perFile() map[string]int
}

// The edit models of bench long-task.
const (
	editsAgent   = "agent"   // agent.go: a few lines in a few Zipf-drawn files, files added and deleted
	editsOneLine = "oneline" // oneLiner: one-line edits, most of them in a few hot files
)

// editModels are the edit models and the base each runs on by default:
// the agent on the pinned real modules, one-line edits on this tree.
var editModels = map[string]string{editsAgent: realModulesCorpus, editsOneLine: "."}

func errEditModel(model string) error {
	return fmt.Errorf("-edits %q: want %s or %s", model, editsAgent, editsOneLine)
}

// newEditor returns the editor of model for the text files (workspace-
// relative) and directories of ws.
func newEditor(model, ws string, text, dirs []string, seed uint64) (editor, error) {
	switch model {
	case editsAgent:
		return newAgent(ws, text, dirs, seed)
	case editsOneLine:
		return newOneLiner(ws, text, seed)
	}
	return nil, errEditModel(model)
}

// Shape of a one-line step.
const (
	oneLineEdits    = 3   // one-line edits per step
	oneLineHot      = 30  // files most edits go to
	oneLineHotShare = 0.8 // share of the edits in the hot files
)

// oneLiner makes the smallest edits a long task can make: each step
// appends a comment to one line of each of oneLineEdits files, a file
// drawn from oneLineHot hot ones with probability oneLineHotShare and
// from all text files otherwise. Files are neither added nor deleted.
type oneLiner struct {
	ws         string
	r          *rand.Rand
	files, hot []string
	step       int
	edits      map[string]int
}

func newOneLiner(ws string, text []string, seed uint64) (*oneLiner, error) {
	if len(text) < oneLineHot {
		return nil, fmt.Errorf("long-task: %d text files, fewer than the %d hot ones one-line edits need", len(text), oneLineHot)
	}
	o := &oneLiner{ws: ws, r: rand.New(rand.NewPCG(seed, 0x6869)), files: text, edits: map[string]int{}}
	for _, i := range o.r.Perm(len(text))[:oneLineHot] {
		o.hot = append(o.hot, text[i])
	}
	return o, nil
}

func (o *oneLiner) perFile() map[string]int { return o.edits }

func (o *oneLiner) act() (stepCounts, error) {
	o.step++
	for k := range oneLineEdits {
		f := o.files[o.r.IntN(len(o.files))]
		if o.r.Float64() < oneLineHotShare {
			f = o.hot[o.r.IntN(len(o.hot))]
		}
		if err := editLine(filepath.Join(o.ws, f), o.r, fmt.Sprintf(" // edit %d.%d", o.step, k)); err != nil {
			return stepCounts{edited: k}, err
		}
		o.edits[f]++
	}
	return stepCounts{edited: oneLineEdits}, nil
}

// editLine appends suffix to a line of the file at p, picked by rng.
func editLine(p string, rng *rand.Rand, suffix string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	lines := bytes.Split(data, []byte{'\n'})
	k := rng.IntN(len(lines))
	lines[k] = append(lines[k], suffix...)
	return os.WriteFile(p, bytes.Join(lines, []byte{'\n'}), 0o644)
}
