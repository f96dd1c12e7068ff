package lsh

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestKeysGolden pins the key function: testdata/bandkeys.golden is written
// by testdata/bandkeys.py, an independent Python implementation of the
// function specified in the AppendKeys doc comment.
func TestKeysGolden(t *testing.T) {
	cases := 0
	forGolden(t, func(p Params, name string, slots, want []uint64) {
		if got := p.AppendKeys(nil, slots); !slices.Equal(got, want) {
			t.Errorf("%v %s: AppendKeys = %x; want %x", p, name, got, want)
		}
		cases++
	})
	if cases < 20 {
		t.Fatalf("read %d golden cases; want at least 20", cases)
	}
}

// forGolden calls check with each case of testdata/bandkeys.golden.
func forGolden(t *testing.T, check func(p Params, name string, slots, want []uint64)) {
	t.Helper()
	f, err := os.Open("testdata/bandkeys.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parseHex := func(s string) []uint64 {
		var out []uint64
		for _, w := range strings.Fields(s) {
			v, err := strconv.ParseUint(w, 16, 64)
			if err != nil {
				t.Fatalf("bad hex %q: %v", w, err)
			}
			out = append(out, v)
		}
		return out
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		parts := strings.Split(line, " : ")
		if len(parts) != 3 {
			t.Fatalf("malformed golden line %q", line)
		}
		var p Params
		var name string
		if _, err := fmt.Sscan(parts[0], &p.Bands, &p.Rows, &p.Probe, &name); err != nil {
			t.Fatalf("malformed golden header %q: %v", parts[0], err)
		}
		check(p, name, parseHex(parts[1]), parseHex(parts[2]))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

func randomSlots(r *rand.Rand, n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = r.Uint64()
	}
	return s
}

func TestKeysProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := Params{Bands: 16, Rows: 8}

	// Equal rows in different bands give different keys.
	keys := p.AppendKeys(nil, make([]uint64, p.Slots()))
	if u := slices.Compact(slices.Sorted(slices.Values(keys))); len(u) != p.Bands {
		t.Errorf("all-zero slots gave %d distinct keys over %d bands; want %d", len(u), p.Bands, p.Bands)
	}

	// Changing one slot changes exactly its band's key.
	a := randomSlots(rng, p.Slots()+5) // extra slots beyond b·r are ignored
	ka := p.AppendKeys(nil, a)
	for s := 0; s < p.Slots(); s++ {
		b := slices.Clone(a)
		b[s] ^= 1
		kb := p.AppendKeys(nil, b)
		for i := range ka {
			if changed, want := ka[i] != kb[i], i == s/p.Rows; changed != want {
				t.Fatalf("flipping slot %d: key %d changed = %v; want %v", s, i, changed, want)
			}
		}
	}
	b := slices.Clone(a)
	b[p.Slots()] ^= 1
	if !slices.Equal(ka, p.AppendKeys(nil, b)) {
		t.Errorf("a slot beyond Bands·Rows changed the keys")
	}

	// AppendKeys appends, leaving dst's prefix alone.
	prefix := []uint64{7, 8, 9}
	got := p.AppendKeys(slices.Clone(prefix), a)
	if !slices.Equal(got[:3], prefix) || !slices.Equal(got[3:], ka) {
		t.Errorf("AppendKeys(prefix, …) = %x; want prefix %x then %x", got, prefix, ka)
	}
}

// TestKeysProbe checks the multi-probe collision rule exactly: with level m,
// a band shares a key between two documents when at most m rows differ, and
// then it shares exactly one key per m-subset covering the differing rows.
func TestKeysProbe(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range []Params{{Bands: 3, Rows: 5, Probe: 1}, {Bands: 3, Rows: 5, Probe: 2}, {Bands: 2, Rows: 4, Probe: 2}} {
		kpb := p.KeysPerBand()
		for trial := 0; trial < 200; trial++ {
			a := randomSlots(rng, p.Slots())
			b := slices.Clone(a)
			band := rng.IntN(p.Bands)
			diff := rng.IntN(p.Rows + 1) // rows to change in that band
			for _, row := range rng.Perm(p.Rows)[:diff] {
				b[band*p.Rows+row] ^= 1 + rng.Uint64N(1<<20)
			}
			ka, kb := p.AppendKeys(nil, a), p.AppendKeys(nil, b)
			for i := range p.Bands {
				shared := 0
				for x := i * kpb; x < (i+1)*kpb; x++ {
					if ka[x] == kb[x] {
						shared++
					}
				}
				want := kpb // untouched band: every key shared
				if i == band {
					// m-subsets of the rows containing the diff differing rows.
					want = choose(p.Rows-diff, p.Probe-diff)
				}
				if shared != want {
					t.Fatalf("%v, %d rows differ in band %d: band %d shares %d keys; want %d", p, diff, band, i, shared, want)
				}
			}
			// No key is shared across positions (different bands or subsets).
			for x := range ka {
				for y := range kb {
					if x != y && ka[x] == kb[y] {
						t.Fatalf("%v: key %d of one document equals key %d of the other", p, x, y)
					}
				}
			}
		}
	}
}

