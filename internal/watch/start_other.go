//go:build !linux

package watch

// newBackend returns the always-walk backend: FSEvents needs cgo and kqueue
// a descriptor per file, so no watcher here scales to a workspace.
func newBackend(string, Options) backend {
	return &walkAlways{why: ReasonUnsupported}
}
