package index

import "errors"

// ErrNotFound is returned (possibly wrapped) when a tree or checkpoint the
// caller asked for is not in the index (a missing tree is damage too: its
// error is marked with objects.ErrCorrupt). Lookups that can legitimately miss
// (Meta, Locator, Task, ...) report a miss with a false bool instead.
//
// Damage is not an error of this package's own: every decode failure, and
// every stored value or index file that does not decode or verify, is
// marked with objects.ErrCorrupt (test with errors.Is).
var ErrNotFound = errors.New("not found")
