package boilerplate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/internal/boilerplate"
	"github.com/neardup/neardup/shingle"
)

// Count the lines of a corpus, take those in at least N documents, and put
// them in the spec: its shingler then drops them.
func Example() {
	dir, _ := os.MkdirTemp("", "boilerplate-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "pages.jsonl")
	var b strings.Builder
	for i, body := range []string{"first story", "second story", "third story", "fourth story"} {
		fmt.Fprintf(&b, `{"id":"p%d","text":"Home | News | Sport\n%s\n© Example Ltd"}`+"\n", i, body)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)

	res, err := boilerplate.Count(context.Background(), []string{path}, nil, shingle.Prose, &boilerplate.Options{MinDocs: 3})
	if err != nil {
		panic(err)
	}
	for _, l := range res.Top {
		fmt.Printf("%d documents: %s\n", l.Docs, l.Text)
	}
	spec := shingle.Prose
	spec.Boilerplate = res.Set
	fmt.Println(len(shingle.MustNew(spec).AppendFeatures(nil, []byte("Home | News | Sport\nfirst story\n© Example Ltd"))), "feature")
	// Output:
	// 4 documents: Home | News | Sport
	// 4 documents: © Example Ltd
	// 1 feature
}
