package remote

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// A read of an object whose body stops half way fails with ErrStalled
// once it has waited ReadStall, whole or ranged, rather than holding the
// operation for ever; a body that keeps sending, each byte within
// ReadStall of the last though the whole takes longer, is read to its end,
// and so is one whose reader pauses longer than ReadStall between reads.
func TestS3ReadOfAStalledBodyFails(t *testing.T) {
	const size = 64
	// The server sends its bytes one by one paced by pause, or (pause 0)
	// at once; after sending stopAfter bytes it sends nothing until the
	// client goes.
	serve := func(stopAfter int, pause time.Duration) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(size))
			w.Header().Set("ETag", `"0123456789abcdef0123456789abcdef"`)
			w.Header().Set("Last-Modified", time.Unix(1e9, 0).UTC().Format(http.TimeFormat))
			w.Header().Set("Content-Type", "application/octet-stream")
			w.WriteHeader(http.StatusOK)
			body := make([]byte, size)
			if pause == 0 {
				end := size
				if stopAfter >= 0 {
					end = stopAfter
				}
				w.Write(body[:end])
				w.(http.Flusher).Flush()
				if end < size {
					<-r.Context().Done()
				}
				return
			}
			for i := range size {
				w.Write(body[i : i+1])
				w.(http.Flusher).Flush()
				time.Sleep(pause) // the pace under test
			}
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	open := func(srv *httptest.Server, stall time.Duration) Backend {
		u, _ := url.Parse("s3://bucket/prefix")
		b, err := OpenS3(u, Config{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s", ReadStall: stall})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	reads := map[string]func(b Backend) (io.ReadCloser, error){
		"whole": func(b Backend) (io.ReadCloser, error) {
			rc, _, err := b.Get(t.Context(), "key")
			return rc, err
		},
		"range": func(b Backend) (io.ReadCloser, error) { return b.GetRange(t.Context(), "key", 0, size) },
	}
	for name, read := range reads {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			stalled := serve(size/2, 0)
			rc, err := read(open(stalled, 100*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if !errors.Is(err, ErrStalled) || len(got) != size/2 {
				t.Fatalf("read of a body stalled after %d bytes: %d bytes, %v; want them and ErrStalled", size/2, len(got), err)
			}

			// 64 bytes 30 ms apart: about two seconds in all, twice the
			// stall's bound, with 33 times the pace within it.
			slow := serve(-1, 30*time.Millisecond)
			rc, err = read(open(slow, time.Second))
			if err != nil {
				t.Fatal(err)
			}
			got, err = io.ReadAll(rc)
			rc.Close()
			if err != nil || len(got) != size {
				t.Fatalf("read of a slow body: %d bytes, %v", len(got), err)
			}

			fast := serve(-1, 0)
			rc, err = read(open(fast, 150*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			got = nil
			for {
				buf := make([]byte, size/2)
				n, err := rc.Read(buf)
				got = append(got, buf[:n]...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("read after a pause of the reader's: %v", err)
				}
				time.Sleep(500 * time.Millisecond) // the reader's pause under test
			}
			rc.Close()
			if len(got) != size {
				t.Fatalf("read with pauses: %d bytes", len(got))
			}
		})
	}
}
