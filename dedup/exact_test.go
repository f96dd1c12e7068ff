package dedup

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/sigfile"
)

// exactCopyCorpus returns about n documents of which a share are exact
// copies (to the spec: the same text, or the same text with other case,
// punctuation and spacing) of an earlier document, the rest articles and
// their near duplicates, shuffled; and the number of planted copies. With
// big, one article also has more copies than the bucket cap, and a near
// duplicate of it comes first.
func exactCopyCorpus(t testing.TB, n int, share float64, big int, seed uint64) ([]doc, int) {
	base := readJSONL(t, "../testdata/articles_1000.jsonl")
	r := rand.New(rand.NewPCG(seed, 11))
	var docs []doc
	seen := map[string]bool{} // the prose normalisation of ASCII text, written out
	for i := 0; len(docs) < int(float64(n)*(1-share)); i++ {
		b := base[i%len(base)]
		d := b
		if i >= len(base) {
			d = doc{fmt.Sprintf("%s-v%d", b.ID, i), mutate(r, b.Text, 0.01+0.07*r.Float64())}
		}
		if key := proseKey(d.Text); !seen[key] { // a variant with no change is a copy
			seen[key] = true
			docs = append(docs, d)
		}
	}
	r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	var out []doc
	copies := 0
	if big > 0 {
		b := base[len(base)-1]
		out = append(out, doc{"big-near", mutate(r, b.Text, 0.03)})
		for i := range big {
			out = append(out, doc{fmt.Sprintf("big-copy%04d", i), b.Text})
		}
		copies += big - 1
	}
	for _, d := range docs {
		out = append(out, d)
		for r.Float64() < share && len(out) > 1 {
			src := out[r.IntN(len(out))]
			text := src.Text
			switch r.IntN(3) {
			case 1:
				text = strings.ToUpper(text)
			case 2:
				text = "  " + strings.ReplaceAll(text, " ", "\n ") + " !"
			}
			out = append(out, doc{fmt.Sprintf("copy%05d-of-%s", len(out), src.ID), text})
			copies++
		}
	}
	return out, copies
}

// TestExactPass: on a corpus of which 30 % are exact copies, runs with and
// without the exact pass write the same pairs.tsv, clusters.jsonl and
// kept.jsonl under every verification, clustering and keep policy; the
// pass counts every copy and signs fewer features.
func TestExactPass(t *testing.T) {
	docs, copies := exactCopyCorpus(t, 2500, 0.3, 0, 1)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	for _, o := range []Options{
		{},
		{Verify: VerifyEstimate},
		{Verify: VerifyNone, Threshold: 0.7},
		{Cluster: Star, Keep: cluster.Policy{Kind: cluster.KeepLongest}},
		{Cluster: Star, Verify: VerifyEstimate, Threshold: 0.6},
		{Keep: cluster.Policy{Kind: cluster.KeepLongest}, Workers: 1},
	} {
		name := fmt.Sprintf("%s-%s-%s", o.Verify, o.Cluster, o.Keep.String())
		// Batches of 32 KiB: the corpus is about 4 MB, and a worker skips
		// a copy only if its first was collected before (at most 2·workers
		// + 2 batches are in flight).
		o.Corpus.BatchBytes = 32 << 10
		t.Run(name, func(t *testing.T) {
			off := o
			off.SkipExactPass = true
			outOff, repOff := runDedup(t, []string{in}, &off)
			outOn, repOn := runDedup(t, []string{in}, &o)
			sameOutputs(t, outOff, outOn)
			if got := repOn.Counts.ExactDuplicates; got != int64(copies) {
				t.Errorf("exact duplicates %d; want the %d planted", got, copies)
			}
			if repOff.Counts.ExactDuplicates != 0 || repOff.Config.ExactPass || !repOn.Config.ExactPass {
				t.Errorf("pass off reports %d exact duplicates, exact_pass %v; on: %v", repOff.Counts.ExactDuplicates, repOff.Config.ExactPass, repOn.Config.ExactPass)
			}
			if repOn.Counts.VerifiedPairs != repOff.Counts.VerifiedPairs || repOn.Counts.Removed != repOff.Counts.Removed {
				t.Errorf("verified pairs %d, removed %d; without the pass %d, %d", repOn.Counts.VerifiedPairs, repOn.Counts.Removed, repOff.Counts.VerifiedPairs, repOff.Counts.Removed)
			}
			// Copies are not signed (but those in flight when their first
			// was collected): at least half of their share of the features
			// is saved.
			saved := repOff.Signatures.Features - repOn.Signatures.Features
			t.Logf("%d documents, %d copies: %d of %d features not signed", len(docs), copies, saved, repOff.Signatures.Features)
			if saved < repOff.Signatures.Features*int64(copies)/int64(len(docs))/2 {
				t.Errorf("features signed %d with the pass, %d without: the copies were signed", repOn.Signatures.Features, repOff.Signatures.Features)
			}
			if repOn.Buckets.Entries >= repOff.Buckets.Entries || repOn.Counts.Candidates >= repOff.Counts.Candidates {
				t.Errorf("entries %d, candidates %d with the pass; %d, %d without", repOn.Buckets.Entries, repOn.Counts.Candidates, repOff.Buckets.Entries, repOff.Counts.Candidates)
			}
		})
	}
}

