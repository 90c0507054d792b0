// Package index is ckpt's Pebble-backed metadata store: blob locators,
// trees, checkpoints, task heads and sequence numbers, the per-directory
// stat cache, store meta and settings. It knows nothing of workspaces; the
// engine gives it slash-separated relative directory names and ids.
//
// A DB is safe for concurrent use. All writes go through a Batch, which is
// committed atomically and durably (fsynced write-ahead log) or not at all.
//
// # Durability
//
// A Commit returns once pebble has synced its write-ahead log; Open
// creates the index directory and syncs its parents (storefs.MkdirAll,
// then pebble's own), and pebble syncs the directory after each file it
// creates, renames or removes (log, tables, MANIFEST and its marker). The
// index runs on Options.FS, pebble's vfs.FS (internal/storefs.OS by
// default), whose calls these guarantees rest on, per platform:
//   - a file's sync: fsync(2), or fdatasync(2) where pebble asks for
//     SyncData, on Linux; fcntl(F_FULLFSYNC) on macOS (Go's File.Sync);
//     FlushFileBuffers on Windows;
//   - a directory's sync: fsync(2) of the directory on unix (F_FULLFSYNC
//     on macOS), FlushFileBuffers on a directory handle opened with
//     FILE_FLAG_BACKUP_SEMANTICS on Windows (internal/osfs.SyncDir; pebble's
//     own vfs.Default skips directory syncs there).
//
// A power cut at any sync of a save, restore, gc, drop, recompression or
// push loses no committed batch: the engine's power-cut explorer checks it
// on a strict in-memory vfs.FS that keeps only what was synced.
//
// # Failures and damage
//
// No DB method panics on a damaged index or a failing disk. Damage pebble
// detects (a table or MANIFEST failing its checksums, OPTIONS that do not
// parse) is an error marked with objects.ErrCorrupt, naming the file when
// pebble names it. Open never creates an index over existing files: a
// directory with files but no MANIFEST marker is damage too and is left
// untouched. A write pebble cannot complete (ENOSPC, EDQUOT, EFBIG, EACCES,
// EIO in the log, a table, the MANIFEST or a directory fsync) fails the
// Commit, Open or Close waiting on it with that error, and every later
// Commit; pebble's retries of the failed work are parked rather than
// spinning. When the failure hit the log or a directory fsync, which pebble
// cannot recover from in-process, the DB stays open, holding its lock on
// the directory, until the process exits; what was committed is on disk.
//
// Known limit: damage in the middle of the newest write-ahead log (*.log)
// is not detected. pebble v2.1.7 replays that log up to the first bad
// record and treats the rest as an unclean tail, so commits recorded after
// the damage are silently lost (an earlier task head, say) and the index
// opens without error. Logs older than the newest are checked strictly
// (damage is marked with objects.ErrCorrupt), and tables are checksummed on every read.
//
// # Key schema (FormatVersion 2)
//
// Every key starts with one byte naming its record family:
//
//	'M'                               → Meta
//	'C' <config key>                  → config value (raw bytes)
//	'L' <32-byte blob id>             → objects.Locator (Locator.AppendBinary)
//	'T' <32-byte tree id>             → tree encoding or tree delta; id = objects.Sum(tree encoding)
//	'K' <32-byte checkpoint id>       → checkpoint encoding; id = objects.Sum(value)
//	'H' <task name>                   → task head encoding
//	'S' <task name> 0x00 <seq:8 BE>   → 32-byte checkpoint id
//	'D' <dir>                         → dir cache encoding
//
// Task names never contain NUL (ValidTask), so the 0x00 after the name ends
// it unambiguously and a prefix scan of 'S' <task> 0x00 yields exactly that
// task's checkpoints; the big-endian seq makes them come out in seq order.
// <dir> is a slash-separated workspace-relative path whose elements are
// ValidNames; the root is the empty string (the key 'D' alone).
//
// # Value encodings
//
// Every encoded value except config values, locators (versioned by the
// objects package) and the bare ids of 'S' keys starts with a version byte,
// currently 1. Notation: uvarint is encoding/binary's unsigned varint and
// must be minimal (no trailing 0x00 byte); varint is the zig-zag signed
// form, also minimal; string is a uvarint byte length followed by the
// bytes; id is 32 raw bytes; time is a varint of UTC unix nanoseconds, with
// 0 standing for the zero time.Time. Decoders reject any trailing bytes,
// so each value has exactly one encoding and decode→encode is the
// identity on accepted input.
//
// Tree:
//
//	0x01  uvarint n  n × entry
//	entry = string name  byte kind  uvarint mode  uvarint size  id
//
// name is a objects.ValidName and names are strictly increasing bytewise; kind is
// 1 (file), 2 (symlink) or 3 (dir); mode holds permission bits only
// (≤ 0o7777); size is ≤ 2^63-1 and 0 for a dir; id is the blob id (file,
// symlink target) or subtree id (dir).
//
// Tree delta (FormatVersion 2; a 'T' value whose first byte is 2):
//
//	0x02  uvarint depth  id base  uvarint r  r × string removed
//	uvarint u  u × entry
//
// The tree is base's tree without the entries named removed, and with the
// u entries (the tree encoding's entry) added or replacing base's entry of
// the same name. removed names are ValidNames, strictly increasing, each
// naming an entry of base and none an upserted entry; upserted names are
// strictly increasing. depth is 1 to 16 and greater than the depth of
// base's stored value (0 for a tree encoding), so a chain ends within 16
// records; the id is that of the resolved tree's encoding, which readers
// check. A delta is written only against a tree already stored and only
// when at most half the tree's encoding; whoever deletes a tree stores its
// deltas whole first. A writer whose previous tree is at depth 16 writes
// against the tree at depth 8 on its chain (or the first below), so a
// directory's history needs a whole tree only when its changes since come
// to half the tree; a reader needs nothing of this, since every delta names
// its base. An index of FormatVersion 1 holds no tree deltas.
//
// Checkpoint:
//
//	0x01  id parent  string task  uvarint seq  id root  time
//	string message  byte kind  byte empty
//	uvarint files  uvarint added  uvarint modified  uvarint deleted
//	uvarint bytes_hashed  uvarint duration_ms
//	uvarint m  m × (string key, string value)  id state
//
// task is a ValidTask, seq ≥ 1, kind is 1 (save) or 2 (backup), empty is 0
// or 1, meta keys are strictly increasing bytewise. Zero ids mean "none".
//
// Task head:
//
//	0x01  id head  uvarint last_seq
//
// Meta:
//
//	0x01  uvarint format_version  string workspace  time created
//
// Dir cache (one per workspace directory, read once per directory per
// save, so it is compact and decodes with two allocations):
//
//	0x01  id tree  fixed64 written_ns  uvarint n  n × file
//	file = string name  uvarint size  fixed64 mtime_ns  fixed64 ctime_ns
//	       uvarint inode  uvarint mode  id blob
//
// fixed64 is 8 bytes little-endian two's complement: nanosecond timestamps
// need 9 bytes as varints, so fixed width is both smaller and faster to
// decode. names are ValidNames, strictly increasing bytewise; mode fits 32
// bits.
//
// # Stability
//
// index is a public package: its exported API (DB, Options, Batch and the
// records it stores) keeps its meaning within a major version of the
// module, and every later version opens the indexes every FormatVersion
// wrote (testdata/store-v1 and store-v2 are kept to prove it); a writer
// that opens an index of an older FormatVersion records the current one
// in its Meta before writing what the older version cannot read. The key schema and value
// encodings above are documented for readers of the files; a change to
// them raises FormatVersion, which older versions refuse to open.
package index
