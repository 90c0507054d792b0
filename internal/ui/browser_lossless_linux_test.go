package ui_test

import (
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// The page restores one of two files whose names differ only in bytes
// that are not UTF-8 (so they read alike, "a\ufffd"): it names the file to
// the server by its bytes, and exactly that file is restored. Linux only:
// macOS and Windows refuse such names.
func TestBrowserRestoresOneOfTwoNamesThatReadAlike(t *testing.T) {
	b := newBrowser(t)
	ff, fe := "a\xff", "a\xfe"
	s := newStore(t, testtree.Dir{ff: testtree.File{Content: "ff one\n"}, fe: testtree.File{Content: "fe one\n"}})
	s.save("default", "one", nil)
	if err := overlay(s.ws, testtree.Dir{ff: testtree.File{Content: "ff two\n"}, fe: testtree.File{Content: "fe two\n"}}); err != nil {
		t.Fatal(err)
	}
	b.open(s.b)
	b.clickPoint("default", 1)
	b.click("#diff-workspace")
	b.wait(`document.querySelectorAll(".leaf").length === 2`)
	b.click(`ul.root > li:nth-child(2) > .leaf`) // the diff lists a\xfe, then a\xff
	b.wait(`document.getElementById("code")?.innerText.includes("ff two")`)
	b.click(`.file-head button[data-ref]`)
	b.wait(`document.getElementById("confirm").open && document.getElementById("confirm-body").innerText.includes("Will write (1)")`)
	b.click("#confirm-ok")
	b.wait(`document.getElementById("restored-msg")?.textContent.startsWith("Restored a\ufffd from @1: 1 written, 0 deleted")`)
	assertFile(t, s.ws, ff, "ff one\n")
	assertFile(t, s.ws, fe, "fe two\n")
}
