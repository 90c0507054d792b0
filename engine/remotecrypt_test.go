package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/engine/internal/kdfcost"
	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/engine/remote/crypt"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// secretCase is one way of keying an encrypted remote.
type secretCase struct {
	name   string
	secret func(t *testing.T) RemoteSecret
	key    func(RemoteSecret) RemoteKey
}

func secretCases() []secretCase {
	return []secretCase{
		{"key file", func(t *testing.T) RemoteSecret { return RemoteSecret{KeyFile: newKeyFile(t)} },
			func(s RemoteSecret) RemoteKey { return RemoteKey{KeyFile: s.KeyFile} }},
		{"passphrase", func(*testing.T) RemoteSecret { return RemoteSecret{Passphrase: []byte("correct horse battery")} },
			func(RemoteSecret) RemoteKey { return RemoteKey{PassphraseEnv: "CKPT_TEST_PASSPHRASE"} }},
	}
}

func newKeyFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "remote.key")
	if err := GenerateRemoteKey(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// dirRemote opens a file:// remote in a new directory, whose bytes a test
// can read and change.
func dirRemote(t *testing.T) (b Backend, dir, url string) {
	t.Helper()
	dir = t.TempDir()
	b, err := remote.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, dir, remote.FileURL(dir)
}

// encrypt seals b with secret, failing the test on error.
func encrypt(t *testing.T, b Backend, secret RemoteSecret) Backend {
	t.Helper()
	sb, err := EncryptRemote(context.Background(), b, secret)
	if err != nil {
		t.Fatalf("encrypt: %v", err)
	}
	return sb
}

// pushEncrypted saves syncTree in a new store, records b's remote as
// "origin" encrypted as key says, and pushes through sb.
func pushEncrypted(t *testing.T, sb Backend, url string, key RemoteKey) *fixture {
	t.Helper()
	f := newSyncFixture(t, syncTree(), Options{})
	f.save("one")
	ctx := context.Background()
	if err := f.e.AddEncryptedRemote(ctx, "origin", url, key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Push(ctx, sb, PushOptions{Remote: "origin"}); err != nil {
		t.Fatalf("push: %v", err)
	}
	return f
}

func cloneEncrypted(t *testing.T, sb Backend, url string, key RemoteKey) (*fixture, error) {
	t.Helper()
	g := newFixture(t, testtree.Dir{})
	_, err := g.e.Clone(context.Background(), sb, CloneOptions{URL: url, Key: key})
	return g, err
}

func TestEncryptedPushAndCloneReproduceTheWorkspaceByteForByte(t *testing.T) {
	t.Parallel()
	for _, sc := range secretCases() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
				b, url := open(t)
				secret := sc.secret(t)
				f := pushEncrypted(t, encrypt(t, b, secret), url, sc.key(secret))
				// Another machine opens the remote afresh with the same secret.
				g, err := cloneEncrypted(t, encrypt(t, b, secret), url, sc.key(secret))
				if err != nil {
					t.Fatal(err)
				}
				assertSameTree(t, f.read(), g.read())
				if rs, err := g.e.Remotes(context.Background()); err != nil || len(rs) != 1 || rs[0].Key != sc.key(secret) {
					t.Fatalf("the clone records %+v, %v", rs, err)
				}
			})
		})
	}
}

// TestEncryptedRemoteShowsNoContentNameOrTask scans every byte and every
// file name of an encrypted file:// remote for what it must hide.
func TestEncryptedRemoteShowsNoContentNameOrTask(t *testing.T) {
	t.Parallel()
	b, dir, url := dirRemote(t)
	secret := RemoteSecret{KeyFile: newKeyFile(t)}
	content := "the launch codes are 0000 and nobody may know\n"
	f := newFixture(t, testtree.Dir{"plans-for-world-domination.txt": testtree.File{Content: strings.Repeat(content, 3)}})
	ctx := context.Background()
	const task = "secret-project-task"
	if _, err := f.e.Save(ctx, SaveOptions{Task: task}); err != nil {
		t.Fatal(err)
	}
	if err := f.e.AddEncryptedRemote(ctx, "origin", url, RemoteKey{KeyFile: secret.KeyFile}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Push(ctx, encrypt(t, b, secret), PushOptions{Remote: "origin", Task: task}); err != nil {
		t.Fatal(err)
	}
	ents, err := f.e.Ls(ctx, task, "HEAD", "")
	if err != nil || len(ents) != 1 {
		t.Fatalf("ls: %+v, %v", ents, err)
	}
	blob := ents[0].ID
	needles := map[string][]byte{
		"content":             []byte("launch codes"),
		"file name":           []byte("world-domination"),
		"task name":           []byte(task),
		"blob id":             []byte(blob.String()),
		"plain head name":     []byte(objects.Sum([]byte("ckpt-task\x00" + task)).String()),
		"blob id (raw bytes)": blob[:],
	}
	files := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for what, needle := range needles {
			if bytes.Contains(data, needle) || strings.Contains(p, string(needle)) {
				t.Errorf("%s shows the %s", p, what)
			}
		}
		return nil
	})
	if err != nil || files < 4 {
		t.Fatalf("walked %d files: %v", files, err)
	}
}

