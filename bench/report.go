//go:build linux

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
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
	opRedo     = "redo"

	qSeconds         = "seconds"
	qRSS             = "rss_mib"
	qStore           = "store_mib"
	qStoreGC         = "store_gc_mib"
	qBackground      = "background_seconds"
	qSettled         = "settled_seconds" // sysServerSettled: the wait for the idle recompression
	qFiles           = "files"
	qWritten         = "written"
	qDeleted         = "deleted"
	qReportedWritten = "reported_written"
	qWatches         = "inotify_watches" // the resident server's, after the operation
	qDecode          = "decode_seconds"  // the part of the time spent decoding a result in Go (step.Decode)
)

// opLabels names the timed operations in tables and charts, in order.
var opLabels = []struct{ op, label string }{
	{opFirst, "first save (empty store)"},
	{opNoChange, "no-change save"},
	{opEdit, "save after 100 edits + 20 new files"},
	{opDiff, "diff of that change (both sides read)"},
	{opRestore, "restore of that change"},
	{opRedo, "redo (restore of the edit again)"},
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
	Source  string `json:"source,omitempty"`
	InPlace bool   `json:"in_place,omitempty"`
	Reps    int    `json:"repetitions"`
	// Restores is how many restores and redos each repetition times
	// (-restores; 0 in results from before the flag: one).
	Restores int  `json:"restores,omitempty"`
	Cold     bool `json:"cold"`
	// PauseMs is the untimed pause between the edit and its save (-pause).
	PauseMs int64   `json:"pause_ms,omitempty"`
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
	// its change watcher off), ckpt-rpc (serve on stdio), stash and floor.
	Metrics map[string]*Metric `json:"metrics"`
	Targets []Target           `json:"targets"`
}

func newReport(o options) *Report {
	return &Report{Date: time.Now().UTC().Truncate(time.Second), Scale: o.scale, Seed: o.seed, Reps: o.reps, Restores: o.restores, InPlace: o.inPlace,
		Cold: o.cold, PauseMs: o.pause.Milliseconds(), Machine: describeMachine(), Metrics: map[string]*Metric{}}
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
		m.summarise()
	}
	r.Targets = r.targets()
}

