package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/server"
)

// A golden run checks a labeled set against the live index, read-only:
// here the truth says (a, b) and (a, c) are near duplicates; the index finds
// (a, b) but c, another story, is not near a at all.
func ExampleServer_GoldenRun() {
	dir, _ := os.MkdirTemp("", "golden-example")
	defer os.RemoveAll(dir)
	idx, err := index.Open(filepath.Join(dir, "idx"), nil)
	if err != nil {
		panic(err)
	}
	defer idx.Close()
	text := "The quick brown fox jumps over the lazy dog near the bank of the river today"
	set := &server.GoldenSet{
		Docs:  []server.GoldenDoc{{ID: "a", Text: text}, {ID: "b", Text: text + "!"}, {ID: "c", Text: "Markets fell sharply as rates rose again"}},
		Truth: []eval.LabeledPair{{A: "a", B: "b", J: math.NaN()}, {A: "a", B: "c", J: math.NaN()}},
	}
	// The golden documents must be in the index (here stored directly).
	sg, _ := idx.Config().NewSigner()
	for _, d := range set.Docs {
		sig, _ := sg.Sign(nil, []byte(d.Text))
		if err := idx.Insert(context.Background(), []index.Doc{{ID: d.ID, Sig: sig}}); err != nil {
			panic(err)
		}
	}
	s, err := server.New(idx, &server.Options{Golden: set, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	res, err := s.GoldenRun(context.Background()) // Serve runs it at start and every GoldenInterval
	if err != nil {
		panic(err)
	}
	r := res[0]
	fmt.Printf("%s: recall %.2f, precision %.2f, pairs %v\n", r.Index, r.Score.Recall, r.Score.Precision, len(r.Pairs))
	// Output:
	// primary: recall 0.50, precision 1.00, pairs 1
}
