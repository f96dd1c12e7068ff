package job_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neardup/neardup/beam/job"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/sigfile"
)

// readSigs reads every record of the signature file or directory of shards
// path, with its header.
func readSigs(t *testing.T, path string) (sigfile.Header, []sigfile.Record) {
	t.Helper()
	r, err := sigfile.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []sigfile.Record
	for {
		var rec sigfile.Record
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			return r.Header(), recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
}

// TestSignaturesOut: --signatures-out writes one signature shard per input
// file, which sigfile.Open reads as one stream in input order: the records
// neardup dedup --signatures-out writes, which are neardup sign's (tested in
// package dedup and internal/cli), bad records left out and empty documents
// with the empty set's signature; the outputs do not change.
func TestSignaturesOut(t *testing.T) {
	good, bad := mixed(t)
	for _, c := range []struct {
		name   string
		inputs []string
		opts   dedup.Options
	}{
		{"mixed", good, dedup.Options{}},
		{"skip-bad", bad, dedup.Options{Corpus: corpus.Options{SkipBad: true, MaxRecordBytes: 20000}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.inputs) < 2 {
				t.Fatalf("%d input files; want several splits", len(c.inputs))
			}
			wantFile := filepath.Join(t.TempDir(), "sigs.ndsf")
			gotDir := filepath.Join(t.TempDir(), "sigs")
			d, b := c.opts, c.opts
			d.SignaturesOut, b.SignaturesOut = wantFile, gotDir
			d.SkipExactPass = true // the Beam job has none: the reports compare
			want, got := t.TempDir(), t.TempDir()
			ctx := context.Background()
			wr, err := dedup.Run(ctx, c.inputs, want, &d)
			if err != nil {
				t.Fatal(err)
			}
			gr, err := job.Run(ctx, c.inputs, got, &job.Options{Dedup: &b, Run: runPrism, SingleFile: true})
			if err != nil {
				t.Fatal(err)
			}
			compare(t, want, got, wr, gr)
			shards, _ := filepath.Glob(filepath.Join(gotDir, job.SignaturesPrefix+"-*-of-*"))
			if len(shards) != len(c.inputs) {
				t.Errorf("%d signature shards; want one per input file, %d", len(shards), len(c.inputs))
			}
			wh, wrecs := readSigs(t, wantFile)
			gh, grecs := readSigs(t, gotDir)
			if wh.Spec != gh.Spec || wh.Params() != gh.Params() || gh.Shards != len(c.inputs) {
				t.Errorf("header %v; want %v, sharded in %d", gh, wh, len(c.inputs))
			}
			if len(grecs) != len(wrecs) {
				t.Fatalf("%d records; neardup dedup --signatures-out wrote %d", len(grecs), len(wrecs))
			}
			for i := range grecs {
				if !slices.Equal(grecs[i].ID, wrecs[i].ID) || !slices.Equal(grecs[i].Sig, wrecs[i].Sig) {
					t.Fatalf("record %d: %q; want %q (or another signature)", i, grecs[i].ID, wrecs[i].ID)
				}
			}
			if int64(len(wrecs)) != wr.Counts.Documents-wr.Counts.Bad {
				t.Errorf("%d records; want the %d documents that are not bad", len(wrecs), wr.Counts.Documents-wr.Counts.Bad)
			}
			// Nothing but the shards: no temporary file left.
			ents, _ := os.ReadDir(gotDir)
			if len(ents) != len(shards) {
				t.Errorf("%d files in --signatures-out; want the %d shards only", len(ents), len(shards))
			}
		})
	}
}
