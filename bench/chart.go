//go:build linux

package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
)

// chartRow is one group of bars: a label, a value per series, the goal.
type chartRow struct {
	label  string
	values []float64 // per series; 0 = not measured
	goal   float64
}

// chart draws how many times better than the shadow-git flow ckpt is, per
// operation (git time ÷ ckpt time; store: git size ÷ ckpt size), for each
// ckpt system that ran, on a log scale with each goal marked.
func (r *Report) chart() []byte {
	var series []string
	var systems []string
	for _, c := range r.ran(timedColumns) {
		if c.sys != "git" {
			series, systems = append(series, c.label), append(systems, c.sys)
		}
	}
	var rows []chartRow
	goals := map[string]float64{opFirst: 10, opNoChange: 4, opEdit: 4, opDiff: 5, opRestore: 4, opRedo: 4}
	for _, o := range opLabels {
		row := chartRow{label: o.label, goal: goals[o.op]}
		for _, sys := range systems {
			row.values = append(row.values, r.speedup(sys, o.op))
		}
		rows = append(rows, row)
	}
	git := r.get("git", opFirst, qStore)
	store := chartRow{label: "store size after first save", goal: 1 / 0.6}
	for _, sys := range systems {
		store.values = append(store.values, r.ratio(git, r.get(sys, opFirst, qStore)))
	}
	rows = append(rows, store)
	return drawChart(fmt.Sprintf("ckpt vs shadow git, %s corpus (%d files), %d cores: times faster / smaller (log scale)",
		r.Scale, r.Corpus.Files, r.Machine.Cores), series, rows)
}

// drawChart renders horizontal grouped bars on a log axis starting at 1
// (or 0.1 when a value is below 1).
func drawChart(title string, series []string, rows []chartRow) []byte {
	const (
		width, left, right, top = 1100.0, 300.0, 60.0, 60.0
		barH, gap               = 16.0, 14.0
		legendStep              = 190.0 // room for "ckpt server, watcher: none": six legends fit the width
	)
	colors := []string{"#2f6fdf", "#8fb3f0", "#2a9d5b", "#9fd8b5", "#d9822b", "#f2c38f"}
	lo, most := 1.0, 2.0
	for _, row := range rows {
		for _, v := range append([]float64{row.goal}, row.values...) {
			if v > 0 {
				lo = math.Min(lo, math.Pow(10, math.Floor(math.Log10(v))))
				most = math.Max(most, v*1.15)
			}
		}
	}
	hi := niceCeil(most)
	plotW := width - left - right
	x := func(v float64) float64 {
		return left + plotW*(math.Log10(math.Max(v, lo))-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))
	}
	groupH := float64(len(series))*barH + gap
	height := top + float64(len(rows))*groupH + 50
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="10" y="22" font-size="14" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	legend := func(i int) float64 { return 10 + float64(i)*legendStep }
	for i, s := range series {
		fmt.Fprintf(&b, `<rect x="%.0f" y="34" width="12" height="12" fill="%s"/><text x="%.0f" y="44">%s</text>`+"\n", legend(i), colors[i%len(colors)], legend(i)+16, html.EscapeString(s))
	}
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#c00" stroke-width="2"/><text x="%.0f" y="44">goal</text>`+"\n", legend(len(series))+6, 34.0, legend(len(series))+6, 46.0, legend(len(series))+12)
	bottom := height - 40
	for t := lo; t <= hi*1.001; t *= 10 { // ticks at 1, 2 and 5 of each decade
		for _, m := range []float64{1, 2, 5} {
			v := t * m
			if v > hi*1.001 {
				break
			}
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/><text x="%.1f" y="%.0f" text-anchor="middle" fill="#555">%gx</text>`+"\n", x(v), top-4, x(v), bottom, x(v), bottom+16, v)
		}
	}
	for i, row := range rows {
		y := top + float64(i)*groupH
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-8, y+float64(len(series))*barH/2+4, html.EscapeString(row.label))
		for j, v := range row.values {
			by := y + float64(j)*barH
			if v > 0 {
				fmt.Fprintf(&b, `<rect x="%.0f" y="%.1f" width="%.1f" height="%.0f" fill="%s"/><text x="%.1f" y="%.1f" font-size="11">%s</text>`+"\n",
					left, by, x(v)-left, barH-2, colors[j%len(colors)], x(v)+4, by+barH-5, fmtRatio(v))
			}
		}
		if row.goal > 0 {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#c00" stroke-width="2"/>`+"\n", x(row.goal), y-2, x(row.goal), y+float64(len(series))*barH)
		}
	}
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#333"/>`+"\n</svg>\n", left, top-4, left, bottom)
	return b.Bytes()
}

// niceCeil rounds v up to the next 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