// TestExactPassSimHash: under SimHash the exact pass runs too (its
// fingerprints depend only on the normalised text) and the outputs are those
// of a run without it: blocks chosen from the corpus size (copies counted,
// so the same), given, with TF-IDF weights, and with exact verification.
func TestExactPassSimHash(t *testing.T) {
	docs, copies := exactCopyCorpus(t, 2500, 0.3, 0, 5)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	for _, o := range []Options{
		{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: 3}},
		{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: 4, Blocks: 6}, Verify: VerifyNone},
		{Sketch: sketch.SimHash, SimHash: SimHashOptions{Weight: sigfile.TFIDF, Hamming: 3}, Cluster: Star},
	} {
		o.Corpus.BatchBytes = 32 << 10
		off := o
		off.SkipExactPass = true
		outOff, repOff := runDedup(t, []string{in}, &off)
		outOn, repOn := runDedup(t, []string{in}, &o)
		sameOutputs(t, outOff, outOn)
		if !repOn.Config.ExactPass || repOn.Counts.ExactDuplicates != int64(copies) {
			t.Errorf("%+v: exact_pass %v, exact duplicates %d; want true, %d", o.SimHash, repOn.Config.ExactPass, repOn.Counts.ExactDuplicates, copies)
		}
		if a, b := repOn.Config.SimHash, repOff.Config.SimHash; *a != *b {
			t.Errorf("%+v: simhash config %+v with the pass, %+v without", o.SimHash, *a, *b)
		}
		if repOn.Signatures.Features >= repOff.Signatures.Features {
			t.Errorf("%+v: features signed %d with the pass, %d without", o.SimHash, repOn.Signatures.Features, repOff.Signatures.Features)
		}
	}
}

// TestExactPassOverCap: a text with more copies than the bucket cap, and a
// near duplicate before them: the copies are linked to the first copy and
// the near duplicate to every copy, as the capped buckets of a run without
// the pass link them; also when the table of the pass is full and copies
// are found after signing.
func TestExactPassOverCap(t *testing.T) {
	docs, copies := exactCopyCorpus(t, 300, 0.1, 1200, 2)
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	for _, o := range []Options{{}, {Cluster: Star}, {Memory: 16 << 20, BucketCap: 50}} {
		off := o
		off.SkipExactPass = true
		outOff, _ := runDedup(t, []string{in}, &off)
		outOn, rep := runDedup(t, []string{in}, &o)
		sameOutputs(t, outOff, outOn)
		if rep.Counts.ExactDuplicates != int64(copies) {
			t.Errorf("%+v: exact duplicates %d; want %d", o, rep.Counts.ExactDuplicates, copies)
		}
	}
}