// summarise computes the median, minimum and maximum of the values.
func (m *Metric) summarise() {
	s := slices.Sorted(slices.Values(m.Values))
	m.Min, m.Max = s[0], s[len(s)-1]
	if n := len(s); n%2 == 1 {
		m.Median = s[n/2]
	} else {
		m.Median = (s[n/2-1] + s[n/2]) / 2
	}
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
	// The resident forms' goals: every everyday operation 20x shadow git
	// where hosts call it, and the restore within 2x of its floor.
	for _, c := range []column{{sys: sysServer, short: "server"}, {sys: sysRPC, short: "JSON-RPC"}} {
		atLeast("no-change save: speed-up over shadow git ("+c.short+")", r.speedup(c.sys, opNoChange), 40)
		for _, op := range []struct{ name, op string }{{"save after edits", opEdit}, {"diff", opDiff}, {"restore", opRestore}, {"redo", opRedo}} {
			atLeast(op.name+": speed-up over shadow git ("+c.short+")", r.speedup(c.sys, op.op), 20)
		}
		atMost("restore: "+c.short+" time / write-and-sync floor", r.ratio(r.get(c.sys, opRestore, qSeconds), r.get("floor", opRestore, qSeconds)), 2, "x")
	}
	if m := r.get(sysServer, opNoChange, qSeconds); m != nil && r.Scale == "1m" {
		atMost("no-change save at 1M files, server (ms)", m.Median*1000, 50, " ms")
	}
	if m := r.get(sysServer, opRedo, qRSS); m != nil { // the last operation timed
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

// column is a system in the tables: its heading and its short name in a
// ratio's heading.
type column struct{ sys, label, short string }

// timedColumns are the systems of the main tables, in order; a table shows
// those that ran.
var timedColumns = []column{
	{"git", "shadow git", "git"},
	{"ckpt-cli", "ckpt CLI", "CLI"},
	{"ckpt-lib", "ckpt library", "library"},
	{sysServer, "ckpt server", "server"},
	{sysServerNoWatcher, "ckpt server, watcher: none", "server, watcher: none"},
	{sysServerSettled, "ckpt server, settled", "server, settled"},
	{sysRPC, "ckpt stdio JSON-RPC", "JSON-RPC"},
}

// floorColumns are the systems whose time is set against the floor: the
// CLI and the two resident forms a host runs.
var floorColumns = []string{"ckpt-cli", sysServer, sysServerSettled, sysRPC}

// ran lists the columns of cols whose system has a first save (or, in
// place, a no-change save) in the report.
func (r *Report) ran(cols []column) []column {
	var out []column
	for _, c := range cols {
		if r.get(c.sys, opFirst, qSeconds) != nil || r.get(c.sys, opNoChange, qSeconds) != nil {
			out = append(out, c)
		}
	}
	return out
}

// row writes one markdown table row.
func row(w io.Writer, cells ...string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
}

// header writes a table's heading row and its alignment row (the first
// column left, the others right).
func header(w io.Writer, cells ...string) {
	row(w, cells...)
	fmt.Fprintln(w, "|---"+strings.Repeat("|--:", len(cells)-1)+"|")
}

// WriteMarkdown writes the results as markdown tables.
func (r *Report) WriteMarkdown(w io.Writer) {
	r.writeCorpus(w)
	r.writeTimes(w)
	r.writeServer(w)
	r.writePhases(w)
	r.writeStash(w)
	r.writeResources(w)
	fmt.Fprintln(w, "| target | measured | goal | met |")
	fmt.Fprintln(w, "|---|--:|--:|:-:|")
	for _, t := range r.Targets {
		fmt.Fprintf(w, "| %s | %.2f | %s | %s |\n", t.Name, t.Value, t.Goal, map[bool]string{true: "yes", false: "**no**"}[t.Met])
	}
}

// writeTimes writes each operation's time per system and the floor, git's
// time over each ckpt system's, and the host-facing systems' over the floor.
func (r *Report) writeTimes(w io.Writer) {
	cols := r.ran(timedColumns)
	var floors []column
	heads := []string{"operation"}
	for _, c := range cols {
		heads = append(heads, c.label)
		if slices.Contains(floorColumns, c.sys) {
			floors = append(floors, c)
		}
	}
	heads = append(heads, "floor")
	for _, c := range cols {
		if c.sys != "git" {
			heads = append(heads, "git ÷ "+c.short)
		}
	}
	for _, c := range floors {
		heads = append(heads, c.short+" ÷ floor")
	}
	header(w, heads...)
	for _, o := range opLabels {
		floor := r.get("floor", o.op, qSeconds)
		cells := []string{o.label}
		for _, c := range cols {
			cells = append(cells, fmtSeconds(r.get(c.sys, o.op, qSeconds)))
		}
		cells = append(cells, fmtSeconds(floor))
		for _, c := range cols {
			if c.sys != "git" {
				cells = append(cells, fmtRatio(r.speedup(c.sys, o.op)))
			}
		}
		for _, c := range floors {
			cells = append(cells, fmtRatio(r.ratio(r.get(c.sys, o.op, qSeconds), floor)))
		}
		row(w, cells...)
	}
	fmt.Fprintln(w)
}

// writeResources writes each system's store after the first save, its
// peak RSS per operation (a resident process's: its peak so far) and the
// files its restore wrote and deleted, with the first ckpt system's over
// git's.
func (r *Report) writeResources(w io.Writer) {
	cols := r.ran(timedColumns)
	heads := []string{"resource"}
	var ckpt *column
	for i, c := range cols {
		heads = append(heads, c.label)
		if ckpt == nil && c.sys != "git" {
			ckpt = &cols[i]
		}
	}
	// withRatio adds the ratio column's cell, when there is such a column.
	withRatio := func(cells []string, q, op string) []string {
		if ckpt == nil {
			return cells
		}
		if q == "" {
			return append(cells, "")
		}
		return append(cells, fmtRatio(r.ratio(r.get(ckpt.sys, op, q), r.get("git", op, q))))
	}
	if ckpt != nil {
		heads = append(heads, ckpt.short+" ÷ git")
	}
	header(w, heads...)
	cells := []string{"store on disk after first save"}
	for _, c := range cols {
		v := fmtMiB(r.get(c.sys, opFirst, qStore))
		if gc := r.get(c.sys, opFirst, qStoreGC); gc != nil && c.sys == "git" {
			v += fmt.Sprintf("; %.0f MiB after `git gc`", gc.Median)
		}
		cells = append(cells, v)
	}
	row(w, withRatio(cells, qStore, opFirst)...)
	for _, o := range opLabels {
		cells := []string{"peak RSS, " + o.label}
		for _, c := range cols {
			cells = append(cells, fmtMiB(r.get(c.sys, o.op, qRSS)))
		}
		row(w, withRatio(cells, qRSS, o.op)...)
	}
	for _, op := range []string{opRestore, opRedo} {
		cells = []string{op + ": files written / deleted on disk"}
		for _, c := range cols {
			cells = append(cells, fmtCount(r.get(c.sys, op, qWritten))+" / "+fmtCount(r.get(c.sys, op, qDeleted)))
		}
		row(w, withRatio(cells, "", "")...)
	}
	fmt.Fprintln(w)
}

// residentColumns are the systems that keep one process up over the run.
var residentColumns = []column{
	{sysServer, "ckpt server", "server"},
	{sysServerNoWatcher, "ckpt server, watcher: none", "server, watcher: none"},
	{sysServerSettled, "ckpt server, settled", "server, settled"},
	{sysRPC, "ckpt stdio JSON-RPC", "JSON-RPC"},
}

// writeServer writes the resident processes' resources after each
// operation: their peak RSS so far and the inotify watches they hold.
func (r *Report) writeServer(w io.Writer) {
	cols := r.ran(residentColumns)
	if len(cols) == 0 {
		return
	}
	heads := []string{"resident process, after"}
	for _, c := range cols {
		heads = append(heads, c.short+": peak RSS so far", c.short+": inotify watches")
		if r.decodes(c.sys) {
			heads = append(heads, c.short+": of the time, decoding the result")
		}
	}
	header(w, heads...)
	for _, o := range opLabels {
		cells := []string{o.label}
		for _, c := range cols {
			cells = append(cells, fmtMiB(r.get(c.sys, o.op, qRSS)), fmtCount(r.get(c.sys, o.op, qWatches)))
			if r.decodes(c.sys) {
				cells = append(cells, fmtSeconds(r.get(c.sys, o.op, qDecode)))
			}
		}
		row(w, cells...)
	}
	fmt.Fprintln(w)
}

// decodes reports whether sys recorded the decoding of its results apart
// (step.Decode).
func (r *Report) decodes(sys string) bool {
	for _, o := range opLabels {
		if r.get(sys, o.op, qDecode) != nil {
			return true
		}
	}
	return false
}

// writeStash sets Cline's stash flow (checkpoints committed into the
// workspace's own repository) beside the systems a host runs, when it ran.
func (r *Report) writeStash(w io.Writer) {
	stash := r.get("stash", opFirst, qSeconds)
	if stash == nil {
		return
	}
	var cols []column
	for _, c := range r.ran(timedColumns) {
		if slices.Contains(floorColumns, c.sys) {
			cols = append(cols, c)
		}
	}
	heads := []string{"operation (workspace a git repository)", "stash flow"}
	for _, c := range cols {
		heads = append(heads, c.label)
	}
	for _, c := range cols {
		heads = append(heads, "stash ÷ "+c.short)
	}
	header(w, heads...)
	for _, o := range opLabels {
		stash := r.get("stash", o.op, qSeconds)
		cells := []string{o.label, fmtSeconds(stash)}
		for _, c := range cols {
			cells = append(cells, fmtSeconds(r.get(c.sys, o.op, qSeconds)))
		}
		for _, c := range cols {
			cells = append(cells, fmtRatio(r.ratio(stash, r.get(c.sys, o.op, qSeconds))))
		}
		row(w, cells...)
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
	pause := ""
	if r.PauseMs > 0 {
		pause = fmt.Sprintf(", %d ms between the edit and its save (untimed, every system)", r.PauseMs)
	}
	if r.Restores > 1 {
		pause += fmt.Sprintf(", %d restores and redos in each", r.Restores)
	}
	fmt.Fprintf(w, "shadow git commits %d paths, ckpt %d. %s, %d cores, %s, %s. %d interleaved repetitions, caches %s%s; median (min–max).\n\n",
		c.GitFiles, c.CkptFiles, r.Machine.CPU, r.Machine.Cores, r.Machine.Go, r.Machine.Git, r.Reps, map[bool]string{true: "dropped before each operation", false: "warm"}[r.Cold], pause)
}
