//go:build linux

package main

import (
	"fmt"
	"io"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

// restorePhases names the phases a ckpt restore reports (its phases_ms),
// in the order it spends them, with the quantity each is kept under.
var restorePhases = []struct{ name, label string }{
	{"backup", "backup checkpoint"},
	{"plan", "plan and blob lookup"},
	{"journal", "journal written (what the plan left of it)"},
	{"write", "files written"},
	{"place", "syncfs and renames"},
	{"flush", "last flush, head moved"},
	{"finish", "journal cleared"},
}

// phaseQuantity is the metric quantity of a restore phase.
func phaseQuantity(name string) string { return "phase_" + name + "_seconds" }

// addPhases records where a restore said its time went.
func (r *Report) addPhases(sys, op string, p protocol.PhasesJSON) {
	ms := map[string]float64{"backup": p.Backup, "plan": p.Plan, "journal": p.Journal,
		"write": p.Write, "place": p.Place, "flush": p.Flush, "finish": p.Finish}
	for _, ph := range restorePhases {
		r.add(sys, op, phaseQuantity(ph.name), ms[ph.name]/1000)
	}
}

// writePhases writes where the restores' time went, phase by phase (the
// medians of each), for the systems that report it, beside the floor; the
// rest of an operation's time is the wait for the store, the call and
// (for the CLI columns) the client process.
func (r *Report) writePhases(w io.Writer) {
	ops := []string{opRestore, opRedo}
	var cols []column
	for _, c := range r.ran(timedColumns) {
		if r.get(c.sys, opRestore, phaseQuantity("write")) != nil {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		return
	}
	heads := []string{"where a restore's time went (median ms)"}
	for _, c := range cols {
		for _, op := range ops {
			heads = append(heads, c.short+": "+op)
		}
	}
	header(w, heads...)
	for _, ph := range restorePhases {
		cells := []string{ph.label}
		for _, c := range cols {
			for _, op := range ops {
				cells = append(cells, fmtMs(r.get(c.sys, op, phaseQuantity(ph.name))))
			}
		}
		row(w, cells...)
	}
	rest := []string{"the rest: lock, call, process"}
	total := []string{"the operation"}
	for _, c := range cols {
		for _, op := range ops {
			all := r.get(c.sys, op, qSeconds)
			total = append(total, fmtMs(all))
			rest = append(rest, fmtMs(r.remainder(c.sys, op, all)))
		}
	}
	row(w, rest...)
	row(w, total...)
	if floor := r.get("floor", opRestore, qSeconds); floor != nil {
		cells := []string{"the floor (writing and syncing the changed files)"}
		for range cols {
			cells = append(cells, fmtMs(floor), "")
		}
		row(w, cells...)
	}
	fmt.Fprintln(w)
}

// remainder is the median over the repetitions of an operation's time
// less the phases it reported: what went outside the engine's restore.
func (r *Report) remainder(sys, op string, all *Metric) *Metric {
	if all == nil {
		return nil
	}
	out := &Metric{}
	for i, v := range all.Values {
		for _, ph := range restorePhases {
			if m := r.get(sys, op, phaseQuantity(ph.name)); m != nil && i < len(m.Values) {
				v -= m.Values[i]
			}
		}
		out.Values = append(out.Values, v)
	}
	out.summarise()
	return out
}

// fmtMs is a metric's median in milliseconds, to a tenth.
func fmtMs(m *Metric) string {
	if m == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f", m.Median*1000)
}