// TestExactPassLate: under a 16 MiB budget the table of the pass holds
// 71,960 documents (hashTableLimit of a twelfth), fewer than the corpus's
// distinct ones: the copies it cannot hold are found after signing, with
// the same outputs.
func TestExactPassLate(t *testing.T) {
	base := readJSONL(t, "../testdata/articles_1000.jsonl")
	r := rand.New(rand.NewPCG(4, 4))
	var docs []doc
	copies := 0
	// 30 % copies: distinct documents past the table's limit by 8,000.
	n := (hashTableLimit(16<<20/12) + 8000) * 10 / 7
	for i := 0; len(docs) < n; i++ {
		if len(docs) > 0 && r.IntN(10) < 3 {
			src := docs[r.IntN(len(docs))]
			docs = append(docs, doc{fmt.Sprintf("c%06d", i), strings.ToLower(src.Text)})
			copies++
			continue
		}
		words := strings.Fields(base[i%len(base)].Text)
		start := r.IntN(len(words) - 30)
		docs = append(docs, doc{fmt.Sprintf("d%06d", i), fmt.Sprintf("doc%d %s", i, strings.Join(words[start:start+30], " "))})
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	outOff, _ := runDedup(t, []string{in}, &Options{SkipExactPass: true, Memory: 16 << 20})
	outOn, rep := runDedup(t, []string{in}, &Options{Memory: 16 << 20})
	sameOutputs(t, outOff, outOn)
	if rep.Counts.ExactDuplicates != int64(copies) {
		t.Errorf("exact duplicates %d; want %d", rep.Counts.ExactDuplicates, copies)
	}
}

// proseKey is the normalised text of an ASCII text under the prose spec:
// lower case, every character but letters and digits a separator.
func proseKey(text string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(text), func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_')
	}), " ")
}

// sameOutputs fails unless the two output directories hold the same
// pairs.tsv, clusters.jsonl and kept.jsonl.
func sameOutputs(t *testing.T, want, got string) {
	t.Helper()
	for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
		w, err := os.ReadFile(filepath.Join(want, f))
		if err != nil {
			t.Fatal(err)
		}
		g, err := os.ReadFile(filepath.Join(got, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g, w) {
			gl, wl := strings.Split(string(g), "\n"), strings.Split(string(w), "\n")
			for i := 0; i < max(len(gl), len(wl)); i++ {
				if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
					var a, b string
					if i < len(gl) {
						a = gl[i]
					}
					if i < len(wl) {
						b = wl[i]
					}
					t.Fatalf("%s differs (%d lines, want %d) at line %d:\ngot  %.200s\nwant %.200s", f, len(gl), len(wl), i+1, a, b)
				}
			}
		}
	}
}

