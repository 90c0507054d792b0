//go:build unix

package localsock

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// socketName is the server's socket inside the store directory.
const socketName = "serve.sock"

// Endpoint is the path of the store's endpoint: the socket itself.
func Endpoint(storeDir string) string { return filepath.Join(storeDir, socketName) }

// Listen creates the store's socket, mode 0600, replacing one left by a
// server that died; closing the listener removes it. The caller must hold
// the store's lock.
func Listen(storeDir string) (net.Listener, error) {
	path := Endpoint(storeDir)
	if isSocket(path) {
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	return ln, nil
}

// Dial connects to the store's server. It returns ErrNoServer when there
// is no socket or nobody listens on it; a socket nobody listens on is
// removed.
func Dial(storeDir string) (net.Conn, error) {
	path := Endpoint(storeDir)
	conn, err := net.Dial("unix", path)
	switch {
	case err == nil:
		return conn, nil
	case errors.Is(err, syscall.ECONNREFUSED) && isSocket(path):
		os.Remove(path)
		return nil, ErrNoServer
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ECONNREFUSED):
		return nil, ErrNoServer
	}
	return nil, err
}

// isSocket reports whether path is a socket (and so may be removed as
// stale: never a file the user made).
func isSocket(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}
