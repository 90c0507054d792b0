//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/ckpt/ckpt/bench/corpus"
	"github.com/ckpt/ckpt/walker"
)

// The remote benchmark: "bench remote" pushes a corpus to an S3 service
// with ckpt and backs it up with restic, side by side, through one counting
// proxy (s3proxy.go), then pushes and backs up an edit, then clones and
// restores into empty directories. The service and its credentials come
// from the AWS_* variables, as .ci/seaweedfs/start prints them:
//
//	eval "$(.ci/seaweedfs/start)"
//	go run ./bench remote -scale 100k -reps 3
//
// restic gets exactly the files the checkpoint holds (--files-from-verbatim),
// a fresh repository per repetition, and an empty cache for its restore, as
// a fresh machine would have; ckpt's clone likewise starts without a store.

// remote operations, in the order they run.
const (
	opPushFirst = "first push / backup"
	opPushEdit  = "push / backup of the edit"
	opClone     = "clone / restore"
)

var remoteOps = []string{opPushFirst, opPushEdit, opClone}

// remoteTool is one of the two tools measured.
type remoteTool string

const (
	toolCkpt   remoteTool = "ckpt"
	toolRestic remoteTool = "restic"
)

// remoteSample is one operation of one tool in one repetition.
type remoteSample struct {
	dur time.Duration
	traffic
}

type remoteBench struct {
	bin, work, ws string
	m             *corpus.Manifest
	proxy         *s3Proxy
	bucket        string
	env           []string // the children's environment: the proxy as the endpoint
	edits, added  int
	seed          uint64
	samples       map[string][]remoteSample // tool + "/" + op
}

func runRemote(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("remote", flag.ContinueOnError)
	scale := fs.String("scale", "10k", "corpus size: tiny, 10k, 100k or 1m")
	seed := fs.Uint64("seed", 1, "corpus seed")
	src := fs.String("corpus", "", "benchmark on a copy of this directory instead of a generated corpus")
	reps := fs.Int("reps", 3, "repetitions, each with fresh remote repositories")
	dir := fs.String("dir", "", "parent of the temporary work directory")
	edits := fs.Int("edits", 100, "files edited before the second push")
	added := fs.Int("added", 20, "files added before the second push")
	if err := fs.Parse(args); err != nil {
		return err
	}
	endpoint := os.Getenv("AWS_ENDPOINT_URL")
	if endpoint == "" || os.Getenv("AWS_ACCESS_KEY_ID") == "" {
		return fmt.Errorf("set AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (eval \"$(.ci/seaweedfs/start)\" does)")
	}
	if _, err := exec.LookPath("restic"); err != nil {
		return fmt.Errorf("restic is not installed (apt-get install restic): %w", err)
	}
	work, err := os.MkdirTemp(*dir, "ckpt-bench-remote-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	b := &remoteBench{work: work, ws: filepath.Join(work, "ws"), edits: *edits, added: *added, seed: *seed,
		samples: map[string][]remoteSample{}, bucket: "ckpt-bench-" + strings.ToLower(rand.Text()[:8])}
	if b.m, err = b.corpus(ctx, *src, *scale); err != nil {
		return err
	}
	b.bin = filepath.Join(work, "ckpt")
	progress("building the ckpt CLI")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", b.bin, "github.com/ckpt/ckpt/cmd/ckpt").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w: %s", err, out)
	}
	if b.proxy, err = startS3Proxy(endpoint); err != nil {
		return err
	}
	defer b.proxy.close()
	if err := b.makeBucket(ctx, endpoint); err != nil {
		return err
	}
	b.env = append(os.Environ(), "AWS_ENDPOINT_URL="+b.proxy.URL, "AWS_ENDPOINT_URL_S3=", "RESTIC_PASSWORD=bench",
		"HOME="+filepath.Join(work, "home"), "CKPT_TASK=")
	for rep := range *reps {
		if err := b.rep(ctx, rep); err != nil {
			return fmt.Errorf("repetition %d: %w", rep+1, err)
		}
	}
	b.write(os.Stdout, *reps)
	return nil
}

func (b *remoteBench) corpus(ctx context.Context, src, scale string) (*corpus.Manifest, error) {
	if src != "" {
		progress("copying %s to %s", src, b.ws)
		return corpus.Copy(ctx, src, b.ws)
	}
	cfg, err := corpus.ForScale(scale, b.seed)
	if err != nil {
		return nil, err
	}
	progress("generating the %s corpus in %s", scale, b.ws)
	return corpus.Generate(ctx, b.ws, cfg)
}

