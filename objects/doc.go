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
// cut short. Readers and ScanPack ignore a torn tail, a writer resuming a
// pack cuts it off, and GC reclaims unreferenced records. Open creates
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
//	DIR/packs/NNNNNNNN.raw   empty, mode 0600: pack NNNNNNNN awaits compression (see Deferred packs)
//
// A batch appends to the newest pack still under Options.PackSize that no
// other writer holds, so many small saves share one pack; a writer starts a
// new pack once its pack reaches the cap.
//
// # Pack format (version 2)
//
// All integers are little-endian. A pack is a 12-byte header followed by
// records, back to back:
//
//	pack header:
//	  [8]  magic "CKPTPACK"
//	  [4]  version = 2 (packs written before groups existed say 1; see below)
//	record (53-byte header + payload):
//	  [4]  magic "CKRB"
//	  [1]  flags: bit 0 = compressed (payload is zstd frames), bit 1 = chunked
//	       (payload is a chunk list), bit 2 = group (payload holds several
//	       blobs); other bits must be 0; chunked excludes the other two
//	  [32] id: BLAKE3-256 of the raw content (of the whole file when chunked,
//	       of the decoded payload for a group)
//	  [8]  size: raw content length (of the whole file when chunked, of the
//	       decoded payload for a group)
//	  [4]  payload length in bytes, at most 2^30
//	  [4]  header check: CRC-32C (Castagnoli) of the 49 bytes above
//	  [payload length] payload
//
// A plain record's payload is the raw content (flags 0, payload length =
// size) or a zstd frame that decodes to exactly size bytes. Compressed
// frames carry no zstd checksum: the BLAKE3 id verifies the content, and
// the header check guards only the framing (lengths, flags), which must be
// trusted before the payload can be located or decoded. A payload is
// stored raw when zstd would save less than 1/32 of it.
//
// A chunked record's payload is the chunk list of a large file, never
// compressed: one 36-byte entry per chunk, in file order,
//
//	[32] chunk id   [4] chunk length (1..64 MiB)
//
// whose lengths add up to the record's size. Each chunk is a plain record
// of its own (possibly in another pack), found through the index, so equal
// chunks of different files, or of two versions of one file, are stored
// once. Chunk boundaries are content-defined (a gear rolling hash with
// normalized chunking; minimum 512 KiB, average about 1 MiB, maximum
// 8 MiB), so an edit in the middle of a large file changes only the chunks
// around it.
//
// # Group records
//
// A group record (flag bit 2, plus bit 0 when its payload is compressed)
// stores small blobs together, so that a frame sees what similar files
// share. Its decoded payload is
//
//	[4]  member count N (1..4096)
//	N ×  [32] member id (BLAKE3-256 of its content)   [4] member length
//	     the members' contents, back to back, in table order
//
// whose member lengths add up to the content's length. With Options.Groups,
// a Batch puts every blob of at most 1 MiB (a whole file or a chunk) into its open group and
// writes the group once it holds 1 MiB, or at Sync; a group decodes to at
// most 1 MiB + 1 MiB + the table. A compressed group payload is one or
// more zstd frames back to back, each of which decodes alone and declares
// its decoded length (a payload's only frame need not): the writer cuts
// one frame per 256 KiB of the decoded payload, the last up to 384 KiB
// (groups written before frames were cut are one frame). Reading one
// member reads its one group record, finds the frames from their headers,
// and decodes only the frames holding the table and the member, each only
// as far as needed (the table, then the member's frame up to its end: an
// eighth of a group on average), checks the table against the group's
// length and the member's content against its table id, so every byte
// returned is verified. The group's own id is
// checked where a record is taken in whole: one fetched from a remote,
// copied by a collection (Rewriter.Copy), or checked by verify
// (ReadSession.CheckGroup).
//
// The members of a group share its Offset and Length, so a caller that
// sums Locator.Length per blob (live bytes per pack, bytes a task holds
// alone) must count each record once. Rewriter.Copy copies a group whole
// the first time one of its members is copied; Rewriter.Regroup instead
// reads one member and writes it into a new group with the others
// regrouped alongside, so a collection keeps only the live members of a
// mostly dead group (GroupSize, read from the record header, tells how
// much of a group its live members are). The engine turns Options.Groups
// on; the zero Options leaves it off.
//
// Version 1 packs (written before group records existed) hold no group
// records; they are read as before, and writers never append to them (a
// new pack is started instead), so a pack's version says what it may hold.
//
// # Deferred packs
//
// A Batch with DeferCompression stores every record uncompressed (flags
// without bit 0) and, before its Sync returns placements, creates an empty
// marker DIR/packs/NNNNNNNN.raw (mode 0600) beside each pack it wrote and
// fsyncs the directory: a committed locator never points into an unmarked
// deferred pack. A marked pack is an ordinary pack of this format (other
// batches may append compressed records to it); the marker only asks a
// collection to rewrite it, regrouping small blobs (Rewriter.Regroup) and
// recompressing large ones (Rewriter.Recompress) at
// Options.RecompressLevel. RemovePack removes the marker before the pack;
// a marker whose pack is gone is ignored.
//
// # Locator encoding
//
// Locator.AppendBinary writes a version byte, the flags byte, then pack
// number, record offset, record length (header included) and size as
// unsigned varints. The version byte is 1 for a record of its own and 2 for
// a group member, whose encoding ends with one more varint, the member's
// index in its group (Locator.Member); its Size is the member's length.
// Locator.Length covers the whole record, so a reader fetches a record with
// one pread; the members of a group share its Offset and Length.
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
// Batch, ReadSession, Rewriter, the tree model and the ErrCorrupt mark)
// keeps its meaning within a major version of the module, and every later
// version reads the packs this one writes (testdata/store-v1 is kept to
// prove it). The pack and group byte format above is documented for
// readers of the files, not as API: new record kinds come with a new pack
// version, which older versions refuse rather than misread.
package objects
