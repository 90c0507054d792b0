package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/cmdwire"
	"github.com/ckpt/ckpt/internal/localsock"
)

// forward runs cmd through the live server of its store, if there is one,
// and returns remoteExit with the server's exit code; nil means no server
// listens and the command opens the store itself. An endpoint nobody
// listens on is stale and removed (see package localsock).
func (a *app) forward(cmd *cobra.Command) error {
	if name := cmd.Name(); name == "serve" || name == "mcp" {
		return nil
	}
	store := a.store
	if store == "" {
		var err error
		if store, err = a.defaultStore(); err != nil {
			return nil // the open reports it
		}
	}
	conn, err := localsock.Dial(store)
	if err != nil {
		return nil // no server (or none that answers): the command opens the store itself
	}
	defer conn.Close()
	req, err := a.forwardRequest(cmd, store)
	if err != nil {
		return err
	}
	// An interrupted client leaves; the server then cancels the command.
	stop := context.AfterFunc(cmd.Context(), func() { conn.Close() })
	defer stop()
	code, err := cmdwire.Exchange(conn, req, a.stdout, a.stderr)
	if cerr := cmd.Context().Err(); cerr != nil {
		return cerr // interrupted: run reports the signal
	}
	if err != nil {
		return serverGone{store, err}
	}
	return remoteExit{code}
}

// forwardRequest is the request for cmd: the command line with the
// store and the task (which may come from the environment) made explicit,
// and --state's input read here, where its file and stdin are.
func (a *app) forwardRequest(cmd *cobra.Command, store string) (cmdwire.Request, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return cmdwire.Request{}, err
	}
	args := append([]string{"--store", store, "--task", envOr("CKPT_TASK", engine.DefaultTask)}, a.args...)
	req := cmdwire.Request{Cwd: cwd, Terminal: a.indentJSON, Colour: a.colour}
	if f := cmd.Flags().Lookup("state"); f != nil && f.Changed {
		var in io.Reader = a.stdin
		if name := f.Value.String(); name != "-" {
			file, err := os.Open(name)
			if err != nil {
				return req, protocol.UsageError(fmt.Sprintf("state file: %v", err))
			}
			defer file.Close()
			in = file
		}
		if req.Stdin, err = io.ReadAll(in); err != nil {
			return req, fmt.Errorf("read state: %w", err)
		}
		at := len(args)
		if i := slices.Index(args, "--"); i >= 0 {
			at = i
		}
		args = slices.Insert(args, at, "--state", "-")
	}
	req.Args = args
	return req, nil
}
