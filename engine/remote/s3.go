package remote

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// maxSinglePut is S3's limit on the size of one PUT request.
const maxSinglePut = 5 << 30

// s3Backend is the Backend of an s3:// remote: the objects of one bucket
// whose names start with prefix.
//
// Guarantees rest on the service: S3 (since December 2020) and MinIO give
// read-after-write for every operation, an object appears whole or not at
// all, and conditional PUTs are atomic. SeaweedFS's S3 gateway evaluates
// If-None-Match: * and If-Match under a per-object lock in its filer; the
// conformance suite's races show exactly one winner on the real gateway,
// the losers queued on that lock for up to about a second each. A service
// that ignored the headers would fail those races (two winners); the
// fallback there would be to write each version under a new, unique key
// and publish it by a read-back comparison, which push does not need
// today.
//
// Conditional puts are always single PUT requests (so at most 5 GiB):
// minio-go leaves the condition headers off the request that completes a
// multipart upload.
type s3Backend struct {
	client    *minio.Client
	bucket    string
	prefix    string // "" or ending in "/"
	partSize  uint64
	readStall time.Duration // Config.ReadStall, its default applied
}

// OpenS3 opens the bucket and key prefix of an s3://bucket/prefix URL. It
// makes no request: a wrong endpoint or credentials show in the first call.
func OpenS3(u *url.URL, cfg Config) (Backend, error) {
	if u.Host == "" {
		return nil, fmt.Errorf("remote: %s: no bucket", u.Redacted())
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		if err := ValidKey(prefix); err != nil {
			return nil, fmt.Errorf("remote: %s: prefix: %w", u.Redacted(), err)
		}
		prefix += "/"
	}
	endpoint, secure, err := splitEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	creds, err := s3Credentials(cfg)
	if err != nil {
		return nil, err
	}
	client, err := minio.New(endpoint, &minio.Options{
		Creds:  creds,
		Secure: secure,
		Region: cfg.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("remote: %s: %w", u.Redacted(), err)
	}
	return &s3Backend{client: client, bucket: u.Host, prefix: prefix, partSize: cfg.PartSize,
		readStall: cmp.Or(max(cfg.ReadStall, 0), defaultReadStall)}, nil
}

// splitEndpoint turns an endpoint URL into minio's host[:port] and TLS flag.
func splitEndpoint(endpoint string) (hostport string, secure bool, err error) {
	if endpoint == "" {
		return "s3.amazonaws.com", true, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", false, fmt.Errorf("remote: endpoint %q: %w", endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") != "" {
		return "", false, fmt.Errorf("remote: endpoint %q: want http(s)://host[:port]", endpoint)
	}
	return u.Host, u.Scheme == "https", nil
}

func s3Credentials(cfg Config) (*credentials.Credentials, error) {
	if cfg.AccessKeyID != "" {
		return credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken), nil
	}
	profile := cfg.Profile
	if profile == "" {
		profile = "default"
	}
	if cfg.SharedCredentialsFile != "" {
		_, err := os.Stat(cfg.SharedCredentialsFile)
		if err == nil {
			return credentials.NewFileAWSCredentials(cfg.SharedCredentialsFile, profile), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remote: credentials: %w", err)
		}
	}
	if cfg.Profile != "" {
		return nil, fmt.Errorf("remote: credentials profile %q: no shared credentials file %q", cfg.Profile, cfg.SharedCredentialsFile)
	}
	return credentials.NewStaticV4("", "", ""), nil
}

func (b *s3Backend) Close() error { return nil }

// core is the client's single-request API.
func (b *s3Backend) core() minio.Core { return minio.Core{Client: b.client} }

func (b *s3Backend) Put(ctx context.Context, key string, r io.Reader, size int64, cond Condition) (string, error) {
	if err := validPut(key, size); err != nil {
		return "", err
	}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", PartSize: b.partSize}
	switch cond.kind {
	case ifAbsent:
		opts.SetMatchETagExcept("*")
	case ifMatch:
		opts.SetMatchETag(cond.etag)
	}
	if cond.kind != always {
		// minio-go drops the condition headers from the request that
		// completes a multipart upload, which would turn a conditional
		// put into an unconditional one: conditional puts are single
		// requests, as large as S3 allows one to be.
		if size > maxSinglePut {
			return "", fmt.Errorf("remote: put %s (%v): %d bytes, over the %d of a conditional put", key, cond, size, int64(maxSinglePut))
		}
		opts.DisableMultipart = true
	}
	body := &exactReader{r: r, left: size}
	info, err := b.client.PutObject(ctx, b.bucket, b.prefix+key, body, size, opts)
	if body.short {
		return "", fmt.Errorf("remote: put %s: %w: %d bytes missing", key, io.ErrUnexpectedEOF, body.left)
	}
	if err != nil {
		return "", b.putError(ctx, key, cond, err)
	}
	return info.ETag, nil
}

// putError classifies a failed put. S3 answers an If-Match put on a
// missing object with 404 NoSuchKey; the Backend contract calls that a
// failed precondition.
func (b *s3Backend) putError(ctx context.Context, key string, cond Condition, err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		switch {
		case resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed",
			cond.kind == ifMatch && resp.StatusCode == http.StatusNotFound:
			return fmt.Errorf("remote: put %s (%v): %w", key, cond, ErrPrecondition)
		}
	}
	return fmt.Errorf("remote: put %s: %w", key, ctxOr(ctx, err))
}

