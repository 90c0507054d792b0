package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine/remote"
)

// assertNoneShows fails if any file under dir shows one of needles in its
// bytes or its path.
func assertNoneShows(t *testing.T, dir string, needles ...string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) || strings.Contains(p, n) {
				t.Errorf("%s shows %q", p, n)
			}
		}
		return err
	})
	if err != nil || files == 0 {
		t.Fatalf("scanned %d files of %s: %v", files, dir, err)
	}
}

func TestCLIEncryptedRemoteWithAKeyFile(t *testing.T) {
	t.Parallel()
	src := newEnv(t)
	src.write("quarterly-layoffs.txt", "names on the list: nobody yet\n")
	src.ok("--task", "hush-hush", "save")
	key := filepath.Join(t.TempDir(), "remote.key")
	src.ok("remote", "keygen", key)
	if st, err := os.Stat(key); err != nil || (runtime.GOOS != "windows" && st.Mode().Perm() != 0o600) {
		t.Fatalf("key file: %v, %v", st, err)
	}
	if r := src.run("", "remote", "keygen", key); r.code == 0 {
		t.Fatal("keygen replaced an existing key file")
	}
	dir := t.TempDir()
	url := remote.FileURL(dir)
	src.ok("remote", "add", "origin", url, "--key-file", key)
	got := decode[protocol.RemotesJSON](t, src.ok("remote", "list", "--json"))
	if len(got.Remotes) != 1 || got.Remotes[0].KeyFile != key {
		t.Fatalf("remote list: %+v", got)
	}
	push := decode[protocol.PushJSON](t, src.ok("--task", "hush-hush", "push", "--json"))
	if push.Checkpoints != 1 {
		t.Fatalf("push: %+v", push)
	}
	assertNoneShows(t, dir, "names on the list", "quarterly-layoffs", "hush-hush")

	// A wrong key is refused before the workspace or store exist.
	wrong := filepath.Join(t.TempDir(), "wrong.key")
	src.ok("remote", "keygen", wrong)
	bad := newEnv(t)
	bad.ws = filepath.Join(bad.ws, "new")
	// Without a key it is refused once the store was made, which the clone
	// removes. Neither message points at `ckpt remote list`: no store
	// records a key yet.
	leftNothing := func(what string) {
		t.Helper()
		for _, p := range []string{bad.ws, bad.store} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Fatalf("a clone %s left %s: %v", what, p, err)
			}
		}
	}
	if r := bad.run("", "--task", "hush-hush", "clone", url, "--key-file", wrong); r.code != protocol.ExitRefused || !strings.Contains(r.stderr, "wrong key") ||
		!strings.Contains(r.stderr, "given to --key-file") || strings.Contains(r.stderr, "remote list") {
		t.Fatalf("clone with a wrong key: exit %d %s", r.code, r.stderr)
	}
	leftNothing("with a wrong key")
	if r := bad.run("", "--task", "hush-hush", "clone", url); r.code != protocol.ExitRefused || !strings.Contains(r.stderr, "give the remote's key with --key-file") ||
		strings.Contains(r.stderr, "remote list") {
		t.Fatalf("clone without a key: exit %d %s", r.code, r.stderr)
	}
	leftNothing("without a key")

	dst := newEnv(t)
	dst.ok("--task", "hush-hush", "clone", url, "--key-file", key)
	if b, err := os.ReadFile(filepath.Join(dst.ws, "quarterly-layoffs.txt")); err != nil || string(b) != "names on the list: nobody yet\n" {
		t.Fatalf("cloned file: %q, %v", b, err)
	}

	// An edit pushes one data object; a flipped byte in it fails a clone with exit 5.
	src.write("quarterly-layoffs.txt", "names on the list: still nobody\n")
	src.ok("--task", "hush-hush", "save")
	if again := decode[protocol.PushJSON](t, src.ok("--task", "hush-hush", "push", "--json")); again.Traffic.ObjectsUp != 1 || again.Traffic.SegmentsUp != 1 {
		t.Fatalf("incremental push: %+v", again.Traffic)
	}
	damageRemote(t, dir, "data")
	if r := newEnv(t).run("", "--task", "hush-hush", "clone", url, "--key-file", key); r.code != protocol.ExitCorrupted {
		t.Fatalf("clone of a tampered remote: exit %d %s", r.code, r.stderr)
	}
}

