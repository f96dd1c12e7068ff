package eval

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want []uint64
	}{
		{nil, nil},
		{[]uint64{}, []uint64{}},
		{[]uint64{7}, []uint64{7}},
		{[]uint64{1, 2, 3}, []uint64{1, 2, 3}},
		{[]uint64{3, 1, 2}, []uint64{1, 2, 3}},
		{[]uint64{2, 2, 2}, []uint64{2}},
		{[]uint64{5, 1, 5, 1, 3, math.MaxUint64, 0}, []uint64{0, 1, 3, 5, math.MaxUint64}},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.in)
		got := Normalize(in)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Normalize(%v) = %v; want %v", tt.in, got, tt.want)
		}
		if len(got) > 0 && &got[0] != &in[0] {
			t.Errorf("Normalize(%v) does not alias its argument", tt.in)
		}
		if !IsSet(got) {
			t.Errorf("IsSet(Normalize(%v)) = false; want true", tt.in)
		}
		if want := slices.Equal(tt.in, tt.want); IsSet(tt.in) != want {
			t.Errorf("IsSet(%v) = %v; want %v", tt.in, !want, want)
		}
	}
}

func TestOverlapJaccard(t *testing.T) {
	tests := []struct {
		a, b    []uint64
		overlap int
		jaccard float64
	}{
		{nil, nil, 0, 0},
		{nil, []uint64{1}, 0, 0},
		{[]uint64{1, 2, 3}, []uint64{1, 2, 3}, 3, 1},
		{[]uint64{1, 2, 3}, []uint64{4, 5}, 0, 0},
		{[]uint64{1, 2, 3, 4}, []uint64{2, 4}, 2, 0.5},
		{[]uint64{1, 2, 3, 4, 5}, []uint64{1, 2, 3, 4, 6}, 4, 4.0 / 6},
		{[]uint64{0, math.MaxUint64}, []uint64{math.MaxUint64}, 1, 0.5},
	}
	for _, tt := range tests {
		for _, swap := range []bool{false, true} {
			a, b := tt.a, tt.b
			if swap {
				a, b = b, a
			}
			if got := Overlap(a, b); got != tt.overlap {
				t.Errorf("Overlap(%v, %v) = %d; want %d", a, b, got, tt.overlap)
			}
			if got := Jaccard(a, b); got != tt.jaccard {
				t.Errorf("Jaccard(%v, %v) = %v; want %v", a, b, got, tt.jaccard)
			}
		}
	}
}

// TestOverlapRandom: Overlap counts what a map of a's values counts, on
// random sets of 0–70 values drawn from ranges narrow (mostly shared) to
// wide (mostly not), with the extremes 0 and MaxUint64 thrown in.
func TestOverlapRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	set := func(n int, span uint64) []uint64 {
		s := make([]uint64, n)
		for i := range s {
			switch rng.IntN(20) {
			case 0:
				s[i] = 0
			case 1:
				s[i] = math.MaxUint64
			default:
				s[i] = rng.Uint64N(span)
			}
		}
		return Normalize(s)
	}
	for _, span := range []uint64{4, 64, 1 << 10, math.MaxUint64} {
		for range 2000 {
			a, b := set(rng.IntN(71), span), set(rng.IntN(71), span)
			in := make(map[uint64]bool, len(a))
			for _, v := range a {
				in[v] = true
			}
			want := 0
			for _, v := range b {
				if in[v] {
					want++
				}
			}
			if got := Overlap(a, b); got != want {
				t.Fatalf("Overlap(%v, %v) = %d; want %d", a, b, got, want)
			}
		}
	}
}

