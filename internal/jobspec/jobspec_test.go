package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/eval"
	"github.com/neardup/neardup/internal/sketch"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
)

// texts are two pairs of near-duplicate documents.
var texts = []string{
	"a stitch in time saves nine, as the old proverb says about small repairs made early",
	"a stitch in time saves nine, as the old proverb says about small repairs made soon",
	"rain in the mountains feeds the rivers that water the valley farms all summer long",
	"rain in the mountains feeds the rivers that water the valley fields all summer long",
}

func mustSpec(t testing.TB, s string) shingle.Spec {
	t.Helper()
	spec, err := shingle.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestVerifier: the three modes keep what the threshold says, with the
// exact similarity eval.Jaccard gives on the sorted feature sets.
func TestVerifier(t *testing.T) {
	for _, mode := range []Verify{VerifyExact, VerifyEstimate, VerifyNone} {
		job, err := (&Options{Threshold: 0.6, Verify: mode, Spec: mustSpec(t, "word:2")}).Job()
		if err != nil {
			t.Fatal(err)
		}
		sketch, _ := job.Sketch.New()
		sk, _ := sketch.NewSketcher()
		v, err := job.NewVerifier(sketch)
		if err != nil {
			t.Fatal(err)
		}
		if v.Exact() != (mode == VerifyExact) {
			t.Errorf("%s: Exact %v", mode, v.Exact())
		}
		sh := shingle.MustNew(job.Sketch.Spec)
		for i := range 4 {
			for j := i + 1; j < 4; j++ {
				sa, _ := sk.Sign(nil, []byte(texts[i]))
				sb, _ := sk.Sign(nil, []byte(texts[j]))
				var fa, fb []uint64
				if v.Exact() {
					fa, fb = v.Features(nil, []byte(texts[i])), v.Features([]uint64{1, 2, 3}, []byte(texts[j]))
					if want := eval.Normalize(sh.AppendFeatures(nil, []byte(texts[i]))); !slices.Equal(fa, want) {
						t.Fatalf("Features(%d) is not the sorted set", i)
					}
				}
				d, ok := v.Verify(sa, sb, fa, fb)
				est := sketch.Similarity(sa, sb)
				if d.Est != est {
					t.Errorf("%s %d-%d: Est %v; want %v", mode, i, j, d.Est, est)
				}
				switch mode {
				case VerifyExact:
					want := eval.Jaccard(fa, fb)
					if d.Exact != want || ok != (want >= 0.6) || d.Sim() != want {
						t.Errorf("exact %d-%d: %+v %v; want exact %v", i, j, d, ok, want)
					}
				case VerifyEstimate:
					if d.Exact != -1 || ok != (est >= 0.6) || d.Sim() != est {
						t.Errorf("estimate %d-%d: %+v %v", i, j, d, ok)
					}
				case VerifyNone:
					if d.Exact != -1 || !ok {
						t.Errorf("none %d-%d: %+v %v; want kept", i, j, d, ok)
					}
				}
			}
		}
		co := job.ClusterOptions()
		if want := map[Verify]float64{VerifyExact: 0.6, VerifyEstimate: 0.6, VerifyNone: 0}[mode]; co.Threshold != want {
			t.Errorf("%s: cluster floor %v; want %v", mode, co.Threshold, want)
		}
	}
}

// TestBanding: explicit bands win, else lsh.ForRecall; probe is added
// either way; the pairing and the ranges are enforced.
func TestBanding(t *testing.T) {
	fr, _ := lsh.ForRecall(0.8, 128, 0.99)
	for _, c := range []struct {
		bands, rows, probe int
		k                  int
		want               lsh.Params
		err                bool
	}{
		{0, 0, 0, 128, fr, false},
		{0, 0, 1, 128, lsh.Params{Bands: fr.Bands, Rows: fr.Rows, Probe: 1}, false},
		{8, 4, 0, 128, lsh.Params{Bands: 8, Rows: 4}, false},
		{8, 4, 2, 128, lsh.Params{Bands: 8, Rows: 4, Probe: 2}, false},
		{8, 0, 0, 128, lsh.Params{}, true},
		{0, 4, 0, 128, lsh.Params{}, true},
		{-1, 4, 0, 128, lsh.Params{}, true},
		{8, 4, -1, 128, lsh.Params{}, true},
		{8, 4, 3, 128, lsh.Params{}, true},
		{40, 4, 0, 128, lsh.Params{}, true}, // 160 slots > k
		{0, 0, 0, 1, lsh.Params{}, true},    // no banding of 1 slot reaches 0.99 at 0.8
	} {
		got, err := Banding(c.bands, c.rows, c.probe, 0.8, c.k, 0.99)
		if c.err != (err != nil) || !c.err && got != c.want {
			t.Errorf("Banding(%d, %d, %d, k=%d) = %v, %v; want %v (error %v)", c.bands, c.rows, c.probe, c.k, got, err, c.want, c.err)
		}
		if err != nil && !errors.Is(err, ErrInvalidOptions) && !errors.Is(err, lsh.ErrInvalidParams) {
			t.Errorf("Banding(%d, %d, %d): %v wraps neither sentinel", c.bands, c.rows, c.probe, err)
		}
	}
}

// TestValidateRanges: every numeric option out of range is refused, naming
// the value; the defaults are valid.
func TestValidateRanges(t *testing.T) {
	if _, err := (&Options{}).Job(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, c := range []struct {
		name string
		o    Options
		msg  string
	}{
		{"threshold 1", Options{Threshold: 1}, "threshold 1"},
		{"threshold -0.1", Options{Threshold: -0.1}, "threshold -0.1"},
		{"threshold 1.5", Options{Threshold: 1.5}, "threshold 1.5"},
		{"recall 1", Options{Recall: 1}, "recall 1"},
		{"recall -1", Options{Recall: -1}, "recall -1"},
		{"bucket cap 1", Options{BucketCap: 1}, "bucket cap 1"},
		{"bucket cap -1", Options{BucketCap: -1}, "bucket cap -1"},
		{"bucket cap huge", Options{BucketCap: lsh.MaxCap + 1}, "bucket cap 65537"},
		{"workers", Options{Workers: MaxWorkers + 1}, "workers 1025"},
		{"memory", Options{Memory: MinMemory - 1}, "memory 16777215"},
		{"bands", Options{Bands: lsh.Params{Bands: 40, Rows: 4}}, "160 slots"},
		{"verify", Options{Verify: 7}, "verify 7"},
		{"cluster", Options{Cluster: 7}, "cluster 7"},
	} {
		_, err := c.o.Job()
		if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v; want ErrInvalidOptions naming %q", c.name, err, c.msg)
		}
	}
	for _, chk := range []error{CheckThreshold(0), CheckRecall(0), CheckBucketCap(0), CheckWorkers(-1), CheckMemory(0)} {
		if !errors.Is(chk, ErrInvalidOptions) {
			t.Errorf("a zero (or negative) value passed its check: %v", chk)
		}
	}
	for _, ok := range []error{CheckThreshold(0.01), CheckThreshold(0.99), CheckRecall(0.5), CheckBucketCap(2), CheckBucketCap(lsh.MaxCap),
		CheckWorkers(0), CheckWorkers(MaxWorkers), CheckMemory(MinMemory)} {
		if ok != nil {
			t.Errorf("a value in range was refused: %v", ok)
		}
	}
}

// TestJobJSON: a Job survives encoding/json unchanged (neardup-beam ships it
// to its workers that way), keyed specs and field policies included.
func TestJobJSON(t *testing.T) {
	var key shingle.Key
	for i := range key {
		key[i] = byte(i)
	}
	spec := mustSpec(t, "char:5")
	spec.Key = &key
	keep, _ := cluster.ParsePolicy("field:score")
	for _, o := range []Options{{}, {Spec: spec, Params: minhash.Params{K: 64, Scheme: minhash.KHash, Bits: 8, Seed: 5},
		Threshold: 0.6, Bands: lsh.Params{Bands: 8, Rows: 4, Probe: 1}, BucketCap: 9, Verify: VerifyNone, Cluster: Star, Keep: keep}} {
		job, err := o.Job()
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		var back Job
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, job) {
			t.Errorf("JSON round trip: got %+v; want %+v", back, job)
		}
	}
}

