package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/cmdwire"
	"github.com/ckpt/ckpt/internal/localsock"
)

// forward runs cmd through the live server of its store, if there is one,
// and returns remoteExit with the server's exit code; nil means no server
// could be reached now and the command tries the store itself (openEngine:
// while a server holds it, that waits in slices and looks again between
// them, until --lock-timeout). An endpoint nobody listens on is stale and
// removed (see package localsock); one that cannot be connected to now
// (a full backlog, EAGAIN) is looked at again after the next slice, and
// one that refuses this user for good (EACCES) leaves the command to the
// store's lock: busy naming the server that holds it, or the store itself
// when none does. A server that does not accept the command by
// answerDeadline fails it busy (serverUnanswered). A server that stops as the command reaches
// it turns it away without running it (cmdwire.ErrNotRun): the command
// looks again, and finds the next server or none.
func (a *app) forward(cmd *cobra.Command) error {
	store, ok := a.endpointStore()
	if !ok {
		return nil // the open reports it
	}
	var req *cmdwire.Request
	var err error
	for range maxTurnedAway {
		conn, derr := localsock.Dial(store)
		if derr != nil {
			return nil // none reached: the command tries the store, and looks again
		}
		if req == nil {
			r, rerr := a.forwardRequest(cmd, store)
			if rerr != nil {
				conn.Close()
				return rerr
			}
			req = &r
		}
		var code int
		code, err = a.exchange(cmd, conn, *req)
		if cerr := cmd.Context().Err(); cerr != nil {
			return cerr // interrupted: run reports the signal
		}
		if errors.Is(err, cmdwire.ErrNotAccepted) {
			return serverUnanswered{store, a.serverAnswerWait()}
		}
		if out := (*cmdwire.OutputError)(nil); errors.As(err, &out) {
			// The client's own output failed, once the command had run to
			// its end, as it does cold: a command fails for its stdout
			// and keeps its own exit code past a failed stderr.
			if out.Stderr {
				return remoteExit{out.Code}
			}
			return out.Err
		}
		if err == nil {
			return remoteExit{code}
		}
		if !errors.Is(err, cmdwire.ErrNotRun) {
			break
		}
	}
	return serverGone{store, err}
}

// endpointStore is the store whose server the command looks for; false
// when there is none (the open reports why).
func (a *app) endpointStore() (string, bool) {
	if a.store != "" {
		return a.store, true
	}
	store, err := a.defaultStore()
	return store, err == nil
}

// dialServer is what a command that serves the store (serve, mcp) looks
// for before it opens the store: serverFound, with a connection to the
// store's live server, if there is one; nil when none could be reached
// now (see forward).
func (a *app) dialServer(*cobra.Command) error {
	store, ok := a.endpointStore()
	if !ok {
		return nil
	}
	conn, err := localsock.Dial(store)
	if err != nil {
		return nil // none reached now, as forward
	}
	return serverFound{conn}
}

// serverFound ends the open of a command that serves the store (see
// openResident): a server already listens for it, on conn.
type serverFound struct{ conn net.Conn }

func (serverFound) Error() string { return "a server already listens for the store" }

// maxTurnedAway bounds how many servers in a row a client lets turn it
// away before it gives up: each stopped as the client reached it.
const maxTurnedAway = 8

// exchange runs req on the server at the other end of conn, which it
// closes; an interrupted client leaves, and the server then cancels the
// command.
func (a *app) exchange(cmd *cobra.Command, conn net.Conn, req cmdwire.Request) (int, error) {
	defer conn.Close()
	stop := context.AfterFunc(cmd.Context(), func() { conn.Close() })
	defer stop()
	return cmdwire.Exchange(conn, req, a.answerDeadline(), a.stdout, a.stderr)
}

// minServerAnswer is the least a client waits for the store's server to
// accept its command or its attach: a live server answers at once, but
// one that is loaded may take a moment, which even --lock-timeout 0 (fail
// at once when busy) allows, as the engine allows a lock holder that has
// not yet named itself.
const minServerAnswer = 2 * time.Second

// serverAnswerWait is how long a command waits for its store in all: for
// the store's lock, for a server to listen for the store, and for that
// server to accept the command or attach: --lock-timeout, at least
// minServerAnswer. It does not bound the command's run.
func (a *app) serverAnswerWait() time.Duration { return max(a.lockTimeout, minServerAnswer) }

// answerDeadline is when a client stops waiting for the store's server
// to accept its command or attach: serverAnswerWait after it began to
// wait for the store (openEngine), so that a server found late in the
// wait for the lock gets what is left of it, not a wait of its own; for a
// command that looked for the server without waiting for the lock (ui),
// serverAnswerWait from now.
func (a *app) answerDeadline() time.Time {
	if a.answerBy.IsZero() {
		return time.Now().Add(a.serverAnswerWait())
	}
	return a.answerBy
}

// serverUnanswered is a server of the store that took a client's
// connection but did not answer it by answerDeadline: it is stopped
// (Ctrl-Z) or stuck, and holds the store. It fails the command busy
// (engine.ErrBusy), as the lock that server holds would.
type serverUnanswered struct {
	store  string
	waited time.Duration
}

func (e serverUnanswered) Error() string {
	return fmt.Sprintf("store busy: the server listening on %s did not answer within the %v the command waits for the store (is it stopped?); resume or stop it, or raise --lock-timeout",
		localsock.Endpoint(e.store), e.waited)
}

func (serverUnanswered) Unwrap() error { return engine.ErrBusy }

// forwardRequest is the request for cmd: the command line with the
// store and the task (which may come from the environment) made explicit,
// --state's input read here, where its file and stdin are, and this
// process's environment, where a remote's credentials are.
func (a *app) forwardRequest(cmd *cobra.Command, store string) (cmdwire.Request, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return cmdwire.Request{}, err
	}
	args := append([]string{"--store", store, "--task", envOr("CKPT_TASK", engine.DefaultTask)}, a.args...)
	req := cmdwire.Request{Cwd: cwd, Terminal: a.indentJSON, Colour: a.colour, Env: os.Environ()}
	if f := cmd.Flags().Lookup("state"); f != nil && f.Changed {
		var in io.Reader = a.stdin
		name := f.Value.String()
		if name != "-" {
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
		if name == "-" { // read again by the command itself if no server runs it
			a.stdin = bytes.NewReader(req.Stdin)
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