// makeBucket creates the run's bucket on the service itself (not through
// the proxy, so that it is not counted).
func (b *remoteBench) makeBucket(ctx context.Context, endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return err
	}
	c, err := minio.New(u.Host, &minio.Options{Secure: u.Scheme == "https", Region: os.Getenv("AWS_REGION"),
		Creds: credentials.NewStaticV4(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), "")})
	if err != nil {
		return err
	}
	return c.MakeBucket(ctx, b.bucket, minio.MakeBucketOptions{Region: os.Getenv("AWS_REGION")})
}

// rep runs one repetition: both tools' first push, the edit and its push,
// then a clone and a restore.
func (b *remoteBench) rep(ctx context.Context, rep int) error {
	store := filepath.Join(b.work, fmt.Sprintf("store-%d", rep))
	ckptURL := fmt.Sprintf("s3://%s/ckpt-%d", b.bucket, rep)
	resticRepo := fmt.Sprintf("s3:%s/%s/restic-%d", b.proxy.URL, b.bucket, rep)
	restic := func(cache string, args ...string) []string {
		return append([]string{"-r", resticRepo, "--cache-dir", filepath.Join(b.work, cache), "-q"}, args...)
	}
	ckpt := func(args ...string) []string {
		return append([]string{"--store", store, "-C", b.ws, "--profile", "cline"}, args...)
	}
	progress("repetition %d: save, remote add, restic init", rep+1)
	if err := b.untimed(ctx, b.bin, ckpt("save", "-q", "-m", "first")...); err != nil {
		return err
	}
	if err := b.untimed(ctx, b.bin, ckpt("remote", "add", "bench", ckptURL)...); err != nil {
		return err
	}
	if err := b.untimed(ctx, "restic", restic(fmt.Sprintf("cache-%d", rep), "init")...); err != nil {
		return err
	}
	backup := func(op string) error {
		list, err := b.fileList(ctx, rep)
		if err != nil {
			return err
		}
		return b.timed(ctx, toolRestic, op, "restic", restic(fmt.Sprintf("cache-%d", rep), "backup", "--host", "bench",
			"--files-from-verbatim", list)...)
	}
	progress("repetition %d: first push and backup", rep+1)
	if err := b.timed(ctx, toolCkpt, opPushFirst, b.bin, ckpt("push", "bench")...); err != nil {
		return err
	}
	if err := backup(opPushFirst); err != nil {
		return err
	}
	if _, err := corpus.Mutate(b.m, b.seed+uint64(rep), b.edits, b.added); err != nil {
		return err
	}
	if err := b.untimed(ctx, b.bin, ckpt("save", "-q", "-m", "edit")...); err != nil {
		return err
	}
	progress("repetition %d: push and backup of the edit", rep+1)
	if err := b.timed(ctx, toolCkpt, opPushEdit, b.bin, ckpt("push", "bench")...); err != nil {
		return err
	}
	if err := backup(opPushEdit); err != nil {
		return err
	}
	progress("repetition %d: clone and restore", rep+1)
	cloneWS, restoreDir := filepath.Join(b.work, fmt.Sprintf("clone-%d", rep)), filepath.Join(b.work, fmt.Sprintf("restore-%d", rep))
	clone := func() error {
		return b.timed(ctx, toolCkpt, opClone, b.bin, "clone", ckptURL, "-C", cloneWS,
			"--store", filepath.Join(b.work, fmt.Sprintf("clone-store-%d", rep)))
	}
	restore := func() error {
		return b.timed(ctx, toolRestic, opClone, "restic", restic(fmt.Sprintf("restore-cache-%d", rep), "restore", "latest",
			"--target", restoreDir)...)
	}
	// Creating 100k files costs what the file system's recent history makes
	// it cost (ext4 skips recently freed inodes one by one), so the tool
	// that goes first alternates.
	first, second := clone, restore
	if rep%2 == 1 {
		first, second = restore, clone
	}
	if err := first(); err != nil {
		return err
	}
	if err := second(); err != nil {
		return err
	}
	return b.checkCopies(ctx, cloneWS, restoreDir)
}

// fileList writes the workspace's captured paths (what ckpt's cline
// profile takes) to a file for restic, relative to the workspace.
func (b *remoteBench) fileList(ctx context.Context, rep int) (string, error) {
	paths, err := capturedPaths(ctx, b.ws)
	if err != nil {
		return "", err
	}
	list := filepath.Join(b.work, fmt.Sprintf("files-%d", rep))
	return list, os.WriteFile(list, []byte(strings.Join(paths, "\n")+"\n"), 0o644)
}

