package jobspec

import (
	"context"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/corpuspipe"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
)

// CountDF is the first pass of a TF-IDF SimHash job on one machine: it
// reads inputs with c on workers goroutines (0: GOMAXPROCS) and counts the
// document frequencies of their features under spec, every document that
// parses once (empty ones included; bad ones skipped under c.SkipBad), in
// a table of the default size (sketch.DFCounter). Each worker counts into a
// table of its own and the tables are merged by adding counters, so the
// result does not depend on the number of workers. Standard input ("-")
// cannot be read twice: spool it first (corpus.Spool).
func CountDF(ctx context.Context, inputs []string, c *corpus.Options, spec shingle.Spec, workers int) (*simhash.DFTable, error) {
	r, err := corpus.NewReader(inputs, c)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var counters []*sketch.DFCounter
	_, err = corpuspipe.Run(ctx, r, c, workers,
		func() (corpuspipe.Worker[struct{}], error) {
			d, err := sketch.NewDFCounter(spec)
			if err != nil {
				return corpuspipe.Worker[struct{}]{}, err
			}
			counters = append(counters, d)
			return corpuspipe.Worker[struct{}]{
				Begin:    func(*struct{}, *corpus.Batch) {},
				Document: func(_ *struct{}, _ *corpus.Record, doc *corpus.Document) error { d.Add(doc.Text); return nil },
			}, nil
		},
		func(*corpuspipe.Batch[struct{}]) error { return nil })
	if err != nil {
		return nil, err
	}
	for _, d := range counters[1:] {
		if err := counters[0].Merge(d); err != nil {
			return nil, err
		}
	}
	return counters[0].Table(), nil
}
