package main

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/background"
)

func (a *app) dropCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "drop TASK",
		Short: "Remove a task's checkpoints and head (content other tasks share stays; gc reclaims the rest)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withEngine(cmd, func(e *engine.Engine) error {
				res, err := e.Drop(cmd.Context(), args[0])
				if errors.Is(err, engine.ErrUnknownRef) {
					return fmt.Errorf("%w (`ckpt tasks` lists them)", err)
				}
				if err != nil {
					return err
				}
				if a.json {
					a.printJSON(protocol.DropView(res))
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
	var remote string
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Apply the retention policy, then delete what no checkpoint references and compact packs",
		Long: "gc drops the checkpoints the retention policy selects (never a task head), then sweeps every\n" +
			"tree, blob and pack byte no remaining checkpoint references. Policy flags given here are\n" +
			"remembered as the store's default; a save collects automatically once --max-size is exceeded.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if remote != "" && grace <= 0 {
				// The engine takes no grace as its default; a user who asks
				// for none would be told objects are marked for a gc
				// "0s from now" that then never deletes them.
				return protocol.UsageError(fmt.Sprintf("--grace %v: want a positive duration (an unreferenced object is deleted by a gc at least this long after one found it so)", grace))
			}
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
						if policy.MaxSize, err = protocol.ParseSize(maxSize); err != nil {
							return err
						}
					}
					if err := e.SetRetention(cmd.Context(), policy); err != nil {
						return err
					}
				}
				if remote != "" {
					return a.remoteGC(cmd.Context(), e, remote, policy, grace)
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
	f.StringVar(&remote, "remote", "", "collect on this remote instead of the store: apply --keep-last/--max-age to its tasks, delete what no head references")
	f.DurationVar(&grace, "grace", engine.DefaultRemoteGrace, "with --remote: delete an unreferenced object only once a gc this long before found it so")
	return cmd
}

func (a *app) printGC(res *engine.GCResult) {
	if a.json {
		a.printJSON(protocol.GCView(res))
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
		out := protocol.VerifyView(rep)
		if verr != nil {
			a.exitCode = protocol.ExitCode(verr)
			out.Error = &protocol.ErrorBody{Code: a.exitCode, Message: verr.Error()}
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
				pid, err := background.Running(e.StoreDir())
				if err != nil {
					return err
				}
				a.printStats(st, e, pid)
				return nil
			})
		},
	}
}

// watcherLine says which change watcher e's saves use, and when none, why.
func watcherLine(e *engine.Engine) string {
	w, ok := e.WatchStats()
	switch {
	case !ok && e.Roots() != nil:
		return "none: the saves of a multi-root workspace walk its roots"
	case !ok:
		return "none: only a server (serve, mcp) keeps a watcher; this command walks the workspace"
	case w.Backend == "none":
		return "none (" + w.Fallback + "): every save walks the workspace"
	case w.Provisional:
		return fmt.Sprintf("%s, provisional: a full walk at least every few minutes (%d overflows%s)", w.Backend, w.Overflows, reverifiedPart(w))
	}
	return fmt.Sprintf("%s (%d watches, %d unwatched directories, %d overflows%s)", w.Backend, w.Watches, w.Unwatched, w.Overflows, reverifiedPart(w))
}

// reverifiedPart is what the re-verifications of a watcher found.
func reverifiedPart(w engine.WatchStats) string {
	return fmt.Sprintf("; %d re-verifications found %d missed changes", w.Reverified, w.Missed)
}

// printStats prints st, the watcher of e, the engine that answered, and
// backgroundPID, the process compressing st's deferred packs (0: none runs).
func (a *app) printStats(st *engine.StoreStats, e *engine.Engine, backgroundPID int) {
	if a.json {
		a.printJSON(protocol.StoreStatsView(st, protocol.WatcherView(e.WatchStats()), backgroundPID))
		return
	}
	watcher := watcherLine(e)
	if a.quiet {
		return
	}
	fmt.Fprintf(a.stdout, "store on disk     %s (packs %s, index %s)\n", humanBytes(st.DiskBytes), humanBytes(st.PackBytes), humanBytes(st.IndexBytes))
	fmt.Fprintf(a.stdout, "packs             %d, %.0f%% live\n", len(st.Packs), 100*st.LiveFraction)
	fmt.Fprintf(a.stdout, "checkpoints       %d (%d trees, %d blobs)\n", st.Checkpoints, st.Trees, st.Blobs)
	fmt.Fprintf(a.stdout, "logical size      %s\n", humanBytes(st.LogicalBytes))
	fmt.Fprintf(a.stdout, "dedup ratio       %.1fx (%s unique)\n", st.DedupRatio, humanBytes(st.UniqueBytes))
	fmt.Fprintf(a.stdout, "compression ratio %.2fx (%s stored)\n", st.CompressionRatio, humanBytes(st.StoredBytes))
	fmt.Fprintf(a.stdout, "watcher           %s\n", watcher)
	switch {
	case backgroundPID != 0:
		fmt.Fprintf(a.stdout, "not compressed    %s in %d packs a first save left raw; background process %d compresses them\n",
			humanBytes(st.DeferredBytes), st.DeferredPacks, backgroundPID)
	case st.DeferredPacks > 0:
		fmt.Fprintf(a.stdout, "not compressed    %s in %d packs a first save left raw; no process compresses them now (a server while idle, the next save or gc will)\n",
			humanBytes(st.DeferredBytes), st.DeferredPacks)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nTASK\tCHECKPOINTS\tLOGICAL\tONLY IN TASK")
	for _, t := range st.Tasks {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", t.Name, t.Checkpoints, humanBytes(t.LogicalBytes), humanBytes(t.ExclusiveBytes))
	}
	tw.Flush()
}