// A command forwarded to a listening server reaches a remote with the
// client's environment, as it would run cold: the passphrase (and the
// AWS_* settings) of the server's environment are not the client's. The
// push seals the remote with the client's passphrase, which a cold clone
// then opens; with the variable unset in the client it fails naming it.
func TestCLIRemoteThroughAServerUsesTheClientsEnvironment(t *testing.T) {
	t.Setenv("CKPT_TEST_PASSPHRASE", "correct horse battery staple")
	src := newEnv(t)
	src.serverEnv = append(src.serverEnv, "CKPT_TEST_PASSPHRASE=the server's own")
	src.write("a.txt", "alpha\n")
	src.listenServer()
	src.ok("--lock-timeout", "0", "save")
	url := remote.FileURL(t.TempDir())
	src.ok("--lock-timeout", "0", "remote", "add", "origin", url, "--passphrase-env", "CKPT_TEST_PASSPHRASE")
	src.ok("--lock-timeout", "0", "push")
	dst := newEnv(t)
	dst.ok("clone", url, "--passphrase-env", "CKPT_TEST_PASSPHRASE")
	if b, err := os.ReadFile(filepath.Join(dst.ws, "a.txt")); err != nil || string(b) != "alpha\n" {
		t.Fatalf("cloned file: %q, %v", b, err)
	}
	t.Setenv("CKPT_TEST_PASSPHRASE", "")
	src.write("a.txt", "beta\n")
	src.ok("--lock-timeout", "0", "save")
	if r := src.run("", "--lock-timeout", "0", "push"); r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "CKPT_TEST_PASSPHRASE") {
		t.Fatalf("push through the server with the client's variable unset: exit %d %s", r.code, r.stderr)
	}
}

// The blobs a pull through a server left on a remote are fetched, for a
// forwarded cat, with that command's environment: neither the pull's
// backend nor one an earlier cat opened serves a client whose passphrase
// is wrong or unset, and a client with the right one still reads them.
func TestCLIServerFetchesWithEachCommandsEnvironment(t *testing.T) {
	t.Setenv("CKPT_TEST_PASSPHRASE", "correct horse battery staple")
	src := newEnv(t)
	src.write("a.txt", "alpha\n")
	src.write("b.txt", "bravo\n")
	src.ok("save")
	url := remote.FileURL(t.TempDir())
	src.ok("remote", "add", "origin", url, "--passphrase-env", "CKPT_TEST_PASSPHRASE")
	src.ok("push")

	dst := newEnv(t)
	dst.listenServer()
	dst.ok("--lock-timeout", "0", "remote", "add", "origin", url, "--passphrase-env", "CKPT_TEST_PASSPHRASE")
	dst.ok("--lock-timeout", "0", "pull")
	cat := func(passphrase, file string) result {
		t.Helper()
		t.Setenv("CKPT_TEST_PASSPHRASE", passphrase)
		return dst.run("", "--lock-timeout", "0", "cat", "HEAD", file)
	}
	if r := cat("incorrect horse", "a.txt"); r.code != protocol.ExitRefused {
		t.Fatalf("cat after the pull with a wrong passphrase: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := cat("correct horse battery staple", "a.txt"); r.code != 0 || r.stdout != "alpha\n" {
		t.Fatalf("cat with the right passphrase: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := cat("incorrect horse", "b.txt"); r.code != protocol.ExitRefused {
		t.Fatalf("cat after a right one, with a wrong passphrase: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := cat("", "b.txt"); r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "CKPT_TEST_PASSPHRASE") {
		t.Fatalf("cat with the variable unset: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := cat("correct horse battery staple", "b.txt"); r.code != 0 || r.stdout != "bravo\n" {
		t.Fatalf("cat with the right passphrase again: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
}

func TestCLIEncryptedRemoteWithAPassphrase(t *testing.T) {
	t.Setenv("CKPT_TEST_PASSPHRASE", "correct horse battery staple")
	src := newEnv(t)
	src.write("a.txt", "alpha\n")
	src.ok("save")
	dir := t.TempDir()
	url := remote.FileURL(dir)
	src.ok("remote", "add", "origin", url, "--passphrase-env", "CKPT_TEST_PASSPHRASE")
	src.ok("push")
	if b, err := os.ReadFile(filepath.Join(dir, "crypt", "params")); err != nil || bytes.Contains(b, []byte("correct horse")) {
		t.Fatalf("params: %q, %v", b, err)
	}
	if r := src.run("", "remote", "add", "two", url, "--key-file", "k", "--passphrase-env", "X"); r.code != protocol.ExitUsage {
		t.Fatalf("two kinds of key: exit %d %s", r.code, r.stderr)
	}
	dst := newEnv(t)
	dst.ok("clone", url, "--passphrase-env", "CKPT_TEST_PASSPHRASE")
	if b, err := os.ReadFile(filepath.Join(dst.ws, "a.txt")); err != nil || string(b) != "alpha\n" {
		t.Fatalf("cloned file: %q, %v", b, err)
	}
	t.Setenv("CKPT_TEST_PASSPHRASE", "incorrect horse")
	if r := newEnv(t).run("", "clone", url, "--passphrase-env", "CKPT_TEST_PASSPHRASE"); r.code != protocol.ExitRefused {
		t.Fatalf("clone with a wrong passphrase: exit %d %s", r.code, r.stderr)
	}
	if r := src.run("", "push"); r.code != protocol.ExitRefused {
		t.Fatalf("push with a wrong passphrase: exit %d %s", r.code, r.stderr)
	}
	t.Setenv("CKPT_TEST_PASSPHRASE", "")
	if r := src.run("", "push"); r.code != protocol.ExitUsage || !strings.Contains(r.stderr, "CKPT_TEST_PASSPHRASE") {
		t.Fatalf("push with the variable unset: exit %d %s", r.code, r.stderr)
	}
}
