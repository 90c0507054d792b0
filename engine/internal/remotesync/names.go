package remotesync

import (
	"github.com/ckpt/ckpt/objects"
)

// Namer names remote objects by their bytes under a secret key: the same
// data gives the same name to everyone holding the key, and a name tells
// nothing about the data to anyone else. Name returns 64 hex digits.
// *crypt.Key is one; a Namer must be safe for concurrent use.
type Namer interface {
	Name(data []byte) string
}

// sum is the name of data on the remote (doc.go): its BLAKE3-256, or with
// a Namer its keyed hash. A Namer whose name is not 64 hex digits is a
// programming error.
func (s *Syncer) sum(data []byte) objects.ID {
	if s.Names == nil {
		return objects.Sum(data)
	}
	id, err := objects.ParseID(s.Names.Name(data))
	if err != nil {
		panic("remotesync: Namer returned a malformed name: " + err.Error())
	}
	return id
}

// decodeNamed checks stored against its name, name, and decodes the
// segment it holds.
func (s *Syncer) decodeNamed(name objects.ID, stored []byte) (*segment, error) {
	if s.sum(stored) != name {
		return nil, &CorruptError{Key: metaKey(name), Reason: "content does not match its name"}
	}
	return decodeSegment(metaKey(name), stored)
}

// headKey is the object name of task's head: a hash, never the name.
func (s *Syncer) headKey(task string) string {
	return "heads/" + s.sum([]byte("ckpt-task\x00"+task)).String()
}
