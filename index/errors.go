package index

import "errors"

// ErrNotFound is returned (possibly wrapped) when a tree or checkpoint the
// caller asked for is not in the index. Lookups that can legitimately miss
// (Meta, Locator, Task, ...) report a miss with a false bool instead.
var ErrNotFound = errors.New("index: not found")

// ErrCorrupt is wrapped by every decode failure: the Decode functions return
// it for malformed input, and DB methods return it, naming the key, when a
// stored value does not decode. Test with errors.Is.
var ErrCorrupt = errors.New("index: corrupt")
