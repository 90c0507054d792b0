package apisurface

import (
	"flag"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/golden"
)

var update = flag.Bool("update", false, "write the go doc goldens under testdata/godoc again")

const module = "github.com/ckpt/ckpt"

// public are the packages a program outside ckpt may import.
var public = []string{"engine", "engine/remote", "objects", "index", "walker", "walker/ignore", "diffview"}

// root is the module's top directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// goTool runs the go command in the module's top directory.
func goTool(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// The go doc -all text of every public package is its golden copy.
func TestGoDoc(t *testing.T) {
	for _, pkg := range public {
		t.Run(pkg, func(t *testing.T) {
			got := goTool(t, "doc", "-all", "./"+pkg)
			goldenPath := filepath.Join(root(t), "testdata", "godoc", strings.ReplaceAll(pkg, "/", "_")+".txt")
			if want, ok := golden.Match(t, goldenPath, []byte(got), *update); !ok {
				t.Errorf("go doc -all ./%s differs from %s:\n%s\nreview the change, then write the goldens again with go test ./internal/apisurface -run TestGoDoc -update",
					pkg, goldenPath, firstDifference(string(want), got))
			}
		})
	}
}

// firstDifference shows the first line where got departs from want.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  golden: " + wl + "\n  now:    " + gl
		}
	}
	return ""
}

// Imports run one way: no public layer reaches up to a layer above it, and
// the ui page reaches none of them.
func TestLayers(t *testing.T) {
	forbidden := map[string][]string{
		"objects":       {module + "/index", module + "/engine", module + "/walker", module + "/diffview"},
		"index":         {module + "/engine", module + "/walker", module + "/diffview"},
		"diffview":      {module + "/index", module + "/engine", module + "/walker", "github.com/cockroachdb/pebble"},
		"walker":        {module + "/objects", module + "/index", module + "/engine", module + "/diffview", module + "/internal"},
		"walker/ignore": {module + "/"},
		"engine/remote": {module + "/engine/internal", module + "/index", module + "/walker", module + "/diffview"},
		// The page speaks in its own types; cmd/ckpt/uiengine adapts the engine to it.
		"internal/ui": {module + "/engine", module + "/objects", module + "/index", module + "/walker", module + "/diffview"},
	}
	// objects names the file system its packs live on with pebble's vfs.FS,
	// so every layer above it reaches that interface (and the two leaf
	// packages it needs); diffview never reaches the database.
	pebbleVFS := []string{"github.com/cockroachdb/pebble/v2/vfs", "github.com/cockroachdb/pebble/v2/internal/invariants",
		"github.com/cockroachdb/pebble/v2/internal/buildtags"}
	for pkg, bad := range forbidden {
		for _, d := range strings.Fields(goTool(t, "list", "-deps", "./"+pkg)) {
			if d == module+"/"+pkg || (pkg == "walker" && d == module+"/walker/ignore") || slices.Contains(pebbleVFS, d) {
				continue
			}
			if slices.ContainsFunc(bad, func(b string) bool { return strings.HasPrefix(d, b) }) {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}
