package dedup

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExactSignsFeatureSets: under exact verification with MinHash the
// signatures of the documents in candidate pairs are made from their feature
// sets where the pairs are checked, not stored, so on 20,000 planted pairs
// under 16 MiB no signature spills (before, the 40,000 recomputed
// signatures, 20 MB, were stored and spilled past their share), every
// pair's estimate is the one of the signatures made from the texts while
// signing (the same pairs under --verify none), and the outputs are those
// of the default budget, where nothing spills.
func TestExactSignsFeatureSets(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, plantedCopies(20000, 1))

	opts := func() *Options { return &Options{Workers: 2, Memory: 16 << 20, SkipExactPass: true} }
	small, rep := runDedup(t, []string{in}, opts())
	if rep.Counts.VerifiedPairs != 20000 || rep.Counts.VerifiedDocs != 40000 {
		t.Fatalf("%d verified pairs of %d documents; want the 20,000 planted, 40,000", rep.Counts.VerifiedPairs, rep.Counts.VerifiedDocs)
	}
	if rep.Spill.SigBytes != 0 {
		t.Errorf("exact verification spilled %d bytes of signatures; want none stored", rep.Spill.SigBytes)
	}
	o := opts()
	o.Verify = VerifyNone
	none, _ := runDedup(t, []string{in}, o)
	est := map[string]float64{}
	for _, r := range readPairRows(t, none) {
		est[r.a+"\t"+r.b] = r.est
	}
	rows := readPairRows(t, small)
	for _, r := range rows {
		if e, ok := est[r.a+"\t"+r.b]; !ok || e != r.est {
			t.Fatalf("pair %s %s: estimate %v; the text signatures give %v (found %v)", r.a, r.b, r.est, e, ok)
		}
	}
	o = opts()
	o.Memory = 0
	big, _ := runDedup(t, []string{in}, o)
	for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
		a, _ := os.ReadFile(filepath.Join(small, f))
		b, _ := os.ReadFile(filepath.Join(big, f))
		if !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s differs between 16 MiB and the default budget (or is empty)", f)
		}
	}
}

