package dedup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCandidatePartsMatchOne: the candidates stage split into key ranges
// grouped side by side (on one worker and on two, in memory and from
// spilled runs) reports the same buckets (counts, the largest capped
// buckets, the largest shared ones) and the same candidates as one range
// grouped by one Grouper, on a corpus whose buckets are shared by many
// documents, so that a small cap caps hundreds of them.
func TestCandidatePartsMatchOne(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 20k-document corpus; skipped with -short")
	}
	in := sharedBucketCorpus(t)
	defer func(n int) { candidateParts = n }(candidateParts)
	type result struct {
		buckets, pairs []byte
		candidates     int64
	}
	run := func(parts int, o Options) result {
		candidateParts = parts
		spill := o.Memory > 0
		out, rep := runDedup(t, []string{in}, &o)
		if spill && rep.Spill.EntryRuns == 0 {
			t.Fatalf("parts=%d %+v: nothing spilled", parts, o)
		}
		buckets, err := json.Marshal(rep.Buckets)
		if err != nil {
			t.Fatal(err)
		}
		pairs, err := os.ReadFile(filepath.Join(out, PairsFile))
		if err != nil {
			t.Fatal(err)
		}
		return result{buckets, pairs, rep.Counts.Candidates}
	}
	for _, mem := range []int64{0, 16 << 20} {
		want := run(1, Options{Workers: 1, Memory: mem, BucketCap: 5})
		var b struct {
			Capped  int64             `json:"capped_buckets"`
			Largest []json.RawMessage `json:"largest"`
			Top     []json.RawMessage `json:"top"`
		}
		if err := json.Unmarshal(want.buckets, &b); err != nil {
			t.Fatal(err)
		}
		if b.Capped < 100 || len(b.Largest) < 10 || len(b.Top) < 10 || want.candidates == 0 {
			t.Fatalf("memory %d: %d capped buckets, %d largest, %d top, %d candidates: the corpus is too easy", mem, b.Capped, len(b.Largest), len(b.Top), want.candidates)
		}
		for _, parts := range []int{2, 8, 64} {
			for _, workers := range []int{1, 2} {
				got := run(parts, Options{Workers: workers, Memory: mem, BucketCap: 5})
				if !bytes.Equal(got.buckets, want.buckets) {
					t.Errorf("memory %d, %d parts, %d workers: buckets\n%s\nwant (one part)\n%s", mem, parts, workers, got.buckets, want.buckets)
				}
				if !bytes.Equal(got.pairs, want.pairs) || got.candidates != want.candidates {
					t.Errorf("memory %d, %d parts, %d workers: %d candidates, pairs.tsv differs from one part's (%d)", mem, parts, workers, got.candidates, want.candidates)
				}
			}
		}
	}
}

