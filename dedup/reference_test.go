package dedup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/index"
	"github.com/neardup/neardup/internal/drift"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// splitCorpus is a corpus of near duplicates (edit rates 0–8%), boilerplate
// copies (enough to fill capped buckets under a small cap) and documents
// without features, shuffled and cut into halves A and B, so that pairs
// fall within A, within B and across.
func splitCorpus(t testing.TB) (all, a, b []doc) {
	all = nearDupCorpus(t, 150, 3, 21)
	r := rand.New(rand.NewPCG(21, 21))
	base := readJSONL(t, "../testdata/articles_1000.jsonl")
	for i := range 30 {
		all = append(all, doc{fmt.Sprintf("same%02d", i), "this page intentionally left blank " + base[999].Text})
	}
	all = append(all, doc{"empty1", ""}, doc{"empty2", "!!! ..."}, doc{"empty3", "?"})
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all, all[:len(all)/2], all[len(all)/2:]
}

// writeSigs writes the signature file of docs that neardup sign writes:
// every document's signature (a text without features has the empty set's)
// in order, under the job's spec and params.
func writeSigs(t testing.TB, path string, docs []doc, opts *Options) {
	t.Helper()
	job, err := opts.Job()
	if err != nil {
		t.Fatal(err)
	}
	sk, err := job.Sketch.NewSketcher()
	if err != nil {
		t.Fatal(err)
	}
	w, err := sigfile.Create(path, job.Sketch.SignatureHeader())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		sig, _ := sk.Sign(nil, []byte(d.Text))
		if err := w.Add([]byte(d.ID), sig); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// buildIndex builds an index in dir from the signature file sigs, as
// neardup index build --signatures does: documents without features are
// not indexed. Its bands differ from any dedup run's: only the signatures
// are read back.
func buildIndex(t testing.TB, dir, sigs string) {
	t.Helper()
	sr, err := sigfile.Open(sigs, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Close()
	h := sr.Header()
	spec, err := h.ShingleSpec(nil)
	if err != nil {
		t.Fatal(err)
	}
	db, err := index.Open(dir, &index.Options{Spec: spec, Params: h.MinHash, Bands: lsh.Params{Bands: 8, Rows: 4}, NoSync: true, CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bld, err := db.NewBuilder(nil)
	if err != nil {
		t.Fatal(err)
	}
	empty := slices.Repeat([]uint64{^uint64(0)}, h.Words())
	var rec sigfile.Record
	for sr.Next(&rec) == nil {
		if h.MinHash.Bits == 32 && slices.Equal(rec.Sig, empty) {
			continue
		}
		if err := bld.Add(index.Doc{ID: string(rec.ID), Sig: slices.Clone(rec.Sig)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bld.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// openIndex is Options.OpenIndex as neardup's commands set it.
func openIndex(path string, spec shingle.Spec) (jobspec.StoredSignatures, error) {
	s, err := index.OpenSignatures(path, spec)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// linesWith returns the lines of file that name an id of ids (a pairs.tsv
// line names two).
func linesWith(t testing.TB, file string, ids map[string]bool) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		f := strings.Split(line, "\t")
		if ids[f[0]] || ids[f[1]] {
			out = append(out, line)
		}
	}
	return out
}

func idSet(docs []doc) map[string]bool {
	m := map[string]bool{}
	for _, d := range docs {
		m[d.ID] = true
	}
	return m
}

func readLines(t testing.TB, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Collect(strings.Lines(string(data)))
}

// TestAgainstEquivalence is issue 13's equivalence: for a corpus split into
// halves A and B, dedup --against A B finds exactly the pairs dedup A B
// finds with at least one member in B, line for line (estimate and exact
// similarity included), whatever the bucket cap (a capped bucket links to
// its first member, the same in both numberings); with A given as its
// signature file or an index built from them, the pairs dedup A B
// --verify estimate finds likewise (under --verify exact, the input pairs
// keep their exact verification).
func TestAgainstEquivalence(t *testing.T) {
	_, a, b := splitCorpus(t)
	dir := t.TempDir()
	inA, inB := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeJSONL(t, inA, a)
	writeJSONL(t, inB, b)
	idsB := idSet(b)
	for _, cap := range []int{0, 5} {
		t.Run(fmt.Sprintf("cap=%d", cap), func(t *testing.T) {
			// Under a cap the exact pass takes copies out of the buckets
			// (fewer are capped): the capped rule is tested without it.
			skip := cap > 0
			exact := Options{BucketCap: cap, Threshold: 0.7, SkipExactPass: skip}
			estimate := Options{BucketCap: cap, Threshold: 0.7, Verify: VerifyEstimate, SkipExactPass: skip}
			full, fullRep := runDedup(t, []string{inA, inB}, &exact)
			fullEst, _ := runDedup(t, []string{inA, inB}, &estimate)
			if cap == 5 && fullRep.Buckets.CappedBuckets == 0 {
				t.Fatal("no capped bucket: the test misses the capped rule")
			}
			wantExact := linesWith(t, filepath.Join(full, PairsFile), idsB)
			wantEst := linesWith(t, filepath.Join(fullEst, PairsFile), idsB)
			if len(wantExact) < 50 || len(wantExact) == len(readLines(t, filepath.Join(full, PairsFile))) {
				t.Fatalf("%d pairs with a member in B of %d: the split must leave pairs on both sides", len(wantExact), len(readLines(t, filepath.Join(full, PairsFile))))
			}

			// A as a corpus: exact verification throughout.
			o := exact
			o.Against = []string{inA}
			out, rep := runDedup(t, []string{inB}, &o)
			if got := readLines(t, filepath.Join(out, PairsFile)); !slices.Equal(got, wantExact) {
				t.Fatalf("--against A.jsonl: %d pairs; dedup A B has %d with a member in B:\n%s", len(got), len(wantExact), diffLines(got, wantExact))
			}
			checkAgainst(t, out, rep, a, b)

			// A as signatures, and as an index of them.
			sigs := filepath.Join(t.TempDir(), "a.ndsf")
			writeSigs(t, sigs, a, &exact)
			idx := filepath.Join(t.TempDir(), "idx")
			buildIndex(t, idx, sigs)
			for _, ref := range []string{sigs, idx} {
				o := estimate
				o.Against, o.OpenIndex = []string{ref}, openIndex
				out, rep := runDedup(t, []string{inB}, &o)
				if got := readLines(t, filepath.Join(out, PairsFile)); !slices.Equal(got, wantEst) {
					t.Fatalf("--against %s --verify estimate: %d pairs; dedup A B --verify estimate has %d with a member in B:\n%s",
						filepath.Base(ref), len(got), len(wantEst), diffLines(got, wantEst))
				}
				checkAgainst(t, out, rep, a, b)

				// Under --verify exact: input pairs exactly, pairs with A
				// by the estimate.
				o = exact
				o.Against, o.OpenIndex = []string{ref}, openIndex
				out, rep = runDedup(t, []string{inB}, &o)
				var want []string
				idsA := idSet(a)
				for _, l := range wantEst {
					if f := strings.Split(l, "\t"); idsA[f[0]] || idsA[f[1]] {
						want = append(want, l)
					}
				}
				for _, l := range wantExact {
					if f := strings.Split(l, "\t"); !idsA[f[0]] && !idsA[f[1]] {
						want = append(want, l)
					}
				}
				slices.Sort(want)
				if got := readLines(t, filepath.Join(out, PairsFile)); !slices.Equal(got, want) {
					t.Fatalf("--against %s --verify exact: %d pairs; want %d:\n%s", filepath.Base(ref), len(got), len(want), diffLines(got, want))
				}
				if r := rep.Reference; r.ReferencePairs.Verify != "estimate" || r.InputPairs.Verify != "exact" || r.Sources[0].Verify != "estimate" {
					t.Errorf("report: reference pairs verified %q, input pairs %q, source %q; want estimate, exact, estimate",
						r.ReferencePairs.Verify, r.InputPairs.Verify, r.Sources[0].Verify)
				}
				for i, n := range rep.PairSim.Exact {
					if i > 0 && rep.PairSim.Estimate[i] < n {
						t.Errorf("histogram bin %d: %d exact, %d estimated; the estimated-only pairs must not count as exact", i, n, rep.PairSim.Estimate[i])
					}
				}
				checkAgainst(t, out, rep, a, b)
			}
		})
	}
}

// diffLines shows the first lines in one list and not the other.
func diffLines(got, want []string) string {
	var b strings.Builder
	n := 0
	for _, l := range got {
		if !slices.Contains(want, l) && n < 5 {
			fmt.Fprintf(&b, "  extra:   %s", l)
			n++
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) && n < 10 {
			fmt.Fprintf(&b, "  missing: %s", l)
			n++
		}
	}
	return b.String()
}

// checkAgainst checks the rules of reference documents on a run of B
// against A: no pair within A, no A document kept or written, every B
// document paired with an A document removed, clusters that hold A
// documents keep one and list them first (their count in "reference"),
// and the report's counts.
func checkAgainst(t *testing.T, out string, rep *Report, a, b []doc) {
	t.Helper()
	idsA, idsB := idSet(a), idSet(b)
	pairedWithA := map[string]bool{}
	for _, l := range readLines(t, filepath.Join(out, PairsFile)) {
		f := strings.Split(l, "\t")
		switch {
		case idsA[f[0]] && idsA[f[1]]:
			t.Fatalf("pair of two reference documents: %s", l)
		case idsA[f[0]]:
			pairedWithA[f[1]] = true
		case idsA[f[1]]:
			pairedWithA[f[0]] = true
		}
	}
	kept := idSet(readJSONL(t, filepath.Join(out, KeptFile)))
	for id := range kept {
		if !idsB[id] {
			t.Fatalf("kept.jsonl holds %q, not an input document", id)
		}
		if pairedWithA[id] {
			t.Fatalf("kept.jsonl holds %q, a near duplicate of a reference document", id)
		}
	}
	var refMembers, removedByRef int64
	for _, c := range readClusters(t, out) {
		n := 0
		for n < len(c.Members) && idsA[c.Members[n]] {
			n++
		}
		for _, m := range c.Members[n:] {
			if idsA[m] {
				t.Fatalf("cluster %d: reference member %q after input members %v", c.Cluster, m, c.Members)
			}
		}
		if c.Reference != n {
			t.Fatalf("cluster %d: \"reference\": %d; its first %d members are reference documents", c.Cluster, c.Reference, n)
		}
		if n > 0 {
			if !idsA[c.Kept] {
				t.Fatalf("cluster %d holds reference documents and keeps input document %q", c.Cluster, c.Kept)
			}
			removedByRef += int64(len(c.Members) - n)
		}
		refMembers += int64(n)
	}
	r := rep.Reference
	if r == nil {
		t.Fatal("report has no reference section")
	}
	var docs int64
	for _, s := range r.Sources {
		docs += s.Documents
	}
	if r.Documents != docs || r.Sources[0].Kind != "index" && docs != int64(len(a)) {
		t.Errorf("reference documents %d (sources %+v); want %d", r.Documents, r.Sources, len(a))
	}
	if r.Clustered != refMembers || r.RemovedByReference != removedByRef {
		t.Errorf("report clustered %d, removed by reference %d; clusters.jsonl has %d and %d", r.Clustered, r.RemovedByReference, refMembers, removedByRef)
	}
	if r.ReferencePairs.Verified+r.InputPairs.Verified != rep.Counts.VerifiedPairs ||
		r.ReferencePairs.Candidates+r.InputPairs.Candidates != rep.Counts.Candidates {
		t.Errorf("pair kinds %+v + %+v; counts %+v", r.ReferencePairs, r.InputPairs, rep.Counts)
	}
	if rep.Counts.Documents != int64(len(b)) || rep.Counts.Kept != int64(len(kept)) {
		t.Errorf("counts %+v; want %d documents (the inputs only), %d kept", rep.Counts, len(b), len(kept))
	}
	if rep.Counts.Kept+rep.Counts.Removed != rep.Counts.Documents-rep.Counts.Bad {
		t.Errorf("kept %d + removed %d ≠ %d documents", rep.Counts.Kept, rep.Counts.Removed, rep.Counts.Documents)
	}
	var raw map[string]json.RawMessage
	data, _ := os.ReadFile(filepath.Join(out, ReportFile))
	if err := json.Unmarshal(data, &raw); err != nil || raw["reference"] == nil {
		t.Errorf("report.json has no \"reference\" (%v)", err)
	}
}

// TestAgainstKeepsReference: whatever the keep policy and clustering, a
// cluster with a reference document keeps it, even when an input document
// is longer; the spill of a tiny budget changes nothing.
func TestAgainstKeepsReference(t *testing.T) {
	_, a, b := splitCorpus(t)
	dir := t.TempDir()
	inA, inB := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	writeJSONL(t, inA, a)
	writeJSONL(t, inB, b)
	sigs := filepath.Join(dir, "a.ndsf")
	writeSigs(t, sigs, a, &Options{})
	for _, o := range []Options{
		{Keep: mustPolicy(t, "longest")},
		{Cluster: Star},
		{Cluster: Star, Keep: mustPolicy(t, "longest")},
	} {
		o.Against = []string{sigs, inA}
		out, rep := runDedup(t, []string{inB}, &o)
		checkAgainst(t, out, rep, append(slices.Clone(a), a...), b)
		small := o
		small.Memory = jobspec.MinMemory
		small.Workers = 1
		out2, _ := runDedup(t, []string{inB}, &small)
		for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
			x, _ := os.ReadFile(filepath.Join(out, f))
			y, _ := os.ReadFile(filepath.Join(out2, f))
			if !bytes.Equal(x, y) {
				t.Errorf("%v: %s differs under a 16 MiB budget and one worker", o.Cluster, f)
			}
		}
	}
}

// TestSignaturesIdentical: dedup --signatures with the inputs' own
// signatures writes byte-identical pairs.tsv, clusters.jsonl and kept.jsonl
// to signing again, and a report that differs only in what signing
// measured; so with --against, and under narrow slots, where texts with
// features have the empty set's signature (decided by the text, as when
// signing).
func TestSignaturesIdentical(t *testing.T) {
	all, a, b := splitCorpus(t)
	dir := t.TempDir()
	in, inA := filepath.Join(dir, "all.jsonl"), filepath.Join(dir, "a.jsonl")
	writeJSONL(t, in, all)
	writeJSONL(t, inA, a)
	_ = b
	for _, o := range []Options{
		{},
		{Verify: VerifyEstimate, Cluster: Star},
		{Against: []string{inA}},
		{Params: minhash.Params{K: 8, Bits: 1}, Bands: lsh.Params{Bands: 2, Rows: 4}, Threshold: 0.5, Verify: VerifyEstimate},
	} {
		sigs := filepath.Join(t.TempDir(), "all.ndsf")
		writeSigs(t, sigs, all, &o)
		signed, want := runDedup(t, []string{in}, &o)
		s := o
		s.Signatures = sigs
		s.Memory = jobspec.MinMemory
		stored, got := runDedup(t, []string{in}, &s)
		for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
			x, _ := os.ReadFile(filepath.Join(signed, f))
			y, _ := os.ReadFile(filepath.Join(stored, f))
			if !bytes.Equal(x, y) {
				t.Fatalf("%+v: %s differs between signing and --signatures", o.Params, f)
			}
		}
		if got.Signatures.Stored != sigs || got.Signatures.Features != 0 {
			t.Errorf("report signatures %+v; want stored %s and no features hashed", got.Signatures, sigs)
		}
		if got.Drift.Features.N() != 0 || got.Drift.TextBytes.N() != want.Drift.TextBytes.N() {
			t.Errorf("report drift: %d documents by features, %d by length; want none (not hashed) and %d", got.Drift.Features.N(), got.Drift.TextBytes.N(), want.Drift.TextBytes.N())
		}
		want.Signatures, got.Signatures = SignatureReport{}, SignatureReport{}
		want.Drift.Features, got.Drift.Features = drift.Histogram{}, drift.Histogram{}
		for _, r := range []*Report{want, got} {
			r.Timings, r.WallSeconds, r.PeakRSSBytes, r.Spill, r.Config.MemoryBytes = nil, 0, 0, SpillReport{}, 0
		}
		x, _ := json.Marshal(want)
		y, _ := json.Marshal(got)
		if !bytes.Equal(x, y) {
			t.Errorf("%+v: reports differ beyond signing:\n%s\n%s", o.Params, x, y)
		}
		if o.Params.Bits == 1 && want.Counts.Empty != 3 {
			t.Errorf("1-bit slots: %d empty documents; want the 3 without features", want.Counts.Empty)
		}
	}
}

// TestStoredSignaturesRefused: signatures that are not the inputs', or not
// comparable with the job's, are refused with errors naming the record, or
// both sides' fingerprints.
func TestStoredSignaturesRefused(t *testing.T) {
	_, a, b := splitCorpus(t)
	dir := t.TempDir()
	inB := filepath.Join(dir, "b.jsonl")
	writeJSONL(t, inB, b)
	run := func(o Options) error {
		_, err := Run(context.Background(), []string{inB}, t.TempDir(), &o)
		return err
	}
	other := filepath.Join(dir, "a.ndsf")
	writeSigs(t, other, a, &Options{})
	short := filepath.Join(dir, "short.ndsf")
	writeSigs(t, short, b[:len(b)-1], &Options{})
	long := filepath.Join(dir, "long.ndsf")
	writeSigs(t, long, append(slices.Clone(b), doc{"extra", "one more"}), &Options{})
	seeded := filepath.Join(dir, "seed.ndsf")
	writeSigs(t, seeded, b, &Options{Params: minhash.Params{Seed: 7}})
	seededIndex := filepath.Join(dir, "idx")
	buildIndex(t, seededIndex, seeded)
	for _, tt := range []struct {
		name string
		o    Options
		is   error
		says []string
	}{
		{"other ids", Options{Signatures: other}, jobspec.ErrStoredSignatures, []string{"record 0", "b.jsonl:1", a[0].ID, b[0].ID}},
		{"too few", Options{Signatures: short}, jobspec.ErrStoredSignatures, []string{fmt.Sprintf("b.jsonl:%d", len(b)), b[len(b)-1].ID}},
		{"too many", Options{Signatures: long}, jobspec.ErrStoredSignatures, []string{"extra", fmt.Sprint(len(b))}},
		{"seed", Options{Signatures: seeded}, jobspec.ErrSignatureMismatch, []string{"seed=7", fmt.Sprintf("%016x", minhash.Params{Seed: 7, K: 128, Bits: 32, Scheme: minhash.OnePermutation}.Fingerprint())}},
		{"against seed", Options{Against: []string{seeded}}, jobspec.ErrSignatureMismatch, []string{"--against", "seed=7"}},
		{"against spec", Options{Against: []string{other}, Spec: mustSpec(t, "char:5")}, jobspec.ErrSignatureMismatch, []string{"shingle spec", "char"}},
		{"against index seed", Options{Against: []string{seededIndex}, OpenIndex: openIndex}, jobspec.ErrSignatureMismatch, []string{"--against", "seed=7"}},
		{"index without OpenIndex", Options{Against: []string{seededIndex}}, ErrInvalidOptions, []string{"reads no index"}},
	} {
		err := run(tt.o)
		if !errors.Is(err, tt.is) {
			t.Errorf("%s: error %v; want %v", tt.name, err, tt.is)
			continue
		}
		for _, s := range tt.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not say %q", tt.name, err, s)
			}
		}
	}
}

// TestSignaturesOut: --signatures-out writes what neardup sign writes (the
// signature file of the inputs, bad records left out; a SimHash header and
// fingerprints under --sketch simhash), and reading it back with
// --signatures gives the same outputs (MinHash; SimHash refuses stored
// signatures for now).
func TestSignaturesOut(t *testing.T) {
	all, _, _ := splitCorpus(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "all.jsonl")
	writeJSONL(t, in, all)
	for _, base := range []Options{
		{},
		{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: 3}},
	} {
		name := base.Sketch.String()
		want := filepath.Join(dir, name+"-want.ndsf")
		writeSigs(t, want, all, &base)
		got := filepath.Join(dir, name+"-got.ndsf")
		// Under exact verification (the default) the run keeps no
		// signatures, and the exact pass signs no copy it already knows:
		// the file is written from the signers' output, copies signed all
		// the same.
		opts := base
		opts.SignaturesOut = got
		out1, rep := runDedup(t, []string{in}, &opts)
		if rep.Config.Verify != "exact" || rep.Counts.ExactDuplicates == 0 {
			t.Fatalf("%s: verify %q, %d exact copies: the test needs exact verification and copies", name, rep.Config.Verify, rep.Counts.ExactDuplicates)
		}
		x, _ := os.ReadFile(want)
		y, _ := os.ReadFile(got)
		if !bytes.Equal(x, y) {
			t.Fatalf("%s: --signatures-out wrote %d bytes; the signature file of the inputs has %d, or other bytes", name, len(y), len(x))
		}
		opts = base
		opts.Signatures = got
		if base.Sketch == sketch.SimHash {
			if _, err := Run(context.Background(), []string{in}, t.TempDir(), &opts); !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("%s: --signatures: error %v; want ErrInvalidOptions (MinHash's for now)", name, err)
			}
			continue
		}
		out2, _ := runDedup(t, []string{in}, &opts)
		for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
			p, _ := os.ReadFile(filepath.Join(out1, f))
			q, _ := os.ReadFile(filepath.Join(out2, f))
			if !bytes.Equal(p, q) {
				t.Errorf("%s: %s differs reading back --signatures-out", name, f)
			}
		}
	}
}

