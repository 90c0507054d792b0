package crypt_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/engine/remote/crypt"
)

// A key file's key is checked against the remote once, then every object
// goes through the wrapped backend under a keyed name.
func ExampleWrap() {
	ctx := context.Background()
	home, remoteDir := mustTempDir(), mustTempDir()
	defer os.RemoveAll(home)
	defer os.RemoveAll(remoteDir)
	keyFile := filepath.Join(home, "ckpt.key") // never on the remote

	if err := crypt.GenerateKeyFile(keyFile); err != nil {
		log.Fatal(err)
	}
	k, err := crypt.LoadKeyFile(keyFile)
	if err != nil {
		log.Fatal(err)
	}
	raw, err := remote.OpenDir(remoteDir)
	if err != nil {
		log.Fatal(err)
	}
	if err := crypt.CheckKey(ctx, raw, k); err != nil {
		log.Fatal(err)
	}
	b := crypt.Wrap(raw, k)
	defer b.Close()

	name := "heads/" + k.Name([]byte("task default"))
	body := "checkpoint 42"
	if _, err := b.Put(ctx, name, strings.NewReader(body), int64(len(body)), remote.IfAbsent()); err != nil {
		log.Fatal(err)
	}
	rc, info, err := b.Get(ctx, name)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(data), info.Size)
	// Output: checkpoint 42 13
}

func mustTempDir() string {
	dir, err := os.MkdirTemp("", "crypt-example")
	if err != nil {
		log.Fatal(err)
	}
	return dir
}
