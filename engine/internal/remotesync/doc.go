// Package remotesync moves a store's checkpoints to and from a remote
// (engine/remote's Backend): push, pull, and the on-demand fetch of blobs
// that a pull left on the remote. Package engine holds the lock, names the
// remotes and turns results into its public types.
//
// # Remote layout
//
// Every object name is made of hashes only, so no file or task name shows
// in a listing, and a Backend wrapper that encrypts contents leaves the
// layout as it is:
//
//	data/<hex>   a data object: whole pack records, back to back, copied
//	             from local packs; <hex> is the BLAKE3-256 of its bytes
//	meta/<hex>   a metadata segment (below); <hex> is the BLAKE3-256 of its bytes
//	heads/<hex>  the head of one task; <hex> is the BLAKE3-256 of
//	             "ckpt-task\x00" followed by the task name
//
// With a Namer (Syncer.Names, a remote encrypted with engine/remote/crypt,
// whose *Key is one), every <hex> above is instead the keyed hash the Namer
// gives of the same bytes: the same key gives the same names on every
// machine, and a name tells nothing to anyone without the key, not even
// whether a guessed content or task name is stored. Readers check
// contents against keyed names as they would against plain ones.
//
// Data objects and segments are immutable: written with IfAbsent and
// never replaced, so a name always means the same bytes and a reader checks
// them against it. Heads are the only objects replaced, always by a
// conditional Put (IfAbsent for a new task, IfMatch of the ETag read for an
// existing one), so two pushers of one task see each other instead of one
// overwriting the other.
//
// # Push order
//
// A push uploads data objects first, then one segment, then the head. At
// every moment the remote is consistent: a head names only segments that
// exist, and a segment's locators name only data objects that exist. A push
// cut short leaves unreferenced data objects or segments; a rerun finds
// them (the local record below, checked with Stat) and uploads nothing
// twice.
//
// # Segment format (version 1)
//
// A segment is one zstd frame whose content is
//
//	[8]  magic "CKPTSEG1"
//	uvarint n  n × (uvarint len, tree encoding)        index.EncodeTree
//	uvarint m  m × (uvarint len, checkpoint encoding)  index.EncodeCheckpoint
//	uvarint k  k × (id blob, remote locator)
//
// and carries the checkpoints one push added to a task, the trees they
// reference that no earlier segment of the task carries, and the remote
// locator of every blob (chunks included) those trees and the checkpoints'
// state blobs reference that earlier segments do not locate. A remote
// locator is
//
//	id object  uvarint offset  uvarint length  byte flags  uvarint size  uvarint member
//
// the record at offset (length bytes, header included) of data/<object>,
// with the objects.Locator fields it had in its pack. Trees and
// checkpoints are checked against their ids when imported, blobs against
// theirs when fetched; nothing unverified reaches the store.
//
// # Head format
//
// A head is a JSON object: the task name, its head checkpoint and last
// sequence number, its tip (the checkpoint with the highest sequence number,
// and that number), the names of its segments in push order, a generation
// counter and a random nonce (so that every version has new bytes and a new
// ETag). The segments named hold every checkpoint of the task.
//
// # Forks
//
// Two stores that both saved a task after their last sync give different
// checkpoints the same sequence numbers: the task has forked. A push that
// finds the remote head is neither behind nor equal to its own keeps both:
// it copies its task to a new local task "<task>~<tip>" (tip: the short id
// of its newest checkpoint) and pushes that, leaving the remote's task
// untouched. Later pushes of the task that find it still forked bring
// that same fork up to the task's head and push it (fork.go). A pull that
// would import checkpoints conflicting with local ones imports nothing and
// reports the divergence (*DivergedError).
//
// # Local record
//
// What each remote holds is recorded in the store's index settings, under
// "sync/<remote>/": b/<blob id> → remote locator, c/<checkpoint id> →
// segment, s/<segment> → "", f/<task> → the task's fork (above), h/<task>
// → the newest generation of the task's head seen there (a head older than
// that is a rollback, refused: rollback.go). Pushes and pulls write it;
// fetches read it.
// It is a cache: a push checks with Stat that what it names but the
// remote head does not is still there, and uploads it again otherwise.
package remotesync