func mustPolicy(t testing.TB, s string) cluster.Policy {
	t.Helper()
	p, err := cluster.ParsePolicy(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustSpec(t testing.TB, s string) shingle.Spec {
	t.Helper()
	spec, err := shingle.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestAgainstExactPass: the exact pass runs over the inputs only. A
// reference document is never a copy nor the first of copies: an input that
// is an exact copy of a reference document is signed, banded and removed as
// its near duplicate at similarity 1, as a run without the pass removes it,
// and the outputs with and without the pass are the same.
func TestAgainstExactPass(t *testing.T) {
	docs, _ := exactCopyCorpus(t, 1200, 0.3, 0, 3)
	dir := t.TempDir()
	inA, inB := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	a, b := docs[:len(docs)/2], docs[len(docs)/2:]
	writeJSONL(t, inA, a)
	writeJSONL(t, inB, b)
	textA := map[string]string{} // prose key → an A document's id
	for _, d := range a {
		textA[proseKey(d.Text)] = d.ID
	}
	var refCopies []string // "A-id\tB-id" of B's exact copies of A documents
	for _, d := range b {
		if id, ok := textA[proseKey(d.Text)]; ok {
			refCopies = append(refCopies, idPair(id, d.ID))
		}
	}
	if len(refCopies) < 10 {
		t.Fatalf("%d inputs are exact copies of a reference document: the test needs more", len(refCopies))
	}
	for _, o := range []Options{{}, {Verify: VerifyEstimate}} {
		o.Against = []string{inA}
		off := o
		off.SkipExactPass = true
		outOff, _ := runDedup(t, []string{inB}, &off)
		outOn, rep := runDedup(t, []string{inB}, &o)
		sameOutputs(t, outOff, outOn)
		if !rep.Config.ExactPass || rep.Counts.ExactDuplicates == 0 {
			t.Errorf("%s: exact pass %v, %d copies: the pass must run on the inputs", o.Verify, rep.Config.ExactPass, rep.Counts.ExactDuplicates)
		}
		pairs := readLines(t, filepath.Join(outOn, PairsFile))
		found := map[string]bool{}
		for _, l := range pairs {
			f := strings.Split(l, "\t")
			found[idPair(f[0], f[1])] = true
		}
		for _, p := range refCopies {
			if !found[p] {
				t.Errorf("%s: no pair %q: an input's exact copy of a reference document", o.Verify, p)
			}
		}
	}
}

// idPair is a pair of ids in either order.
func idPair(a, b string) string { return min(a, b) + "\t" + max(a, b) }