// sharedBucketCorpus writes 20,000 short documents cut from 40 articles at
// 3 offsets and mutated, whose buckets are shared by many documents, and
// returns the file's path.
func sharedBucketCorpus(t *testing.T) string {
	base := readJSONL(t, "../testdata/articles_1000.jsonl")
	r := rand.New(rand.NewPCG(12, 1))
	var docs []doc
	for i := 0; len(docs) < 20000; i++ {
		b := base[r.IntN(40)]
		words := strings.Fields(b.Text)
		start := 10 * r.IntN(3) // few windows: large shared buckets
		text := strings.Join(words[start:min(len(words), start+40)], " ")
		text = mutate(r, text, 0.05)
		docs = append(docs, doc{fmt.Sprintf("d%06d", i), text})
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	return in
}

// TestPartitionedEntriesMatchWide: the band-key entries in key ranges
// sorted as they are read (extsort.Partitioned) give the same report.json
// buckets, pairs.tsv and clusters.jsonl as sorted runs merged
// (extsort.WideSorter), in memory and spilled (16 MiB), on one worker and
// two, with reference documents (--against) too. (Ranges too large to sort
// in memory are extsort's TestPartitionedMatchesSort's.)
func TestPartitionedEntriesMatchWide(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 20k-document corpus; skipped with -short")
	}
	in := sharedBucketCorpus(t)
	ref := filepath.Join(t.TempDir(), "ref.jsonl")
	all := readJSONL(t, in)
	for i := range all[:3000] {
		all[i].ID = "ref-" + all[i].ID
	}
	writeJSONL(t, ref, all[:3000])
	defer func(p bool) { partitionEntries = p }(partitionEntries)
	type result struct{ buckets, pairs, clusters []byte }
	run := func(partitioned bool, o Options) result {
		partitionEntries = partitioned
		spill := o.Memory > 0
		out, rep := runDedup(t, []string{in}, &o)
		if spill && rep.Spill.EntryRuns == 0 {
			t.Fatalf("%+v: nothing spilled", o)
		}
		buckets, err := json.Marshal(rep.Buckets)
		if err != nil {
			t.Fatal(err)
		}
		var res result
		res.buckets = buckets
		if res.pairs, err = os.ReadFile(filepath.Join(out, PairsFile)); err != nil {
			t.Fatal(err)
		}
		if res.clusters, err = os.ReadFile(filepath.Join(out, ClustersFile)); err != nil {
			t.Fatal(err)
		}
		if len(res.pairs) == 0 {
			t.Fatalf("%+v: no pairs", o)
		}
		return res
	}
	for _, against := range [][]string{nil, {ref}} {
		for _, mem := range []int64{0, 16 << 20} {
			for _, workers := range []int{1, 2} {
				o := Options{Workers: workers, Memory: mem, BucketCap: 5, Against: against}
				want, got := run(false, o), run(true, o)
				if !bytes.Equal(got.buckets, want.buckets) || !bytes.Equal(got.pairs, want.pairs) || !bytes.Equal(got.clusters, want.clusters) {
					t.Errorf("against %v, memory %d, %d workers: partitioned entries give other buckets, pairs or clusters than sorted runs", against, mem, workers)
				}
			}
		}
	}
}

// TestSkipSinglesMatchesKeep: leaving out the band-key entries of keys no
// other entry has (the default) gives the report.json buckets and counts
// (entries, buckets, shared buckets, pairs, the largest and top buckets),
// pairs.tsv, clusters.jsonl and kept.jsonl of grouping every entry, in
// memory and spilled (16 MiB), on one worker and two, with reference
// documents (--against: their numbers wrap past the others'), and with
// documents made bad after signing (repeated ids: their entries are left
// out of the buckets, single ones too). The corpus mixes shared buckets
// (sharedBucketCorpus) with 12,000 documents of random words, so that its
// key ranges hold thousands of entries, most of single keys
// (extsort.TestPartitionedSkipSingles checks that they are left out).
func TestSkipSinglesMatchesKeep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 32k-document corpus; skipped with -short")
	}
	docs := readJSONL(t, sharedBucketCorpus(t))
	r := rand.New(rand.NewPCG(21, 2))
	for i := range 12000 {
		words := make([]string, 20+r.IntN(30))
		for j := range words {
			words[j] = fmt.Sprintf("w%x", r.Uint32()%50000)
		}
		docs = append(docs, doc{fmt.Sprintf("r%06d", i), strings.Join(words, " ")})
	}
	r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	for i := 100; i < len(docs); i += 97 {
		docs[i].ID = docs[i-50].ID // a repeated id: bad after signing
	}
	dir := t.TempDir()
	in, ref := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "ref.jsonl")
	writeJSONL(t, in, docs[2000:])
	refs := slices.Clone(docs[:2000])
	for i := range refs {
		refs[i].ID = "ref-" + refs[i].ID
	}
	writeJSONL(t, ref, refs)
	defer func(k bool) { keepSingles = k }(keepSingles)
	type result struct {
		buckets, counts []byte
		out             string
	}
	run := func(keep bool, o Options) result {
		keepSingles = keep
		spill := o.Memory > 0
		out, rep := runDedup(t, []string{in}, &o)
		if spill && rep.Spill.EntryRuns == 0 {
			t.Fatalf("%+v: nothing spilled", o)
		}
		if rep.Counts.Bad == 0 || rep.Buckets.SharedBuckets == 0 || rep.Buckets.Buckets < rep.Buckets.Entries/2 {
			t.Fatalf("%+v: %d bad, %d shared buckets, %d buckets of %d entries: not the corpus meant", o, rep.Counts.Bad, rep.Buckets.SharedBuckets, rep.Buckets.Buckets, rep.Buckets.Entries)
		}
		buckets, err := json.Marshal(rep.Buckets)
		if err != nil {
			t.Fatal(err)
		}
		counts, err := json.Marshal(rep.Counts)
		if err != nil {
			t.Fatal(err)
		}
		return result{buckets, counts, out}
	}
	for _, against := range [][]string{nil, {ref}} {
		for _, mem := range []int64{0, 16 << 20} {
			for _, workers := range []int{1, 2} {
				o := Options{Workers: workers, Memory: mem, BucketCap: 5, Against: against, Corpus: corpusSkipBad()}
				want, got := run(true, o), run(false, o)
				if !bytes.Equal(got.buckets, want.buckets) || !bytes.Equal(got.counts, want.counts) {
					t.Errorf("against %v, memory %d, %d workers: buckets\n%s\ncounts %s\nwant (every entry grouped)\n%s\n%s", against, mem, workers, got.buckets, got.counts, want.buckets, want.counts)
				}
				sameOutputs(t, want.out, got.out)
			}
		}
	}
}

