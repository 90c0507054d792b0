package lossless

import (
	"encoding/json"
	"slices"
	"testing"
)

// Two names that encoding/json makes equal stay apart in their base64
// form, and decode back to their bytes.
func TestNamesThatJSONConflatesRoundTrip(t *testing.T) {
	a, b := "a\xff", "a\xfe"
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatalf("encoding/json kept the bytes apart (%s, %s): the convention is moot", ja, jb)
	}
	for _, name := range []string{a, b} {
		enc := Base64(name)
		if enc == nil {
			t.Fatalf("Base64(%q) = nil", name)
		}
		got, err := Decode("path_base64", *enc)
		if err != nil || got != name {
			t.Fatalf("Decode(%q) = %q, %v; want %q", *enc, got, err, name)
		}
	}
	if *Base64(a) == *Base64(b) {
		t.Fatal("two names share a base64 form")
	}
	if Base64("é/ok") != nil {
		t.Fatal("a valid UTF-8 name got a base64 form")
	}
}

func TestListsCarryEveryNameOnlyWhenOneIsLossy(t *testing.T) {
	if got := Base64List([]string{"x", "é"}); got != nil {
		t.Fatalf("Base64List of valid names = %q, want nil", got)
	}
	names := []string{"x", "a\xff", "b"}
	enc := Base64List(names)
	if len(enc) != len(names) {
		t.Fatalf("Base64List = %q, want one per name", enc)
	}
	back, err := DecodeList("paths_base64", enc)
	if err != nil || !slices.Equal(back, names) {
		t.Fatalf("DecodeList = %q, %v; want %q", back, err, names)
	}
	if _, err := Decode("paths_base64", "not base64!"); err == nil {
		t.Fatal("bad base64 decoded")
	}
}
