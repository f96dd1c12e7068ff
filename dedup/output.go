package dedup

import (
	"bufio"
	"context"
	"path/filepath"
	"slices"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/jobspec"
)

// cluster groups the verified pairs.
func (r *run) cluster(ctx context.Context) error {
	edges := make([]cluster.Edge, len(r.edges))
	for i, e := range r.edges {
		edges[i] = cluster.Edge{A: e.a, B: e.b, Sim: e.Sim()}
	}
	attrs := r.docs.attrs()
	var err error
	opts := r.job.ReferenceClusterOptions(r.ref.m) // reference documents placed first
	if r.job.Cluster == Star {
		r.result, err = cluster.Star(r.docs.len(), edges, attrs, opts)
	} else {
		r.result, err = cluster.Components(r.docs.len(), edges, attrs, opts)
	}
	return err
}

// write writes pairs.tsv, clusters.jsonl and kept.jsonl under temporary
// names (r.out commits them with the reports).
func (r *run) write(ctx context.Context, outDir string) error {
	if err := r.writePairs(filepath.Join(outDir, PairsFile)); err != nil {
		return err
	}
	if err := r.writeClusters(filepath.Join(outDir, ClustersFile)); err != nil {
		return err
	}
	return r.writeKept(ctx, filepath.Join(outDir, r.keptName))
}

// writePairs writes one verified pair a line, sorted (jobspec.PairRow).
func (r *run) writePairs(path string) error {
	rows := make([]jobspec.PairRow, len(r.edges))
	for i, e := range r.edges {
		rows[i] = jobspec.NewPairRow(r.docs.id(e.a), r.docs.id(e.b), uint64(e.a), uint64(e.b), e.Verdict)
	}
	slices.SortFunc(rows, jobspec.ComparePairRows)
	return r.out.write(path, func(w *bufio.Writer) error {
		var line []byte
		for _, row := range rows {
			line = row.AppendLine(line[:0])
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeClusters writes one cluster a line (jobspec.AppendClusterLine).
func (r *run) writeClusters(path string) error {
	return r.out.write(path, func(w *bufio.Writer) error {
		var line []byte
		var members [][]byte
		for i, c := range r.result.Clusters {
			members = members[:0]
			ref := 0 // reference members come first
			for _, m := range c.Members {
				members = append(members, r.docs.id(m))
				if int(m) < r.ref.m {
					ref++
				}
			}
			line = jobspec.AppendClusterLineRef(line[:0], i, r.docs.id(c.Kept), members, ref)
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeKept copies the input records of the kept documents, untouched.
func (r *run) writeKept(ctx context.Context, path string) error {
	m := r.ref.m // reference documents, placed first, are never written
	keep := corpus.NewBitset(int64(r.docs.len() - m))
	var kept int64
	for d, st := range r.docs.status[m:] {
		if st != docBad && r.result.IsKept(uint32(m+d)) {
			keep.Set(int64(d))
			kept++
		}
	}
	r.bar.CountStage("write", "docs", kept)
	defer r.bar.Finish()
	r.rep.Counts.Kept = kept
	return r.out.write(path, func(w *bufio.Writer) error {
		n, err := corpus.CopyKept(ctx, w, r.inputs, &r.opts.Corpus, keep)
		r.bar.Add(n, 0)
		return err
	})
}