// TestVerifySignsPassingPairs: under exact verification the pair checks
// decide by the feature sets first and sign only the documents of pairs
// that pass, the lower one once per run of its pairs: on 20,000 originals,
// each with a copy whose last 1–8 of 40 words are changed (exact similarity
// (36−m)/(36+m) at word:5, 0.95 to 0.64, so that many candidates fail the
// 0.8 threshold),
// the count of signatures is that of the passing pairs' lower documents
// plus the passing pairs (before, every candidate pair's: twice as many as
// candidates here); every verdict, estimate and exact similarity, is the
// one jobspec.Verifier.Verify gives from the texts for every candidate
// pair that --verify none lists; and the outputs of a 16 MiB run, whose
// feature sets spill, and of a default run on two workers, where they do
// not, are byte-identical.
func TestVerifySignsPassingPairs(t *testing.T) {
	var docs []doc
	text := map[string]string{}
	for i := range 20000 {
		words := make([]string, 40)
		for w := range words {
			words[w] = fmt.Sprintf("w%dx%d", i, w)
		}
		docs = append(docs, doc{fmt.Sprintf("d%05d", i), strings.Join(words, " ")})
		for k := range i%8 + 1 {
			words[39-k] = fmt.Sprintf("c%d", k)
		}
		docs = append(docs, doc{fmt.Sprintf("d%05dcopy", i), strings.Join(words, " ")})
	}
	for _, d := range docs {
		text[d.ID] = d.Text
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	writeJSONL(t, in, docs)
	opts := func() *Options { return &Options{Workers: 1, Memory: 16 << 20, SkipExactPass: true} }

	before := verifyStats.signatures.Load()
	small, rep := runDedup(t, []string{in}, opts())
	signed := verifyStats.signatures.Load() - before
	if verifyStats.featureSpill.Load() == 0 {
		t.Fatal("no feature set spilled under 16 MiB")
	}

	o := opts()
	o.Verify = VerifyNone
	none, _ := runDedup(t, []string{in}, o)
	cands := readPairRows(t, none)

	job, err := opts().EnsureDefaults().Job()
	if err != nil {
		t.Fatal(err)
	}
	sk, _ := job.Sketch.New()
	signer, _ := sk.NewSketcher()
	v, err := job.NewVerifier(sk)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	heads := map[string]bool{}
	for _, c := range cands {
		ta, tb := []byte(text[c.a]), []byte(text[c.b])
		sa, _ := signer.Sign(nil, ta)
		sb, _ := signer.Sign(nil, tb)
		d, ok := v.Verify(sa, sb, v.Features(nil, ta), v.Features(nil, tb))
		if ok {
			want = append(want, fmt.Sprintf("%s\t%s\t%s\t%s", c.a, c.b, FormatSim(d.Est), FormatSim(d.Exact)))
			heads[c.a] = true // a document's pairs are checked together, ids in input order here
		}
	}
	var got []string
	for _, r := range readPairRows(t, small) {
		got = append(got, fmt.Sprintf("%s\t%s\t%s\t%s", r.a, r.b, FormatSim(r.est), r.exact))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%d verified pairs differ from the %d that Verifier.Verify passes of %d candidates", len(got), len(want), len(cands))
	}
	if len(want) == len(cands) || len(want) < len(cands)/2 || rep.Counts.VerifiedPairs != int64(len(want)) {
		t.Fatalf("%d of %d candidates pass (report: %d); want some to fail", len(want), len(cands), rep.Counts.VerifiedPairs)
	}
	if wantSigned := int64(len(heads) + len(want)); signed != wantSigned {
		t.Errorf("%d signatures made; want %d (%d lower documents of %d passing pairs; %d candidates)", signed, wantSigned, len(heads), len(want), len(cands))
	}

	o = opts()
	o.Workers, o.Memory = 2, 0
	big, _ := runDedup(t, []string{in}, o)
	if n := verifyStats.featureSpill.Load(); n != 0 {
		t.Errorf("%d bytes of feature sets spilled under the default budget", n)
	}
	for _, f := range []string{PairsFile, ClustersFile, KeptFile} {
		a, _ := os.ReadFile(filepath.Join(small, f))
		b, _ := os.ReadFile(filepath.Join(big, f))
		if !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s differs between 16 MiB on one worker and the default budget on two (or is empty)", f)
		}
	}
}

// TestFeatDocs: a featDocs's members come out ascending in chunks of the
// size asked (the last shorter), each member's record is its rank among
// them, and a member added twice counts once, for sets empty, of one
// document (the first and the last), of every document, and random ones
// over sizes around a word's 64 bits.
func TestFeatDocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for _, n := range []int{0, 1, 63, 64, 65, 130, 1000} {
		for _, kind := range []string{"empty", "first", "last", "all", "random"} {
			if n == 0 && kind != "empty" {
				continue
			}
			s := newFeatDocs(n)
			var want []uint32
			switch kind {
			case "first":
				want = []uint32{0}
			case "last":
				want = []uint32{uint32(n - 1)}
			case "all":
				for i := range n {
					want = append(want, uint32(i))
				}
			case "random":
				for i := range n {
					if rng.IntN(5) == 0 {
						want = append(want, uint32(i))
					}
				}
			}
			for _, i := range want {
				s.add(i)
				s.add(i)
			}
			s.seal()
			if s.n != len(want) {
				t.Fatalf("n=%d %s: %d members; want %d", n, kind, s.n, len(want))
			}
			for r, i := range want {
				if got := s.record(i); got != r {
					t.Fatalf("n=%d %s: record(%d) = %d; want %d", n, kind, i, got, r)
				}
			}
			for _, size := range []int{1, 7, 64} {
				var got []uint32
				err := s.each(size, func(c []uint32) error {
					if len(c) == 0 || len(c) > size {
						t.Fatalf("n=%d %s: a chunk of %d; want 1 to %d", n, kind, len(c), size)
					}
					got = append(got, c...)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("n=%d %s size %d: members %v; want %v", n, kind, size, got, want)
				}
			}
		}
	}
}
