package tune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// corpus is a signature set made for the tests: slots per document (nil
// for a document without features) and ids.
type corpus struct {
	params minhash.Params
	ids    []string
	slots  [][]uint64
	parent []int // the document each was copied from, or -1
}

// pack packs slots into a signature as minhash packs them.
func pack(p minhash.Params, slots []uint64) []uint64 {
	sig := make([]uint64, p.Words())
	for i, v := range slots {
		bit := i * p.Bits
		sig[bit/64] |= v << (bit % 64)
	}
	return sig
}

// file writes the corpus as a signature file and returns its bytes.
func (c *corpus) file(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := sigfile.NewWriter(&buf, sigfile.MinHashHeader(shingle.Prose, c.params))
	if err != nil {
		t.Fatal(err)
	}
	mask := uint64(1)<<c.params.Bits - 1
	for i, s := range c.slots {
		if s == nil {
			s = make([]uint64, c.params.K)
			for j := range s {
				s[j] = mask
			}
		}
		if err := w.Add([]byte(c.ids[i]), pack(c.params, s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// familyCorpus makes n documents of k 8-bit slots in families: each
// document copies an earlier one (or starts a family) with a random share
// of its slots redrawn, so that bands collide at every rate; a few documents
// are empty, and hot documents share their first 4 slots, a bucket larger
// than a small cap.
func familyCorpus(n, k int, hot int, seed uint64) *corpus {
	return familyCorpusBits(n, k, 8, hot, seed)
}

// familyCorpusBits is familyCorpus with slots of the given width.
func familyCorpusBits(n, k, bits int, hot int, seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, 7))
	c := &corpus{params: minhash.Params{K: k, Bits: bits, Seed: 1}}
	mask := uint64(1)<<bits - 1
	for i := range n {
		c.ids = append(c.ids, fmt.Sprintf("d%05d", (i*7919)%n)) // ids not in position order
		c.parent = append(c.parent, -1)
		if r.IntN(50) == 0 {
			c.slots = append(c.slots, nil)
			continue
		}
		s := make([]uint64, k)
		var base []uint64
		if i > 0 && r.IntN(3) > 0 {
			c.parent[i] = r.IntN(i)
			base = c.slots[c.parent[i]]
		}
		rate := r.Float64() * 0.6
		for j := range s {
			if base != nil && r.Float64() >= rate {
				s[j] = base[j]
			} else {
				s[j] = r.Uint64N(mask) // never all ones
			}
		}
		if i < hot {
			copy(s[:4], []uint64{1, 2, 3, 4})
		}
		c.slots = append(c.slots, s)
	}
	return c
}

// truthFor draws truth pairs: among documents of shared slots and at
// random, some with a similarity (some below the threshold), some without,
// and some naming ids the signatures lack.
func truthFor(c *corpus, m int, seed uint64) *eval.PairFile {
	r := rand.New(rand.NewPCG(seed, 9))
	var ps []eval.LabeledPair
	n := len(c.ids)
	for range m {
		a, b := r.IntN(n), r.IntN(n)
		if c.parent[a] >= 0 && r.IntN(4) > 0 {
			b = c.parent[a] // a near duplicate, mostly
		}
		p := eval.LabeledPair{A: c.ids[a], B: c.ids[b], J: r.Float64()}
		switch r.IntN(10) {
		case 0:
			p.J = math.NaN()
		case 1:
			p.B = fmt.Sprintf("missing%d", r.IntN(100))
		}
		if c.slots[a] != nil && c.slots[b] != nil && r.IntN(2) == 0 {
			// Take the slot agreement as the similarity: most of these
			// land above the threshold.
			same := 0
			for j := range c.slots[a] {
				if c.slots[a][j] == c.slots[b][j] {
					same++
				}
			}
			p.J = float64(same) / float64(len(c.slots[a]))
		}
		ps = append(ps, p)
	}
	return &eval.PairFile{Threshold: 0.1, Documents: int64(n), Pairs: eval.SortPairs(ps)}
}

// brute is the candidate set of banding p with bucket cap bucketCap,
// computed the plain way: a map from each 32-bit key to its documents.
type brute struct {
	pairs                   map[uint64]bool
	shared, capped, largest int64
}

func bruteForce(c *corpus, p lsh.Params, bucketCap int) brute {
	groups := map[uint64][]uint32{}
	var order []uint64
	for d, s := range c.slots {
		if s == nil {
			continue
		}
		for _, k := range p.AppendKeys(nil, s) {
			hk := k // dedup's bucket key: the whole 64-bit band key (sketch.DefaultKeyBits)
			g := groups[hk]
			if len(g) == 0 {
				order = append(order, hk)
			}
			if len(g) > 0 && g[len(g)-1] == uint32(d) {
				continue // two bands of one document sharing a key
			}
			groups[hk] = append(g, uint32(d))
		}
	}
	out := brute{pairs: map[uint64]bool{}}
	for _, hk := range order {
		g := groups[hk]
		out.largest = max(out.largest, int64(len(g)))
		if len(g) < 2 {
			continue
		}
		out.shared++
		if len(g) > bucketCap {
			out.capped++
			for _, d := range g[1:] {
				out.pairs[lsh.PackPair(g[0], d)] = true
			}
			continue
		}
		for i, a := range g {
			for _, b := range g[i+1:] {
				out.pairs[lsh.PackPair(a, b)] = true
			}
		}
	}
	return out
}

func open(t testing.TB, data []byte) *sigfile.Reader {
	t.Helper()
	r, err := sigfile.NewReader(bytes.NewReader(data), "test.ndsf", nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCountsAgainstBruteForce checks every count of Run against the plain
// computation on a random signature set, for plain and multi-probe
// bandings, with a cap small enough to cap the hot bucket.
func TestCountsAgainstBruteForce(t *testing.T) {
	c := familyCorpus(1500, 32, 40, 1)
	data := c.file(t)
	truth := truthFor(c, 3000, 2)
	const threshold, bucketCap = 0.6, 16
	bandings := []lsh.Params{{Bands: 8, Rows: 4}, {Bands: 4, Rows: 6}, {Bands: 2, Rows: 5, Probe: 1}, {Bands: 16, Rows: 2}, {Bands: 3, Rows: 8, Probe: 2}}
	opts := &Options{Threshold: threshold, Bandings: bandings, BucketCap: bucketCap, Recall: 0.9, Precision: 0.2, Workers: 1}
	res, err := Run(context.Background(), open(t, data), truth, opts)
	if err != nil {
		t.Fatal(err)
	}

	// Id → position, for the truth pairs.
	pos := map[string]uint32{}
	var nonEmpty, empties int64
	for i, id := range c.ids {
		pos[id] = uint32(i)
		if c.slots[i] == nil {
			empties++
		} else {
			nonEmpty++
		}
	}
	if res.Documents != int64(len(c.ids)) || res.Empty != empties {
		t.Errorf("documents %d, empty %d; want %d, %d", res.Documents, res.Empty, len(c.ids), empties)
	}
	var counted, missing int64
	for _, p := range truth.Pairs {
		if p.HasJ() && p.J < threshold {
			continue
		}
		counted++
		_, okA := pos[p.A]
		_, okB := pos[p.B]
		if !okA || !okB {
			missing++
		}
	}
	if res.TruthPairs != counted || res.TruthMissing != missing || missing == 0 {
		t.Errorf("truth pairs %d, missing %d; want %d, %d (> 0)", res.TruthPairs, res.TruthMissing, counted, missing)
	}
	if len(res.Bandings) != len(bandings) {
		t.Fatalf("%d bandings; want %d", len(res.Bandings), len(bandings))
	}
	sawCapped := false
	for i, p := range bandings {
		got := res.Bandings[i]
		want := bruteForce(c, p, bucketCap)
		if got.Params != p || got.Label != Label(p) {
			t.Errorf("banding %d is %v (%s); want %v", i, got.Params, got.Label, p)
		}
		if got.Candidates != int64(len(want.pairs)) || got.SharedBuckets != want.shared ||
			got.CappedBuckets != want.capped || got.LargestBucket != want.largest {
			t.Errorf("%s: candidates %d, shared %d, capped %d, largest %d; want %d, %d, %d, %d", got.Label,
				got.Candidates, got.SharedBuckets, got.CappedBuckets, got.LargestBucket,
				len(want.pairs), want.shared, want.capped, want.largest)
		}
		sawCapped = sawCapped || want.capped > 0
		var found []eval.LabeledPair
		for _, tp := range truth.Pairs {
			a, okA := pos[tp.A]
			b, okB := pos[tp.B]
			if okA && okB && want.pairs[lsh.PackPair(min(a, b), max(a, b))] && !(tp.HasJ() && tp.J < threshold) {
				found = append(found, tp)
			}
		}
		ws := eval.ScorePairs(truth.Pairs, found, eval.ScoreOptions{Threshold: threshold, Curve: eval.SCurve(p, 8)})
		if got.Pairs.TruePositives != int64(len(found)) || got.Pairs.Recall != ws.Recall || !reflect.DeepEqual(got.Pairs.Bands, ws.Bands) {
			t.Errorf("%s: true positives %d, recall %v; want %d, %v (or bands differ)", got.Label,
				got.Pairs.TruePositives, got.Pairs.Recall, len(found), ws.Recall)
		}
		if wp := float64(len(found)) / float64(len(want.pairs)); got.Pairs.Precision != wp || got.Pairs.Predicted != int64(len(want.pairs)) {
			t.Errorf("%s: precision %v of %d predicted; want %v of %d", got.Label, got.Pairs.Precision, got.Pairs.Predicted, wp, len(want.pairs))
		}
		if got.Postings != nonEmpty*int64(p.KeysPerDoc()) || got.DedupBytes != DedupPostingBytes*got.Postings || got.IndexBytes != 4*got.Postings {
			t.Errorf("%s: postings %d (%d B, %d B); want %d·%d", got.Label, got.Postings, got.DedupBytes, got.IndexBytes, nonEmpty, p.KeysPerDoc())
		}
		if wr := eval.SCurve(p, 8)(threshold); got.RecallAtThreshold != wr {
			t.Errorf("%s: P(t) %v; want %v", got.Label, got.RecallAtThreshold, wr)
		}
		meetsR, meetsP := got.Pairs.Recall >= 0.9, got.Pairs.Precision >= 0.2
		if *got.MeetsRecall != meetsR || *got.MeetsPrecision != meetsP || got.Meets != (meetsR && meetsP) {
			t.Errorf("%s: meets recall %v precision %v both %v; want %v %v", got.Label, *got.MeetsRecall, *got.MeetsPrecision, got.Meets, meetsR, meetsP)
		}
	}
	if !sawCapped {
		t.Error("no banding capped a bucket: the hot documents do not exercise the cap")
	}
}

// TestDeterminism checks that workers and spilling do not change the
// result: one worker with everything in memory, two workers with sorters
// that spill every 1024 values (extsort's least limit).
func TestDeterminism(t *testing.T) {
	c := familyCorpus(2000, 32, 30, 3)
	data := c.file(t)
	truth := truthFor(c, 2000, 4)
	bandings := []lsh.Params{{Bands: 8, Rows: 4}, {Bands: 4, Rows: 8}, {Bands: 6, Rows: 5, Probe: 1}}
	tmp := t.TempDir()
	o := (&Options{Threshold: 0.5, Bandings: bandings, BucketCap: 20, TempDir: tmp}).EnsureDefaults()
	var results []*Result
	for _, tc := range []struct{ workers, entries, pairs int }{{1, 1 << 20, 1 << 20}, {2, 1024, 1024}, {3, 1024, 1 << 20}} {
		o.Workers = tc.workers
		res, err := run(context.Background(), open(t, data), truth, o, bandings, tc.entries, tc.pairs)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	for i, r := range results[1:] {
		if !reflect.DeepEqual(r, results[0]) {
			t.Errorf("run %d differs from run 0:\n%s\nwant\n%s", i+1, r, results[0])
		}
	}
	if results[0].Bandings[0].Candidates <= 1024 {
		t.Errorf("%d candidates: too few for the pair sorter to spill", results[0].Bandings[0].Candidates)
	}
	leftover := func(when string) {
		t.Helper()
		if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
			t.Errorf("%s: %d files left in the temporary directory, such as %s", when, len(ents), ents[0].Name())
		}
	}
	leftover("after the runs")

	// A file damaged near its end fails the run after batches (of 8192
	// documents at k = 32) have been banded and runs spilled; they are
	// removed all the same.
	big := familyCorpus(20000, 32, 0, 11)
	bad := big.file(t)
	bad[len(bad)-40] ^= 1
	if _, err := run(context.Background(), open(t, bad), truth, o, bandings, 1024, 1024); !errors.Is(err, sigfile.ErrCorrupt) {
		t.Fatalf("damaged file: %v; want sigfile.ErrCorrupt", err)
	}
	leftover("after a failed run")
}

func TestFrontier(t *testing.T) {
	for _, tc := range []struct {
		t float64
		k int
	}{{0.8, 128}, {0.5, 64}, {0.9, 256}, {0.7, 20}} {
		fr, err := Frontier(tc.t, tc.k, DefaultRecalls, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(fr) == 0 {
			t.Fatalf("t=%v k=%d: empty frontier", tc.t, tc.k)
		}
		// Each point is ForRecall's choice for some level, and no banding
		// of at most k slots dominates it.
		for i, p := range fr {
			if i > 0 && !(fr[i-1].Probability(tc.t) < p.Probability(tc.t)) {
				t.Errorf("t=%v k=%d: %v before %v: not by P(t) ascending, or a repeat", tc.t, tc.k, fr[i-1], p)
			}
			chosen := false
			for _, r := range DefaultRecalls {
				if q, err := lsh.ForRecall(tc.t, tc.k, r); err == nil && q == p {
					chosen = true
				}
			}
			if !chosen {
				t.Errorf("t=%v k=%d: %v is no level's ForRecall choice", tc.t, tc.k, p)
			}
			pt, fp := p.Probability(tc.t), p.FalsePositiveArea(tc.t)
			for b := 1; b <= tc.k; b++ {
				for r := 1; b*r <= tc.k; r++ {
					q := lsh.Params{Bands: b, Rows: r}
					if q.Probability(tc.t) >= pt && q.FalsePositiveArea(tc.t) < fp*(1-1e-9) {
						t.Errorf("t=%v k=%d: %v dominated by %v (P %v ≥ %v, FP area %v < %v)", tc.t, tc.k, p, q,
							q.Probability(tc.t), pt, q.FalsePositiveArea(tc.t), fp)
					}
				}
			}
		}
	}
	// Probing applies to every point, as dedup --multi-probe does.
	fr, _ := Frontier(0.8, 128, DefaultRecalls, 1)
	plain, _ := Frontier(0.8, 128, DefaultRecalls, 0)
	if len(fr) != len(plain) {
		t.Fatalf("probe 1: %d bandings; want %d", len(fr), len(plain))
	}
	for _, p := range fr {
		if p.Probe != 1 || !slices.Contains(plain, lsh.Params{Bands: p.Bands, Rows: p.Rows}) {
			t.Errorf("probe 1: %v; want a plain frontier banding with probe 1", p)
		}
	}
	// A recall no banding of 2 slots reaches is left out, not an error.
	if fr, err := Frontier(0.5, 2, []float64{0.5, 0.99999}, 0); err != nil || len(fr) != 1 {
		t.Errorf("k=2: %v, %v; want the one banding reaching 0.5", fr, err)
	}
	for _, bad := range []struct {
		t     float64
		k     int
		rs    []float64
		probe int
	}{{1, 128, DefaultRecalls, 0}, {0.8, 0, DefaultRecalls, 0}, {0.8, 128, []float64{1.5}, 0}, {0.8, 128, DefaultRecalls, 3}} {
		if _, err := Frontier(bad.t, bad.k, bad.rs, bad.probe); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("Frontier(%v, %d, %v, %d): %v; want ErrInvalidOptions", bad.t, bad.k, bad.rs, bad.probe, err)
		}
	}
}

func TestParseBandings(t *testing.T) {
	for _, tc := range []struct {
		in    string
		probe int
		want  []lsh.Params
		err   string
	}{
		{"16x6", 0, []lsh.Params{{Bands: 16, Rows: 6}}, ""},
		{"16x6, 20x5,9x13/p1", 0, []lsh.Params{{Bands: 16, Rows: 6}, {Bands: 20, Rows: 5}, {Bands: 9, Rows: 13, Probe: 1}}, ""},
		{"16x6,9x13/p0", 2, []lsh.Params{{Bands: 16, Rows: 6, Probe: 2}, {Bands: 9, Rows: 13}}, ""},
		{"", 0, nil, "empty list"},
		{"16", 0, nil, `"16": want BxR`},
		{"16x", 0, nil, "whole numbers"},
		{"x6", 0, nil, "whole numbers"},
		{"16x-6", 0, nil, "whole numbers"},
		{"1e3x6", 0, nil, "whole numbers"},
		{"0x6", 0, nil, "Bands = 0"},
		{"16x0", 0, nil, "Rows = 0"},
		{"16x6/p3", 0, nil, "Probe = 3"},
		{"16x1/p1", 0, nil, "less than Rows"},
		{"16x6/q1", 0, nil, "/p0, /p1 or /p2"},
		{"16x6,16x6", 0, nil, "given twice"},
		{"16x6,16x6/p0", 0, nil, "given twice"},
		{"9999999x6", 0, nil, "whole numbers"},
		{"65536x2", 0, nil, "at most 65536"},
	} {
		got, err := ParseBandings(tc.in, tc.probe)
		if tc.err != "" {
			if !errors.Is(err, ErrBandings) || !contains(err.Error(), tc.err) {
				t.Errorf("ParseBandings(%q): %v; want ErrBandings mentioning %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseBandings(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	many := "1x1"
	for i := 2; i <= MaxBandings+1; i++ {
		many += fmt.Sprintf(",%dx1", i)
	}
	if _, err := ParseBandings(many, 0); !errors.Is(err, ErrBandings) {
		t.Errorf("%d bandings: %v; want ErrBandings", MaxBandings+1, err)
	}
}

func contains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }

func FuzzParseBandings(f *testing.F) {
	for _, s := range []string{"16x6", "16x6,20x5", "9x13/p1", "x", "1x1/p", ",", "16x6,,2x2", "00016x006"} {
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, s string, probe int) {
		ps, err := ParseBandings(s, probe)
		if err != nil {
			if !errors.Is(err, ErrBandings) {
				t.Fatalf("%q: error %v does not wrap ErrBandings", s, err)
			}
			return
		}
		// Every banding is valid, and the labels read back to the same list.
		var labels []string
		for _, p := range ps {
			if err := p.Validate(); err != nil {
				t.Fatalf("%q gave invalid %v: %v", s, p, err)
			}
			labels = append(labels, Label(p))
		}
		again, err := ParseBandings(joinComma(labels), 0)
		if err != nil || !slices.Equal(again, ps) {
			t.Fatalf("%q: labels %v read back as %v, %v; want %v", s, labels, again, err, ps)
		}
	})
}

func joinComma(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(x)
	}
	return b.String()
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Threshold: 1}, "threshold 1; want 0 < t < 1"},
		{Options{Threshold: -0.5}, "threshold"},
		{Options{Threshold: math.NaN()}, "threshold"},
		{Options{Probe: 3}, "multi-probe level 3; want 0..2"},
		{Options{BucketCap: 1}, "bucket cap 1; want 2..65536"},
		{Options{BandWidth: 2}, "band width 2"},
		{Options{Recall: 1.5}, "recall target 1.5"},
		{Options{Precision: -1}, "precision target -1"},
		{Options{Memory: 1 << 20}, "want at least 16777216"},
		{Options{Workers: -1}, "workers -1"},
		{Options{Recalls: []float64{0}}, "recall level 0"},
		{Options{Bandings: []lsh.Params{{Bands: 0, Rows: 4}}}, "banding 0x4"},
		{Options{Bandings: []lsh.Params{{Bands: 2, Rows: 4}, {Bands: 2, Rows: 4}}}, "2x4 given twice"},
		{Options{Bandings: make([]lsh.Params, MaxBandings+1)}, "want at most 32"},
	} {
		err := tc.o.Validate()
		if !errors.Is(err, ErrInvalidOptions) || !contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want ErrInvalidOptions mentioning %q", tc.o, err, tc.want)
		}
	}
	var nilOpts *Options
	if err := nilOpts.Validate(); err != nil {
		t.Errorf("nil options: %v", err)
	}
	if o := (&Options{Recall: 0.97}).EnsureDefaults(); !slices.Contains(o.Recalls, 0.97) || len(o.Recalls) != len(DefaultRecalls)+1 {
		t.Errorf("recall target 0.97: levels %v; want the defaults and 0.97", o.Recalls)
	}
}

func TestRunErrors(t *testing.T) {
	c := familyCorpus(50, 16, 0, 5)
	data := c.file(t)
	truth := truthFor(c, 20, 6)
	ctx := context.Background()

	if _, err := Run(ctx, open(t, data), truth, &Options{Bandings: []lsh.Params{{Bands: 5, Rows: 4}}}); !errors.Is(err, ErrInvalidOptions) ||
		!contains(err.Error(), "reads 20 slots; the signatures have k = 16") {
		t.Errorf("too many slots: %v", err)
	}

	// An id of a truth pair that counts held by two records.
	i := slices.IndexFunc(truth.Pairs, func(p eval.LabeledPair) bool { return !(p.J < DefaultThreshold) })
	rep := *c
	rep.ids = slices.Clone(c.ids)
	at := slices.Index(c.ids, truth.Pairs[i].A)
	again := (at + 5) % len(c.ids)
	rep.ids[again] = truth.Pairs[i].A
	want := fmt.Sprintf("record %d and record %d", min(at, again), max(at, again))
	if _, err := Run(ctx, open(t, rep.file(t)), truth, &Options{Bandings: []lsh.Params{{Bands: 4, Rows: 4}}}); !errors.Is(err, ErrRepeatedID) ||
		!contains(err.Error(), want) {
		t.Errorf("repeated id: %v; want ErrRepeatedID naming %s", err, want)
	}
	// A repeated id outside the truth does not matter.
	rep.ids = slices.Clone(c.ids)
	rep.ids[7], rep.ids[9] = "same-unlabelled", "same-unlabelled"
	if _, err := Run(ctx, open(t, rep.file(t)), truth, &Options{Bandings: []lsh.Params{{Bands: 4, Rows: 4}}}); err != nil {
		t.Errorf("repeated id outside the truth: %v", err)
	}

	// SimHash fingerprints.
	var buf bytes.Buffer
	w, _ := sigfile.NewWriter(&buf, sigfile.SimHashHeader(shingle.Prose, sigfile.SimHashParams{}))
	w.Add([]byte("a"), []uint64{1})
	w.Close()
	if _, err := Run(ctx, open(t, buf.Bytes()), truth, nil); !errors.Is(err, ErrSignatures) {
		t.Errorf("simhash: %v; want ErrSignatures", err)
	}

	// A damaged signature file fails the run with sigfile's error.
	bad := slices.Clone(data)
	bad[len(bad)-40] ^= 1
	if _, err := Run(ctx, open(t, bad), truth, &Options{Bandings: []lsh.Params{{Bands: 4, Rows: 4}}}); !errors.Is(err, sigfile.ErrCorrupt) {
		t.Errorf("damaged file: %v; want sigfile.ErrCorrupt", err)
	}

	// Unsorted truth pairs are refused rather than miscounted.
	unsorted := &eval.PairFile{Pairs: slices.Clone(truth.Pairs)}
	slices.Reverse(unsorted.Pairs)
	if _, err := Run(ctx, open(t, data), unsorted, &Options{Bandings: []lsh.Params{{Bands: 4, Rows: 4}}}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("unsorted truth: %v; want ErrInvalidOptions", err)
	}

	// A cancelled context stops the run.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Run(cctx, open(t, data), truth, &Options{Bandings: []lsh.Params{{Bands: 4, Rows: 4}}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v; want context.Canceled", err)
	}
}