// TestOverlapAtLeast: OverlapAtLeast reports whether Overlap is at least k,
// and returns Overlap when it is, for every k from 0 to past both sizes, on
// random sets as TestOverlapRandom's, on a set against itself and against
// its halves (the overlap exactly at k), and on empty sets.
func TestOverlapAtLeast(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 12))
	set := func(n int, span uint64) []uint64 {
		s := make([]uint64, n)
		for i := range s {
			s[i] = rng.Uint64N(span)
		}
		return Normalize(s)
	}
	check := func(a, b []uint64) {
		t.Helper()
		want := Overlap(a, b)
		for k := 0; k <= max(len(a), len(b))+1; k++ {
			n, ok := OverlapAtLeast(a, b, k)
			if ok != (want >= k) || ok && n != want {
				t.Fatalf("OverlapAtLeast(%v, %v, %d) = %d, %v; Overlap %d", a, b, k, n, ok, want)
			}
			if !ok && n >= k {
				t.Fatalf("OverlapAtLeast(%v, %v, %d) = %d, false", a, b, k, n)
			}
		}
	}
	check(nil, nil)
	check(nil, []uint64{1})
	for _, span := range []uint64{4, 64, 1 << 10, math.MaxUint64} {
		for range 1000 {
			a, b := set(rng.IntN(71), span), set(rng.IntN(71), span)
			check(a, b)
			check(a, a)
			check(a, a[:len(a)/2])
			check(a[len(a)/2:], a)
		}
	}
}

