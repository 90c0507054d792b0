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
// operation (git time ÷ ckpt time; store: git size ÷ ckpt size), for the CLI
// and the library, on a log scale with each goal marked.
func (r *Report) chart() []byte {
	var rows []chartRow
	goals := map[string]float64{opFirst: 10, opNoChange: 4, opEdit: 4, opDiff: 5, opRestore: 4}
	for _, o := range opLabels {
		rows = append(rows, chartRow{o.label, []float64{r.speedup("ckpt-cli", o.op), r.speedup("ckpt-lib", o.op)}, goals[o.op]})
	}
	git := r.get("git", opFirst, qStore)
	rows = append(rows, chartRow{"store size after first save", []float64{
		r.ratio(git, r.get("ckpt-cli", opFirst, qStore)), r.ratio(git, r.get("ckpt-lib", opFirst, qStore))}, 1 / 0.6})
	return drawChart(fmt.Sprintf("ckpt vs shadow git, %s corpus (%d files), %d cores: times faster / smaller (log scale)",
		r.Scale, r.Corpus.Files, r.Machine.Cores), []string{"ckpt CLI", "ckpt library"}, rows)
}

// drawChart renders horizontal grouped bars on a log axis starting at 1
// (or 0.1 when a value is below 1).
func drawChart(title string, series []string, rows []chartRow) []byte {
	const (
		width, left, right, top = 900.0, 300.0, 60.0, 60.0
		barH, gap               = 16.0, 14.0
	)
	colors := []string{"#2f6fdf", "#8fb3f0"}
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
	for i, s := range series {
		fmt.Fprintf(&b, `<rect x="%.0f" y="34" width="12" height="12" fill="%s"/><text x="%.0f" y="44">%s</text>`+"\n", left+float64(i)*140, colors[i%len(colors)], left+float64(i)*140+16, s)
	}
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#c00" stroke-width="2"/><text x="%.0f" y="44">goal</text>`+"\n", left+290, 34.0, left+290, 46.0, left+296)
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
