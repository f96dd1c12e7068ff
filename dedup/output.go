package dedup

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/corpus"
)

// cluster groups the verified pairs.
func (r *run) cluster(ctx context.Context) error {
	edges := make([]cluster.Edge, len(r.edges))
	for i, e := range r.edges {
		edges[i] = cluster.Edge{A: e.a, B: e.b, Sim: e.sim()}
	}
	opts := &cluster.Options{Threshold: r.opts.Threshold, Keep: r.opts.Keep}
	if r.opts.Verify == VerifyNone {
		opts.Threshold = 0 // every candidate links
	}
	attrs := &cluster.Attrs{Lengths: r.docs.length, Values: r.docs.keep, Has: r.docs.hasKeep}
	var err error
	if r.opts.Cluster == Star {
		r.result, err = cluster.Star(r.docs.len(), edges, attrs, opts)
	} else {
		r.result, err = cluster.Components(r.docs.len(), edges, attrs, opts)
	}
	return err
}

// sim is the similarity that decided the edge: exact when known.
func (e edge) sim() float64 {
	if e.exact >= 0 {
		return e.exact
	}
	return e.est
}

// write writes pairs.tsv, clusters.jsonl and kept.jsonl.
func (r *run) write(ctx context.Context, outDir string) error {
	if err := r.writePairs(filepath.Join(outDir, PairsFile)); err != nil {
		return err
	}
	if err := r.writeClusters(filepath.Join(outDir, ClustersFile)); err != nil {
		return err
	}
	return r.writeKept(ctx, filepath.Join(outDir, KeptFile))
}

// tsvField renders an id for a TSV column: as it is, or Go-quoted if it holds
// a tab, a line break or a quote, so that every line has four fields.
func tsvField(id []byte) string {
	if bytes.ContainsAny(id, "\t\n\r\"") {
		return strconv.Quote(string(id))
	}
	return string(id)
}

// FormatSim renders a similarity with six decimals, as the outputs do.
func FormatSim(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }

// writePairs writes one verified pair a line, idA < idB (bytewise), sorted:
// idA, idB, the signature estimate and the exact Jaccard ("-" if not computed).
func (r *run) writePairs(path string) error {
	type row struct {
		a, b []byte
		e    edge
	}
	rows := make([]row, len(r.edges))
	for i, e := range r.edges {
		a, b := r.docs.id(e.a), r.docs.id(e.b)
		if bytes.Compare(a, b) > 0 {
			a, b = b, a
		}
		rows[i] = row{a, b, e}
	}
	slices.SortFunc(rows, func(x, y row) int {
		if c := bytes.Compare(x.a, y.a); c != 0 {
			return c
		}
		if c := bytes.Compare(x.b, y.b); c != 0 {
			return c
		}
		// Equal ids (duplicate ids in the input): fall back to indices.
		if x.e.a != y.e.a {
			return int(x.e.a) - int(y.e.a)
		}
		return int(x.e.b) - int(y.e.b)
	})
	return writeFile(path, func(w *bufio.Writer) error {
		for _, x := range rows {
			exact := "-"
			if x.e.exact >= 0 {
				exact = FormatSim(x.e.exact)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", tsvField(x.a), tsvField(x.b), FormatSim(x.e.est), exact)
		}
		return nil
	})
}

// ClusterLine is one line of clusters.jsonl.
type ClusterLine struct {
	// Cluster numbers the clusters from 0 in the order of their lowest
	// member's input position.
	Cluster int `json:"cluster"`
	// Size is the number of members.
	Size int `json:"size"`
	// Kept is the id of the document the cluster keeps.
	Kept string `json:"kept"`
	// Members are the ids of all members, kept one included, in input order.
	Members []string `json:"members"`
}

func (r *run) writeClusters(path string) error {
	return writeFile(path, func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for i, c := range r.result.Clusters {
			line := ClusterLine{Cluster: i, Size: len(c.Members), Kept: string(r.docs.id(c.Kept))}
			for _, m := range c.Members {
				line.Members = append(line.Members, string(r.docs.id(m)))
			}
			if err := enc.Encode(line); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeKept copies the input records of the kept documents, untouched.
func (r *run) writeKept(ctx context.Context, path string) error {
	r.bar.Stage("write", -1, nil)
	defer r.bar.Finish()
	keep := corpus.NewBitset(int64(r.docs.len()))
	var kept int64
	for d, st := range r.docs.status {
		if st != docBad && r.result.IsKept(uint32(d)) {
			keep.Set(int64(d))
			kept++
		}
	}
	r.rep.Counts.Kept = kept
	return writeFile(path, func(w *bufio.Writer) error {
		n, err := corpus.CopyKept(ctx, w, r.inputs, &r.opts.Corpus, keep)
		r.bar.Add(n, 0)
		return err
	})
}

// writeFile writes path through a buffered writer and reports any error,
// including on close.
func writeFile(path string, fn func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("dedup: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := fn(w); err != nil {
		f.Close()
		return fmt.Errorf("dedup: write %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("dedup: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("dedup: write %s: %w", path, err)
	}
	return nil
}
