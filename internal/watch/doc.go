// Package watch tells a resident engine which directories of a workspace
// may have changed since it last asked, so that a save re-reads only those
// and reuses every other directory's tree id from the stat cache.
//
// # Protocol
//
// The caller starts a Watcher on the workspace root and, before it reads
// a captured directory (one the walker does not ignore), calls
// Watcher.Watch with its root-relative, slash-separated path. Ignored trees
// (node_modules, build output) are never passed to Watch and cost no
// watch. Before each save the caller calls Watcher.Changes and then
//
//   - if Changes.All is set, walks the whole tree as without a watcher;
//   - otherwise walks every path of Changes.Rescan recursively, as if
//     nothing below it were cached (new and moved-in directories, subtrees
//     whose ignore rules changed, watches the kernel dropped), and re-reads
//     every directory of Changes.Dirty: lstat of the directory itself and
//     of each of its entries (or, for a directory Changes.Entries narrows,
//     only of the entries it names); a subdirectory it finds there that
//     the cache does not know is new and is walked recursively.
//
// Every directory read that way is passed to Watch again before it is
// read; for a directory already watched that is a map lookup. The first
// Changes after Start reports All. Paths in Changes may no longer exist: a
// missing path means "gone", not an error.
//
// # Guarantee
//
// A directory D for which Watch has returned, and which is not in Dirty and
// not below a Rescan path of a Changes result (and All is false), had none
// of these happen between the previous Changes call and this one: an entry
// of D created, removed, renamed into or out of D, written, truncated,
// chmodded, chowned or re-timed; D's own attributes changed. Because Watch
// returns before the caller lists D, a change to D either happened before
// the listing (which saw it) or after the watch existed (which reports
// it), so a directory just read needs no dirty report of its own and the
// Changes after a full walk is empty when nothing changed. For a directory
// D of Dirty that Changes.Entries narrows, the same holds of every entry
// of D it does not name, and of D's attributes other than its times. False "dirty"
// reports are allowed, missed changes are not: whenever the watcher cannot
// vouch for something it widens the report, never narrows it:
//
//   - inotify queue overflow or a read error: All, and every watch is
//     dropped, since lost move events leave their paths in doubt (the
//     caller re-adds them while it walks);
//   - the wall clock jumping against the monotonic clock (the caller's
//     racy rule compares mtimes with it): All;
//   - a watch that cannot be added (the per-user watch limit, ENOSPC, or
//     another error): that directory is in Dirty at every Changes until a
//     later Watch call for it succeeds; the watcher never fails for it. A
//     path that is no longer a directory is dirty once, with its parent;
//   - a directory created or moved into a watched directory: Rescan of it
//     (files may be created in it before its watch exists);
//   - a directory moved out of a watched directory: its watches and those
//     below it are removed, since their paths are no longer true;
//   - a change to an ignore-rule file (Options.RuleNames) in a watched
//     directory: Rescan of that directory; a change to one of
//     Options.RuleFiles (.git/info/exclude, the global excludes file): All;
//   - the kernel dropping a watch (unmount, IN_IGNORED): Rescan of it; the
//     root itself deleted, moved or unmounted: All until it is back.
//
// What inotify does not report, and how this package or its caller covers
// it:
//
//   - a write through a shared memory mapping raises no IN_MODIFY; the
//     watch asks for IN_CLOSE_WRITE, which the kernel raises once the
//     last writable descriptor and mapping of the file are gone (a mapping
//     still open stays unseen until then);
//   - a Linux AIO write (io_submit) raises no IN_MODIFY either: the same
//     IN_CLOSE_WRITE reports it when the file is closed;
//   - a write through another hard link to a file, made outside the
//     watched directories: the caller re-reads, at every scan, the
//     directories it last saw holding a file with a link count above one,
//     and a scan that finds a file newly linked (the new name's creation
//     is reported, the link count's change in the old name's directory is
//     not) walks everything once to find the other names (a file linked
//     since then from outside, or from a directory no scan lists, one the
//     ignore rules exclude say, is not covered);
//   - a file system mounted or unmounted on a directory inside the tree:
//     Changes reads the mount table (/proc/self/mountinfo) every time and
//     reports a Rescan of every mount point below the root that appeared,
//     went or was replaced (ReasonMount), dropping the watches below it,
//     and All for one on the root or above it;
//   - a file bind-mounted onto a file below the root raises its events in
//     its source's directory: Changes names it changed every time;
//   - a write through a name already unlinked (IN_EXCL_UNLINK drops those
//     events, which would otherwise name files that are gone): a file
//     linked under a new name and unlinked under the old while a writer
//     keeps it open, or an O_TMPFILE linked into the tree and written on;
//   - a change made by another host on a network file system.
//
// A caller that must see everything also walks the whole tree now and
// then (the engine re-verifies every few minutes).
//
// # Ordering barrier
//
// Changes includes every event of a file system operation that completed
// before Changes was called ("I wrote a file, then asked" never misses the
// write). The kernel queues an inotify event synchronously, inside the
// system call that changes the file system, before that call returns. So
// Changes takes the watcher's lock (the background reader drains under the
// same lock) and reads the inotify descriptor without blocking until it
// reports EAGAIN: at that point every event queued before the call has
// been consumed, either by the reader earlier or by this drain. No sleep
// and no sentinel file is needed, and nothing is written into the
// workspace.
//
// # Audits
//
// Changes sums events up by directory and entry name, which cannot tell
// who wrote a file. A caller that writes the workspace itself (a restore)
// and wants to know that nothing else did meanwhile brackets its writes
// with Watcher.StartAudit and Audit.End: under the same barrier as
// Changes, the audit holds every event in between in the order the kernel
// queued them, with the cookie that pairs a rename's two halves, so the
// caller can match each event to its own operations. Only the Linux
// backend records events; an audit that may have missed one (overflow,
// reset) says it is incomplete.
//
// # Platforms
//
// Linux uses one inotify watch per captured directory (IN_ONLYDIR,
// IN_DONT_FOLLOW, IN_EXCL_UNLINK) and one reader goroutine that Close
// stops and waits for; without an inotify instance it falls back to
// walking.
//
// Windows uses one ReadDirectoryChangesW handle on the root with
// bWatchSubtree, read with overlapped I/O by a goroutine locked to its OS
// thread; Watch only records which directories the caller reads, so that
// a change is mapped to the nearest of them (a change in an ignored tree
// dirties the directory that holds it, not one entry per directory). The
// ordering barrier cancels the pending read and issues reads until one
// stays pending: the file system reports a change inside the operation
// that makes it, into the pending read or into the handle's buffer, which
// the next read returns at once. Besides the rules above:
//
//   - the buffer overflowing (ERROR_NOTIFY_ENUM_DIR, or an empty read):
//     All;
//   - the handle failing, or the root's path no longer naming the
//     directory it was opened on (checked at every Changes): All, and the
//     handle is reopened once the root is back;
//   - a name added or renamed in that is a directory: Rescan of it; a
//     rename's old and new names each dirty their directory;
//   - names in 8.3 short form are turned into long ones; one that no
//     longer resolves makes its deepest existing ancestor a Rescan;
//   - names are compared without case;
//   - rule files outside the root are not watched: the engine stats them
//     at every save;
//   - a network drive or share: no watcher (the server may never report
//     changes other hosts make); Stats.Fallback says so.
//
// macOS uses one FSEvents stream on the root with per-file events
// (kFSEventStreamCreateFlagFileEvents), reached through purego (the
// release binaries are built without cgo) and scheduled on a run loop on
// its own locked OS thread; changes are marked as on Windows. The barrier
// is FSEventStreamFlushSync, which returns once the callback has seen
// every event that had occurred when it was called. MustScanSubDirs,
// UserDropped, KernelDropped and EventIdsWrapped report All; so do
// RootChanged, Mount and Unmount, and the root no longer being the
// directory the stream was started on (the stream is restarted once it is
// back). It has not run in this project's tests yet (they run on Linux
// and under Wine), so it is provisional (Stats.Provisional): it reports
// All on its own every provisionalWalkEvery, which bounds what a missed
// event can cost.
//
// Elsewhere every Changes reports All, so the engine walks as it does
// without a watcher; so does every platform when the environment variable
// CKPT_WATCHER is "none". Stats.Backend names the backend in use.
//
// # Wine
//
// The Windows backend is tested under Wine 8 (the contract tests of this
// package and the engine's watched-save differential test). Wine
// implements ReadDirectoryChangesW in its server on top of inotify, and
// differs from Windows in ways the tests met; under Wine (ntdll exports
// wine_get_version) the backend does two things more:
//
//   - Wine's server reads inotify in its own loop, so a change made before
//     Changes may reach the handle after the barrier's cancel. The barrier
//     first creates a file in a private directory outside the workspace,
//     watched by a handle of its own, and waits for its report: Wine reads
//     every watch from one inotify queue, first in, first out, so every
//     earlier change has then reached the workspace's handle;
//   - Wine records a directory's path when some program first opens it (not
//     only when the caller reads it) and keeps it when the directory is
//     renamed, or moved out of the tree and back (a move across the root's
//     edge is reported as a removal or an addition), so it keeps reporting
//     the directory's changes under the old path, which a new directory
//     there then shares. The backend records every name removed or renamed
//     away (a name renamed to a file, or taken by a new entry after a
//     removal, is settled), and every other change named at or below a
//     recorded path is an All: correct, at the price of a full walk. It
//     records them from every change record, also while an All is
//     pending and after the record that made it one: a rename left out
//     would leave the later changes of the renamed directory named by a
//     path that maps to another directory (the engine's differential test
//     found that). Records lost to an overflow cannot be recorded; the
//     periodic re-verification is what covers that. A directory moved back
//     into one that was renamed (and, for all the backend can tell, any
//     directory added) may be watched at a path Wine records for it that
//     no longer exists, and then nothing that changes in it is reported,
//     not even under an old path (the differential test found that too,
//     with seed 1796227530329032000). So every directory added stays
//     adrift: each Changes rescans it, for as long as it is there.
//
// Other differences, which need nothing more or which Wine cannot show:
//
//   - Wine's server keeps its records of the directories a subtree watch
//     covers by inode number and learns of a removal only when it reads
//     inotify, so a directory made soon after another was removed, at the
//     inode number the file system has just freed, can go without change
//     reports; Windows has no such records. The engine's differential test
//     therefore moves directories out of the workspace instead of removing
//     them under Wine (to the watcher both are a directory gone);
//   - subtree watches cover a directory below the root only once some
//     program has opened it (or Wine saw it created): the engine opens
//     every captured directory to list it right after Watch, so captured
//     directories are covered; ignored trees report nothing;
//   - the change records of an interval pile up in the server and an
//     overflow is reported as ERROR_NOTIFY_ENUM_DIR when they do not fit
//     the caller's buffer (TestBufferOverflowReportsAll shrinks the buffer
//     to show it); Windows's own kernel buffer and its empty-read overflow
//     cannot be shown;
//   - a removed directory stays in place while a handle to it is open, so
//     a removed root cannot be shown (a root moved away can);
//   - short names are synthesised and changes are reported by long name,
//     so 8.3 names in change records cannot be shown (the test feeds the
//     handler such names directly);
//   - ReadDirectoryChangesExW is absent, so the backend uses
//     ReadDirectoryChangesW, which Windows has everywhere, and tells files
//     from directories by their attributes when it handles the change;
//   - watches are the server's, shared by every process of the prefix, and
//     its records of directories outlive them; tests that watch run best
//     one process at a time.
package watch
