package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/uiengine"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/ui"
)

// uiPollInterval is how often the page's live view looks for saves and
// restores made by other processes.
const uiPollInterval = 2 * time.Second

func (a *app) uiCommand() *cobra.Command {
	var addr string
	var open, allowRemote bool
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve a local page with the timeline of every task, diffs and restores",
		Long: "ui serves a page on a loopback address with a random token in its URL: every task as a lane of\n" +
			"checkpoints, diffs between any two (or the live workspace), and restores with a preview.\n" +
			"The store is opened per request, so agents keep saving while the page is open; when the store's\n" +
			"server (serve --listen) runs, the page is served by it, on its engine.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.checkGlobalFlags(); err != nil {
				return err
			}
			if !allowRemote && !loopbackAddr(addr) {
				return protocol.UsageError(fmt.Sprintf("--addr %s is not a loopback address: other machines could reach the page; add --allow-remote if that is meant", addr))
			}
			if a.server == nil {
				if err := a.forward(cmd); err != nil { // the store's server serves the page, on its engine
					return err
				}
			}
			ctx := cmd.Context()
			backend := a.uiBackend(ctx, cmd)
			// Open once up front, so a refused workspace or a damaged store
			// fails here rather than in the page.
			if _, err := backend.Tasks(ctx); err != nil {
				return err
			}
			url, wait, err := ui.Serve(ctx, addr, backend)
			if err != nil {
				return err
			}
			if a.json {
				a.printJSON(uiJSON{URL: url})
			} else {
				fmt.Fprintf(a.stdout, "ckpt ui: %s (Ctrl-C stops it)\n", url)
			}
			if open {
				if err := ui.OpenBrowser(url); err != nil {
					fmt.Fprintf(a.stderr, "ckpt: could not open a browser (%v); open the address above\n", err)
				}
			}
			if err := wait(); err != nil {
				return err
			}
			return ctx.Err() // a signal stopped the page: exit 130/143/129 as every command does
		},
	}
	cmd.Flags().StringVar(&addr, "addr", ui.DefaultAddr, "address to listen on (loopback; port 0 picks a free one)")
	cmd.Flags().BoolVar(&open, "open", false, "open the page in the default browser")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "let --addr be an address other machines can reach (the token is then all that guards the store)")
	return cmd
}

// loopbackAddr reports whether addr (host:port) names a loopback host:
// localhost or a loopback IP. An empty host listens on every interface.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// uiJSON is ui's --json document, printed once the page is served.
type uiJSON struct {
	URL string `json:"url"`
}

// uiBackend opens the store for each request of the page and polls the task
// heads for its live view.
func (a *app) uiBackend(ctx context.Context, cmd *cobra.Command) *uiengine.Backend {
	acquire := func(ctx context.Context, write bool) (*engine.Engine, func(), error) {
		if a.server != nil {
			e, err := a.server.engineFor(a, cmd)
			return e, func() {}, err
		}
		e, err := a.openWorkspace(ctx, a.engineOptions("ui", !write))
		if err != nil {
			return nil, nil, err
		}
		return e, func() { e.Close() }, nil
	}
	heads := func(ctx context.Context) (map[string]string, error) {
		e, release, err := acquire(ctx, false)
		if err != nil {
			return nil, err
		}
		defer release()
		ids, err := e.Heads(ctx)
		out := make(map[string]string, len(ids))
		for task, id := range ids {
			out[task] = id.String()
		}
		return out, err
	}
	return &uiengine.Backend{
		Acquire: acquire,
		Events:  func(ctx context.Context) <-chan ui.Event { return ui.PollHeads(ctx, uiPollInterval, heads) },
	}
}
