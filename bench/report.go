//go:build linux

package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ckpt/ckpt/bench/corpus"
)

// Operations and quantities, the parts of a metric key.
const (
	opFirst    = "first-save"
	opNoChange = "no-change-save"
	opEdit     = "edit-save"
	opDiff     = "diff"
	opRestore  = "restore"

	qSeconds         = "seconds"
	qRSS             = "rss_mib"
	qStore           = "store_mib"
	qStoreGC         = "store_gc_mib"
	qBackground      = "background_seconds"
	qFiles           = "files"
	qWritten         = "written"
	qDeleted         = "deleted"
	qReportedWritten = "reported_written"
	qWatches         = "inotify_watches" // the resident server's, after the operation
)

// opLabels names the timed operations in tables and charts, in order.
var opLabels = []struct{ op, label string }{
	{opFirst, "first save (empty store)"},
	{opNoChange, "no-change save"},
	{opEdit, "save after 100 edits + 20 new files"},
	{opDiff, "diff of that change (both sides read)"},
	{opRestore, "restore of that change"},
}

// Metric is one measured quantity over the repetitions.
type Metric struct {
	Values []float64 `json:"values"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
}

// Target is one goal of the performance issue and whether this run met it.
type Target struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Goal  string  `json:"goal"`
	Met   bool    `json:"met"`
}

// Report is the outcome of one run, as written to JSON.
type Report struct {
	Command string    `json:"command"`
	Date    time.Time `json:"date"`
	Scale   string    `json:"scale"`
	Seed    uint64    `json:"seed"`
	// Source is the real tree the corpus came from (-corpus), "" for a
	// generated one; InPlace says it was measured without a copy.
	Source  string  `json:"source,omitempty"`
	InPlace bool    `json:"in_place,omitempty"`
	Reps    int     `json:"repetitions"`
	Cold    bool    `json:"cold"`
	Machine machine `json:"machine"`
	Corpus  struct {
		Files           int     `json:"files"`
		Captured        int     `json:"captured"`
		CapturedMiB     float64 `json:"captured_mib"`
		Binary          int     `json:"binary"`
		Large           int     `json:"large"`
		Symlinks        int     `json:"symlinks"`
		Executables     int     `json:"executables"`
		Ignored         int     `json:"ignored"`
		NodeModules     int     `json:"node_modules"`
		NestedRepos     int     `json:"nested_repos"`
		GenerateSeconds float64 `json:"generate_seconds"`
		GitFiles        int     `json:"git_files"`  // paths in the shadow commit
		CkptFiles       int     `json:"ckpt_files"` // files and symlinks in ckpt's first checkpoint
	} `json:"corpus"`
	// Metrics are keyed "system/operation/quantity"; systems are git,
	// ckpt-cli, ckpt-lib, ckpt-server, ckpt-server-nowatch (the server with
	// its change watcher off), stash and floor.
	Metrics map[string]*Metric `json:"metrics"`
	Targets []Target           `json:"targets"`
}

func newReport(o options) *Report {
	return &Report{Date: time.Now().UTC().Truncate(time.Second), Scale: o.scale, Seed: o.seed, Reps: o.reps, InPlace: o.inPlace,
		Cold: o.cold, Machine: describeMachine(), Metrics: map[string]*Metric{}}
}

func (r *Report) setCorpus(m *corpus.Manifest, gen time.Duration) {
	c := &r.Corpus
	c.Files, c.Captured, c.CapturedMiB = m.Files, m.Captured, mib(m.Bytes)
	c.Binary, c.Large, c.Symlinks, c.Executables = m.Binary, m.Large, m.Symlinks, m.Executables
	c.Ignored, c.NodeModules, c.NestedRepos = m.Ignored, m.NodeModules, m.NestedRepos
	c.GenerateSeconds = gen.Seconds()
	r.Source = m.Source
}

func key(sys, op, q string) string { return sys + "/" + op + "/" + q }

// add records one value.
func (r *Report) add(sys, op, q string, v float64) {
	k := key(sys, op, q)
	if r.Metrics[k] == nil {
		r.Metrics[k] = &Metric{}
	}
	r.Metrics[k].Values = append(r.Metrics[k].Values, v)
}

// get returns a metric, or nil.
func (r *Report) get(sys, op, q string) *Metric { return r.Metrics[key(sys, op, q)] }

// finish computes the summaries and the targets.
func (r *Report) finish() {
	for _, m := range r.Metrics {
		s := slices.Sorted(slices.Values(m.Values))
		m.Min, m.Max = s[0], s[len(s)-1]
		if n := len(s); n%2 == 1 {
			m.Median = s[n/2]
		} else {
			m.Median = (s[n/2-1] + s[n/2]) / 2
		}
	}
	r.Targets = r.targets()
}

// ratio divides two medians; 0 when either is missing.
func (r *Report) ratio(num, den *Metric) float64 {
	if num == nil || den == nil || den.Median == 0 {
		return 0
	}
	return num.Median / den.Median
}

// speedup is git's median time over sys's for op.
func (r *Report) speedup(sys, op string) float64 {
	return r.ratio(r.get("git", op, qSeconds), r.get(sys, op, qSeconds))
}

// targets evaluates the goals on the CLI (the process a host runs)
// and, for memory, the library too.
func (r *Report) targets() []Target {
	var ts []Target
	atLeast := func(name string, v, goal float64) {
		if v > 0 {
			ts = append(ts, Target{name, v, fmt.Sprintf("≥ %gx", goal), v >= goal})
		}
	}
	atMost := func(name string, v, goal float64, unit string) {
		if v > 0 {
			ts = append(ts, Target{name, v, fmt.Sprintf("≤ %g%s", goal, unit), v <= goal})
		}
	}
	atLeast("first save: speed-up over shadow git (CLI)", r.speedup("ckpt-cli", opFirst), 10)
	atMost("first save: CLI time / BLAKE3+zstd floor", r.ratio(r.get("ckpt-cli", opFirst, qSeconds), r.get("floor", opFirst, qSeconds)), 2, "x")
	atLeast("no-change save: speed-up over shadow git (CLI)", r.speedup("ckpt-cli", opNoChange), 4)
	atMost("no-change save: CLI time / parallel-stat floor", r.ratio(r.get("ckpt-cli", opNoChange, qSeconds), r.get("floor", opNoChange, qSeconds)), 2, "x")
	atLeast("save after edits: speed-up over shadow git (CLI)", r.speedup("ckpt-cli", opEdit), 4)
	atLeast("restore: speed-up over shadow git (CLI)", r.speedup("ckpt-cli", opRestore), 4)
	atMost("restore: CLI time / write-and-sync floor", r.ratio(r.get("ckpt-cli", opRestore, qSeconds), r.get("floor", opRestore, qSeconds)), 2, "x")
	atLeast("diff: speed-up over shadow git (CLI)", r.speedup("ckpt-cli", opDiff), 5)
	atMost("store after first save / shadow .git", r.ratio(r.get("ckpt-cli", opFirst, qStore), r.get("git", opFirst, qStore)), 0.6, "x")
	for _, sys := range []string{"ckpt-cli", "ckpt-lib"} {
		if m := r.get(sys, opFirst, qRSS); m != nil {
			atMost("peak RSS of first save, "+sys, m.Max, 200, " MiB")
		}
	}
	// The resident server's goals (issue 13): the everyday operations.
	atLeast("no-change save: speed-up over shadow git (server)", r.speedup(sysServer, opNoChange), 40)
	atLeast("save after edits: speed-up over shadow git (server)", r.speedup(sysServer, opEdit), 10)
	atLeast("diff: speed-up over shadow git (server)", r.speedup(sysServer, opDiff), 20)
	atLeast("restore: speed-up over shadow git (server)", r.speedup(sysServer, opRestore), 4)
	if m := r.get(sysServer, opNoChange, qSeconds); m != nil && r.Scale == "1m" {
		atMost("no-change save at 1M files, server (ms)", m.Median*1000, 50, " ms")
	}
	if m := r.get(sysServer, opRestore, qRSS); m != nil {
		atMost("peak RSS of the server over the run", m.Max, 400, " MiB")
	}
	if m, d := r.get("ckpt-cli", opRestore, qWritten), r.get("git", opDiff, qFiles); m != nil && d != nil {
		ts = append(ts, Target{"restore writes only the differing files (CLI, max over runs)", m.Max,
			fmt.Sprintf("≤ %g (files the edit changed)", d.Median), m.Max <= d.Median})
	}
	return ts
}

// fmtSeconds prints a time metric as "median (min–max)".
func fmtSeconds(m *Metric) string {
	if m == nil {
		return "–"
	}
	f := func(v float64) string {
		switch {
		case v < 1:
			return fmt.Sprintf("%.0f ms", v*1000)
		case v < 10:
			return fmt.Sprintf("%.2f s", v)
		}
		return fmt.Sprintf("%.1f s", v)
	}
	return fmt.Sprintf("%s (%s – %s)", f(m.Median), f(m.Min), f(m.Max))
}

func fmtRatio(v float64) string {
	if v == 0 {
		return "–"
	}
	if v < 10 {
		return fmt.Sprintf("%.2fx", v)
	}
	return fmt.Sprintf("%.0fx", v)
}

func fmtMiB(m *Metric) string {
	if m == nil {
		return "–"
	}
	if m.Min == m.Max {
		return fmt.Sprintf("%.0f MiB", m.Median)
	}
	return fmt.Sprintf("%.0f MiB (%.0f–%.0f)", m.Median, m.Min, m.Max)
}

func fmtCount(m *Metric) string {
	if m == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f", m.Median)
}

// WriteMarkdown writes the results as markdown tables.
func (r *Report) WriteMarkdown(w io.Writer) {
	r.writeCorpus(w)
	fmt.Fprintln(w, "| operation | shadow git | ckpt CLI | ckpt library | ckpt server | ckpt server, watcher: none | floor | git ÷ CLI | git ÷ library | git ÷ server | git ÷ server, watcher: none | CLI ÷ floor |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, o := range opLabels {
		floor := r.get("floor", o.op, qSeconds)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", o.label,
			fmtSeconds(r.get("git", o.op, qSeconds)), fmtSeconds(r.get("ckpt-cli", o.op, qSeconds)), fmtSeconds(r.get("ckpt-lib", o.op, qSeconds)),
			fmtSeconds(r.get(sysServer, o.op, qSeconds)), fmtSeconds(r.get(sysServerNoWatcher, o.op, qSeconds)), fmtSeconds(floor),
			fmtRatio(r.speedup("ckpt-cli", o.op)), fmtRatio(r.speedup("ckpt-lib", o.op)), fmtRatio(r.speedup(sysServer, o.op)),
			fmtRatio(r.speedup(sysServerNoWatcher, o.op)), fmtRatio(r.ratio(r.get("ckpt-cli", o.op, qSeconds), floor)))
	}
	fmt.Fprintln(w)
	r.writeServer(w)
	r.writeStash(w)
	fmt.Fprintln(w, "| resource | shadow git | ckpt CLI | ckpt library | ckpt ÷ git |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|")
	gitStore := fmtMiB(r.get("git", opFirst, qStore))
	if gc := r.get("git", opFirst, qStoreGC); gc != nil {
		gitStore += fmt.Sprintf("; %.0f MiB after `git gc`", gc.Median)
	}
	fmt.Fprintf(w, "| store on disk after first save | %s | %s | %s | %s |\n", gitStore, fmtMiB(r.get("ckpt-cli", opFirst, qStore)),
		fmtMiB(r.get("ckpt-lib", opFirst, qStore)), fmtRatio(r.ratio(r.get("ckpt-cli", opFirst, qStore), r.get("git", opFirst, qStore))))
	for _, o := range opLabels {
		fmt.Fprintf(w, "| peak RSS, %s | %s | %s | %s | %s |\n", o.label, fmtMiB(r.get("git", o.op, qRSS)), fmtMiB(r.get("ckpt-cli", o.op, qRSS)),
			fmtMiB(r.get("ckpt-lib", o.op, qRSS)), fmtRatio(r.ratio(r.get("ckpt-cli", o.op, qRSS), r.get("git", o.op, qRSS))))
	}
	fmt.Fprintf(w, "| restore: files written / deleted on disk | %s / %s | %s / %s | %s / %s | |\n",
		fmtCount(r.get("git", opRestore, qWritten)), fmtCount(r.get("git", opRestore, qDeleted)),
		fmtCount(r.get("ckpt-cli", opRestore, qWritten)), fmtCount(r.get("ckpt-cli", opRestore, qDeleted)),
		fmtCount(r.get("ckpt-lib", opRestore, qWritten)), fmtCount(r.get("ckpt-lib", opRestore, qDeleted)))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | measured | goal | met |")
	fmt.Fprintln(w, "|---|--:|--:|:-:|")
	for _, t := range r.Targets {
		fmt.Fprintf(w, "| %s | %.2f | %s | %s |\n", t.Name, t.Value, t.Goal, map[bool]string{true: "yes", false: "**no**"}[t.Met])
	}
}

// writeServer writes the resident server's resources after each
// operation: its peak RSS so far and the inotify watches it holds.
func (r *Report) writeServer(w io.Writer) {
	if r.get(sysServer, opFirst, qSeconds) == nil {
		return
	}
	fmt.Fprintln(w, "| ckpt server, after | peak RSS so far | inotify watches |")
	fmt.Fprintln(w, "|---|--:|--:|")
	for _, o := range opLabels {
		fmt.Fprintf(w, "| %s | %s | %s |\n", o.label, fmtMiB(r.get(sysServer, o.op, qRSS)), fmtCount(r.get(sysServer, o.op, qWatches)))
	}
	fmt.Fprintln(w)
}

// writeStash sets Cline's stash flow (checkpoints committed into the
// workspace's own repository) beside the server and the CLI, when it ran.
func (r *Report) writeStash(w io.Writer) {
	if r.get("stash", opFirst, qSeconds) == nil {
		return
	}
	fmt.Fprintln(w, "| operation (workspace a git repository) | stash flow | ckpt server | ckpt CLI | stash ÷ server | stash ÷ CLI |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|")
	for _, o := range opLabels {
		stash := r.get("stash", o.op, qSeconds)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", o.label, fmtSeconds(stash), fmtSeconds(r.get(sysServer, o.op, qSeconds)),
			fmtSeconds(r.get("ckpt-cli", o.op, qSeconds)), fmtRatio(r.ratio(stash, r.get(sysServer, o.op, qSeconds))),
			fmtRatio(r.ratio(stash, r.get("ckpt-cli", o.op, qSeconds))))
	}
	fmt.Fprintln(w)
}

// writeCorpus writes the sentence describing the corpus and the run.
func (r *Report) writeCorpus(w io.Writer) {
	c := r.Corpus
	if r.Source == "" {
		fmt.Fprintf(w, "Corpus `%s` (seed %d): %d files, %d captured (%.0f MiB, %d binary, %d over 20 MiB, %d symlinks, %d executables), %d ignored build outputs, %d in node_modules, %d nested repositories; ",
			r.Scale, r.Seed, c.Files, c.Captured, c.CapturedMiB, c.Binary, c.Large, c.Symlinks, c.Executables, c.Ignored, c.NodeModules, c.NestedRepos)
	} else {
		how := "copied"
		if r.InPlace {
			how = "in place, read-only operations"
		}
		fmt.Fprintf(w, "Corpus `%s` (real tree, %s): %d files, %d captured (%.0f MiB, %d symlinks, %d executables), %d not captured (ignore files, cline profile); ",
			r.Source, how, c.Files, c.Captured, c.CapturedMiB, c.Symlinks, c.Executables, c.Ignored)
	}
	fmt.Fprintf(w, "shadow git commits %d paths, ckpt %d. %s, %d cores, %s, %s. %d interleaved repetitions, caches %s; median (min–max).\n\n",
		c.GitFiles, c.CkptFiles, r.Machine.CPU, r.Machine.Cores, r.Machine.Go, r.Machine.Git, r.Reps, map[bool]string{true: "dropped before each operation", false: "warm"}[r.Cold])
}
