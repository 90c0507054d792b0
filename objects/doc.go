// Package objects is ckpt's content-addressed blob store: blobs are named
// by the BLAKE3-256 of their raw content, compressed with zstd when that
// pays (with Options.Groups, blobs up to 1 MiB together, in groups), and
// appended to pack files. Where each blob lives (its Locator) is
// kept by the caller's index (Pebble), not here: the store writes records,
// reports their placements, and reads records back by locator, verifying
// every byte.
//
// # Durability
//
// A Batch appends records to pack files through large buffered writes.
// Batch.Sync flushes and fsyncs every pack written and the packs directory,
// then returns the placements; the caller commits them to its index only
// after that. A crash or power cut at any point therefore leaves only
// unreferenced bytes at pack tails: records never referenced, or a record
// cut short. Readers ignore a torn tail, a writer resuming a
// pack cuts it off, and GC reclaims unreferenced records. Without a crash
// nothing is left: a Batch closed before it synced its last records (a
// failed or cancelled save) cuts them off its packs. Open creates
// DIR/packs and syncs DIR (and each parent it had to create), so a pack
// synced later cannot lose its directory to a power cut; RemovePack syncs
// the packs directory after the removal, TruncatePack the pack after the
// cut.
//
// Every file operation goes through Options.FS, pebble's vfs.FS (the real
// one by default, internal/storefs.OS), so the same guarantees hold, and
// are tested, on a strict in-memory file system that keeps only what was
// synced. They rest on these calls:
//   - a pack's fsync: fsync(2) on Linux and the BSDs, fcntl(F_FULLFSYNC) on
//     macOS (Go's File.Sync; plain fsync only reaches the drive's cache
//     there), FlushFileBuffers on Windows;
//   - a directory's fsync: fsync(2) of the directory on unix
//     (F_FULLFSYNC on macOS), FlushFileBuffers on a directory handle opened
//     with FILE_FLAG_BACKUP_SEMANTICS on Windows (internal/osfs.SyncDir);
//   - truncation: ftruncate(2) (SetEndOfFile on Windows), made durable by
//     the pack's fsync that follows.
//
// # Directory layout
//
//	DIR/packs/            mode 0700
//	DIR/packs/NNNNNNNN.pack  mode 0600; NNNNNNNN is the pack number, 8 lowercase hex digits
//	DIR/packs/NNNNNNNN.raw   empty, mode 0600: pack NNNNNNNN awaits compression (Store.DeferredPacks)
//
// A batch appends to the newest pack still under Options.PackSize that no
// other writer holds, so many small saves share one pack; a writer starts a
// new pack once its pack reaches the cap.
//
// # Records, groups and deferred packs
//
// A blob is stored as a record of its own, or, with Options.Groups, blobs
// of at most 1 MiB are stored together in group records (15% smaller on
// real source code), and content above Options.ChunkThreshold is split
// into content-defined chunks, each a blob, listed by a chunk-list record
// under the whole file's id (Locator.Chunked, Store.ChunkList); content
// that makes one chunk is that chunk's plain blob, with no list. Every read
// verifies what it returns against the blob's id, a group member's read
// included. The members of a group share its record's Offset and Length
// (Locator.Grouped), so a caller that sums Locator.Length per blob (live
// bytes per pack, bytes a task holds alone) must count each record once.
//
// A new version of a file (Batch.PutVersion, given the previous version's
// id) may be stored as a delta record: a zstd frame with the previous
// version's content as its dictionary, kept when clearly smaller than the
// content whole, in chains of at most 12 deltas, so a
// read loads at most that many records and one more (Locator.Delta). The
// content's id and every read's verification are those of the content
// whole. A rewrite of a deferred pack may store a blob as a delta of a
// similar blob too (Move.Bases: the same file in another version of a
// directory), always one deep. A delta's base must outlive it:
// Store.DeltaBase names it for a collection, which keeps it as it keeps a
// chunked file's chunks; a delta leaves the store only whole
// (Store.WholeRecord). Deltas are encoded at most at SpeedDefault
// (deltaLevelMax), whatever the codec's level.
//
// A Batch with DeferCompression stores its records uncompressed and marks
// each pack it wrote as deferred (Store.DeferredPacks) before its Sync
// returns placements; Store.Rewrite compresses their blobs into new packs
// at Options.RecompressLevel (its deltas excepted), and RemovePack drops
// the mark with the pack.
//
// The byte format of packs, records, groups and encoded locators is
// specified in objects/internal/pack, for readers of the files; it is not
// API.
//
// # Errors
//
// Absent blobs yield errors wrapping ErrNotFound. Damaged data — a record
// that does not verify or decode, a header that does not match its
// locator, a locator past the end of its pack, a missing pack file, a
// malformed locator — yields a *CorruptError naming the pack and offset,
// which matches ErrCorrupt under errors.Is. Reads never return unverified
// bytes. ErrCorrupt is the one mark of damage for every layer of ckpt: the
// index, the remotes and the engine mark what they find with MarkCorrupt.
//
// # Stability
//
// objects is a public package: its exported API (ID, Store, Options,
// Batch, ReadSession, Store.Rewrite, the tree model and the ErrCorrupt mark)
// keeps its meaning within a major version of the module, and every later
// version reads the packs this one writes (testdata/store-v1 is kept to
// prove it). New record kinds come with a new pack version, which older
// versions refuse rather than misread.
package objects
