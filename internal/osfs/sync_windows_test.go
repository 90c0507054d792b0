package osfs

import (
	"testing"

	"golang.org/x/sys/windows"
)

// A directory another handle holds without sharing writes cannot be
// synced: SyncDir retries for a moment, then reports the sharing
// violation (it never hangs); once the handle goes, it succeeds.
func TestSyncDirReportsASharingViolationItCannotWaitOut(t *testing.T) {
	dir := t.TempDir()
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(dir); !IsSharingViolation(err) {
		windows.CloseHandle(h)
		t.Fatalf("sync of a directory held without write sharing: %v, want a sharing violation", err)
	}
	windows.CloseHandle(h)
	if err := SyncDir(dir); err != nil {
		t.Fatalf("sync once the handle is closed: %v", err)
	}
}
