package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/server"
)

func Example() {
	dir, _ := os.MkdirTemp("", "server-example")
	defer os.RemoveAll(dir)
	idx, err := index.Open(filepath.Join(dir, "idx"), nil)
	if err != nil {
		panic(err)
	}
	defer idx.Close()
	s, err := server.New(idx, &server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(s.Handler()) // or s.Serve(ctx, listener)
	defer hs.Close()

	c := server.NewClient(hs.URL, "", nil)
	ctx := context.Background()
	text := "The quick brown fox jumps over the lazy dog near the bank of the river today"
	r, _ := c.Insert(ctx, server.Document{ID: "a", Text: text, Meta: []byte(`{"url":"https://example.com/a"}`)}, server.Query{})
	fmt.Println(r.ID, r.Status)
	r, _ = c.Insert(ctx, server.Document{ID: "b", Text: text + "!"}, server.Query{})
	fmt.Println(r.ID, r.Status, r.Duplicates[0].ID, r.Duplicates[0].Similarity, string(r.Duplicates[0].Meta))
	r, _ = c.Check(ctx, server.Document{Text: "Something else entirely, about markets and rates"}, server.Query{})
	fmt.Println(r.Status)
	// Output:
	// a new
	// b duplicate a 1 {"url":"https://example.com/a"}
	// new
}

// A shadow index with other bands beside the primary: writes reach both,
// checks are compared, and GET /v1/shadow reports.
func ExampleShadowOptions() {
	dir, _ := os.MkdirTemp("", "server-shadow-example")
	defer os.RemoveAll(dir)
	primary, err := index.Open(filepath.Join(dir, "idx"), nil)
	if err != nil {
		panic(err)
	}
	defer primary.Close()
	shadowDir := filepath.Join(dir, "idx-b32")
	shadow, err := index.Open(shadowDir, &index.Options{Bands: lsh.Params{Bands: 32, Rows: 4}})
	if err != nil {
		panic(err)
	}
	defer shadow.Close()
	s, err := server.New(primary, &server.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Shadow: &server.ShadowOptions{Index: shadow, Journal: server.JournalPath(shadowDir)},
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()

	c := server.NewClient(hs.URL, "", nil)
	ctx := context.Background()
	text := "The quick brown fox jumps over the lazy dog near the bank of the river today"
	c.Insert(ctx, server.Document{ID: "a", Text: text}, server.Query{})
	// The shadow applies acknowledged writes from its journal in the
	// background; a check that reaches it first is compared without them.
	for {
		if _, err := shadow.Get(ctx, "a"); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	r, _ := c.Check(ctx, server.Document{Text: text + "!"}, server.Query{})
	fmt.Println("primary:", r.Status)
	var rep server.ShadowReport
	for rep.Checks == 0 { // the shadow's comparison comes a moment later
		resp, err := http.Get(hs.URL + "/v1/shadow")
		if err != nil {
			panic(err)
		}
		json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		time.Sleep(time.Millisecond)
	}
	fmt.Println("checks:", rep.Checks, "agreement:", rep.Agreement, "matches found by both:", rep.Matches.Both)
	// Output:
	// primary: duplicate
	// checks: 1 agreement: 1 matches found by both: 1
}