// capturedPaths lists the files and symlinks ckpt's cline profile captures
// under root, slash-separated and relative to it, sorted.
func capturedPaths(ctx context.Context, root string) ([]string, error) {
	all, _, err := walker.Walk(ctx, root, walker.Options{Profile: "cline"},
		func(_ context.Context, d *walker.Dir, sub map[string][]string) ([]string, error) {
			var out []string
			for _, e := range d.Entries {
				if e.Kind == walker.KindFile || e.Kind == walker.KindSymlink {
					out = append(out, path.Join(d.Path, e.Name))
				}
			}
			for _, s := range sub {
				out = append(out, s...)
			}
			return out, nil
		})
	slices.Sort(all)
	return all, err
}

// checkCopies compares every captured file of the workspace with the
// clone's and the restore's: both must have restored the same bytes. (restic
// keeps the relative paths it was given, so its restore mirrors the
// workspace at the target.)
func (b *remoteBench) checkCopies(ctx context.Context, clone, restored string) error {
	paths, err := capturedPaths(ctx, b.ws)
	if err != nil {
		return err
	}
	for _, p := range paths {
		want, err := readEntry(filepath.Join(b.ws, p))
		if err != nil {
			return err
		}
		for _, dir := range []string{clone, restored} {
			got, err := readEntry(filepath.Join(dir, p))
			if err != nil || !bytes.Equal(got, want) {
				return fmt.Errorf("%s differs from the workspace (%v)", filepath.Join(dir, p), err)
			}
		}
	}
	return nil
}

// readEntry is a file's content or a symlink's target.
func readEntry(p string) ([]byte, error) {
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		t, err := os.Readlink(p)
		return []byte("link:" + t), err
	}
	return os.ReadFile(p)
}

func (b *remoteBench) untimed(ctx context.Context, name string, args ...string) error {
	_, err := runProc(ctx, b.ws, b.env, name, args...)
	return err
}

// timed runs one measured command and records its time and traffic.
func (b *remoteBench) timed(ctx context.Context, tool remoteTool, op, name string, args ...string) error {
	before := b.proxy.snapshot()
	r, err := runProc(ctx, b.ws, b.env, name, args...)
	if err != nil {
		return err
	}
	k := string(tool) + "/" + op
	b.samples[k] = append(b.samples[k], remoteSample{r.Dur, b.proxy.snapshot().sub(before)})
	return nil
}

// median of the samples of one tool and operation, by time; traffic is
// that run's.
func (b *remoteBench) median(tool remoteTool, op string) remoteSample {
	s := slices.Clone(b.samples[string(tool)+"/"+op])
	slices.SortFunc(s, func(x, y remoteSample) int { return int(x.dur - y.dur) })
	return s[len(s)/2]
}

// write prints the table: medians of reps repetitions.
func (b *remoteBench) write(w io.Writer, reps int) {
	fmt.Fprintf(w, "corpus: %d captured files, %.0f MiB; %d edits + %d new files before the second push; medians of %d\n\n",
		b.m.Captured, mib(b.m.Bytes), b.edits, b.added, reps)
	fmt.Fprintln(w, "| operation | ckpt | restic | restic ÷ ckpt | ckpt up / down | restic up / down | ckpt requests | restic requests |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, op := range remoteOps {
		c, r := b.median(toolCkpt, op), b.median(toolRestic, op)
		fmt.Fprintf(w, "| %s | %.2f s | %.2f s | %.2fx | %.1f / %.1f MiB | %.1f / %.1f MiB | %d | %d |\n", op,
			c.dur.Seconds(), r.dur.Seconds(), r.dur.Seconds()/c.dur.Seconds(),
			mib(c.Up), mib(c.Down), mib(r.Up), mib(r.Down), c.Requests, r.Requests)
	}
	fmt.Fprintln(w, "\nEach repetition, in seconds (clone and restore alternate which goes first):")
	for _, op := range remoteOps {
		fmt.Fprintf(w, "- %s: ckpt %s; restic %s\n", op, b.seconds(toolCkpt, op), b.seconds(toolRestic, op))
	}
}

// seconds lists the times of one tool and operation in run order.
func (b *remoteBench) seconds(tool remoteTool, op string) string {
	var out []string
	for _, s := range b.samples[string(tool)+"/"+op] {
		out = append(out, fmt.Sprintf("%.2f", s.dur.Seconds()))
	}
	return strings.Join(out, ", ")
}
