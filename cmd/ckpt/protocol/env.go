package protocol

import (
	"context"
	"os"
	"slices"
	"strings"
)

// envKey is the context key of the environment OpenRemote reads.
type envKey struct{}

// WithEnvironment returns ctx carrying env (KEY=value entries, as
// os.Environ returns them): OpenRemote then reads a remote's AWS_*
// settings and the variable holding its passphrase from env instead of
// the process's own. A server runs a command a client forwarded with the
// client's environment, so that it reaches a remote with the credentials
// the same command would use run cold. The engine keeps no remote's
// backend from one command to the next (engine.Options.OpenRemote): the
// blobs a pull left on a remote are fetched with the environment of the
// command that reads them.
func WithEnvironment(ctx context.Context, env []string) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

// environ is the environment ctx carries, os.Environ's when it carries
// none.
func environ(ctx context.Context) []string {
	if env, ok := ctx.Value(envKey{}).([]string); ok {
		return slices.Clone(env)
	}
	return os.Environ()
}

// getenv returns the lookup of the environment ctx carries, os.Getenv
// when it carries none.
func getenv(ctx context.Context) func(string) string {
	env, ok := ctx.Value(envKey{}).([]string)
	if !ok {
		return os.Getenv
	}
	return func(name string) string {
		// The last entry wins, as in os/exec; names compare as the
		// platform's environment does (without case on Windows).
		value := ""
		for _, kv := range env {
			if k, v, ok := strings.Cut(kv, "="); ok && envNamesEqual(k, name) {
				value = v
			}
		}
		return value
	}
}