// TestPairLines: golden lines, the docid encoding of ids, and the row order.
func TestPairLines(t *testing.T) {
	for _, c := range []struct {
		a, b string
		v    Verdict
		want string
	}{
		{"x", "y", Verdict{Est: 0.8125, Exact: 0.8}, "x\ty\t0.812500\t0.800000\n"},
		{"y", "x", Verdict{Est: 1, Exact: -1}, "x\ty\t1.000000\t-\n"},
		{"#a", "b", Verdict{Est: 0.9, Exact: 1}, "\"#a\"\tb\t0.900000\t1.000000\n"},
		{"a\tb", `q"`, Verdict{Est: 0.5, Exact: 0.5}, "\"a\\tb\"\t\"q\\\"\"\t0.500000\t0.500000\n"},
		{"", "\xff", Verdict{Est: 0.123456789, Exact: -1}, "\t\xff\t0.123457\t-\n"},
	} {
		got := string(NewPairRow([]byte(c.a), []byte(c.b), 3, 9, c.v).AppendLine(nil))
		if got != c.want {
			t.Errorf("line of %q, %q = %q; want %q", c.a, c.b, got, c.want)
		}
	}
	rows := []PairRow{
		NewPairRow([]byte("b"), []byte("a"), 5, 6, Verdict{}),
		NewPairRow([]byte("a"), []byte("b"), 1, 2, Verdict{}),
		NewPairRow([]byte("a"), []byte("a"), 3, 4, Verdict{}),
		NewPairRow([]byte("a"), []byte("a"), 3, 2, Verdict{}),
	}
	slices.SortFunc(rows, ComparePairRows)
	var order []uint64
	for _, r := range rows {
		order = append(order, r.A, r.B)
	}
	if want := []uint64{3, 2, 3, 4, 1, 2, 5, 6}; !slices.Equal(order, want) {
		t.Errorf("row order %v; want %v", order, want)
	}
}