// TestProbeProbabilityStatistical simulates pairs of signatures whose slots
// agree independently with probability j and checks the fraction sharing a
// key against Probability, within 4.5 standard errors.
func TestProbeProbabilityStatistical(t *testing.T) {
	trials := 4000
	if testing.Short() {
		trials = 1000
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var ka, kb []uint64
	for _, p := range []Params{{Bands: 4, Rows: 5}, {Bands: 4, Rows: 5, Probe: 1}, {Bands: 3, Rows: 6, Probe: 2}, {Bands: 9, Rows: 13, Probe: 1}} {
		for _, j := range []float64{0.3, 0.5, 0.7, 0.85} {
			hits := 0
			a, b := make([]uint64, p.Slots()), make([]uint64, p.Slots())
			for range trials {
				for s := range a {
					a[s] = rng.Uint64()
					b[s] = a[s]
					if rng.Float64() >= j {
						b[s] = rng.Uint64()
					}
				}
				ka = p.AppendKeys(ka[:0], a)
				kb = p.AppendKeys(kb[:0], b)
				slices.Sort(ka)
				slices.Sort(kb)
				if sharesKey(ka, kb) {
					hits++
				}
			}
			got, want := float64(hits)/float64(trials), p.Probability(j)
			tol := 4.5*math.Sqrt(want*(1-want)/float64(trials)) + 1/float64(trials)
			if math.Abs(got-want) > tol {
				t.Errorf("%v at j = %v: %d of %d pairs collided (%.4f); Probability = %.4f ± %.4f", p, j, hits, trials, got, want, tol)
			}
		}
	}
}

// sharesKey reports whether two sorted slices have an element in common.
func sharesKey(a, b []uint64) bool {
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] == b[0]:
			return true
		case a[0] < b[0]:
			a = a[1:]
		default:
			b = b[1:]
		}
	}
	return false
}

func TestAppendKeysAllocs(t *testing.T) {
	p := Params{Bands: 16, Rows: 8, Probe: 1}
	slots := randomSlots(rand.New(rand.NewPCG(7, 8)), p.Slots())
	dst := make([]uint64, 0, p.KeysPerDoc())
	if allocs := testing.AllocsPerRun(100, func() { dst = p.AppendKeys(dst[:0], slots) }); allocs != 0 {
		t.Errorf("AppendKeys with enough capacity: got %v allocs/op; want 0", allocs)
	}
}

func TestAppendKeysPanics(t *testing.T) {
	for _, tt := range []struct {
		p     Params
		slots int
	}{
		{Params{Bands: 4, Rows: 4}, 15},
		{Params{Bands: 0, Rows: 4}, 16},
		{Params{Bands: 4, Rows: 4, Probe: 3}, 16},
		{Params{Bands: 4, Rows: 1, Probe: 1}, 16},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v.AppendKeys(%d slots) did not panic", tt.p, tt.slots)
				}
			}()
			tt.p.AppendKeys(nil, make([]uint64, tt.slots))
		}()
	}
}

// TestProbeVersusPlain checks the trade stated in the package doc: at the
// recall level 1 reaches with b = 9, r = 13, the best plain banding of no
// more slots has a larger false-positive area, but needs fewer keys.
func TestProbeVersusPlain(t *testing.T) {
	probe := Params{Bands: 9, Rows: 13, Probe: 1}
	recall := probe.Probability(0.8)
	plain, err := ForRecall(0.8, probe.Slots(), recall)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Params{Bands: 14, Rows: 8}); plain != want {
		t.Errorf("ForRecall(0.8, %d, %.4f) = %v; want %v as the package doc says", probe.Slots(), recall, plain, want)
	}
	if fpProbe, fpPlain := probe.FalsePositiveArea(0.8), plain.FalsePositiveArea(0.8); fpProbe >= fpPlain {
		t.Errorf("FP area with probing %.4f; want below plain banding's %.4f", fpProbe, fpPlain)
	}
	if probe.KeysPerDoc() <= plain.KeysPerDoc() {
		t.Errorf("probing uses %d keys per document, plain %d; want more", probe.KeysPerDoc(), plain.KeysPerDoc())
	}
}
