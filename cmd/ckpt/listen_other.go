//go:build !unix

package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"
)

// A listening server needs a Unix socket; its Windows counterpart (a named
// pipe) is not built yet, so there every command opens the store itself.

func (a *app) listen(context.Context, *resident, time.Duration) error {
	return errors.New("serve --listen is not available on this platform yet")
}

func (a *app) forward(*cobra.Command) error { return nil }
