package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
)

// BenchmarkShadow measures a check and a check-and-insert through the
// handler with no shadow, with a shadow, and with a stuck shadow (checks
// dropped, inserts only journaled): what the shadow costs the primary's
// requests.
func BenchmarkShadow(b *testing.B) {
	for _, mode := range []string{"none", "shadow", "stuck"} {
		for _, op := range []string{"check", "insert"} {
			b.Run(mode+"/"+op, func(b *testing.B) {
				primary, err := index.Open(b.TempDir()+"/p", &index.Options{CacheSize: 16 << 20, MemTableSize: 4 << 20})
				if err != nil {
					b.Fatal(err)
				}
				defer primary.Close()
				o := &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
				if mode != "none" {
					dir := b.TempDir() + "/s"
					sx, err := index.Open(dir, &index.Options{CacheSize: 16 << 20, MemTableSize: 4 << 20, Bands: lsh.Params{Bands: 32, Rows: 4}})
					if err != nil {
						b.Fatal(err)
					}
					defer sx.Close()
					var shadow index.Index = sx
					if mode == "stuck" {
						st := &stuckIndex{Index: sx, gate: make(chan struct{})}
						defer st.release()
						shadow = st
					}
					o.Shadow = &ShadowOptions{Index: shadow, Journal: JournalPath(dir), QueueSize: 64}
				}
				s, err := New(primary, o)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				h := s.Handler()
				g := newTextGen(1)
				texts := make([][]byte, 256)
				for i := range texts {
					texts[i] = []byte(g.text(150))
				}
				for i := range 1000 { // an index to check against
					body, _ := json.Marshal(Document{ID: fmt.Sprintf("seed%d", i), Text: g.text(150)})
					req := httptest.NewRequest(http.MethodPost, "/v1/documents", bytes.NewReader(body))
					req.Header.Set("Content-Type", typeJSON)
					h.ServeHTTP(httptest.NewRecorder(), req)
				}
				if mode == "shadow" { // measure beside a shadow that has caught up
					if err := s.shadow.waitIdle(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				path, want := "/v1/check", http.StatusOK
				if op == "insert" {
					path, want = "/v1/documents", http.StatusCreated
				}
				b.SetBytes(int64(len(texts[0])))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					body, _ := json.Marshal(Document{ID: fmt.Sprintf("b%d", i), Text: string(texts[i%len(texts)]) + fmt.Sprint(" ", i)})
					req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
					req.Header.Set("Content-Type", typeJSON)
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != want {
						b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
					}
				}
			})
		}
	}
}
