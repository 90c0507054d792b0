// Package localsock is where a store's resident server and its clients
// meet: one endpoint per store, reachable only by the user who owns the
// store, found from the store directory alone.
//
//   - On Unix it is a socket, DIR/serve.sock, created mode 0600 inside the
//     store directory (itself 0700).
//   - On Windows it is a named pipe with a random name, \\.\pipe\ckpt-<hex>,
//     whose security descriptor grants access to the current user only and
//     which refuses remote clients; the file DIR/serve.pipe holds its name.
//     A random name cannot be taken in advance by another user, and the
//     first instance is created with FILE_FLAG_FIRST_PIPE_INSTANCE, so no
//     one else can serve under it.
//
// Listen is called by the one process that holds the store's lock, so an
// endpoint it finds already there was left by a server that died and is
// replaced. Dial tells "no server" (ErrNoServer) from a server that
// failed, and removes an endpoint left by a dead server, so that the next
// command does not try it again; only while it holds the store's lock,
// which no live server could then hold, so never the endpoint of a
// server that has just replaced the dead one.
package localsock

import "errors"

// ErrNoServer is returned by Dial when no server listens for the store.
var ErrNoServer = errors.New("no server listens for this store")