// TestExactPassRepeatedIDs: under SkipBad, documents whose id repeats an
// earlier one's are made bad after the sign stage. Copies among them leave
// their groups, and the outputs are those of a run without the pass. A
// group's first document among them is skipped as every bad record is (in
// --bad-out, the run goes on) and its first good copy takes its place, as in
// a run without the pass, which signs that copy: the outputs, the bad list
// and the bad count are those of a run without the pass, under estimate and
// exact verification and under SimHash. The run failed with ErrExactPassBad before.
func TestExactPassRepeatedIDs(t *testing.T) {
	docs, _ := exactCopyCorpus(t, 400, 0.3, 0, 5)
	for i, d := range docs {
		if src, ok := strings.CutPrefix(d.ID, "copy"); ok && i%2 == 0 {
			_, docs[i].ID, _ = strings.Cut(src, "-of-") // the id of the document it copies
		}
	}
	repeated, seen := 0, map[string]bool{}
	for _, d := range docs {
		if seen[d.ID] {
			repeated++
		}
		seen[d.ID] = true
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	writeJSONL(t, in, docs)
	o := Options{Corpus: corpusSkipBad()}
	off := o
	off.SkipExactPass = true
	outOff, repOff := runDedup(t, []string{in}, &off)
	outOn, repOn := runDedup(t, []string{in}, &o)
	sameOutputs(t, outOff, outOn)
	if repOn.Counts.Bad != int64(repeated) || repOff.Counts.Bad != int64(repeated) {
		t.Errorf("bad %d with the pass, %d without; want the %d repeated ids", repOn.Counts.Bad, repOff.Counts.Bad, repeated)
	}

	// A first document with a repeated id, followed by copies of it (one
	// of them bad too) and near duplicates, so that the copy that takes its
	// place pairs with other documents.
	base := readJSONL(t, "../testdata/articles_1000.jsonl")
	r := rand.New(rand.NewPCG(3, 3))
	text := base[900].Text
	firstDocs := append(docs[:50:50],
		doc{"dupe", "one text that no other document has, about the river and the bank"},
		doc{"dupe", text},
		doc{"near1", mutate(r, text, 0.03)},
		doc{"zz", strings.ToUpper(text)},
		doc{"dupe", text + "!"},
		doc{"zz2", text},
		doc{"near2", mutate(r, text, 0.03)},
		doc{"other", "another text that no other document has, about markets and rates"})
	first := filepath.Join(dir, "first.jsonl")
	writeJSONL(t, first, firstDocs)
	for _, v := range []Options{
		{Verify: VerifyEstimate},
		{Verify: VerifyExact},
		{Sketch: sketch.SimHash, SimHash: SimHashOptions{Hamming: 3}}, // blocks chosen from the count of documents
	} {
		o := v
		o.Corpus, o.BadOut = corpusSkipBad(), filepath.Join(t.TempDir(), "bad-on.txt")
		off := o
		off.SkipExactPass, off.BadOut = true, filepath.Join(t.TempDir(), "bad-off.txt")
		outOff, repOff := runDedup(t, []string{first}, &off)
		outOn, repOn := runDedup(t, []string{first}, &o)
		sameOutputs(t, outOff, outOn)
		if repOn.Counts.Bad != repOff.Counts.Bad {
			t.Errorf("%+v: bad %d with the pass, %d without; want the same", v, repOn.Counts.Bad, repOff.Counts.Bad)
		}
		badOn, err := os.ReadFile(o.BadOut)
		if err != nil {
			t.Fatal(err)
		}
		badOff, _ := os.ReadFile(off.BadOut)
		if !bytes.Equal(badOn, badOff) || strings.Count(string(badOn), `"dupe"`) != 2 {
			t.Errorf("%+v: bad list with the pass:\n%s\nwithout:\n%s\nwant the same, both later \"dupe\" records", v, badOn, badOff)
		}
		if pairs, _ := os.ReadFile(filepath.Join(outOn, PairsFile)); !strings.Contains(string(pairs), "zz\t") && !strings.Contains(string(pairs), "\tzz") {
			t.Errorf("%+v: zz, the copy in the bad first's place, pairs with nothing:\n%s", v, pairs)
		}
	}
}

// TestExactPassCountsDeterministic: report.json's signing counts and drift
// distributions are the same whatever the workers and their timing. A
// worker skips a copy whose first the exact pass already knows and signs
// one it does not know yet; the counts used to be the workers' own, so a
// copy counted or not as the race went (each run of 8 workers on this
// corpus of copies one batch after their first gave other feature counts).
func TestExactPassCountsDeterministic(t *testing.T) {
	base := readJSONL(t, "../testdata/articles_1000.jsonl")
	var docs []doc
	for i, d := range base[:600] {
		// Each document, then an exact copy of it (other case, so the
		// raw records differ), so that a copy is most often in the next
		// batch of a few records, signed while its first is in flight.
		docs = append(docs, doc{fmt.Sprintf("d%04d", i), d.Text}, doc{fmt.Sprintf("c%04d", i), strings.ToUpper(d.Text)})
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	run := func(workers int) *Report {
		opts := &Options{Workers: workers, Memory: 16 << 20}
		opts.Corpus.BatchBytes = 2 << 10
		_, rep := runDedup(t, []string{in}, opts)
		return rep
	}
	want := run(1)
	if want.Counts.ExactDuplicates != int64(len(base[:600])) {
		t.Fatalf("exact duplicates %d; want %d", want.Counts.ExactDuplicates, len(base[:600]))
	}
	for i := range 6 {
		got := run(8)
		if got.Signatures != want.Signatures {
			t.Fatalf("run %d, 8 workers: signatures %+v; 1 worker: %+v", i, got.Signatures, want.Signatures)
		}
		if !reflect.DeepEqual(got.Drift, want.Drift) {
			t.Fatalf("run %d, 8 workers: drift distributions differ from 1 worker's", i)
		}
	}
}

// TestCopyGroups: the expander's groups of copies (a bitmap of firsts with
// ranks, and the members one after another) against a map from first to
// its members, on random copies in any order, around the bitmap's word
// boundaries, with one large group, and none.
func TestCopyGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 12))
	cases := map[string][]uint64{"none": nil}
	for _, n := range []uint32{70, 2000, 100000} {
		var copies []uint64
		for d := uint32(1); d < n; d++ {
			if rng.IntN(3) == 0 {
				copies = append(copies, uint64(d)<<32|uint64(rng.Uint32N(d)))
			}
		}
		rng.Shuffle(len(copies), func(i, j int) { copies[i], copies[j] = copies[j], copies[i] })
		cases[fmt.Sprintf("random %d", n)] = copies
	}
	var edges []uint64 // firsts at 0, 63, 64, 127, 128 and far
	for i, f := range []uint32{0, 63, 64, 127, 128, 1 << 20} {
		edges = append(edges, uint64(f+1<<21+uint32(i))<<32|uint64(f))
	}
	cases["word boundaries"] = edges
	var big []uint64
	for d := uint32(6); d < 5000; d++ {
		big = append(big, uint64(d)<<32|5)
	}
	cases["one large group"] = big
	for name, copies := range cases {
		want := map[uint32][]uint32{}
		sorted := slices.Clone(copies)
		slices.Sort(sorted) // by copy: members ascending
		for _, c := range sorted {
			f := uint32(c)
			if want[f] == nil {
				want[f] = []uint32{f}
			}
			want[f] = append(want[f], uint32(c>>32))
		}
		g := newCopyGroups(copies)
		if g.len() != len(want) {
			t.Errorf("%s: %d groups, want %d", name, g.len(), len(want))
		}
		firsts := slices.Sorted(maps.Keys(want))
		for i, f := range firsts {
			if got := g.at(i); !slices.Equal(got, want[f]) {
				t.Errorf("%s: group %d is %v, want %v", name, i, got, want[f])
			}
		}
		maxDoc := uint32(0)
		for _, c := range copies {
			maxDoc = max(maxDoc, uint32(c>>32))
		}
		for d := uint32(0); d <= maxDoc+130; d++ {
			if got := g.of(d); !slices.Equal(got, want[d]) {
				t.Fatalf("%s: the group of %d is %v, want %v", name, d, got, want[d])
			}
		}
	}
}

