package main

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/engine"
)

func (a *app) dropCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "drop TASK",
		Short: "Remove a task's checkpoints and head (content other tasks share stays; gc reclaims the rest)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				res, err := e.Drop(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if a.json {
					ids := make([]string, len(res.Checkpoints))
					for i, id := range res.Checkpoints {
						ids[i] = id.String()
					}
					a.printJSON(map[string]any{"task": res.Task, "head": idText(res.Head), "checkpoints": ids,
						"exclusive_bytes": res.ExclusiveBytes})
					return nil
				}
				a.say("dropped task %s: %d checkpoints; `ckpt gc` reclaims %s only it referenced",
					res.Task, len(res.Checkpoints), humanBytes(res.ExclusiveBytes))
				return nil
			})
		},
	}
}

func (a *app) gcCommand() *cobra.Command {
	var keepLast int
	var maxAge time.Duration
	var maxSize string
	var rewriteBelow float64
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Apply the retention policy, then delete what no checkpoint references and compact packs",
		Long: "gc drops the checkpoints the retention policy selects (never a task head), then sweeps every\n" +
			"tree, blob and pack byte no remaining checkpoint references. Policy flags given here are\n" +
			"remembered as the store's default; a save collects automatically once --max-size is exceeded.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				policy, err := e.Retention(cmd.Context())
				if err != nil {
					return err
				}
				fl := cmd.Flags()
				if fl.Changed("keep-last") || fl.Changed("max-age") || fl.Changed("max-size") {
					if fl.Changed("keep-last") {
						policy.KeepLast = keepLast
					}
					if fl.Changed("max-age") {
						policy.MaxAge = maxAge
					}
					if fl.Changed("max-size") {
						if policy.MaxSize, err = parseSize(maxSize); err != nil {
							return err
						}
					}
					if err := e.SetRetention(cmd.Context(), policy); err != nil {
						return err
					}
				}
				res, err := e.GC(cmd.Context(), engine.GCOptions{Policy: &policy, RewriteBelow: rewriteBelow, Progress: a.phaseProgress("gc")})
				if err != nil {
					return err
				}
				a.printGC(res)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&keepLast, "keep-last", 0, "keep at most N checkpoints per task, besides its head (0: no limit; remembered)")
	f.DurationVar(&maxAge, "max-age", 0, "drop checkpoints older than this, e.g. 720h (0: no limit; remembered)")
	f.StringVar(&maxSize, "max-size", "", "drop the oldest checkpoints until the store fits, e.g. 2GiB (0: no limit; remembered)")
	f.Float64Var(&rewriteBelow, "rewrite-below", engine.DefaultRewriteBelow, "rewrite packs whose live fraction is below this")
	return cmd
}

func (a *app) printGC(res *engine.GCResult) {
	if a.json {
		type droppedJSON struct {
			ID     string    `json:"id"`
			Task   string    `json:"task"`
			Seq    uint64    `json:"seq"`
			Time   time.Time `json:"time"`
			Kind   string    `json:"kind"`
			Reason string    `json:"reason"`
		}
		dropped := make([]droppedJSON, 0, len(res.Dropped))
		for _, d := range res.Dropped {
			dropped = append(dropped, droppedJSON{d.ID.String(), d.Task, d.Seq, d.Time, d.Kind.String(), d.Reason})
		}
		a.printJSON(map[string]any{
			"policy": map[string]any{"keep_last": res.Policy.KeepLast, "max_age": res.Policy.MaxAge.String(),
				"max_size": res.Policy.MaxSize},
			"dropped": dropped, "checkpoints_deleted": res.CheckpointsDeleted, "trees_deleted": res.TreesDeleted,
			"blobs_deleted": res.BlobsDeleted, "dir_caches_dropped": res.DirCachesDropped,
			"packs_rewritten": res.PacksRewritten, "packs_removed": res.PacksRemoved, "packs_truncated": res.PacksTruncated,
			"bytes_copied": res.BytesCopied, "bytes_before": res.PackBytesBefore, "bytes_after": res.PackBytesAfter,
			"reclaimed": res.Reclaimed(), "duration_ms": res.Duration.Milliseconds(),
		})
		return
	}
	a.say("dropped %d checkpoints, deleted %d blobs and %d trees, rewrote %d packs, removed %d; %s → %s (reclaimed %s) in %s",
		len(res.Dropped), res.BlobsDeleted, res.TreesDeleted, res.PacksRewritten, res.PacksRemoved,
		humanBytes(res.PackBytesBefore), humanBytes(res.PackBytesAfter), humanBytes(res.Reclaimed()),
		res.Duration.Round(time.Millisecond))
}

func (a *app) verifyCommand() *cobra.Command {
	var quick bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check that every checkpoint's trees and blobs exist and hash correctly (exit 5 on corruption)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				rep, err := e.Verify(cmd.Context(), engine.VerifyOptions{Quick: quick, Progress: a.phaseProgress("verify")})
				if rep == nil {
					return err
				}
				return a.printVerify(rep, err)
			})
		},
	}
	cmd.Flags().BoolVar(&quick, "quick", false, "check structure only, without re-reading and hashing content")
	return cmd
}

