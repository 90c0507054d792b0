package remote

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenDispatchesOnTheScheme(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "a b%20c#d") // FileURL escapes what a URL would read otherwise
	b, err := Open(ctx, FileURL(dir), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if fb, ok := b.(*fileBackend); !ok || fb.root != dir {
		t.Fatalf("Open(file://%s) = %#v", dir, b)
	}
	b, err = Open(ctx, "s3://bucket/some/prefix/", Config{Endpoint: "http://127.0.0.1:9", AccessKeyID: "k", SecretAccessKey: "s", PartSize: 5 << 20})
	if err != nil {
		t.Fatal(err)
	}
	sb, ok := b.(*s3Backend)
	if !ok || sb.bucket != "bucket" || sb.prefix != "some/prefix/" || sb.partSize != 5<<20 || sb.client.EndpointURL().Host != "127.0.0.1:9" {
		t.Fatalf("Open(s3://bucket/some/prefix/) = %#v", b)
	}
	for url, why := range map[string]string{
		"file://host/x": "with host",
		"file:rel":      "absolute path",
		"s3:///prefix":  "no bucket",
		"s3://b/a//b":   "invalid key",
		"gs://b":        "unsupported scheme",
		"%zz":           "invalid URL escape",
	} {
		if _, err := Open(ctx, url, Config{}); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("Open(%q) = %v, want an error about %q", url, err, why)
		}
	}
	if _, err := Open(ctx, "s3://b", Config{Endpoint: "ftp://x"}); err == nil {
		t.Errorf("Open with an ftp endpoint succeeded")
	}
}

func TestS3CredentialsComeFromTheProfileWhenNoKeysAreGiven(t *testing.T) {
	file := filepath.Join(t.TempDir(), "credentials")
	ini := "[default]\naws_access_key_id = d\naws_secret_access_key = ds\n[work]\naws_access_key_id = w\naws_secret_access_key = ws\n"
	if err := os.WriteFile(file, []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	for profile, want := range map[string]string{"": "d", "work": "w"} {
		creds, err := s3Credentials(Config{Profile: profile, SharedCredentialsFile: file})
		if err != nil {
			t.Fatal(err)
		}
		v, err := creds.GetWithContext(nil)
		if err != nil || v.AccessKeyID != want {
			t.Errorf("profile %q: %+v, %v; want key %q", profile, v, err, want)
		}
	}
	creds, err := s3Credentials(Config{AccessKeyID: "k", SecretAccessKey: "s", Profile: "work", SharedCredentialsFile: file})
	if v, _ := creds.GetWithContext(nil); err != nil || v.AccessKeyID != "k" {
		t.Errorf("static keys did not take precedence: %+v, %v", v, err)
	}
	if _, err := s3Credentials(Config{Profile: "work", SharedCredentialsFile: file + ".missing"}); err == nil {
		t.Errorf("a named profile without a credentials file was accepted")
	}
}
