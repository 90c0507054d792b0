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
// server that died or a file that is not a socket (the store directory is
// ckpt's); closing the listener removes it. It refuses a socket another
// server still answers on. The caller must hold the store's lock.
func Listen(storeDir string) (net.Listener, error) {
	path := Endpoint(storeDir)
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
	case fi.Mode()&os.ModeSocket != 0 && answers(path):
		return nil, fmt.Errorf("listen: another server listens on %s", path)
	case !fi.IsDir():
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale endpoint: %w", err)
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
	if fi, err = os.Lstat(path); err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	return &socketListener{ln.(*net.UnixListener), fi}, nil
}

// socketListener is a listener and the socket file it created.
type socketListener struct {
	*net.UnixListener
	file os.FileInfo
}

// Dial connects to the store's server. It returns ErrNoServer when there
// is no socket (or none can be at its path) or nobody listens on it; any
// other error is a server that is there but could not be reached (EAGAIN:
// its backlog is full; EACCES). A socket nobody listens on is
// removed when it is provably stale (removeIfStale: no process holds the
// store's lock), never one that a server that holds the lock may have put
// there since it refused.
func Dial(storeDir string) (net.Conn, error) {
	path := Endpoint(storeDir)
	conn, err := net.Dial("unix", path)
	switch {
	case err == nil:
		return conn, nil
	case errors.Is(err, syscall.ECONNREFUSED):
		removeIfStale(storeDir, func() {
			if isSocket(path) {
				os.Remove(path)
			}
		})
		return nil, ErrNoServer
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EINVAL):
		// No socket, or a path no socket can have (EINVAL: longer than
		// a socket address holds), where no server can listen either.
		return nil, ErrNoServer
	}
	return nil, err // a server is there but failed: EAGAIN (its backlog is full), EACCES, ...
}

// isSocket reports whether path is a socket (and so may be removed as
// stale: never a file the user made).
func isSocket(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// answers reports whether a server accepts connections on the socket path.
func answers(path string) bool {
	conn, err := net.Dial("unix", path)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// Renew returns a new listener for the store when ln's socket is no longer
// at the endpoint (removed, or replaced by another file), nil while it is.
// ln is then closed without removing what now stands at the endpoint.
func Renew(storeDir string, ln net.Listener) (net.Listener, error) {
	sl, ok := ln.(*socketListener)
	if !ok {
		return nil, nil
	}
	if fi, err := os.Lstat(Endpoint(storeDir)); err == nil && os.SameFile(fi, sl.file) {
		return nil, nil
	}
	sl.SetUnlinkOnClose(false)
	sl.Close()
	return Listen(storeDir)
}