// printVerify prints the report. Under --json the error (if any) goes into
// the same document and only sets the exit code.
func (a *app) printVerify(rep *engine.VerifyReport, verr error) error {
	if a.json {
		type problemJSON struct {
			Checkpoint string `json:"checkpoint"`
			Task       string `json:"task"`
			Seq        uint64 `json:"seq"`
			Path       string `json:"path"`
			Object     string `json:"object"`
			Kind       string `json:"kind"`
			Message    string `json:"message"`
		}
		problems := make([]problemJSON, 0, len(rep.Problems))
		for _, p := range rep.Problems {
			problems = append(problems, problemJSON{idText(p.Checkpoint), p.Task, p.Seq, p.Path, idText(p.Object), p.Kind, p.Message})
		}
		out := map[string]any{"ok": rep.OK(), "quick": rep.Quick, "checkpoints": rep.Checkpoints, "trees": rep.Trees,
			"blobs": rep.Blobs, "locators": rep.Locators, "packs": rep.Packs, "bytes_hashed": rep.BytesHashed, "problems": problems}
		if verr != nil {
			a.exitCode = exitCodeOf(verr)
			out["error"] = map[string]any{"code": a.exitCode, "message": engine.Message(verr)}
		}
		a.printJSON(out)
		return nil
	}
	for _, p := range rep.Problems {
		fmt.Fprintln(a.stdout, p.String())
	}
	if verr != nil {
		return verr
	}
	a.say("ok: %d checkpoints, %d trees, %d blobs, %d packs, %s hashed", rep.Checkpoints, rep.Trees, rep.Blobs,
		rep.Packs, humanBytes(rep.BytesHashed))
	return nil
}

func (a *app) statsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Show store size, dedup and compression ratios, packs and per-task usage",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				st, err := e.Stats(cmd.Context())
				if err != nil {
					return err
				}
				a.printStats(st)
				return nil
			})
		},
	}
}

func (a *app) printStats(st *engine.StoreStats) {
	if a.json {
		packs := make([]map[string]any, 0, len(st.Packs))
		for _, p := range st.Packs {
			packs = append(packs, map[string]any{"pack": p.Pack, "bytes": p.Bytes, "live_bytes": p.LiveBytes})
		}
		tasks := make([]map[string]any, 0, len(st.Tasks))
		for _, t := range st.Tasks {
			tasks = append(tasks, map[string]any{"name": t.Name, "checkpoints": t.Checkpoints,
				"logical_bytes": t.LogicalBytes, "exclusive_bytes": t.ExclusiveBytes})
		}
		a.printJSON(map[string]any{
			"disk_bytes": st.DiskBytes, "index_bytes": st.IndexBytes, "pack_bytes": st.PackBytes,
			"live_bytes": st.LiveBytes, "live_fraction": st.LiveFraction, "pack_count": len(st.Packs), "packs": packs,
			"checkpoints": st.Checkpoints, "trees": st.Trees, "blobs": st.Blobs,
			"logical_bytes": st.LogicalBytes, "unique_bytes": st.UniqueBytes, "stored_bytes": st.StoredBytes,
			"dedup_ratio": st.DedupRatio, "compression_ratio": st.CompressionRatio, "tasks": tasks,
		})
		return
	}
	if a.quiet {
		return
	}
	fmt.Fprintf(a.stdout, "store on disk     %s (packs %s, index %s)\n", humanBytes(st.DiskBytes), humanBytes(st.PackBytes), humanBytes(st.IndexBytes))
	fmt.Fprintf(a.stdout, "packs             %d, %.0f%% live\n", len(st.Packs), 100*st.LiveFraction)
	fmt.Fprintf(a.stdout, "checkpoints       %d (%d trees, %d blobs)\n", st.Checkpoints, st.Trees, st.Blobs)
	fmt.Fprintf(a.stdout, "logical size      %s\n", humanBytes(st.LogicalBytes))
	fmt.Fprintf(a.stdout, "dedup ratio       %.1fx (%s unique)\n", st.DedupRatio, humanBytes(st.UniqueBytes))
	fmt.Fprintf(a.stdout, "compression ratio %.2fx (%s stored)\n", st.CompressionRatio, humanBytes(st.StoredBytes))
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nTASK\tCHECKPOINTS\tLOGICAL\tONLY IN TASK")
	for _, t := range st.Tasks {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", t.Name, t.Checkpoints, humanBytes(t.LogicalBytes), humanBytes(t.ExclusiveBytes))
	}
	tw.Flush()
}

// parseSize reads a byte count: a number with an optional binary unit
// (K, M, G, T; "KiB", "KB" and "k" alike mean 1024).
func parseSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGT", t[n-1]); i >= 0 {
			mult, t = int64(1)<<(10*(i+1)), t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || v*float64(mult) > 1<<62 {
		return 0, usageError{fmt.Sprintf("invalid size %q: use bytes or a number with K, M, G or T (binary units)", s)}
	}
	return int64(v * float64(mult)), nil
}