// TestExpectedDocs: the estimate of a run's documents from its inputs'
// size and the first batch: exact from located records of equal size,
// high (from texts and ids) without locations, none for standard input, a
// directory or a batch of one record.
func TestExpectedDocs(t *testing.T) {
	dir := t.TempDir()
	const n, size = 1000, 50 // records of 50 bytes, newline included
	path := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(path, bytes.Repeat([]byte(`{"id":"abcde","text":"0123456789012345678901234"}`+"\n"), n), 0o644); err != nil {
		t.Fatal(err)
	}
	located := &signed{srcs: []recordSrc{{src: path, file: path}}}
	plain := &signed{}
	for i := range 10 {
		// The text's location within the record (textRaw), as textLocIn gives it.
		located.docs = append(located.docs, docRes{index: int64(i), src: 1, off: int64(i*size + 22), n: 25, text: true})
		plain.ids = append(plain.ids, "abcde"...)
		plain.docs = append(plain.docs, docRes{index: int64(i), length: 25, idEnd: len(plain.ids)})
	}
	for _, c := range []struct {
		name   string
		inputs []string
		s      *signed
		lo, hi int64
	}{
		{"located", []string{path}, located, n, n},
		{"two inputs", []string{path, path}, located, 2 * n, 2 * n},
		{"not located", []string{path}, plain, n, 2 * n},
		{"standard input", []string{"-"}, located, 0, 0},
		{"directory", []string{dir}, located, 0, 0},
		{"missing", []string{filepath.Join(dir, "none")}, located, 0, 0},
		{"one record", []string{path}, &signed{srcs: located.srcs, docs: []docRes{{index: 0, src: 1, off: 22, n: 25, length: 25}}}, 0, 0},
	} {
		if got := expectedDocs(c.inputs, c.s); got < c.lo || got > c.hi {
			t.Errorf("%s: got %d documents; want %d to %d", c.name, got, c.lo, c.hi)
		}
	}
}

