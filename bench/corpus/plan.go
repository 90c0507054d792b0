package corpus

import (
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
)

// kind is what one planned path holds.
type kind uint8

const (
	kindText        kind = iota // captured source text
	kindBinary                  // captured binary (NUL bytes, incompressible)
	kindScript                  // captured executable shell script
	kindLargeText               // captured text of 20+ MiB
	kindLargeBinary             // captured binary of 20+ MiB
	kindIgnored                 // build output ignored by .gitignore
	kindNodeModule              // a file below node_modules/
	kindSymlink                 // a symbolic link; data is its target
	kindVerbatim                // fixed content in data (.gitignore, nested .git/HEAD)
)

// item is one planned path. Its content is a pure function of the corpus
// seed and the item's position, so items can be written in any order.
type item struct {
	path string
	kind kind
	size int
	data string
}

// dirNames name generated directories; none is on an exclusion list.
var dirNames = []string{
	"api", "core", "util", "internal", "handlers", "models", "views", "components", "services", "lib",
	"pkg", "cmd", "server", "client", "store", "hooks", "routes", "config", "schema", "tests",
	"fixtures", "assets", "styles", "i18n", "auth", "billing", "search", "storage", "metrics", "jobs",
}

// textExts are source extensions, repeated to weight them.
var textExts = []string{".ts", ".ts", ".go", ".go", ".py", ".js", ".tsx", ".md", ".json", ".yaml", ".css", ".rs", ".c", ".h", ".java"}

// binaryExts are binary extensions none of the exclusion profiles list.
var binaryExts = []string{".wasm", ".woff2", ".pak", ".pb", ".blob"}

// planner accumulates the items of one corpus.
type planner struct {
	rng   *rand.Rand
	items []item
	dirs  []string // captured directories that random files may land in
	depth map[string]int
}

func (p *planner) add(it item) { p.items = append(p.items, it) }

// textSize draws a source file size: log-normal, median 3 KiB.
func (p *planner) textSize() int { return logNormal(p.rng, 3000, 1.0, 16, 1<<20) }

// randomDir picks a captured directory uniformly.
func (p *planner) randomDir() string { return p.dirs[p.rng.IntN(len(p.dirs))] }

// plan lays out the whole corpus for cfg.
func plan(cfg Config) []item {
	p := &planner{rng: rand.New(rand.NewPCG(cfg.Seed, 0x9a7e)), depth: map[string]int{}}
	n := cfg.Files
	nodeModules := int(float64(n) * fracNodeModules)
	build := int(float64(n) * fracBuild)
	binary := max(int(float64(n)*fracBinary), 1)
	scripts := max(int(float64(n)*fracExecutable), 1)
	symlinks := max(int(float64(n)*fracSymlink), 2)
	wide := min(4000, n/25)
	nested := min(3, max(1, n/3000))
	text := n - nodeModules - build - binary - scripts - wide - cfg.LargeFiles - 4*nested - 2

	p.add(item{path: ".gitignore", kind: kindVerbatim, data: "# build output\nbuild/\ndist/\n*.o\n*.tmp\ncoverage/\n"})
	p.add(item{path: "README.md", kind: kindText, size: p.textSize()})
	packages := max(2, n/2500)
	p.planDirs(packages, nested, max(8, text/filesPerDir))
	p.planNested(nested)
	for range text {
		ext := textExts[p.rng.IntN(len(textExts))]
		p.add(item{path: p.fileIn(p.randomDir(), ext), kind: kindText, size: p.textSize()})
	}
	wideDir := "packages/pkg000/src/generated"
	for i := range wide {
		p.add(item{path: fmt.Sprintf("%s/gen_%05d.ts", wideDir, i), kind: kindText, size: logNormal(p.rng, 1500, 0.6, 64, 64<<10)})
	}
	for range binary {
		ext := binaryExts[p.rng.IntN(len(binaryExts))]
		p.add(item{path: p.fileIn(p.randomDir(), ext), kind: kindBinary, size: logNormal(p.rng, 8192, 1.2, 64, 4<<20)})
	}
	for i := range scripts {
		p.add(item{path: fmt.Sprintf("tools/scripts/s%02d/run_%d.sh", i%50, i), kind: kindScript, size: logNormal(p.rng, 1200, 0.8, 32, 64<<10)})
	}
	for i := range cfg.LargeFiles {
		size := largeMinSize + p.rng.IntN(largeSpread)
		if i%2 == 0 {
			p.add(item{path: fmt.Sprintf("assets/datasets/dump-%d.json", i), kind: kindLargeText, size: size})
		} else {
			p.add(item{path: fmt.Sprintf("assets/datasets/model-%d.wasm", i), kind: kindLargeBinary, size: size})
		}
	}
	p.planBuild(build, packages)
	p.planNodeModules(nodeModules)
	p.planSymlinks(symlinks)
	return p.items
}