// TestPartBounds: the parts cover the ranges in order, each at least one,
// their sizes growing by no more than a range's rounding and within 1.5
// ranges of the linear weights' share (k, k−1, …, 1).
func TestPartBounds(t *testing.T) {
	for _, n := range []int{1, 2, 7, 256} {
		for _, k := range []int{1, 2, 3, 8, 16, 64, 255, 256, 300} {
			b := partBounds(k, n)
			kk := min(k, n)
			if len(b) != kk+1 || b[0] != 0 || b[kk] != n {
				t.Fatalf("k=%d n=%d: bounds %v", k, n, b)
			}
			w := float64(kk*(kk+1)) / 2
			for i := range kk {
				size := b[i+1] - b[i]
				if size < 1 {
					t.Fatalf("k=%d n=%d: part %d empty: %v", k, n, i, b)
				}
				if i > 0 && size > b[i]-b[i-1]+1 {
					t.Errorf("k=%d n=%d: part %d larger than the one before by more than rounding: %v", k, n, i, b)
				}
				if share := float64(n) * float64(kk-i) / w; share >= 1 && math.Abs(float64(size)-share) > 1.5 && kk < n/2 {
					t.Errorf("k=%d n=%d: part %d of %d ranges, share %.1f: %v", k, n, i, size, share, b)
				}
			}
		}
	}
}

// TestCandidatePairsSpillCounted: the candidate pairs each part's worker
// sorts (groupPart) spill past the budget's share, and report.json counts
// those runs and bytes; the outputs are those of a run that spills no
// pair. A corpus of 300 groups of 10 near-copies gives each group's 45
// pairs in about every band.
func TestCandidatePairsSpillCounted(t *testing.T) {
	var docs []doc
	for g := range 300 {
		words := make([]string, 40)
		for w := range words {
			words[w] = fmt.Sprintf("g%dw%d", g, w)
		}
		for c := range 10 {
			words[39] = fmt.Sprintf("copy%d", c)
			docs = append(docs, doc{fmt.Sprintf("g%03dc%d", g, c), strings.Join(words, " ")})
		}
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	for _, workers := range []int{1, 2} {
		small, rep := runDedup(t, []string{in}, &Options{Workers: workers, Memory: 16 << 20})
		if rep.Spill.PairRuns == 0 || rep.Spill.PairBytes == 0 {
			t.Errorf("workers %d: %d pair runs, %d bytes spilled under 16 MiB; want some", workers, rep.Spill.PairRuns, rep.Spill.PairBytes)
		}
		big, brep := runDedup(t, []string{in}, &Options{Workers: workers})
		if brep.Spill.PairRuns != 0 {
			t.Errorf("workers %d: %d pair runs spilled under the default budget; want 0", workers, brep.Spill.PairRuns)
		}
		if rep.Counts.VerifiedPairs != brep.Counts.VerifiedPairs || rep.Counts.VerifiedPairs == 0 {
			t.Errorf("workers %d: %d verified pairs spilled, %d not", workers, rep.Counts.VerifiedPairs, brep.Counts.VerifiedPairs)
		}
		for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
			a, _ := os.ReadFile(filepath.Join(small, f))
			b, _ := os.ReadFile(filepath.Join(big, f))
			if !bytes.Equal(a, b) {
				t.Errorf("workers %d: %s differs between 16 MiB and the default budget", workers, f)
			}
		}
	}
}