func (b *s3Backend) Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error) {
	if err := ValidKey(key); err != nil {
		return nil, ObjectInfo{}, err
	}
	// One request: the body is the response that carried the info, so
	// both describe one version. (minio.Client.GetObject would issue
	// further requests as the body is read.)
	rctx, guard := newStallGuard(ctx, b.readStall)
	body, st, _, err := b.core().GetObject(rctx, b.bucket, b.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		guard.stop()
		return nil, ObjectInfo{}, b.readError(ctx, key, err)
	}
	st.Key = b.prefix + key
	return exactBody(ctx, guard, body, st.Size), b.info(st), nil
}

func (b *s3Backend) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if err := ValidKey(key); err != nil {
		return nil, err
	}
	if off < 0 || n < 0 {
		return nil, fmt.Errorf("remote: get %s: invalid range %d+%d", key, off, n)
	}
	if n == 0 {
		// HTTP cannot ask for an empty range; check the object instead.
		info, err := b.Stat(ctx, key)
		if err != nil {
			return nil, err
		}
		if off > info.Size {
			return nil, fmt.Errorf("remote: get %s bytes %d+0 of %d: %w", key, off, info.Size, io.ErrUnexpectedEOF)
		}
		return io.NopCloser(strings.NewReader("")), nil
	}
	opts := minio.GetObjectOptions{}
	if err := opts.SetRange(off, off+n-1); err != nil {
		return nil, fmt.Errorf("remote: get %s: %w", key, err)
	}
	rctx, guard := newStallGuard(ctx, b.readStall)
	body, _, _, err := b.core().GetObject(rctx, b.bucket, b.prefix+key, opts)
	if err != nil {
		guard.stop()
		var resp minio.ErrorResponse
		if errors.As(err, &resp) && resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
			return nil, fmt.Errorf("remote: get %s bytes %d+%d: %w", key, off, n, io.ErrUnexpectedEOF)
		}
		return nil, b.readError(ctx, key, err)
	}
	return exactBody(ctx, guard, body, n), nil
}

func (b *s3Backend) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ValidKey(key); err != nil {
		return ObjectInfo{}, err
	}
	st, err := b.client.StatObject(ctx, b.bucket, b.prefix+key, minio.StatObjectOptions{})
	if err != nil {
		return ObjectInfo{}, b.readError(ctx, key, err)
	}
	return b.info(st), nil
}

func (b *s3Backend) readError(ctx context.Context, key string, err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && (resp.StatusCode == http.StatusNotFound || resp.Code == "NoSuchKey") {
		return fmt.Errorf("remote: %s: %w", key, ErrNotFound)
	}
	return fmt.Errorf("remote: get %s: %w", key, ctxOr(ctx, err))
}

func (b *s3Backend) info(st minio.ObjectInfo) ObjectInfo {
	return ObjectInfo{
		Key:      strings.TrimPrefix(st.Key, b.prefix),
		Size:     st.Size,
		ETag:     st.ETag,
		Modified: st.LastModified,
	}
}

// List asks for one object more than the page, in one request, so that
// Next is "" exactly when nothing follows.
func (b *s3Backend) List(ctx context.Context, prefix, after string, limit int) (ListPage, error) {
	if err := validPrefix(prefix); err != nil {
		return ListPage{}, err
	}
	if limit <= 0 || limit >= maxPage {
		limit = maxPage - 1
	}
	opts := minio.ListObjectsOptions{Prefix: b.prefix + prefix, Recursive: true, MaxKeys: limit + 1}
	if after != "" {
		opts.StartAfter = b.prefix + after
	}
	if err := ctx.Err(); err != nil {
		return ListPage{}, err
	}
	var page ListPage
	for st := range b.client.ListObjectsIter(ctx, b.bucket, opts) {
		if st.Err != nil {
			return ListPage{}, fmt.Errorf("remote: list %q: %w", prefix, ctxOr(ctx, st.Err))
		}
		if len(page.Objects) == limit {
			page.Next = page.Objects[limit-1].Key
			break
		}
		page.Objects = append(page.Objects, b.info(st))
	}
	return page, nil
}

func (b *s3Backend) Delete(ctx context.Context, key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if err := b.client.RemoveObject(ctx, b.bucket, b.prefix+key, minio.RemoveObjectOptions{}); err != nil {
		var resp minio.ErrorResponse
		if errors.As(err, &resp) && resp.StatusCode == http.StatusNotFound {
			return nil
		}
		return fmt.Errorf("remote: delete %s: %w", key, ctxOr(ctx, err))
	}
	return nil
}

// ctxOr returns ctx's error when ctx is done, since the client's error for
// a cancelled request does not always wrap it, and err otherwise.
func ctxOr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	return err
}

// exactBody is the reader of the n bytes of body, a response to a request
// made under guard's context: a cancellation of ctx or a stall ends it.
func exactBody(ctx context.Context, guard *stallGuard, body io.ReadCloser, n int64) io.ReadCloser {
	r := guard.guarded(ctxReader{ctx, body}, body)
	return &exactReadCloser{exactReader{r: r, left: n}, r}
}

// exactReader passes on exactly left bytes of r and fails with
// io.ErrUnexpectedEOF when r ends early, noting it in short.
type exactReader struct {
	r     io.Reader
	left  int64
	short bool
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if errors.Is(err, io.EOF) {
		if e.left > 0 {
			e.short = true
			return n, io.ErrUnexpectedEOF
		}
		err = nil
	}
	if e.left == 0 && err == nil {
		return n, io.EOF
	}
	return n, err
}

type exactReadCloser struct {
	exactReader
	c io.Closer
}

func (e *exactReadCloser) Close() error { return e.c.Close() }
