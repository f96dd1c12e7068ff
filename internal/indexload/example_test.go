package indexload_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/indexload"
)

func Example() {
	dir, _ := os.MkdirTemp("", "indexload-example-*")
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(in, []byte(`{"id":"a","text":"the quick brown fox jumps over the lazy dog by the river bank"}
{"id":"b","text":"an entirely different text about cooking pasta with garlic and olive oil"}
{"id":"c","text":""}
`), 0o644)
	db, err := index.Open(filepath.Join(dir, "idx"), &index.Options{NoSync: true})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	st, err := indexload.Build(context.Background(), db, []string{in}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("records %d, indexed %d, empty %d\n", st.Records, st.Documents, st.Empty)
	// Output:
	// records 3, indexed 2, empty 1
}