// TestResolveKnown: the collector's decisions with the workers' findings
// carried in the batch (run.resolve: no probe for a hash a worker found in
// the table, or that an earlier document of the batch has, and an insert
// straight into the slot where a worker's probe for an absent hash ended,
// while it is still empty and the array the same) are those of
// exactPass.resolve probing for every document: the same first or none
// for each document, the same copies, and the same documents left to the
// late detector once the table is full (and the copies it finds). Workers
// whose view of the table lags (a finding dropped), documents of the batch
// that are not resolved (an empty signature), and a table that fills up
// midway.
func TestResolveKnown(t *testing.T) {
	const memory = 1 << 20 // a table of 4,497 keys
	for _, c := range []struct {
		name       string
		keys, docs int
	}{{"room", 2000, 8000}, {"full", 9000, 20000}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			fast := &run{exact: newExactPass(memory, t.TempDir())}
			slow := newExactPass(memory, t.TempDir())
			pool := make([][2]uint64, c.keys)
			for i := range pool {
				pool[i] = [2]uint64{rng.Uint64(), rng.Uint64()}
			}
			doc := uint32(0)
			for doc < uint32(c.docs) {
				n := 1 + rng.IntN(60)
				s := &signed{}
				keys := make([][2]uint64, n)
				seen := map[[2]uint64]uint32{}
				for j := range n {
					keys[j] = pool[rng.IntN(len(pool))]
					if j > 0 && rng.IntN(6) == 0 {
						keys[j] = keys[j-1]
					}
					d := docRes{}
					// What a worker finds, a view of the table that may lag.
					if b, ok := seen[keys[j]]; ok {
						d.known, d.first = knownBatch, b
					} else if f, ok, slot, gen := fast.exact.lookup(keys[j]); ok && rng.IntN(4) > 0 {
						d.known, d.first = knownTable, f
					} else if !ok && rng.IntN(4) > 0 {
						// Where the key would go, as the worker saw it:
						// later documents of the batch may take the slot
						// first (copies of an earlier key, or the same
						// key), or the table grow, before it is resolved.
						d.known, d.first, d.gen = knownAbsent, uint32(slot), gen
					}
					if _, ok := seen[keys[j]]; !ok {
						seen[keys[j]] = uint32(j)
					}
					s.docs = append(s.docs, d)
				}
				for j := range n {
					if rng.IntN(15) == 0 {
						continue // not resolved (an empty signature)
					}
					got, err := fast.resolve(s, &s.docs[j], keys[j], doc)
					if err != nil {
						t.Fatal(err)
					}
					want, err := slow.resolve(keys[j], doc)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Fatalf("document %d: got first %d; want %d", doc, got, want)
					}
					doc++
				}
			}
			if full := fast.exact.late != nil; full != (c.name == "full") {
				t.Fatalf("late detector used: %v", full)
			}
			var gotLate, wantLate []uint64
			if err := fast.exact.finish(func(c, f uint32) { gotLate = append(gotLate, uint64(c)<<32|uint64(f)) }); err != nil {
				t.Fatal(err)
			}
			if err := slow.finish(func(c, f uint32) { wantLate = append(wantLate, uint64(c)<<32|uint64(f)) }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gotLate, wantLate) || !slices.Equal(fast.exact.copies, slow.copies) {
				t.Fatalf("late copies %d, copies %d; want %d, %d", len(gotLate), len(fast.exact.copies), len(wantLate), len(slow.copies))
			}
			if c.name == "full" && len(wantLate) == 0 {
				t.Fatal("no copies found late")
			}
		})
	}
}
