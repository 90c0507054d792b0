package objects

import "bytes"

// Recent contents: when a file's new version is stored as a delta (or
// prepared as one, PrepareVersion), the store holds both of its versions
// in memory, the base it decoded and the content it encoded. What a
// resident host asks for next reads exactly these: the diff of the step
// that changed the file, the restore that undoes the step, the redo. A
// ReadSession takes a content kept here instead of reading and checking
// its group's frames on disk, and hashes it again against its id on every
// use, so what it returns is verified as a read from disk is.

// recentEntries and recentBytes bound the contents kept.
const (
	recentEntries = 2048
	recentBytes   = 16 << 20
)

// keepRecent keeps a copy of content, blob id's, unless one is kept.
func (s *Store) keepRecent(id ID, content []byte) {
	if !s.recent.has(id) {
		s.recent.put(id, bytes.Clone(content))
	}
}

// recentContent returns a copy of blob id's content when the store keeps
// it in memory and it still hashes to id; a kept copy that does not is
// dropped.
func (s *Store) recentContent(id ID) ([]byte, bool) {
	kept, ok := s.recent.get(id)
	if !ok {
		return nil, false
	}
	if Sum(kept) != id {
		s.recent.take(id)
		return nil, false
	}
	return bytes.Clone(kept), true
}