// planDirs creates the captured directory tree: one src per package, then
// random children, one in ten extending the newest directory so that some
// chains run maxDepth deep.
func (p *planner) planDirs(packages, nested, total int) {
	for i := range packages {
		d := fmt.Sprintf("packages/pkg%03d/src", i)
		p.dirs = append(p.dirs, d)
		p.depth[d] = 3
	}
	for i := range nested {
		d := fmt.Sprintf("third_party/lib%d", i)
		p.dirs = append(p.dirs, d)
		p.depth[d] = 2
	}
	seen := map[string]bool{}
	for i := len(p.dirs); i < total; i++ {
		parent := p.randomDir()
		if p.rng.IntN(10) == 0 {
			parent = p.dirs[len(p.dirs)-1]
		}
		if p.depth[parent] >= maxDepth {
			parent = p.dirs[p.rng.IntN(packages)]
		}
		d := parent + "/" + dirNames[p.rng.IntN(len(dirNames))]
		if seen[d] {
			d = fmt.Sprintf("%s%d", d, i)
		}
		seen[d] = true
		p.dirs = append(p.dirs, d)
		p.depth[d] = p.depth[parent] + 1
	}
}

// planNested gives each third_party library a .git directory holding a HEAD
// and a config but no objects: git does not take it for a repository, so the
// shadow-git flow captures the library's files as Cline's renaming of nested
// .git directories makes it do; ckpt skips the .git either way.
func (p *planner) planNested(nested int) {
	for i := range nested {
		d := fmt.Sprintf("third_party/lib%d", i)
		p.add(item{path: d + "/.git/HEAD", kind: kindVerbatim, data: "ref: refs/heads/main\n"})
		p.add(item{path: d + "/.git/config", kind: kindVerbatim, data: "[core]\n\trepositoryformatversion = 0\n"})
		p.add(item{path: d + "/README.md", kind: kindText, size: p.textSize()})
		p.add(item{path: d + "/LICENSE", kind: kindText, size: 1100})
	}
}

// planBuild writes ignored output: four in five files under packages' build/
// and dist/ trees, the rest *.o files beside the sources.
func (p *planner) planBuild(count, packages int) {
	for i := range count {
		if i%5 == 4 {
			p.add(item{path: p.fileIn(p.randomDir(), ".o"), kind: kindIgnored, size: p.textSize()})
			continue
		}
		out := "build"
		if i%3 == 0 {
			out = "dist"
		}
		dir := fmt.Sprintf("packages/pkg%03d/%s/%s", i%packages, out, dirNames[p.rng.IntN(len(dirNames))])
		p.add(item{path: fmt.Sprintf("%s/chunk_%d.js", dir, i), kind: kindIgnored, size: p.textSize()})
	}
}

// planNodeModules fills node_modules/ with packages of about 40 files each.
func (p *planner) planNodeModules(count int) {
	pkgs := max(1, count/40)
	for i := range count {
		pkg := fmt.Sprintf("node_modules/dep-%04d", i%pkgs)
		sub := ""
		if i%4 != 0 {
			sub = "/lib/" + dirNames[p.rng.IntN(len(dirNames))]
		}
		p.add(item{path: fmt.Sprintf("%s%s/m%d.js", pkg, sub, i), kind: kindNodeModule, size: p.textSize()})
	}
}

// planSymlinks links to captured text files by relative path; one in twenty
// dangles.
func (p *planner) planSymlinks(count int) {
	var texts []string
	for _, it := range p.items {
		if it.kind == kindText {
			texts = append(texts, it.path)
		}
	}
	for i := range count {
		dir := p.randomDir()
		target := "missing-target.txt"
		if i%20 != 0 {
			target = relPath(dir, texts[p.rng.IntN(len(texts))])
		}
		p.add(item{path: fmt.Sprintf("%s/link_%d", dir, i), kind: kindSymlink, data: target})
	}
}

// fileIn names a new file in dir: a word, a unique number, ext.
func (p *planner) fileIn(dir, ext string) string {
	word := vocabulary[50+p.rng.IntN(40)] // identifiers only
	return fmt.Sprintf("%s/%s_%d%s", dir, strings.ToLower(word), len(p.items), ext)
}

// relPath returns the slash path of target relative to directory dir (both
// relative to the same root).
func relPath(dir, target string) string {
	from := strings.Split(dir, "/")
	to := strings.Split(path.Dir(target), "/")
	common := 0
	for common < len(from) && common < len(to) && from[common] == to[common] {
		common++
	}
	up := strings.Repeat("../", len(from)-common)
	rest := strings.Join(to[common:], "/")
	if rest != "" {
		rest += "/"
	}
	return up + rest + path.Base(target)
}