// TestNotes checks what the result says about the truth it was given.
func TestNotes(t *testing.T) {
	c := familyCorpus(200, 16, 0, 8)
	data := c.file(t)
	truth := truthFor(c, 100, 9)
	ctx := context.Background()
	opts := &Options{Threshold: 0.5, Bandings: []lsh.Params{{Bands: 4, Rows: 4}}}
	for _, tc := range []struct {
		threshold float64
		complete  bool
		note      string
	}{
		{0, false, "labelled sample"},
		{0.7, false, "J ≥ 0.7 only"},
		{0.5, true, ""},
		{0.3, true, ""},
	} {
		truth.Threshold = tc.threshold
		res, err := Run(ctx, open(t, data), truth, opts)
		if err != nil {
			t.Fatal(err)
		}
		text := res.String()
		if res.TruthComplete != tc.complete || tc.note != "" && !contains(text, tc.note) ||
			tc.complete == contains(text, "a lower bound") {
			t.Errorf("truth threshold %v: complete %v, text\n%s\nwant complete %v and %q", tc.threshold, res.TruthComplete, text, tc.complete, tc.note)
		}
	}
	if res, _ := Run(ctx, open(t, data), truth, opts); !contains(res.String(), "name an id the signatures do not hold") ||
		!contains(res.String(), "carry no similarity") {
		t.Errorf("missing ids and pairs without J not noted:\n%s", res)
	}
}
