package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/index"
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