func TestEncryptedRemoteRefusesAWrongOrMissingKey(t *testing.T) {
	t.Parallel()
	for _, sc := range secretCases() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			b, url := remoteCases()[0].open(t)
			secret := sc.secret(t)
			pushEncrypted(t, encrypt(t, b, secret), url, sc.key(secret))
			ctx := context.Background()
			wrong := RemoteSecret{KeyFile: newKeyFile(t)}
			if secret.KeyFile != "" {
				wrong = RemoteSecret{Passphrase: []byte("not the key")}
			}
			if _, err := EncryptRemote(ctx, b, wrong); !errors.Is(err, ErrWrongKey) {
				t.Fatalf("wrong key: %v", err)
			}
			if secret.KeyFile == "" {
				if _, err := EncryptRemote(ctx, b, RemoteSecret{Passphrase: []byte("correct horse battery!")}); !errors.Is(err, ErrWrongKey) {
					t.Fatalf("wrong passphrase: %v", err)
				}
			}
			// Without a key, a clone fails before it records or writes anything.
			g, err := cloneEncrypted(t, b, url, RemoteKey{})
			if !errors.Is(err, ErrWrongKey) {
				t.Fatalf("clone without a key: %v", err)
			}
			if rs, _ := g.e.Remotes(ctx); len(rs) != 0 {
				t.Fatalf("a refused clone recorded %+v", rs)
			}
		})
	}
}

func TestEncryptingARemoteWithPlainCheckpointsIsRefused(t *testing.T) {
	t.Parallel()
	b, url := remoteCases()[0].open(t)
	pushedFixture(t, b, url, "one")
	if _, err := EncryptRemote(context.Background(), b, RemoteSecret{KeyFile: newKeyFile(t)}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("encrypting a plain remote in use: %v", err)
	}
}

func TestEncryptedRemoteWithAFlippedByteIsCorrupt(t *testing.T) {
	t.Parallel()
	b, dir, url := dirRemote(t)
	secret := RemoteSecret{KeyFile: newKeyFile(t)}
	pushEncrypted(t, encrypt(t, b, secret), url, RemoteKey{KeyFile: secret.KeyFile})
	ents, err := os.ReadDir(filepath.Join(dir, "data"))
	if err != nil || len(ents) == 0 {
		t.Fatalf("data objects: %v, %v", ents, err)
	}
	p := filepath.Join(dir, "data", ents[0].Name())
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 1
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := cloneEncrypted(t, encrypt(t, b, secret), url, RemoteKey{KeyFile: secret.KeyFile})
	if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrWrongKey) {
		t.Fatalf("clone of a tampered data object: %v", err)
	}
	// The remote's damage (an object that does not authenticate) may be
	// mended: a save that settles the clone's restore, fetching through
	// the remote, fails and keeps its journal.
	if g.e.PendingRestore() == nil {
		t.Fatal("the clone's restore left no journal")
	}
	g.open(Options{OpenRemote: func(ctx context.Context, r RemoteInfo) (Backend, error) {
		raw, err := remote.OpenDir(dir)
		if err != nil {
			return nil, err
		}
		return EncryptRemote(ctx, raw, secret)
	}})
	var pending *PendingRestoreError
	if _, err := g.e.Save(context.Background(), SaveOptions{}); !errors.As(err, &pending) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("save over the clone's restore: %v, want a PendingRestoreError of the remote's damage", err)
	}
	if g.e.PendingRestore() == nil {
		t.Fatal("the save dropped the clone's journal over the remote's damage")
	}
}

func TestIncrementalEncryptedPushUploadsOnlyTheNewData(t *testing.T) {
	t.Parallel()
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		b, url := open(t)
		secret := RemoteSecret{KeyFile: newKeyFile(t)}
		key := RemoteKey{KeyFile: secret.KeyFile}
		f := pushEncrypted(t, encrypt(t, b, secret), url, key)
		f.write("src/a.go", "package a // edited\n")
		f.save("two")
		cb := &countingBackend{Backend: b}
		ctx := context.Background()
		res, err := f.e.Push(ctx, encrypt(t, cb, secret), PushOptions{Remote: "origin"})
		// One data object (the edited blob), one segment, one head.
		if err != nil || cb.puts.Load() != 3 || res.Checkpoints != 1 || res.Traffic.ObjectsUp != 1 {
			t.Fatalf("incremental push: %+v, %v, %d puts; want 3 puts for 1 checkpoint", res, err, cb.puts.Load())
		}
		if got := cb.bytes.Load(); got > 8<<10 {
			t.Fatalf("incremental push uploaded %d bytes", got)
		}
		cb.puts.Store(0)
		if res, err := f.e.Push(ctx, encrypt(t, cb, secret), PushOptions{Remote: "origin"}); err != nil || !res.UpToDate || cb.puts.Load() != 0 {
			t.Fatalf("a second push: %+v, %v with %d puts", res, err, cb.puts.Load())
		}
	})
}

