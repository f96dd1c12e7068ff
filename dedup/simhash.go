package dedup

import (
	"context"

	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/sketch"
)

// What SimHash adds to the run: a first pass for TF-IDF's document
// frequencies, and bucket keys made after signing when the number of blocks
// waits for the corpus size.

// countDF counts the document frequencies of the inputs (jobspec.CountDF)
// and weighs the job's fingerprints by them.
func (r *run) countDF(ctx context.Context) error {
	r.bar.Stage("df", -1, nil)
	defer r.bar.Finish()
	t, err := jobspec.CountDF(ctx, r.inputs, &r.opts.Corpus, r.job.Sketch.Spec, r.opts.Workers)
	if err != nil {
		return err
	}
	r.job.Sketch = r.job.Sketch.WithDF(t)
	r.rep.SetSketch(&r.job)
	return nil
}

// bandFingerprints chooses what waited for the corpus size (SimHash's
// blocks, by the number of documents signed, exact copies included) and
// makes the bucket-key entries of every signed document from the
// signatures kept in memory, in document order, as the sign workers would
// have.
func (r *run) bandFingerprints() error {
	var n int64
	for _, st := range r.docs.status {
		// Exact copies count: the blocks are those a run without the
		// exact pass chooses.
		if st == docOK || st == docCopy {
			n++
		}
	}
	c, err := r.job.Sketch.Resolve(n)
	if err != nil {
		return err
	}
	r.job.Sketch = c
	if r.sketch, err = c.New(); err != nil {
		return err
	}
	r.rep.SetSketch(&r.job)
	k, err := r.sketch.NewSketcher()
	if err != nil {
		return err
	}
	w := r.sketch.Words()
	var keys, entries []uint64
	for d, st := range r.docs.status {
		if st != docOK {
			continue
		}
		keys = k.AppendBucketKeys(keys[:0], r.sigMem[d*w:(d+1)*w])
		entries = sketch.AppendEntries(entries, keys, uint32(d))
		if len(entries) >= 1<<14 {
			if err := r.entries.Add(entries...); err != nil {
				return err
			}
			entries = entries[:0]
		}
	}
	return r.entries.Add(entries...)
}
