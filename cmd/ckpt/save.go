package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/engine"
)

// saveJSON is the save command's JSON shape.
type saveJSON struct {
	ID      string        `json:"id"`
	Parent  string        `json:"parent"`
	Task    string        `json:"task"`
	Seq     uint64        `json:"seq"`
	Created bool          `json:"created"`
	Empty   bool          `json:"empty"`
	Kind    string        `json:"kind"`
	Stats   statsJSON     `json:"stats"`
	Skipped []skippedJSON `json:"skipped"`
	// BackgroundPID is the process this save started to compress what it
	// stored uncompressed (see background.go), when it started one.
	BackgroundPID int `json:"background_pid,omitempty"`
	settledJSON
}

type statsJSON struct {
	Files       uint64 `json:"files"`
	Added       uint64 `json:"added"`
	Modified    uint64 `json:"modified"`
	Deleted     uint64 `json:"deleted"`
	BytesHashed uint64 `json:"bytes_hashed"`
	DurationMs  int64  `json:"duration_ms"`
}

type skippedJSON struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Error  string `json:"error,omitempty"`
}

func (a *app) saveCommand() *cobra.Command {
	var (
		message    string
		allowEmpty bool
		stateFile  string
		meta       []string
	)
	cmd := &cobra.Command{
		Use:   "save",
		Short: "Save a checkpoint of the workspace",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			metaMap, err := parseMeta(meta)
			if err != nil {
				return err
			}
			opts := engine.SaveOptions{Task: a.task, Message: message, AllowEmpty: allowEmpty, Meta: metaMap}
			if stateFile != "" {
				r, closeFn, err := a.openInput(stateFile)
				if err != nil {
					return err
				}
				defer closeFn()
				opts.State = r
			}
			return a.withEngine(cmd, func(e *engine.Engine) error {
				res, err := e.Save(cmd.Context(), opts)
				if err != nil {
					return err
				}
				a.printSave(res, a.maybeStartBackground(e))
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&message, "message", "m", "", "checkpoint message")
	cmd.Flags().BoolVar(&allowEmpty, "allow-empty", false, "create a checkpoint even if nothing changed")
	cmd.Flags().StringVar(&stateFile, "state", "", "attach the host's state blob from FILE (- for stdin)")
	cmd.Flags().StringArrayVar(&meta, "meta", nil, "attach KEY=VALUE metadata (repeatable)")
	return cmd
}

func parseMeta(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageError{fmt.Sprintf("--meta %q: want KEY=VALUE", kv)}
		}
		m[k] = v
	}
	return m, nil
}

// openInput opens FILE, or stdin for "-".
func (a *app) openInput(name string) (io.Reader, func(), error) {
	if name == "-" {
		return a.stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, usageError{fmt.Sprintf("state file: %v", err)}
	}
	return f, func() { f.Close() }, nil
}

// saveView is the JSON shape of a save result.
func saveView(res *engine.SaveResult) saveJSON {
	out := saveJSON{
		ID: res.ID.String(), Parent: res.Parent.Text(), Task: res.Task, Seq: res.Seq,
		Created: res.Created, Empty: res.Empty, Kind: string(res.Kind),
		Stats: statsJSON{Files: res.Stats.Files, Added: res.Stats.Added, Modified: res.Stats.Modified,
			Deleted: res.Stats.Deleted, BytesHashed: res.Stats.BytesHashed, DurationMs: res.Stats.Duration.Milliseconds()},
		Skipped:     make([]skippedJSON, 0, len(res.Skipped)),
		settledJSON: settledView(res.Settled),
	}
	for _, s := range res.Skipped {
		sj := skippedJSON{Path: s.Path, Reason: s.Reason}
		if s.Err != nil {
			sj.Error = s.Err.Error()
		}
		out.Skipped = append(out.Skipped, sj)
	}
	return out
}

// printSave prints a save's result; background is the process it started
// to compress in the background, 0 for none.
func (a *app) printSave(res *engine.SaveResult, background int) {
	if a.json {
		view := saveView(res)
		view.BackgroundPID = background
		a.printJSON(view)
		return
	}
	for _, s := range res.Skipped {
		if !a.quiet {
			fmt.Fprintf(a.stderr, "ckpt: skipped %s (%s)\n", s.Path, s.Reason)
		}
	}
	if !res.Created {
		a.say("no changes; head of task %s is @%d %s", res.Task, res.Seq, res.ID.Short())
		return
	}
	a.say("saved @%d %s in task %s: %d added, %d modified, %d deleted; %d files, %s hashed in %d ms",
		res.Seq, res.ID.Short(), res.Task, res.Stats.Added, res.Stats.Modified, res.Stats.Deleted,
		res.Stats.Files, humanBytes(int64(res.Stats.BytesHashed)), res.Stats.Duration.Milliseconds())
}
