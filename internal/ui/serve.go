package ui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// DefaultAddr is where Serve listens when addr is empty: loopback, any free
// port.
const DefaultAddr = "127.0.0.1:0"

// Serve listens on addr (DefaultAddr when empty) and serves the page for b
// with a fresh token until ctx ends. It returns the address to open, token
// included, and wait, which blocks until the server has shut down and
// returns why it stopped (nil after ctx ended).
func Serve(ctx context.Context, addr string, b Backend) (url string, wait func() error, err error) {
	if addr == "" {
		addr = DefaultAddr
	}
	token, err := NewToken()
	if err != nil {
		return "", nil, fmt.Errorf("ui: token: %w", err)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("ui: listen: %w", err)
	}
	bound := ln.Addr().String()
	srv := &http.Server{
		Handler:           newHandler(b, token, boundHost(bound)),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
		case err := <-done:
			done <- err
			return
		}
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown) // event streams end with ctx; a stuck client is cut off by Close
		_ = srv.Close()
	}()
	wait = func() error {
		<-stopped
		return <-done
	}
	return fmt.Sprintf("http://%s/?token=%s", bound, token), wait, nil
}
