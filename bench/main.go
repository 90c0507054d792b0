//go:build linux

// Command bench measures ckpt against the shadow-git checkpoint flow of Cline
// and Roo Code on a generated monorepo, side by side in one run, together
// with the physical floors of the machine (a parallel stat walk, BLAKE3+zstd
// over every byte in memory). It prints a markdown table, writes the results
// as JSON and, on request, an SVG chart of the ratios.
//
//	go run ./bench -scale 100k -reps 3 -json bench/results-100k.json -chart bench/chart.svg
//
// "-corpus DIR" benchmarks on a copy of any directory instead (never
// modifying DIR; "-corpus-in-place" measures DIR itself, read-only
// operations only), and "-corpus gomodcache" on the pinned public modules
// of bench/realmods.txt, fetched into a fresh module cache ("bench
// fetch-modules DIR" only fetches them). "bench compress -corpus DIR"
// compares store compression candidates on a directory's files in one run;
// "bench remote" compares push and clone with restic backup and restore on
// an S3 service (remote.go); "bench long-task" measures a long task's
// saves and history on disk against a shadow git repository's
// (longtask.go), with an agent's edits or one-line edits (-edits).
//
// "go run ./bench generate -scale 100k DIR" only writes the corpus, for
// profiling by hand ("bench worker -op save -ws DIR -store S -cpuprofile F"
// runs one library operation). Progress goes to stderr, the table to stdout. The corpus, the stores and
// the shadow repository live in a temporary directory removed at the end.
//
// The tool builds on Linux only: it drops the page cache through
// /proc/sys/vm/drop_caches, reads Linux stat fields and measures its walk
// floor with getdents and fstatat.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/ckpt/ckpt/bench/corpus"
)

// subcommands are the first arguments that select another mode than a
// benchmark run; each gets the arguments after its name.
var subcommands = map[string]func(ctx context.Context, args []string) error{
	"spawn":    func(ctx context.Context, _ []string) error { return serveSpawn(ctx, os.Stdin, os.Stdout) },
	"generate": runGenerate,
	"fetch-modules": func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("want one directory argument")
		}
		return fetchModules(ctx, args[0])
	},
	"compress":  runCandidates,
	"long-task": runLongTask,
	"remote":    runRemote,
	"worker":    runWorker,
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	name, run := "bench", mainErr
	if len(os.Args) > 1 && subcommands[os.Args[1]] != nil {
		name = "bench " + os.Args[1]
		sub := subcommands[os.Args[1]]
		run = func(ctx context.Context) error { return sub(ctx, os.Args[2:]) }
	}
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// render prints the table of a saved results file and, when chartOut is
// set, redraws its chart.
func render(path, chartOut string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	r.Targets = r.targets() // the goals as they stand now, on the saved medians
	r.WriteMarkdown(os.Stdout)
	if chartOut == "" {
		return nil
	}
	return os.WriteFile(chartOut, r.chart(), 0o644)
}

// runGenerate writes the corpus of a scale into the directory named by the
// one argument left after the flags.
func runGenerate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	scale := fs.String("scale", "10k", "corpus size: tiny, 10k, 100k or 1m")
	seed := fs.Uint64("seed", 1, "corpus seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("want one directory argument")
	}
	cfg, err := corpus.ForScale(*scale, *seed)
	if err != nil {
		return err
	}
	m, err := corpus.Generate(ctx, fs.Arg(0), cfg)
	if err != nil {
		return err
	}
	progress("wrote %d files (%d captured, %.0f MiB) to %s", m.Files, m.Captured, mib(m.Bytes), m.Root)
	return nil
}

func mainErr(ctx context.Context) error {
	var o options
	flag.StringVar(&o.scale, "scale", "10k", "corpus size: tiny, 10k, 100k or 1m")
	flag.Uint64Var(&o.seed, "seed", 1, "corpus seed")
	flag.IntVar(&o.reps, "reps", 3, "interleaved repetitions")
	flag.BoolVar(&o.cold, "cold", false, "drop the page cache before each operation (root only)")
	flag.StringVar(&o.dir, "dir", "", "parent of the temporary work directory (default: the system temp dir)")
	flag.BoolVar(&o.keep, "keep", false, "keep the corpus, stores and shadow repository")
	flag.IntVar(&o.edits, "edits", 100, "files edited between the saves")
	flag.IntVar(&o.added, "added", 20, "files added between the saves")
	flag.IntVar(&o.restores, "restores", 1, "restores of the first checkpoint, each followed by a redo of the edit, per repetition")
	flag.DurationVar(&o.pause, "pause", 0, "untimed pause between the edit and its save, for every system (an agent's host checkpoints some time after a tool's writes)")
	flag.StringVar(&o.profileDir, "cpuprofile-dir", "", "write a CPU profile of every library operation into this directory")
	flag.StringVar(&o.systems, "systems", "", "comma-separated subset of git,ckpt-cli,ckpt-lib,ckpt-server,ckpt-server-nowatch (the server with CKPT_WATCHER=none),ckpt-rpc (ckpt serve on stdio, as an embedded host runs it),ckpt-server-settled (the server measured after its idle recompression of the first save),stash (default all but ckpt-server-settled and stash, which makes the workspace a git repository)")
	flag.StringVar(&o.corpus, "corpus", "", "benchmark on a copy of this directory instead of a generated corpus; \"gomodcache\" fetches the pinned modules of bench/realmods.txt")
	flag.BoolVar(&o.inPlace, "corpus-in-place", false, "with -corpus DIR: measure DIR itself, read-only operations only (first and no-change saves)")
	flag.BoolVar(&o.gc, "gc", true, "also measure the shadow repository after git gc (last repetition)")
	flag.BoolVar(&o.deferCompression, "defer-compression", false, "ckpt-lib: first save with engine.Options.DeferCompression; its store is recompressed after the last repetition")
	jsonOut := flag.String("json", "", "write the results as JSON to this file")
	chartOut := flag.String("chart", "", "write an SVG chart of the ratios to this file")
	fromJSON := flag.String("from-json", "", "render the table and chart of a saved results file instead of running")
	flag.Parse()
	if *fromJSON != "" {
		return render(*fromJSON, *chartOut)
	}
	if o.inPlace && (o.corpus == "" || o.corpus == realModulesCorpus) {
		return fmt.Errorf("-corpus-in-place needs -corpus DIR")
	}
	if o.reps < 1 {
		return fmt.Errorf("-reps must be at least 1")
	}
	if o.restores < 1 {
		return fmt.Errorf("-restores must be at least 1")
	}
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return err
		}
	}
	r, err := run(ctx, o)
	if err != nil {
		return err
	}
	r.Command = "go run ./bench " + strings.Join(os.Args[1:], " ")
	r.WriteMarkdown(os.Stdout)
	if *jsonOut != "" {
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	if *chartOut != "" {
		if err := os.WriteFile(*chartOut, r.chart(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
