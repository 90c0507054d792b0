//go:build unix

package server

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/ckpt/ckpt/internal/localsock"
	"github.com/ckpt/ckpt/internal/testbound"
)

// A server whose endpoint cannot be re-created (a directory took its
// place) stops as its doc says: the requests it runs, here an attached
// JSON-RPC client's, are cancelled with the cause ErrStopped, and Listen
// returns the failure instead of waiting for them with the store's lock
// held and no endpoint.
func TestListenThatLosesItsEndpointStopsItsClients(t *testing.T) {
	store := t.TempDir()
	listening := make(chan struct{})
	attached := make(chan struct{})
	cause := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		done <- Listen(context.Background(), Config{StoreDir: store,
			Listening: func(string) { close(listening) },
			RPC: func(ctx context.Context, _ io.Reader, _ io.Writer) error {
				close(attached)
				<-ctx.Done()
				cause <- context.Cause(ctx)
				return nil
			}})
	}()
	<-listening
	defer attachTo(t, store).Close()
	<-attached
	if err := os.Remove(localsock.Endpoint(store)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(localsock.Endpoint(store), 0o700); err != nil {
		t.Fatal(err)
	}
	testbound.Within(t, testbound.Hang, func() {
		if err := <-done; err == nil {
			t.Error("Listen that could not re-create its endpoint returned nil")
		}
		if err := <-cause; !errors.Is(err, ErrStopped) {
			t.Errorf("the attached client's request ended with %v, want ErrStopped", err)
		}
	})
}
