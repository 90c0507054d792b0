package objects

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestRegroupKeepsOnlyLiveMembers regroups a third of the members of
// several groups (and some plain records) into fresh groups: the new
// records hold only those blobs, each reads back verified from its new
// place after the old packs are gone, and GroupSize reports each group's
// decoded length.
func TestRegroupKeepsOnlyLiveMembers(t *testing.T) {
	s, idx := testStore(t, Options{Groups: true})
	blobs := groupBlobs()
	ids, placed := save(t, s, idx, blobs...)
	before, _ := s.Packs()
	var oldBytes int64
	seen := map[groupKey]bool{}
	for _, p := range placed {
		k := groupKey{p.Loc.Pack, p.Loc.Offset}
		if !seen[k] {
			seen[k] = true
			oldBytes += int64(p.Loc.Length)
		}
		size, err := s.groupSize(p.Loc)
		if err != nil || size <= p.Loc.Size || size > maxGroupSize {
			t.Fatalf("GroupSize of member %d: %d, %v", p.Loc.Member, size, err)
		}
	}
	rw := s.newRewriter(s.recodec)
	defer rw.Close()
	live := map[ID][]byte{}
	for i, id := range ids {
		if i%3 != 0 {
			continue
		}
		loc, _, _ := idx.Locator(id)
		if err := rw.Regroup(id, loc); err != nil {
			t.Fatal(err)
		}
		live[id] = blobs[i]
	}
	moved, err := rw.Sync()
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != len(live) {
		t.Fatalf("Sync placed %d blobs, regrouped %d", len(moved), len(live))
	}
	var newBytes int64
	seen = map[groupKey]bool{}
	for _, p := range moved {
		if _, ok := live[p.ID]; !ok {
			t.Fatalf("placement of a blob not regrouped: %s", p.ID.Short())
		}
		k := groupKey{p.Loc.Pack, p.Loc.Offset}
		if !seen[k] {
			seen[k] = true
			newBytes += int64(p.Loc.Length)
		}
	}
	if newBytes*2 > oldBytes {
		t.Fatalf("a third of the blobs regrouped take %d bytes of %d", newBytes, oldBytes)
	}
	rw.Close()
	held := func() (n int) {
		for range cap(s.recodec.enc) {
			e := <-s.recodec.enc
			s.recodec.enc <- e
			if e != nil {
				n++
			}
		}
		return n
	}
	if held() == 0 {
		t.Fatal("the regrouping made no encoder of the recompression level")
	}
	s.ReleaseRecompression()
	if n := held(); n != 0 {
		t.Fatalf("ReleaseRecompression left %d encoders of the recompression level", n)
	}
	idx.mu.Lock()
	idx.locs = map[ID]Locator{}
	idx.mu.Unlock()
	idx.commit(moved)
	for _, n := range before {
		if err := s.RemovePack(n); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(s.PackPath(n)); !os.IsNotExist(err) {
			t.Fatalf("old pack %d still there", n)
		}
	}
	for id, data := range live {
		mustGet(t, s, id, data)
	}
}

// TestRegroupRefusesWhatCannotJoinAGroup checks that damage, a chunk list
// and a blob above the group limit are refused and place nothing.
func TestRegroupRefusesWhatCannotJoinAGroup(t *testing.T) {
	s, idx := testStore(t, Options{ChunkThreshold: 1 << 20})
	small := textBytes(1, 4000)
	big := textBytes(2, 3<<20) // chunked
	ids, _ := save(t, s, idx, small, big)
	rw := s.newRewriter(s.recodec)
	defer rw.Close()
	list, _, _ := idx.Locator(ids[1])
	if err := rw.Regroup(ids[1], list); err == nil {
		t.Fatal("regrouped a chunk list")
	}
	bad, _, _ := idx.Locator(ids[0])
	f, err := os.OpenFile(s.PackPath(bad.Pack), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xff, 0xfe}, bad.Offset+int64(bad.Length)-2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mustCorrupt(t, rw.Regroup(ids[0], bad))
	if _, err := s.groupSize(bad); err == nil {
		t.Fatal("GroupSize of a plain record")
	}
}

// A rewrite's stop (its context's Err, in Rewrite) is asked between the
// frames of a full group's encoding: the first "stop" ends Regroup with
// that error, one frame in, and nothing of the group is written.
func TestRegroupStopsBetweenAGroupsFrames(t *testing.T) {
	s, idx := testStore(t, Options{})
	var blobs [][]byte
	for i := range 24 { // 1.4 MiB of plain records: more than a group
		blobs = append(blobs, textBytes(uint64(i), 60<<10))
	}
	ids, _ := save(t, s, idx, blobs...)
	rw := s.newRewriter(s.recodec)
	defer rw.Close()
	errStop := errors.New("stop")
	asked := 0
	rw.stop = func() error { asked++; return errStop }
	var err error
	for _, id := range ids {
		loc, _, _ := idx.Locator(id)
		if err = rw.Regroup(id, loc); err != nil {
			break
		}
	}
	if !errors.Is(err, errStop) || asked != 1 || len(rw.Packs()) != 0 {
		t.Fatalf("Regroup: %v after asking %d times, %d packs written; want the stop, asked once, none", err, asked, len(rw.Packs()))
	}
}

// compressFrames asks stop before every frame but the first and returns
// its error with nothing to store; a stop that never says so changes
// nothing of the frames.
func TestCompressFramesAsksStopBetweenFrames(t *testing.T) {
	c, err := newCodec(1)
	if err != nil {
		t.Fatal(err)
	}
	src := textBytes(7, 4*groupFrameLen)
	errStop := errors.New("stop")
	asked := 0
	out, _, err := c.compressFrames(nil, src, groupFrameLen, func() error {
		if asked++; asked == 2 {
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) || out != nil || asked != 2 {
		t.Fatalf("stopped at the third frame: %d bytes, %v, asked %d times", len(out), err, asked)
	}
	asked = 0
	out, _, err = c.compressFrames(nil, src, groupFrameLen, func() error { asked++; return nil })
	plain, _, perr := c.compressFrames(nil, src, groupFrameLen, nil)
	if err != nil || perr != nil || asked != 3 || !bytes.Equal(out, plain) {
		t.Fatalf("asked %d times (want 3): %v, %v, same frames %v", asked, err, perr, bytes.Equal(out, plain))
	}
	d, _ := zstd.NewReader(nil)
	defer d.Close()
	if got, err := d.DecodeAll(out, nil); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("frames decode to %d bytes, %v", len(got), err)
	}
}
