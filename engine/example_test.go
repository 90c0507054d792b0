package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/ckpt/ckpt/engine"
)

// Save a checkpoint before an agent's step, look at what the step changed,
// and rewind the files.
func Example() {
	ws, _ := os.MkdirTemp("", "workspace")
	store, _ := os.MkdirTemp("", "store")
	defer os.RemoveAll(ws)
	defer os.RemoveAll(store)
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644)

	ctx := context.Background()
	e, err := engine.Open(ctx, ws, engine.Options{StoreDir: store})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	before, err := e.Save(ctx, engine.SaveOptions{Task: "chat-42", Message: "before tool call"})
	if err != nil {
		log.Fatal(err)
	}
	// The agent edits a file.
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)

	diff, err := e.Diff(ctx, before.ID.String(), engine.WorkspaceRef, engine.DiffOptions{Task: "chat-42"})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range diff.Changes {
		fmt.Println(c.Status, c.Path)
	}

	res, err := e.Restore(ctx, before.ID.String(), engine.RestoreOptions{Task: "chat-42"})
	if err != nil {
		log.Fatal(err)
	}
	content, _ := os.ReadFile(filepath.Join(ws, "main.go"))
	fmt.Printf("restored %d file(s); main.go is %q; undo with the backup checkpoint: %v\n",
		len(res.Written), content, !res.Backup.IsZero())
	// Output:
	// modified main.go
	// restored 1 file(s); main.go is "package main\n"; undo with the backup checkpoint: true
}
