package index

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/ckpt/ckpt/objects"
)

// Key prefixes, one byte per record family. They are part of the on-disk
// format (see doc.go) and must never be reused for another family.
const (
	prefixMeta       = 'M'
	prefixConfig     = 'C'
	prefixLocator    = 'L'
	prefixTree       = 'T'
	prefixCheckpoint = 'K'
	prefixTaskHead   = 'H'
	prefixTaskSeq    = 'S'
	prefixDirCache   = 'D'
)

func metaKey() []byte { return []byte{prefixMeta} }

func stringKey(prefix byte, s string) []byte {
	k := make([]byte, 0, 1+len(s))
	return append(append(k, prefix), s...)
}

func idKey(prefix byte, id objects.ID) []byte {
	k := make([]byte, 0, 1+objects.IDSize)
	return append(append(k, prefix), id[:]...)
}

// taskSeqPrefix is the prefix of all sequence keys of task: the name ends
// with NUL, which ValidTask forbids inside names, so one task's range never
// overlaps another's.
func taskSeqPrefix(task string) []byte {
	k := make([]byte, 0, 2+len(task)+8)
	k = append(k, prefixTaskSeq)
	k = append(k, task...)
	return append(k, 0)
}

// taskSeqKey sorts a task's checkpoints by seq: the seq is big-endian.
func taskSeqKey(task string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(taskSeqPrefix(task), seq)
}

// prefixEnd returns the smallest key greater than every key with prefix p,
// or nil when there is none (p is all 0xff).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// describeKey renders a key for error messages: "tree/<hex id>",
// "task-seq/<task>/<seq>", and so on.
func describeKey(k []byte) string {
	if len(k) == 0 {
		return "<empty key>"
	}
	rest := k[1:]
	name := map[byte]string{
		prefixMeta: "meta", prefixConfig: "config", prefixLocator: "locator", prefixTree: "tree",
		prefixCheckpoint: "checkpoint", prefixTaskHead: "task", prefixTaskSeq: "task-seq", prefixDirCache: "dircache",
	}[k[0]]
	switch {
	case name == "":
		return fmt.Sprintf("%q", k)
	case k[0] == prefixMeta:
		return name
	case (k[0] == prefixLocator || k[0] == prefixTree || k[0] == prefixCheckpoint) && len(rest) == objects.IDSize:
		return name + "/" + objects.ID(rest).String()
	case k[0] == prefixTaskSeq && len(rest) > 9 && rest[len(rest)-9] == 0:
		task := string(rest[:len(rest)-9])
		return fmt.Sprintf("%s/%s/%d", name, task, binary.BigEndian.Uint64(rest[len(rest)-8:]))
	}
	return name + "/" + strings.ToValidUTF8(string(rest), "\uFFFD")
}