func TestAnEncryptedRemoteTakesOnlyASealedBackend(t *testing.T) {
	t.Parallel()
	b, url := remoteCases()[0].open(t)
	secret := RemoteSecret{KeyFile: newKeyFile(t)}
	f := pushEncrypted(t, encrypt(t, b, secret), url, RemoteKey{KeyFile: secret.KeyFile})
	ctx := context.Background()
	if _, err := f.e.Push(ctx, b, PushOptions{Remote: "origin"}); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("push through a plain backend: %v", err)
	}
	plain, purl := remoteCases()[0].open(t)
	if err := f.e.AddRemote(ctx, "plain", purl); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Push(ctx, encrypt(t, plain, secret), PushOptions{Remote: "plain"}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("push of a plain remote through a sealed backend: %v", err)
	}
	if err := f.e.AddEncryptedRemote(ctx, "nokey", purl, RemoteKey{}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("an encrypted remote without a key: %v", err)
	}
}

// A fresh Engine fetches the blobs a pull left on an encrypted remote
// through OpenRemote, which gets the remote's RemoteKey.
func TestOpenRemoteGetsTheKeyOfAnEncryptedRemote(t *testing.T) {
	t.Parallel()
	b, url := remoteCases()[0].open(t)
	secret := RemoteSecret{KeyFile: newKeyFile(t)}
	key := RemoteKey{KeyFile: secret.KeyFile}
	pushEncrypted(t, encrypt(t, b, secret), url, key)
	g := newFixture(t, testtree.Dir{})
	ctx := context.Background()
	if err := g.e.AddEncryptedRemote(ctx, "origin", url, key); err != nil {
		t.Fatal(err)
	}
	if _, err := g.e.Pull(ctx, encrypt(t, b, secret), PullOptions{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	var got RemoteInfo
	g.open(Options{OpenRemote: func(ctx context.Context, r RemoteInfo) (Backend, error) {
		got = r
		raw, err := remote.Open(ctx, r.URL, remote.Config{})
		if err != nil {
			return nil, err
		}
		return EncryptRemote(ctx, raw, RemoteSecret{KeyFile: r.Key.KeyFile})
	}})
	if _, err := g.e.Restore(ctx, "HEAD", RestoreOptions{NoBackup: true}); err != nil {
		t.Fatal(err)
	}
	if got.Key != key || g.readFile("src/a.go") != "package a\n" {
		t.Fatalf("OpenRemote got %+v; a.go = %q", got, g.readFile("src/a.go"))
	}
}

func TestRemoteErrorsOfAnEncryptedRemoteMatchTheirPublicSentinels(t *testing.T) {
	for _, c := range []struct {
		err  error
		want error
		not  error
	}{
		{fmt.Errorf("fetch: %w", crypt.ErrWrongKey), ErrWrongKey, ErrCorrupt},
		{fmt.Errorf("read data/x: %w", crypt.ErrChanged), ErrRemoteChanged, ErrCorrupt},
		{fmt.Errorf("read data/x: segment 3: %w", crypt.ErrAuth), ErrCorrupt, ErrWrongKey},
	} {
		got := translate(remoteError(c.err, "origin"), "/s")
		if !errors.Is(got, c.want) || errors.Is(got, c.not) {
			t.Errorf("%v became %v: want it to match %v and not %v", c.err, got, c.want, c.not)
		}
	}
}

// TestPassphraseRemoteIsMadeWithTheRecommendedCost is the one test that
// stretches a passphrase at the cost hosts get (TestMain lowers it for the
// others): the remote records RFC 9106's second recommended argon2id cost,
// and a second client with the passphrase opens it.
func TestPassphraseRemoteIsMadeWithTheRecommendedCost(t *testing.T) {
	lowered := kdfcost.Passphrase
	kdfcost.Passphrase = recommendedKDFCost
	t.Cleanup(func() { kdfcost.Passphrase = lowered })
	b, _ := remoteCases()[0].open(t)
	secret := RemoteSecret{Passphrase: []byte("correct horse battery")}
	encrypt(t, b, secret)
	rc, _, err := b.Get(context.Background(), crypt.ParamsKey)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var params struct {
		KDF       string `json:"kdf"`
		Time      uint32 `json:"time"`
		MemoryKiB uint32 `json:"memory_kib"`
		Threads   uint8  `json:"threads"`
	}
	if err := json.NewDecoder(rc).Decode(&params); err != nil {
		t.Fatal(err)
	}
	if params.KDF != "argon2id" || params.Time != 3 || params.MemoryKiB != 64<<10 || params.Threads != 4 {
		t.Fatalf("the remote records %+v, want argon2id with 3 passes over 64 MiB in 4 lanes", params)
	}
	if _, err := EncryptRemote(context.Background(), b, secret); err != nil {
		t.Fatalf("a second client with the passphrase: %v", err)
	}
}
