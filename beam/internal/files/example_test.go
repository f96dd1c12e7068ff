package files_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/neardup/neardup/beam/internal/files"
)

func wordBlob(w string) []byte { return []byte(w) }

// sortedWords collects every blob, as a string, into one JSON list.
func sortedWords(_ int, blobs func(*[]byte) bool) ([]byte, error) {
	var words []string
	var b []byte
	for blobs(&b) {
		words = append(words, string(b))
	}
	slices.Sort(words)
	return json.Marshal(words)
}

func init() {
	register.Function1x1(wordBlob)
	register.Function2x2(sortedWords)
}

// State passes between pipelines as blob files under a directory: one
// pipeline writes it with WriteBlobs, the next reads it back with ReadBlobs
// (which reads the manifest while the pipeline is built) and writes a small
// result with WriteJSON, which the driver reads with ReadJSON. Both pipelines
// run on Prism, in-process.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "files-example-*")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	run := func(p *beam.Pipeline) {
		if _, err := prism.Execute(ctx, p); err != nil {
			panic(err)
		}
	}

	p, s := beam.NewPipelineWithRoot()
	words := beam.CreateList(s, []string{"pear", "", "apple", "fig"}) // an empty blob too
	files.WriteBlobs(s, dir, "words", beam.ParDo(s, wordBlob, words))
	run(p)

	p, s = beam.NewPipelineWithRoot()
	blobs, err := files.ReadBlobs(ctx, s, dir, "words")
	if err != nil {
		panic(err)
	}
	result := files.Join(dir, "sorted.json")
	files.WriteJSON(s, result, beam.ParDo(s, sortedWords, beam.GroupByKey(s, beam.AddFixedKey(s, blobs))))
	run(p)

	var got []string
	if err := files.ReadJSON(ctx, result, &got); err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", got)
	fmt.Println(files.Join("gs://bucket/state/", "words.manifest"))
	// Output:
	// ["" "apple" "fig" "pear"]
	// gs://bucket/state/words.manifest
}
