// Package server is ckpt's resident server (`ckpt serve --listen`): it
// listens on the store's local endpoint (see internal/localsock), runs the
// command line each client forwards (see internal/cmdwire) through a
// Command the CLI supplies, stops after an idle period without clients,
// and recompresses deferred packs while no request runs (Recompressor).
//
// The package knows nothing of the CLI's flags: Listen hands every
// forwarded command line to Config.Run, which runs it on the server's
// engine and returns its exit code.
package server
