//go:build !linux && !windows && !darwin

package watch

// newBackend returns the always-walk backend: the BSDs offer kqueue, which
// needs a descriptor per file and does not scale to a workspace.
func newBackend(string, Options) backend {
	return &walkAlways{why: ReasonUnsupported, detail: "no change watcher on this platform"}
}
