package dedup_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/dedup"
)

func Example() {
	dir, _ := os.MkdirTemp("", "neardup-example-*")
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(in, []byte(`{"id":"a","text":"the quick brown fox jumps over the lazy dog by the river bank"}
{"id":"b","text":"The quick brown fox jumps over the lazy dog by the river bank!"}
{"id":"c","text":"an entirely different text about cooking pasta with garlic and olive oil"}
`), 0o644)
	rep, err := dedup.Run(context.Background(), []string{in}, filepath.Join(dir, "out"), &dedup.Options{Threshold: 0.8})
	if err != nil {
		fmt.Println(err)
		return
	}
	pairs, _ := os.ReadFile(filepath.Join(dir, "out", dedup.PairsFile))
	fmt.Printf("%d documents, %d removed\n%s", rep.Counts.Documents, rep.Counts.Removed, pairs)
	// Output:
	// 3 documents, 1 removed
	// a	b	1.000000	1.000000
}
