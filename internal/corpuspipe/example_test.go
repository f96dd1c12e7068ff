package corpuspipe_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/corpuspipe"
)

// Each worker counts the words of its documents; consume sees the counts in
// input order whatever the number of workers.
func Example() {
	opts := &corpus.Options{Stdin: strings.NewReader(`{"id":"a","text":"one two three"}
{"id":"b","text":"four five"}
{"id":"c","text":"six"}
`)}
	r, err := corpus.NewReader([]string{"-"}, opts)
	if err != nil {
		panic(err)
	}
	defer r.Close()
	type counts struct{ ids, words []string }
	_, err = corpuspipe.Run(context.Background(), r, opts, 4,
		func() (corpuspipe.Worker[counts], error) {
			return corpuspipe.Worker[counts]{
				Document: func(res *counts, _ *corpus.Record, doc *corpus.Document) error {
					res.ids = append(res.ids, string(doc.ID))
					res.words = append(res.words, fmt.Sprint(len(strings.Fields(string(doc.Text)))))
					return nil
				},
			}, nil
		},
		func(b *corpuspipe.Batch[counts]) error {
			for i, id := range b.Result.ids {
				fmt.Println(id, b.Result.words[i])
			}
			return nil
		})
	if err != nil {
		panic(err)
	}
	// Output:
	// a 3
	// b 2
	// c 1
}