// TestClusterLineIsJSON: AppendClusterLine writes what encoding/json writes
// for the ClusterLine (HTML escaping off), whatever the ids.
func TestClusterLineIsJSON(t *testing.T) {
	ids := []string{"a", "#b", "<x>&", "tab\t\"q\"", "\xff\xfe", "\u2028", "ünï", ""}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 50 {
		var members [][]byte
		for range 1 + rng.IntN(4) {
			members = append(members, []byte(ids[rng.IntN(len(ids))]))
		}
		checkClusterLine(t, n, members[rng.IntN(len(members))], members)
	}
}

func checkClusterLine(t *testing.T, n int, kept []byte, members [][]byte) {
	t.Helper()
	line := ClusterLine{Cluster: n, Size: len(members), Kept: string(kept)}
	for _, m := range members {
		line.Members = append(line.Members, string(m))
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(line); err != nil {
		t.Fatal(err)
	}
	if got := AppendClusterLine([]byte("x"), n, kept, members); string(got) != "x"+want.String() {
		t.Fatalf("AppendClusterLine = %q; want %q", got[1:], want.String())
	}
}

// FuzzClusterLine: AppendClusterLine equals encoding/json for any ids.
func FuzzClusterLine(f *testing.F) {
	f.Add(3, "a", "b\xff", "<&>")
	f.Add(0, "", "\u2028", "\"")
	f.Fuzz(func(t *testing.T, n int, a, b, c string) {
		checkClusterLine(t, n, []byte(b), [][]byte{[]byte(a), []byte(b), []byte(c)})
	})
}

// TestTopBuckets: the largest shared buckets of sorted entries, fed in any
// chunks, are the brute-force answer.
func TestTopBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var entries []uint64
	for range 5000 {
		entries = append(entries, sketch.PackEntry(uint64(rng.IntN(300)), uint32(rng.IntN(2000))))
	}
	entries = append(entries, entries[:50]...) // repeats count once
	slices.Sort(entries)
	sizes := map[uint64]int{}
	first := map[uint64]uint32{}
	for i, e := range entries {
		if i > 0 && e == entries[i-1] {
			continue
		}
		k := e &^ (1<<sketch.EntryDocBits - 1)
		if sizes[k] == 0 {
			first[k] = sketch.EntryDoc(e)
		}
		sizes[k]++
	}
	var want []lsh.Bucket
	for k, s := range sizes {
		if s > 1 {
			want = append(want, lsh.Bucket{Key: k, Size: s, First: first[k]})
		}
	}
	slices.SortFunc(want, CompareBuckets)
	want = want[:lsh.DefaultLargest]
	for _, chunk := range []int{1, 7, 4096, len(entries)} {
		var tb TopBuckets
		for i := 0; i < len(entries); i += chunk {
			tb.Add(entries[i:min(i+chunk, len(entries))])
		}
		if got := tb.Buckets(); !slices.Equal(got, want) {
			t.Errorf("chunks of %d: %v; want %v", chunk, got, want)
		}
	}
}

// TestReport: the configuration, the histogram bins and the encoding.
func TestReport(t *testing.T) {
	o := (&Options{Verify: VerifyExact, Workers: 3}).EnsureDefaults()
	job, err := o.Job()
	if err != nil {
		t.Fatal(err)
	}
	rep := NewReport("tool", []string{"in"}, o, &job)
	if c := rep.Config; c.Bands != job.Sketch.Bands.Bands || c.Workers != 3 || c.MemoryBytes != DefaultMemory || c.Verify != "exact" ||
		rep.ExpectedRecall != job.Sketch.Bands.Probability(job.Threshold) {
		t.Errorf("config %+v, recall %v", c, rep.ExpectedRecall)
	}
	for _, v := range []Verdict{{Est: 0, Exact: 0.049}, {Est: 0.05, Exact: 1}, {Est: 0.999, Exact: 0.95}, {Est: 1, Exact: 1}} {
		rep.PairSim.Add(v)
	}
	if e, x := rep.PairSim.Estimate, rep.PairSim.Exact; e[0] != 1 || e[1] != 1 || e[19] != 2 || x[0] != 1 || x[19] != 3 {
		t.Errorf("histogram %v / %v", e, x)
	}
	data, err := EncodeReport(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"largest": []`, `"top": []`, `"exact": [`, "\n}\n"} {
		if !strings.Contains(string(data), want) && !strings.HasSuffix(string(data), want) {
			t.Errorf("report.json lacks %q", want)
		}
	}
	if h := NewHistogram(false); h.Exact != nil || len(h.Lower) != HistogramBins || h.Lower[1] != 0.05 {
		t.Errorf("NewHistogram(false) = %+v", h)
	}
	if got := sketch.FormatBucketKey(0xdeadbeef); got != "deadbeef00000000" {
		t.Errorf("FormatBucketKey = %s", got)
	}
}
