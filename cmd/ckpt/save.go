package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
)

func (a *app) saveCommand() *cobra.Command {
	var (
		message    string
		allowEmpty bool
		stateFile  string
		meta       []string
		roots      []string
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
			opts := engine.SaveOptions{Task: a.task, Message: message, AllowEmpty: allowEmpty, Meta: metaMap, Roots: roots}
			return a.withEngine(cmd, func(e *engine.Engine) error {
				opts.Capture = a.capture // set by the engine's open, through a server
				if stateFile != "" {     // once the store is open: stdin may have been read for a server that then stopped
					r, closeFn, err := a.openInput(stateFile)
					if err != nil {
						return err
					}
					defer closeFn()
					opts.State = r
				}
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
	addRootFlag(cmd, &roots, "read") // the others keep the head's files
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
			return nil, protocol.UsageError(fmt.Sprintf("--meta %q: want KEY=VALUE", kv))
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
		return nil, nil, protocol.UsageError(fmt.Sprintf("state file: %v", err))
	}
	return f, func() { f.Close() }, nil
}

// printSave prints a save's result; background is the process it started
// to compress in the background, 0 for none.
func (a *app) printSave(res *engine.SaveResult, background int) {
	if a.json {
		view := protocol.SaveView(res)
		view.BackgroundPID = background
		a.printJSON(view)
		return
	}
	for _, s := range res.Skipped {
		if !a.quiet {
			kept := ""
			if s.Kept {
				kept = "; the checkpoint keeps the version last read"
			}
			fmt.Fprintf(a.stderr, "ckpt: skipped %s (%s%s)\n", s.Path, s.Reason, kept)
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