func TestAllPairsErrors(t *testing.T) {
	good := [][]uint64{{1, 2}, {2, 3}}
	for _, th := range []float64{0, -0.5, 1.0000001, 2, math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := AllPairs(good, th, nil)
		if !errors.Is(err, ErrThreshold) {
			t.Errorf("AllPairs(threshold %v) error = %v; want ErrThreshold", th, err)
		}
		if err := AllPairsFunc(good, th, nil, func(Pair) bool { return true }); !errors.Is(err, ErrThreshold) {
			t.Errorf("AllPairsFunc(threshold %v) error = %v; want ErrThreshold", th, err)
		}
	}
	c, err := NewCollection(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AllPairs(0); !errors.Is(err, ErrThreshold) {
		t.Errorf("Collection.AllPairs(0) error = %v; want ErrThreshold", err)
	}
	if _, err := new(Collection).AllPairs(math.NaN()); !errors.Is(err, ErrThreshold) {
		t.Errorf("zero Collection.AllPairs(NaN) error = %v; want ErrThreshold", err)
	}

	for _, bad := range [][][]uint64{
		{{1, 2}, {3, 2}},
		{{1, 2}, {2, 2}},
		{{}, {5, 6, 6, 7}},
	} {
		_, err := AllPairs(bad, 0.5, nil)
		if !errors.Is(err, ErrNotSet) {
			t.Errorf("AllPairs(%v) error = %v; want ErrNotSet", bad, err)
		} else if !strings.Contains(err.Error(), "document 1") {
			t.Errorf("AllPairs(%v) error = %q; want it to name document 1", bad, err)
		}
	}
	if _, err := AllPairs(good, 0.5, &Options{Workers: -1}); !errors.Is(err, ErrOptions) {
		t.Errorf("AllPairs(Workers: -1) error = %v; want ErrOptions", err)
	}
}

func TestOptionsDefaults(t *testing.T) {
	var nilOpts *Options
	if err := nilOpts.Validate(); err != nil {
		t.Errorf("nil Options Validate() = %v; want nil", err)
	}
	if got, want := nilOpts.EnsureDefaults().Workers, runtime.GOMAXPROCS(0); got != want {
		t.Errorf("nil Options EnsureDefaults().Workers = %d; want %d", got, want)
	}
	o := &Options{Workers: 3}
	if got := o.EnsureDefaults(); got.Workers != 3 || got == o {
		t.Errorf("EnsureDefaults() = %+v (same pointer: %v); want a copy with Workers 3", got, got == o)
	}
}

// TestEmptySets checks that empty sets, and empty inputs, never pair.
func TestEmptySets(t *testing.T) {
	for _, sets := range [][][]uint64{nil, {}, {{}}, {{}, {}}, {nil, {}, nil}} {
		for _, th := range []float64{0.01, 1} {
			got, err := AllPairs(sets, th, nil)
			if err != nil || len(got) != 0 {
				t.Errorf("AllPairs(%v, %v) = %v, %v; want no pairs, nil", sets, th, got, err)
			}
		}
	}
	sets := [][]uint64{{}, {1, 2}, nil, {1, 2}, {}, {2}}
	got, err := AllPairs(sets, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pair{{1, 3, 2, 1}, {1, 5, 1, 0.5}, {3, 5, 1, 0.5}}
	if !slices.Equal(got, want) {
		t.Errorf("AllPairs(%v, 0.5) = %v; want %v", sets, got, want)
	}
	if c, _ := NewCollection(sets, nil); c.Len() != len(sets) || c.Features() != 5 || c.Tokens() != 2 {
		t.Errorf("Len, Features, Tokens = %d, %d, %d; want %d, 5, 2", c.Len(), c.Features(), c.Tokens(), len(sets))
	}
	var zero Collection
	if got, err := zero.AllPairs(0.5); err != nil || len(got) != 0 {
		t.Errorf("zero Collection.AllPairs(0.5) = %v, %v; want no pairs, nil", got, err)
	}
}

// TestIdenticalAndSubsets checks identical sets, subsets and threshold 1.
func TestIdenticalAndSubsets(t *testing.T) {
	seq := func(lo, hi uint64) []uint64 {
		var s []uint64
		for v := lo; v < hi; v++ {
			s = append(s, v*0x9e3779b97f4a7c15) // spread, so order by value ≠ by index
		}
		return Normalize(s)
	}
	sets := [][]uint64{
		seq(0, 10), // 0
		seq(0, 10), // 1: identical to 0
		seq(0, 5),  // 2: subset of 0, J = 0.5
		seq(0, 8),  // 3: subset of 0, J = 0.8; 2 ⊂ 3, J = 5/8
		seq(100, 110),
		seq(100, 110), // 5: identical to 4
		seq(100, 101), // 6: one element, subset of 4 and 5, J = 0.1
	}
	tests := []struct {
		t    float64
		want []Pair
	}{
		{1, []Pair{{0, 1, 10, 1}, {4, 5, 10, 1}}},
		{0.8, []Pair{{0, 1, 10, 1}, {0, 3, 8, 0.8}, {1, 3, 8, 0.8}, {4, 5, 10, 1}}},
		{0.5, []Pair{{0, 1, 10, 1}, {0, 2, 5, 0.5}, {0, 3, 8, 0.8}, {1, 2, 5, 0.5}, {1, 3, 8, 0.8}, {2, 3, 5, 5.0 / 8}, {4, 5, 10, 1}}},
		{0.1, []Pair{{0, 1, 10, 1}, {0, 2, 5, 0.5}, {0, 3, 8, 0.8}, {1, 2, 5, 0.5}, {1, 3, 8, 0.8}, {2, 3, 5, 5.0 / 8},
			{4, 5, 10, 1}, {4, 6, 1, 0.1}, {5, 6, 1, 0.1}}},
	}
	for _, tt := range tests {
		for _, w := range []int{1, 2, 7} {
			got, err := AllPairs(sets, tt.t, &Options{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("t=%v, workers=%d: got %v; want %v", tt.t, w, got, tt.want)
			}
		}
	}
}

// TestBounds checks the filters' integer bounds against their definitions by
// exhaustive search, for thresholds that are exact small fractions (where
// rounding bites) and random ones.
func TestBounds(t *testing.T) {
	var ths []float64
	for u := 1; u <= 30; u++ {
		for o := 1; o <= u; o++ {
			ths = append(ths, float64(o)/float64(u))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		ths = append(ths, 1-rng.Float64()) // (0, 1]
	}
	ths = append(ths, math.SmallestNonzeroFloat64, 1e-9, math.Nextafter(1, 0))
	for _, th := range ths {
		b := bounds{th}
		for s := 2; s <= 120; s++ {
			want := s
			for o := 1; o <= s; o++ {
				if float64(o)/float64(s-o) >= th {
					want = o
					break
				}
			}
			if got := b.minOverlap(s); got != want {
				t.Fatalf("t=%v: minOverlap(%d) = %d; want %d", th, s, got, want)
			}
		}
		for n := 1; n <= 120; n++ {
			want := n
			for m := 1; m <= n; m++ {
				if float64(m)/float64(n) >= th {
					want = m
					break
				}
			}
			if got := b.minSize(n); got != want {
				t.Fatalf("t=%v: minSize(%d) = %d; want %d", th, n, got, want)
			}
			if p := b.probePrefix(n); p < 1 || p > n {
				t.Fatalf("t=%v: probePrefix(%d) = %d; want in [1, %d]", th, n, p, n)
			}
			if p := b.indexPrefix(n); p < 1 || p > n {
				t.Fatalf("t=%v: indexPrefix(%d) = %d; want in [1, %d]", th, n, p, n)
			}
		}
	}
	// Large sizes, where t/(1+t)·s loses more bits.
	for _, th := range []float64{0.3, 0.5, 0.7, 0.8, 0.9, 1} {
		b := bounds{th}
		for _, s64 := range []uint64{1 << 20, 1<<31 - 3, 1 << 32} {
			if s64 > math.MaxInt {
				continue // 32-bit platform
			}
			s := int(s64)
			o := b.minOverlap(s)
			if !b.accept(o, s-o) || o > 1 && b.accept(o-1, s-o+1) {
				t.Errorf("t=%v: minOverlap(%d) = %d is not the least accepted overlap", th, s, o)
			}
		}
	}
}

// TestExactThreshold plants pairs whose Jaccard is exactly the threshold,
// for every threshold o/u with u ≤ 40 and every split of the union, and
// checks that each pair is found at t and not at the next float above t.
func TestExactThreshold(t *testing.T) {
	type plant struct{ o, a, b int } // overlap and the two sizes
	byT := map[float64][]plant{}
	var naiveLoses int // cases where the float formulas would lose the pair
	for u := 1; u <= 40; u++ {
		for o := 1; o <= u; o++ {
			th := float64(o) / float64(u)
			for a := o; a <= u; a++ {
				b := u - a + o // |B| = |A∪B| − |A| + |A∩B|
				if b < o || b > a {
					continue
				}
				byT[th] = append(byT[th], plant{o, a, b})
				if math.Ceil(th/(1+th)*float64(a+b)) > float64(o) || math.Ceil(th*float64(a)) > float64(b) {
					naiveLoses++
				}
			}
		}
	}
	if naiveLoses == 0 {
		t.Fatal("no planted pair is at risk from float rounding; the test lost its point")
	}
	thresholds := make([]float64, 0, len(byT))
	for th := range byT {
		thresholds = append(thresholds, th)
	}
	slices.Sort(thresholds)
	for _, th := range thresholds {
		// One collection per threshold: every plant as two sets, from one
		// feature sequence shuffled so that token order is not value order.
		rng := rand.New(rand.NewPCG(math.Float64bits(th), 9))
		var sets [][]uint64
		next := uint64(0)
		fresh := func(k int) []uint64 {
			s := make([]uint64, k)
			for i := range s {
				next++
				s[i] = next * 0x9e3779b97f4a7c15
			}
			return s
		}
		var wantPairs []Pair
		for _, p := range byT[th] {
			shared := fresh(p.o)
			a := Normalize(append(slices.Clone(shared), fresh(p.a-p.o)...))
			b := Normalize(append(slices.Clone(shared), fresh(p.b-p.o)...))
			i := len(sets)
			if rng.IntN(2) == 0 {
				sets = append(sets, a, b)
			} else {
				sets = append(sets, b, a)
			}
			wantPairs = append(wantPairs, Pair{int32(i), int32(i + 1), int32(p.o), th})
		}
		got, err := AllPairs(sets, th, &Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, wantPairs) {
			comparePairs(t, fmt.Sprintf("t=%v (exact)", th), got, wantPairs)
		}
		if th < 1 {
			above := math.Nextafter(th, 2)
			got, err := AllPairs(sets, above, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 0 {
				t.Errorf("t=%v: got %d pairs, e.g. %+v; want none above J = %v", above, len(got), got[0], th)
			}
		}
	}
}

// TestHugeSet puts one very large set among small ones.
func TestHugeSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const hugeN = 200_000
	huge := make([]uint64, hugeN)
	for i := range huge {
		huge[i] = rng.Uint64()
	}
	sets := [][]uint64{}
	for i := range 600 {
		n := 1 + rng.IntN(400)
		var s []uint64
		if i%3 == 0 { // drawn from the huge set
			for range n {
				s = append(s, huge[rng.IntN(hugeN)])
			}
		} else { // from a small shared universe: many overlaps
			for range n {
				s = append(s, uint64(rng.IntN(1500)))
			}
		}
		sets = append(sets, Normalize(s))
	}
	sets = append(sets[:300], append([][]uint64{Normalize(slices.Clone(huge))}, sets[300:]...)...)
	const hugeID = 300
	want := bruteForce(sets, 0.0005)
	for _, th := range []float64{0.0005, 0.002, 0.3, 0.8} {
		got, err := AllPairs(sets, th, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantT := filterPairs(want, th)
		comparePairs(t, fmt.Sprintf("t=%v", th), got, wantT)
		withHuge := 0
		for _, p := range wantT {
			if p.A == hugeID || p.B == hugeID {
				withHuge++
			}
		}
		// Sets drawn from the huge one are subsets: J = |s|/hugeN.
		if th == 0.0005 && withHuge == 0 {
			t.Errorf("t=%v: no pair with the huge set; want the subsets of >= 100 features", th)
		}
	}
}

// TestRandomSmall compares the join with the brute force on many small random
// corpora over a small universe (dense overlaps), at thresholds that are
// exact fractions and random values, with varied worker counts.
func TestRandomSmall(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	iters := 300
	if testing.Short() {
		iters = 60
	}
	for it := range iters {
		nsets := 2 + rng.IntN(60)
		universe := 1 + rng.IntN(80)
		sets := make([][]uint64, nsets)
		for i := range sets {
			if rng.IntN(8) == 0 && i > 0 { // a near copy of an earlier set
				s := slices.Clone(sets[rng.IntN(i)])
				for k := rng.IntN(3); k > 0; k-- {
					s = append(s, uint64(rng.IntN(universe)))
				}
				sets[i] = Normalize(s)
				continue
			}
			n := rng.IntN(min(universe, 40) + 1)
			s := make([]uint64, n)
			for k := range s {
				s[k] = uint64(rng.IntN(universe)) << (rng.IntN(2) * 40)
			}
			sets[i] = Normalize(s)
		}
		all := bruteForce(sets, math.SmallestNonzeroFloat64)
		ths := []float64{1 - rng.Float64(), 1}
		if len(all) > 0 {
			ths = append(ths, all[rng.IntN(len(all))].Jaccard) // exactly some pair's J
		}
		for _, th := range ths {
			got, err := AllPairs(sets, th, &Options{Workers: 1 + rng.IntN(4)})
			if err != nil {
				t.Fatal(err)
			}
			comparePairs(t, fmt.Sprintf("iteration %d, t=%v", it, th), got, filterPairs(all, th))
			if t.Failed() {
				t.Fatalf("sets: %v", sets)
			}
		}
	}
}

// plantedCorpus returns n random sets with many near-duplicates.
func plantedCorpus(n int, seed uint64) [][]uint64 {
	rng := rand.New(rand.NewPCG(seed, seed))
	sets := make([][]uint64, n)
	for i := range sets {
		if i > 0 && rng.IntN(3) == 0 {
			src := sets[rng.IntN(i)]
			var s []uint64
			for _, f := range src {
				if rng.IntN(10) > 0 {
					s = append(s, f)
				}
			}
			for k := rng.IntN(len(src)/5 + 1); k > 0; k-- {
				s = append(s, rng.Uint64())
			}
			sets[i] = Normalize(s)
			continue
		}
		s := make([]uint64, rng.IntN(300))
		for k := range s {
			s[k] = uint64(rng.IntN(20000)) * 0x9e3779b97f4a7c15
		}
		sets[i] = Normalize(s)
	}
	return sets
}

// TestWorkersIdentical checks that results, and the streamed sequence, are
// identical for any number of workers.
func TestWorkersIdentical(t *testing.T) {
	n := 2000
	if raceEnabled {
		n = 700
	}
	sets := plantedCorpus(n, 6)
	for _, th := range []float64{0.3, 0.5, 0.8} {
		var ref []Pair
		var refSeq []Pair
		for _, w := range []int{1, 2, 7, 16} {
			got, err := AllPairs(sets, th, &Options{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			var seq []Pair
			if err := AllPairsFunc(sets, th, &Options{Workers: w}, func(p Pair) bool {
				seq = append(seq, p)
				return true
			}); err != nil {
				t.Fatal(err)
			}
			if ref == nil {
				ref, refSeq = got, seq
				if len(ref) == 0 {
					t.Fatalf("t=%v: no pairs; the corpus does not exercise the join", th)
				}
				sorted := slices.Clone(seq)
				slices.SortFunc(sorted, cmpPair)
				comparePairs(t, fmt.Sprintf("t=%v: AllPairsFunc sorted vs AllPairs", th), sorted, ref)
				continue
			}
			comparePairs(t, fmt.Sprintf("t=%v, workers=%d", th, w), got, ref)
			if !slices.Equal(seq, refSeq) {
				t.Errorf("t=%v, workers=%d: AllPairsFunc sequence differs from workers=1", th, w)
			}
		}
	}
}

// TestAllPairsFuncStop checks that returning false (or panicking) stops the
// stream at once and that no worker goroutine outlives the call.
func TestAllPairsFuncStop(t *testing.T) {
	sets := plantedCorpus(3000, 8)
	c, err := NewCollection(sets, &Options{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := c.AllPairs(0.3)
	if len(all) < 100 {
		t.Fatalf("only %d pairs; want >= 100", len(all))
	}
	before := runtime.NumGoroutine()
	for _, stopAt := range []int{1, 3, 50} {
		calls := 0
		err := c.AllPairsFunc(0.3, func(Pair) bool {
			calls++
			return calls < stopAt
		})
		if err != nil || calls != stopAt {
			t.Errorf("stop at %d: %d calls, error %v; want %d calls, nil", stopAt, calls, err, stopAt)
		}
	}
	func() {
		defer func() {
			if r := recover(); r != "stop" {
				t.Errorf("recovered %v; want the yield's panic", r)
			}
		}()
		c.AllPairsFunc(0.3, func(Pair) bool { panic("stop") })
	}()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after stopping; want %d", n, before)
	}
}

// TestCollectionOrder checks the remap: tokens ascend with global document
// frequency, ties by feature value, identically for any number of workers.
func TestCollectionOrder(t *testing.T) {
	sets := plantedCorpus(2000, 10)
	freq := map[uint64]int{}
	for _, s := range sets {
		for _, f := range s {
			freq[f]++
		}
	}
	var ref *Collection
	for _, w := range []int{1, 2, 7} {
		c, err := NewCollection(sets, &Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if c.Tokens() != len(freq) {
			t.Fatalf("Tokens() = %d; want %d distinct features", c.Tokens(), len(freq))
		}
		// Recover each token's feature and check the order of all tokens.
		feature := make([]uint64, c.Tokens())
		for p, id := range c.ids {
			toks := c.toks[c.offs[p]:c.offs[p+1]]
			if !slices.IsSorted(toks) || len(toks) != len(sets[id]) {
				t.Fatalf("workers=%d: set %d tokens not ascending or wrong length", w, id)
			}
			// sets[id] sorted by (freq, value) must map onto toks in order.
			byRank := slices.Clone(sets[id])
			slices.SortFunc(byRank, func(a, b uint64) int {
				if freq[a] != freq[b] {
					return freq[a] - freq[b]
				}
				return cmpU64(a, b)
			})
			for k, f := range byRank {
				feature[toks[k]] = f
			}
		}
		for tk := 1; tk < len(feature); tk++ {
			a, b := feature[tk-1], feature[tk]
			if freq[a] > freq[b] || freq[a] == freq[b] && a >= b {
				t.Fatalf("workers=%d: token %d = feature %#x (df %d) before token %d = %#x (df %d)", w, tk-1, a, freq[a], tk, b, freq[b])
			}
		}
		if uniq := int(c.unique); uniq == 0 || freq[feature[uniq-1]] != 1 || freq[feature[uniq]] == 1 {
			t.Fatalf("workers=%d: unique = %d does not end the df-1 tokens", w, uniq)
		}
		if ref == nil {
			ref = c
		} else if !slices.Equal(c.toks, ref.toks) || !slices.Equal(c.ids, ref.ids) {
			t.Errorf("workers=%d: remap differs from workers=1", w)
		}
	}
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FuzzAllPairs compares the join with the brute force on small fuzzed inputs.
func FuzzAllPairs(f *testing.F) {
	f.Add([]byte{3, 1, 2, 3, 3, 1, 2, 4, 0, 2, 9, 9}, uint16(32768))
	f.Add([]byte{4, 5, 6, 7, 8, 5, 4, 5, 6, 7, 8}, uint16(65535))
	f.Add([]byte{1, 1, 1, 1, 2, 1, 2}, uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, tq uint16) {
		// data: a length byte, then that many feature bytes, repeated.
		var sets [][]uint64
		for len(data) > 0 && len(sets) < 64 {
			n := int(data[0]) % 16
			data = data[1:]
			n = min(n, len(data))
			s := make([]uint64, n)
			for i := range s {
				s[i] = uint64(data[i] % 24)
			}
			data = data[n:]
			sets = append(sets, Normalize(s))
		}
		th := (float64(tq) + 1) / 65536 // (0, 1]
		got, err := AllPairs(sets, th, &Options{Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		comparePairs(t, fmt.Sprintf("t=%v", th), got, bruteForce(sets, th))
	})
}

func TestAppendPairs(t *testing.T) {
	sets := plantedCorpus(500, 11)
	c, err := NewCollection(sets, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := c.AllPairs(0.5)
	if len(want) == 0 {
		t.Fatal("no pairs at t=0.5")
	}
	head := []Pair{{A: -1, B: -1}}
	got, err := c.AppendPairs(head, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != head[0] || !slices.Equal(got[1:], want) {
		t.Errorf("AppendPairs(head, 0.5) = head %v + %d pairs; want head %v + %d pairs", got[0], len(got)-1, head[0], len(want))
	}
	if got, err := c.AppendPairs(head, 2); !errors.Is(err, ErrThreshold) || len(got) != 1 {
		t.Errorf("AppendPairs(head, 2) = %d pairs, %v; want head only, ErrThreshold", len(got), err)
	}
}

// TestMergeVerification forces the merge fallback that verification uses
// when the bitmap would be too large, and checks it against the brute force.
func TestMergeVerification(t *testing.T) {
	defer func(old int) { maxBitmapTokens = old }(maxBitmapTokens)
	maxBitmapTokens = 0
	sets := plantedCorpus(800, 12)
	all := bruteForce(sets, 0.2)
	for _, th := range []float64{0.2, 0.5, 0.8, 1} {
		got, err := AllPairs(sets, th, &Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		want := filterPairs(all, th)
		if len(want) == 0 {
			t.Fatalf("t=%v: no pairs; the corpus does not exercise verification", th)
		}
		comparePairs(t, fmt.Sprintf("t=%v", th), got, want)
	}
	TestExactThreshold(t)
}
