package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
)

// autoPushLine says the automatic push's state in one line.
func autoPushLine(st *engine.AutoPushStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "automatic push to %s: ", st.Remote)
	switch {
	case st.LastError != "":
		fmt.Fprintf(&b, "%d failure(s), retrying at %s: %s", st.Failures, st.NextRetry.Local().Format(time.TimeOnly), st.LastError)
	case len(st.Pending) > 0:
		fmt.Fprintf(&b, "pushing %s", strings.Join(st.Pending, ", "))
	case st.LastPush.IsZero():
		b.WriteString("nothing saved yet")
	default:
		fmt.Fprintf(&b, "up to date (last push %s)", st.LastPush.Local().Format(time.DateTime))
	}
	return b.String()
}

// startAutoPush opens remote name of the server's store and makes every
// save push to it; the caller closes the backend after the engine.
func startAutoPush(ctx context.Context, e *engine.Engine, name string) (engine.Backend, error) {
	_, b, err := protocol.RemoteBackend(ctx, e, []string{name})
	if err != nil {
		return nil, err
	}
	if err := e.StartAutoPush(b, name); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}
