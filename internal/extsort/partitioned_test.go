package extsort

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// partInput returns n random entries shaped as the shape says, in the
// order they are added.
func partInput(r *rand.Rand, n int, shape string) []Wide {
	var in []Wide
	for i := range n {
		e := Wide{Key: r.Uint64(), Doc: uint32(i / 16)}
		switch shape {
		case "docs-shuffled":
			e.Doc = uint32(r.IntN(1 << 20))
		case "few-ranges": // keys in 3 ranges only: the others empty
			e.Key = e.Key&^(0xff<<56) | uint64([]int{0, 7, 255}[r.IntN(3)])<<56
		case "one-range": // every key in one range
			e.Key = e.Key&^(0xff<<56) | 0x42<<56
		case "one-key": // a key shared by most entries
			if r.IntN(8) != 0 {
				e.Key = 0x4200_1234_0000_0000
			}
		case "big-docs": // documents far apart, near the 32-bit limit
			e.Doc = uint32(1<<32 - 1 - (n-i)*12345)
		case "extremes": // documents 0 and 2^32−1, jumps either way past a byte's zigzag, small steps back
			switch i % 5 {
			case 0:
				e.Doc = 0
			case 1:
				e.Doc = 1<<32 - 1
			case 2:
				e.Doc = r.Uint32()
			case 3:
				e.Doc = uint32(max(i/16-r.IntN(200), 0))
			case 4:
				e.Doc = uint32(i / 16)
			}
		}
		if len(in) > 0 && shape != "one-key" {
			switch i % 11 {
			case 0: // a duplicate
				e = in[r.IntN(len(in))]
			case 3: // same high 32 bits, other low bits
				e.Key = in[r.IntN(len(in))].Key&^(1<<32-1) | uint64(r.Uint32())
			case 5: // same key, another document
				e.Key = in[r.IntN(len(in))].Key
			}
		}
		in = append(in, e)
	}
	return in
}

// readParts reads s's ranges split into k consecutive pieces, each on a
// goroutine of its own, and returns their entries concatenated in order,
// and how many ranges fell back to an external sort.
func readParts(t *testing.T, s *Partitioned, k int) ([]Wide, int) {
	t.Helper()
	got := make([][]Wide, k)
	errs := make([]error, k)
	fb := make([]int, k)
	var wg sync.WaitGroup
	for j := range k {
		wg.Go(func() {
			it := s.Range(j*Partitions/k, (j+1)*Partitions/k)
			for e, ok := it.Next(); ok; e, ok = it.Next() {
				if it.Last() != e {
					errs[j] = fmt.Errorf("Last %v after Next %v", it.Last(), e)
				}
				got[j] = append(got[j], e)
			}
			if errs[j] == nil {
				errs[j] = it.Err()
			}
			if err := it.Close(); errs[j] == nil {
				errs[j] = err
			}
			fb[j] = it.fallbacks
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var all []Wide
	n := 0
	for j := range k {
		all = append(all, got[j]...)
		n += fb[j]
	}
	return all, n
}

// TestPartitionedMatchesSort: whatever the budget (all in memory, some
// ranges spilled, every range spilled, ranges too large to sort in memory)
// and the shape of the keys (empty ranges, one range, one key shared by
// most entries, documents out of order), the ranges read in order, by one
// goroutine or by several side by side, yield what slices.SortFunc gives.
func TestPartitionedMatchesSort(t *testing.T) {
	for _, shape := range []string{"random", "docs-shuffled", "few-ranges", "one-range", "one-key", "big-docs", "extremes"} {
		for _, tc := range []struct {
			n      int
			budget int64
		}{{0, 1 << 20}, {1, 1 << 20}, {1000, 1 << 20}, {60_000, 1 << 20}, {300_000, 1 << 20}, {300_000, 3 << 20}, {300_000, 1 << 30}} {
			t.Run(fmt.Sprintf("%s/n=%d/budget=%d", shape, tc.n, tc.budget), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.budget)))
				in := partInput(r, tc.n, shape)
				dir := t.TempDir()
				s := NewPartitioned(dir, "test", tc.budget)
				for i := 0; i < len(in); {
					// Batches of varying size, as the sign stage's.
					m := min(len(in)-i, 1+r.IntN(5000))
					var words []uint64
					for _, e := range in[i : i+m] {
						words = append(words, e.Key, uint64(e.Doc))
					}
					if err := s.Add(words...); err != nil {
						t.Fatal(err)
					}
					i += m
				}
				want := slices.Clone(in)
				slices.SortFunc(want, compareWide)
				if s.Len() != int64(tc.n) {
					t.Errorf("Len %d, want %d", s.Len(), tc.n)
				}
				fits := blockBytes(in) <= s.hold
				if fits != (s.Runs() == 0) || (s.Runs() == 0) != (s.SpilledBytes() == 0) {
					t.Errorf("%d ranges spilled, %d bytes, for %d entries (%d bytes of blocks) within %d bytes", s.Runs(), s.SpilledBytes(), tc.n, blockBytes(in), tc.budget)
				}
				wantFB := false
				for i, p := range s.parts {
					wantFB = wantFB || int64(32*(p.n+len(s.cur[i]))) > s.sortMem
				}
				k := 1 + r.IntN(8)
				got, fb := readParts(t, s, k)
				if !slices.Equal(got, want) {
					i := 0
					for i < min(len(got), len(want)) && got[i] == want[i] {
						i++
					}
					t.Fatalf("%d pieces: got %d entries, want %d; first difference at %d", k, len(got), len(want), i)
				}
				if skewed := shape == "one-range" || shape == "one-key"; skewed && tc.n == 300_000 && tc.budget < 1<<30 && !wantFB {
					t.Error("no range too large to sort in memory")
				}
				if (fb > 0) != wantFB {
					t.Errorf("%d ranges fell back to an external sort; want some: %v", fb, wantFB)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if left, _ := os.ReadDir(dir); len(left) != 0 {
					t.Errorf("%d files left after Close", len(left))
				}
			})
		}
	}
}

// TestPartitionedReadAgain: a store whose iterators are closed early, one
// range read and the rest left, still removes its file on Close.
func TestPartitionedCloseEarly(t *testing.T) {
	dir := t.TempDir()
	s := NewPartitioned(dir, "test", 1<<20)
	in := partInput(rand.New(rand.NewPCG(1, 2)), 200_000, "random")
	for _, e := range in {
		if err := s.Add(e.Key, uint64(e.Doc)); err != nil {
			t.Fatal(err)
		}
	}
	if s.Runs() == 0 {
		t.Fatal("nothing spilled")
	}
	it := s.Range(10, 20)
	if _, ok := it.Next(); !ok {
		t.Fatal(it.Err())
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	// What it held is back: an iterator of the whole reading share can
	// start.
	it = s.Range(0, 5)
	it.reserve(s.sortMem)
	it.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left after Close", len(left))
	}
}

// rangeWords returns the words each key range holds the entries in, in
// the order added: the format partitioned.go describes, written out here
// apart from Add's code.
func rangeWords(in []Wide) [Partitions][]uint64 {
	var ws [Partitions][]uint64
	var prev [Partitions]int64
	for _, e := range in {
		r := e.Key >> 56
		delta := int64(e.Doc) - prev[r]
		prev[r] = int64(e.Doc)
		if z := uint64(delta<<1 ^ delta>>63); z < 0xff {
			ws[r] = append(ws[r], e.Key&(1<<56-1)|z<<56)
		} else {
			ws[r] = append(ws[r], e.Key|0xff<<56, uint64(e.Doc))
		}
	}
	return ws
}

// blockBytes returns the bytes of the blocks a Partitioned store that
// spills nothing gives the entries in: each range's blocks of 32 words,
// then as many as the range has, up to 8,192 a block, until they hold its
// words.
func blockBytes(in []Wide) int64 {
	var n int64
	for _, ws := range rangeWords(in) {
		mem := 0
		for mem < len(ws) {
			mem += min(max(mem, partMinBlock), partMaxBlock)
		}
		n += 8 * int64(mem)
	}
	return n
}

// TestWordDecoding: the words of entries decode to themselves, whichever
// the words are split into pieces (an escaped entry's two words in two of
// them included); words ending just after an escape are errRunCut at the
// end; a document below 0 or past 32 bits is errRunVarint, never a wrong
// entry.
func TestWordDecoding(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, shape := range []string{"random", "docs-shuffled", "big-docs", "extremes"} {
		in := partInput(r, 5000, shape)
		for i := range in {
			in[i].Key = in[i].Key&^(0xff<<56) | 0x9c<<56
		}
		ws := rangeWords(in)[0x9c]
		escapes := len(ws) - len(in)
		if shape != "random" && escapes == 0 {
			t.Fatalf("%s: no escaped entry", shape)
		}
		decode := func(pieces ...[]uint64) ([]Wide, error) {
			d := wordDecoder{top: 0x9c << 56}
			var got []Wide
			for _, p := range pieces {
				var err error
				if got, err = d.decode(got, p); err != nil {
					return got, err
				}
			}
			if d.escapes != escapes {
				return got, fmt.Errorf("%d escapes counted; want %d", d.escapes, escapes)
			}
			return got, d.end()
		}
		for _, cut := range []int{0, 1, 2, 7, 8, 9, len(ws) / 2, len(ws) - 1, len(ws)} {
			for _, mid := range []int{0, 1} {
				// Three pieces, the middle one of 0 or 1 word.
				c2 := min(cut+mid, len(ws))
				got, err := decode(ws[:cut], ws[cut:c2], ws[c2:])
				if err != nil || !slices.Equal(got, in) {
					t.Fatalf("%s: cut at %d+%d: decoded %d entries (%v); want %d", shape, cut, mid, len(got), err, len(in))
				}
			}
		}
		// Cut after each word: an error exactly after an escape word.
		for cut := range min(len(ws), 3000) {
			d := wordDecoder{top: 0x9c << 56}
			_, err := d.decode(nil, ws[:cut])
			if err == nil {
				err = d.end()
			}
			if esc := cut > 0 && ws[cut-1]>>56 == 0xff; esc != (err != nil) || err != nil && !errors.Is(err, errRunCut) {
				t.Fatalf("%s: cut at %d (after an escape: %v): %v", shape, cut, esc, err)
			}
		}
	}
	for _, tc := range []struct {
		name string
		ws   []uint64
	}{
		{"below 0", []uint64{1 << 56}},                               // zigzag 1: −1 from 0
		{"past 32 bits", []uint64{0xff<<56 | 5, 1<<32 - 1, 2 << 56}}, // +1 from 2^32−1
		{"escaped past 32 bits", []uint64{0xff<<56 | 5, 1 << 32}},
		{"escaped past 32 bits, split", []uint64{0xff<<56 | 5}},
	} {
		d := wordDecoder{}
		_, err := d.decode(nil, tc.ws)
		if err == nil && tc.name == "escaped past 32 bits, split" {
			_, err = d.decode(nil, []uint64{1 << 40})
		}
		if !errors.Is(err, errRunVarint) {
			t.Errorf("%s: %v; want errRunVarint", tc.name, err)
		}
	}
}

// FuzzDecodeWords: any words decode to entries of the range or an error;
// the entries decoded, written again as words, decode to themselves.
func FuzzDecodeWords(f *testing.F) {
	in := partInput(rand.New(rand.NewPCG(5, 6)), 20, "extremes")
	for i := range in {
		in[i].Key &^= 0xff << 56
	}
	f.Add(wordBytes(rangeWords(in)[0]), uint8(0))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 0xff}, uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, top uint8) {
		ws := make([]uint64, len(b)/8)
		copy(wordBytes(ws), b)
		d := wordDecoder{top: uint64(top) << 56}
		es, err := d.decode(nil, ws)
		if err == nil {
			err = d.end()
		}
		if err != nil {
			return
		}
		for _, e := range es {
			if e.Key>>56 != uint64(top) {
				t.Fatalf("key %x outside range %x", e.Key, top)
			}
		}
		// An entry may have been escaped with a small difference; the
		// entries must agree.
		d = wordDecoder{top: uint64(top) << 56}
		back, err := d.decode(nil, rangeWords(es)[top])
		if err != nil || d.end() != nil || !slices.Equal(back, es) {
			t.Fatalf("re-encoded entries differ: %v", err)
		}
	})
}

// BenchmarkEntryStore adds 2^22 band-key entries (16 a document, random
// keys) and reads them back sorted, through a WideSorter (sorted chunks,
// runs, a k-way merge) and a Partitioned store (key ranges, each sorted
// when read), with the same memory: spilling (2^19 entries a WideSorter
// run, 7 runs spilled; the same 16 MiB for Partitioned) and not (1 GiB).
// The whole cost, adding included; SetBytes counts 8 bytes an entry, as
// BenchmarkWideAdd does. cpu-ns/op is the process's user + sys time,
// background sorting included.
func BenchmarkEntryStore(b *testing.B) {
	const n = 1 << 22
	words := wideWords(n)
	for _, mem := range []struct {
		name  string
		limit int // WideSorter's limit: it holds 2·limit entries
	}{{"spill", n / 8}, {"fits", 1 << 25}} {
		for _, store := range []string{"wide", "partitioned"} {
			b.Run(fmt.Sprintf("mem=%s/store=%s", mem.name, store), func(b *testing.B) {
				b.SetBytes(8 * n)
				b.ReportAllocs()
				defer reportCPU(b, cpuTime(b))
				for b.Loop() {
					var sum uint64
					if store == "wide" {
						s := NewWide(b.TempDir(), "bench", mem.limit)
						for i := 0; i < len(words); i += 1 << 12 {
							if err := s.Add(words[i:min(i+1<<12, len(words))]...); err != nil {
								b.Fatal(err)
							}
						}
						it, err := s.Iter()
						if err != nil {
							b.Fatal(err)
						}
						for e, ok := it.Next(); ok; e, ok = it.Next() {
							sum += e.Key
						}
						if err := it.Close(); err != nil {
							b.Fatal(err)
						}
					} else {
						s := NewPartitioned(b.TempDir(), "bench", int64(32*mem.limit))
						for i := 0; i < len(words); i += 1 << 12 {
							if err := s.Add(words[i:min(i+1<<12, len(words))]...); err != nil {
								b.Fatal(err)
							}
						}
						it := s.Range(0, Partitions)
						for e, ok := it.Next(); ok; e, ok = it.Next() {
							sum += e.Key
						}
						if err := it.Err(); err != nil {
							b.Fatal(err)
						}
						it.Close()
						if err := s.Close(); err != nil {
							b.Fatal(err)
						}
					}
					sink += sum
				}
			})
		}
	}
}

// TestPartitionedRangesSideBySide: eight iterators read a spilled store's
// ranges at once, within a reading share that holds about two ranges, one
// range too large for it (it waits for the whole share): each yields its
// ranges sorted, and they add up to the sorted input. For -race.
func TestPartitionedRangesSideBySide(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	in := partInput(r, 150_000, "random")
	for i := range in[:20_000] { // range 0x42 too large to sort in memory
		in[i].Key = in[i].Key&^(0xff<<56) | 0x42<<56
	}
	s := NewPartitioned(t.TempDir(), "test", 1<<20)
	for _, e := range in {
		if err := s.Add(e.Key, uint64(e.Doc)); err != nil {
			t.Fatal(err)
		}
	}
	if s.Runs() == 0 {
		t.Fatal("nothing spilled")
	}
	want := slices.Clone(in)
	slices.SortFunc(want, compareWide)
	got, fb := readParts(t, s, 8)
	if !slices.Equal(got, want) {
		t.Fatalf("got %d entries, not those of slices.SortFunc (%d)", len(got), len(want))
	}
	if fb != 1 {
		t.Errorf("%d ranges fell back to an external sort, want 1", fb)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPartitionedSkipSingles: under SkipSingles, whatever the budget (in
// memory, spilled, ranges too large to sort in memory, a reading share too
// small for a filter), the shape of the keys (random, planted shared keys,
// every key single, every key shared, one key, one range, empty ranges,
// documents out of order) and the filter's size (one slot an entry: many
// single keys share a slot), read in pieces side by side: every entry left
// out holds its key alone; every entry of a shared key is yielded, in the
// order slices.SortFunc gives, among the rest; Singles counts what was left
// out; and with the default filter most single keys are left out.
func TestPartitionedSkipSingles(t *testing.T) {
	defer func(n int) { filterSlots = n }(filterSlots)
	for _, shape := range []string{"random", "planted", "all-single", "all-shared", "one-key", "one-range", "few-ranges", "docs-shuffled"} {
		for _, tc := range []struct {
			n      int
			budget int64
			slots  int
		}{{0, 1 << 20, 8}, {1, 1 << 20, 8}, {1000, 1 << 20, 8}, {300_000, 1 << 20, 8}, {300_000, 3 << 20, 1}, {300_000, 1 << 30, 8}, {300_000, 1 << 30, 1}} {
			t.Run(fmt.Sprintf("%s/n=%d/budget=%d/slots=%d", shape, tc.n, tc.budget, tc.slots), func(t *testing.T) {
				filterSlots = tc.slots
				r := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.budget)))
				in := singlesInput(r, tc.n, shape)
				s := NewPartitioned(t.TempDir(), "test", tc.budget)
				for i := 0; i < len(in); {
					m := min(len(in)-i, 1+r.IntN(5000))
					var words []uint64
					for _, e := range in[i : i+m] {
						words = append(words, e.Key, uint64(e.Doc))
					}
					if err := s.Add(words...); err != nil {
						t.Fatal(err)
					}
					i += m
				}
				count := map[uint64]int{}
				for _, e := range in {
					count[e.Key]++
				}
				k := 1 + r.IntN(8)
				// Documents whose left-out entries SinglesIn counts: about a
				// third of them, numbered from a base (those below wrap).
				var apart DocSet
				apart.Base = uint32(r.IntN(10))
				for _, e := range in {
					if d := int(e.Doc - apart.Base); d >= 0 && d < 1<<20 && r.IntN(3) == 0 {
						for d>>6 >= len(apart.Bits) {
							apart.Bits = append(apart.Bits, 0)
						}
						apart.Bits[d>>6] |= 1 << (d & 63)
					}
				}
				got := make([][]Wide, k)
				singles, singlesIn := make([]int64, k), make([]int64, k)
				errs := make([]error, k)
				var wg sync.WaitGroup
				for j := range k {
					wg.Go(func() {
						it := s.Range(j*Partitions/k, (j+1)*Partitions/k)
						it.SkipSingles(apart)
						for e, ok := it.Next(); ok; e, ok = it.Next() {
							got[j] = append(got[j], e)
						}
						errs[j] = errors.Join(it.Err(), it.Close())
						singles[j], singlesIn[j] = it.Singles(), it.SinglesIn()
					})
				}
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatal(err)
				}
				// What each piece left out: its ranges' entries but those
				// it yielded.
				var yielded, out []Wide
				for j := range k {
					yielded = append(yielded, got[j]...)
					var mine []Wide
					for _, e := range in {
						if top := int(e.Key >> 56); top >= j*Partitions/k && top < (j+1)*Partitions/k {
							mine = append(mine, e)
						}
					}
					left := minusWide(mine, got[j])
					out = append(out, left...)
					in := 0
					for _, e := range left {
						if apart.Has(e.Doc) {
							in++
						}
					}
					if singles[j] != int64(len(left)) || singlesIn[j] != int64(in) {
						t.Errorf("piece %d: Singles %d, SinglesIn %d; %d entries left out, %d of them in the set", j, singles[j], singlesIn[j], len(left), in)
					}
				}
				if !slices.IsSortedFunc(yielded, compareWide) {
					t.Fatal("yielded entries not sorted")
				}
				all := slices.Concat(yielded, out)
				slices.SortFunc(all, compareWide)
				want := slices.Clone(in)
				slices.SortFunc(want, compareWide)
				if !slices.Equal(all, want) {
					t.Fatalf("yielded and left out: %d entries, not the %d added", len(all), len(want))
				}
				for _, e := range out {
					if count[e.Key] != 1 {
						t.Fatalf("entry %v left out: its key has %d entries", e, count[e.Key])
					}
				}
				single := 0
				for _, c := range count {
					if c == 1 {
						single++
					}
				}
				// A single key shares both its slots with other entries
				// with probability about (2n/slots)² ≤ (2/filterSlots)² of
				// its range (here 1/16): at 300,000 entries, far more than 3/4 of them
				// are left out, unless a range falls back or has no room
				// for its filter (budget 1 MiB: a quarter holds 8,192
				// entries; a range of 300,000/256 needs 1,172·32 bytes, and
				// its filter 1,172·8·2/8).
				if tc.n == 300_000 && tc.slots == 8 && (shape == "random" || shape == "planted" || shape == "all-single") && 4*len(out) < 3*single {
					t.Errorf("%d of %d single keys left out", len(out), single)
				}
				if shape == "all-shared" && len(out) != 0 {
					t.Errorf("%d entries left out, every key shared", len(out))
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// singlesInput returns n entries: partInput's shapes, and "planted" (random
// keys, a twentieth of them shared by 2–40 entries), "all-single" (every
// key once), "all-shared" (every key two to five times).
func singlesInput(r *rand.Rand, n int, shape string) []Wide {
	switch shape {
	case "planted", "all-single", "all-shared":
	default:
		return partInput(r, n, shape)
	}
	var in []Wide
	for i := 0; len(in) < n; i++ {
		k, copies := r.Uint64(), 1
		switch {
		case shape == "all-shared":
			copies = 2 + r.IntN(4)
		case shape == "planted" && r.IntN(20) == 0:
			copies = 2 + r.IntN(39)
		}
		m := min(copies, n-len(in))
		if shape == "all-shared" && m == 1 && len(in) > 0 {
			k = in[len(in)-1].Key // the last key, cut to one entry: the one before's
		}
		for c := range m {
			in = append(in, Wide{Key: k, Doc: uint32(i/16 + c*7)})
		}
	}
	r.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
	return in
}

// BenchmarkPartitionedRead reads 2^22 entries back from a Partitioned
// store, every range sorted and yielded by Next (the read only: the adding
// is outside the timer), with every key yielded (singles=keep), with
// single keys left out (singles=skip), and left out and handed to a
// function that counts them (singles=skipfn, as dedup does), in memory
// (1 GiB) and mostly spilled (64 MiB): entries of random keys, 16 a
// document in document order, about 7 % of them in keys shared by 2–3
// entries (the shape of 5M short documents' band keys), in 14 key ranges
// of 300k (5M documents' ranges hold 290k: their filters are rounded up as
// much). The consumer counts the keys' changes, as a Grouper would see
// them. SetBytes counts 16 bytes an entry; cpu-ns/op is the process's
// user + sys time.
func BenchmarkPartitionedRead(b *testing.B) {
	const n = 1 << 22
	r := rand.New(rand.NewPCG(9, 10))
	var in []Wide
	for i := 0; len(in) < n; i++ {
		k, copies := r.Uint64N(14<<56), 1
		if r.IntN(30) == 0 {
			copies = 2 + r.IntN(2)
		}
		for c := range min(copies, n-len(in)) {
			in = append(in, Wide{Key: k, Doc: uint32(len(in)/16 + c)})
		}
	}
	slices.SortStableFunc(in, func(x, y Wide) int { return cmp.Compare(x.Doc, y.Doc) })
	words := make([]uint64, 0, 2*n)
	for _, e := range in {
		words = append(words, e.Key, uint64(e.Doc))
	}
	for _, mem := range []struct {
		name   string
		budget int64
	}{{"fits", 1 << 30}, {"spill", 64 << 20}} {
		// A set of a third of the documents, as dedup's late copies.
		var third DocSet
		for _, e := range in {
			if e.Doc%3 == 0 {
				for int(e.Doc>>6) >= len(third.Bits) {
					third.Bits = append(third.Bits, 0)
				}
				third.Bits[e.Doc>>6] |= 1 << (e.Doc & 63)
			}
		}
		for _, name := range []string{"keep", "skip", "skipset"} {
			b.Run(fmt.Sprintf("mem=%s/singles=%s", mem.name, name), func(b *testing.B) {
				b.SetBytes(16 * n)
				b.ReportAllocs()
				var cpu time.Duration
				for b.Loop() {
					b.StopTimer()
					s := NewPartitioned(b.TempDir(), "bench", mem.budget)
					for i := 0; i < len(words); i += 1 << 13 {
						if err := s.Add(words[i:min(i+1<<13, len(words))]...); err != nil {
							b.Fatal(err)
						}
					}
					start := cpuTime(b)
					b.StartTimer()
					it := s.Range(0, Partitions)
					switch name {
					case "skip":
						it.SkipSingles(DocSet{})
					case "skipset":
						it.SkipSingles(third)
					}
					var last uint64
					keys := it.Singles()
					for e, ok := it.Next(); ok; e, ok = it.Next() {
						if e.Key != last {
							keys++
						}
						last = e.Key
					}
					keys += it.Singles()
					if err := it.Err(); err != nil {
						b.Fatal(err)
					}
					it.Close()
					b.StopTimer()
					cpu += cpuTime(b) - start
					s.Close()
					sink += uint64(keys + it.SinglesIn())
					b.StartTimer()
				}
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// TestPartitionedWords: the words a store holds each range's entries in,
// in its blocks or in the spill file's segments (read back as they are),
// are the format's (rangeWords), whatever the documents' differences, the
// budget, and where an escaped entry's two words fall: the first word of
// a range's line, block or segment and the second the next one's, which
// the input, one entry in range 0x77 before escaped ones only, makes
// happen at every boundary (lines, blocks and segments hold even numbers
// of words).
func TestPartitionedWords(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, shape := range []string{"random", "docs-shuffled", "big-docs", "extremes", "all-escapes"} {
		for _, budget := range []int64{1 << 20, 1 << 30} {
			t.Run(fmt.Sprintf("%s/budget=%d", shape, budget), func(t *testing.T) {
				var in []Wide
				if shape == "all-escapes" {
					in = append(in, Wide{Key: 0x77<<56 | 1, Doc: 3})
					for i := range 60_000 {
						in = append(in, Wide{Key: 0x77<<56 | r.Uint64()>>8, Doc: uint32(i%2+1) * 1000})
					}
				} else {
					in = partInput(r, 100_000, shape)
				}
				s := NewPartitioned(t.TempDir(), "test", budget)
				defer s.Close()
				for _, e := range in {
					if err := s.Add(e.Key, uint64(e.Doc)); err != nil {
						t.Fatal(err)
					}
				}
				s.Runs()
				want := rangeWords(in)
				split := 0 // segments and full blocks ending with an escape word
				for i := range s.parts {
					p := &s.parts[i]
					var got []uint64
					for _, g := range p.segs {
						ws, err := s.readWords(make([]uint64, g.n/8), g)
						if err != nil {
							t.Fatal(err)
						}
						if ws[len(ws)-1]>>56 == 0xff {
							split++
						}
						got = append(got, ws...)
					}
					for _, b := range p.blocks {
						if b[len(b)-1]>>56 == 0xff {
							split++
						}
						got = append(got, b...)
					}
					got = append(got, s.cur[i]...)
					if !slices.Equal(got, want[i]) {
						t.Fatalf("range %d: %d words, not the format's %d", i, len(got), len(want[i]))
					}
				}
				if p := &s.parts[0x77]; shape == "all-escapes" && (split != len(p.segs)+len(p.blocks) || split < 10) {
					t.Errorf("%d segments and blocks end inside an escaped entry; want all (%d, %d)", split, len(p.segs), len(p.blocks))
				}
				sorted := slices.Clone(in)
				slices.SortFunc(sorted, compareWide)
				if got, _ := readParts(t, s, 2); !slices.Equal(got, sorted) {
					t.Fatalf("got %d entries; want %d, or not the same", len(got), len(sorted))
				}
			})
		}
	}
}

// TestPartitionedCorrupt: a spill file whose words do not decode (a
// document past 32 bits; a segment ending inside an escaped entry, or
// inside a word) is an error from the iterator, whether the range is
// sorted in memory or in the fallback sort, not wrong entries.
func TestPartitionedCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(s *Partitioned, p *partition, esc int) error // esc: the first segment's first escape word
		want error
	}{
		{"doc past 32 bits", func(s *Partitioned, p *partition, esc int) error {
			_, err := s.f.WriteAt([]byte{0, 0, 0, 0, 1, 0, 0, 0}, p.segs[0].off+8*int64(esc+1))
			return err
		}, errRunVarint},
		{"cut after an escape", func(s *Partitioned, p *partition, esc int) error {
			p.segs = p.segs[:1]
			p.segs[0].n = 8 * (esc + 1)
			p.n = esc + 1
			return nil
		}, errRunCut},
		{"cut inside a word", func(s *Partitioned, p *partition, esc int) error {
			p.segs[0].n -= 4
			return nil
		}, errRunCut},
	} {
		for _, mode := range []string{"one-range", "all-ranges", "all-ranges-skip"} {
			oneRange := mode == "one-range"
			s := NewPartitioned(t.TempDir(), "test", 1<<20)
			r := rand.New(rand.NewPCG(1, 2))
			for range 400_000 { // documents 0 and 1000 at random: half the entries escaped
				k := r.Uint64()
				if oneRange {
					k = k&^(0xff<<56) | 0x77<<56
				}
				if err := s.Add(k, uint64(r.IntN(2))*1000); err != nil {
					t.Fatal(err)
				}
			}
			if s.Runs() == 0 {
				t.Fatal("nothing spilled")
			}
			i := 0
			for !s.parts[i].spill {
				i++
			}
			p := &s.parts[i]
			ws, err := s.readWords(make([]uint64, p.segs[0].n/8), p.segs[0])
			if err != nil {
				t.Fatal(err)
			}
			esc := 0
			for ws[esc]>>56 != 0xff {
				esc++
			}
			if tc.name == "cut after an escape" {
				s.cur[i] = nil
			}
			if err := tc.mod(s, p, esc); err != nil {
				t.Fatal(err)
			}
			it := s.Range(i, i+1)
			if mode == "all-ranges-skip" {
				it.SkipSingles(DocSet{}) // the documents decoded by the filter's split
			}
			n := 0
			for _, ok := it.Next(); ok; _, ok = it.Next() {
				n++
			}
			if wantFB := oneRange && tc.name != "cut after an escape"; (it.fallbacks == 1) != wantFB {
				t.Errorf("%s, %s: %d fallbacks; want 1: %v", tc.name, mode, it.fallbacks, wantFB)
			}
			if err := it.Err(); !errors.Is(err, tc.want) {
				t.Errorf("%s, %s: %d entries, error %v; want %v", tc.name, mode, n, err, tc.want)
			}
			it.Close()
			s.Close()
		}
	}
}

// BenchmarkPartEncoding decodes a segment of 8,192 words of one range,
// entries 16 a document in document order (one-byte differences), as a
// range is read: all the entries (op=decode), or those the single-key
// filter keeps (op=split; about 7 % of the keys are shared by 2–3
// entries). Adding writes the words in place (BenchmarkPartitionedAdd),
// and spilling writes them as they are: nothing to encode. SetBytes counts
// 16 bytes an entry.
func BenchmarkPartEncoding(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	es := make([]Wide, 0, partMaxBlock)
	doc := uint32(0)
	for len(es) < partMaxBlock {
		doc += uint32(r.IntN(32))
		k, copies := 0x5a<<56|r.Uint64()>>8, 1
		if r.IntN(30) == 0 {
			copies = 2 + r.IntN(2)
		}
		for range min(copies, partMaxBlock-len(es)) {
			es = append(es, Wide{Key: k, Doc: doc})
		}
	}
	ws := rangeWords(es)[0x5a]
	b.Run("op=decode", func(b *testing.B) {
		b.SetBytes(16 * int64(len(es)))
		dst := make([]Wide, 0, len(es))
		for b.Loop() {
			d := wordDecoder{top: 0x5a << 56}
			var err error
			if dst, err = d.decode(dst[:0], ws); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("op=split", func(b *testing.B) {
		b.SetBytes(16 * int64(len(es)))
		f := newSingleFilter(len(es))
		f.f = make([]uint64, f.words)
		dst := make([]Wide, len(es))
		for b.Loop() {
			clear(f.f)
			f.markWords(ws, 0x5a<<56, false)
			f.seal()
			d := wordDecoder{top: 0x5a << 56}
			k, _, err := f.splitWords(ws, dst, 0, DocSet{}, 0, &d)
			if err != nil {
				b.Fatal(err)
			}
			sink += uint64(k)
		}
	})
}

// TestPartitionedStagedLines: Add stages each range's last words, up to a
// line (lineWords), before storing them in its block; the entries still
// staged when reading starts (counts not a multiple of a line, a range of
// one entry, one too large to sort in memory) are read like the others,
// whether Runs drains them first or Range does, and adding after a drain
// (Runs called early, leaving a block's end shorter than a line) loses
// nothing either.
func TestPartitionedStagedLines(t *testing.T) {
	for _, shape := range []string{"random", "one-range"} {
		for _, n := range []int{1, 3, 4, 5, 7, 8, 9, 17, 1001, 70_001, 300_001} {
			for _, mode := range []string{"runs-first", "range-first", "runs-midway"} {
				t.Run(fmt.Sprintf("%s/n=%d/%s", shape, n, mode), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(n), 7))
					in := partInput(r, n, shape)
					s := NewPartitioned(t.TempDir(), "test", 1<<20)
					defer s.Close()
					for i := 0; i < len(in); {
						m := min(len(in)-i, 1+r.IntN(7))
						var words []uint64
						for _, e := range in[i : i+m] {
							words = append(words, e.Key, uint64(e.Doc))
						}
						if err := s.Add(words...); err != nil {
							t.Fatal(err)
						}
						if mode == "runs-midway" && i < len(in)/2 && i+m >= len(in)/2 {
							s.Runs()
						}
						i += m
					}
					if s.Len() != int64(n) {
						t.Errorf("Len %d; want %d", s.Len(), n)
					}
					if mode != "range-first" {
						s.Runs()
						for r, l := range s.lines {
							if l != 0 {
								t.Fatalf("range %d: %d words staged after Runs", r, l)
							}
						}
						if got := s.SpilledBytes() > 0; got != (s.Runs() > 0) {
							t.Errorf("SpilledBytes > 0 is %v with %d ranges spilled", got, s.Runs())
						}
					}
					want := slices.Clone(in)
					slices.SortFunc(want, compareWide)
					got, fb := readParts(t, s, 1+r.IntN(4))
					if !slices.Equal(got, want) {
						t.Fatalf("got %d entries; want %d, or not the same", len(got), len(want))
					}
					if shape == "one-range" && n == 300_001 && fb == 0 {
						t.Error("no range fell back to an external sort")
					}
				})
			}
		}
	}
}

// TestPartitionedSpillUnlinked: on Unix the spill file's name is removed as
// soon as the file is made (nothing is left behind if the process dies),
// and the entries are still read back from it.
func TestPartitionedSpillUnlinked(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be removed on Windows")
	}
	dir := t.TempDir()
	s := NewPartitioned(dir, "test", 1<<20)
	in := partInput(rand.New(rand.NewPCG(3, 4)), 100_000, "random")
	for _, e := range in {
		if err := s.Add(e.Key, uint64(e.Doc)); err != nil {
			t.Fatal(err)
		}
	}
	if s.Runs() == 0 || !s.unlinked {
		t.Fatalf("%d ranges spilled, file unlinked %v; want some, true", s.Runs(), s.unlinked)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files in the spill directory while spilled; want 0", len(left))
	}
	want := slices.Clone(in)
	slices.SortFunc(want, compareWide)
	if got, _ := readParts(t, s, 2); !slices.Equal(got, want) {
		t.Fatalf("got %d entries; want %d, or not the same", len(got), len(want))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSingleFilter: mark then split leaves out exactly entries whose key is
// single (never one of a shared key), including a key whose two slots are
// one; and of random single keys among shared ones it keeps about
// (2n/slots)² — at 300,000 entries in 2^22 slots about 2 %, where one
// slot a key kept n/slots, 7 %.
func TestSingleFilter(t *testing.T) {
	f := newSingleFilter(1)
	// A key whose two slots coincide: alone, it is single.
	var same uint64
	for k := uint64(1); ; k++ {
		if h := k * 0x9e3779b97f4a7c15; h&63 == h>>6&63 {
			same = k
			break
		}
	}
	for _, tc := range []struct {
		es   []Wide
		kept int
	}{
		{nil, 0},
		{[]Wide{{Key: same, Doc: 1}}, 0},
		{[]Wide{{Key: same, Doc: 1}, {Key: same, Doc: 2}}, 2},
		{[]Wide{{Key: 5, Doc: 1}}, 0},
		{[]Wide{{Key: 5, Doc: 1}, {Key: 5, Doc: 1}}, 2},
	} {
		f.f = make([]uint64, f.words)
		f.mark(tc.es)
		f.seal()
		dst := make([]Wide, len(tc.es))
		all := DocSet{Bits: []uint64{^uint64(0)}} // documents 0-63
		k, m := f.split(tc.es, dst, 0, all, 0)
		if k != tc.kept || m != len(tc.es)-tc.kept {
			t.Errorf("%v: got %d kept, %d left out; want %d, %d", tc.es, k, m, tc.kept, len(tc.es)-tc.kept)
		}
	}

	r := rand.New(rand.NewPCG(3, 4))
	const n = 300_000
	var es []Wide
	count := map[uint64]int{}
	for len(es) < n {
		k, copies := r.Uint64(), 1
		if r.IntN(30) == 0 {
			copies = 2 + r.IntN(3)
		}
		for range copies {
			es = append(es, Wide{Key: k, Doc: uint32(len(es))})
			count[k]++
		}
	}
	r.Shuffle(len(es), func(i, j int) { es[i], es[j] = es[j], es[i] })
	f = newSingleFilter(len(es))
	f.f = make([]uint64, f.words)
	f.mark(es)
	f.seal()
	dst := make([]Wide, len(es))
	k, _ := f.split(es, dst, 0, DocSet{}, 0)
	kept, single := 0, 0
	for _, e := range dst[:k] {
		if count[e.Key] == 1 {
			kept++
		}
	}
	shared := 0
	for _, e := range es {
		if count[e.Key] == 1 {
			single++
		} else {
			shared++
		}
	}
	if k-kept != shared {
		t.Fatalf("%d entries of shared keys kept; want %d", k-kept, shared)
	}
	if share := float64(kept) / float64(single); share < 0.01 || share > 0.035 {
		t.Errorf("%.4f of the single keys kept; want about 0.02", share)
	}
}

// minusWide returns the entries of a that are not in b (a multiset
// difference; b's entries are all in a), sorted (compareWide).
func minusWide(a, b []Wide) []Wide {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, compareWide)
	slices.SortFunc(b, compareWide)
	var d []Wide
	for _, e := range a {
		if len(b) > 0 && b[0] == e {
			b = b[1:]
			continue
		}
		d = append(d, e)
	}
	return d
}

// mark marks the slots of es's keys as singleFilter.markWords marks those
// of a range's words: for the tests and benchmarks of the filter on
// entries.
func (f *singleFilter) mark(es []Wide) {
	w := f.f
	for _, e := range es {
		g, m := f.slots(e.Key)
		p := (*[2]uint64)(w[2*g : 2*g+2])
		p[1] |= p[0] & m
		p[0] |= m
	}
}

// TestPartitionedGrow: a store whose hold is raised (Grow) after its first
// entries, on another goroutine while they are added, spills less than one
// that keeps its budget's hold, nothing once the hold covers every block,
// and reads back the same sorted entries; a smaller Grow changes nothing.
func TestPartitionedGrow(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	in := partInput(r, 200_000, "random")
	want := slices.Clone(in)
	slices.SortFunc(want, compareWide)
	const budget = 1 << 20
	add := func(s *Partitioned, from, to int) {
		t.Helper()
		var words []uint64
		for _, e := range in[from:to] {
			words = append(words, e.Key, uint64(e.Doc))
		}
		if err := s.Add(words...); err != nil {
			t.Fatal(err)
		}
	}
	// grow is the hold given after the first 10k entries; 0: none.
	run := func(grow int64) (spilled int64, hold int64) {
		s := NewPartitioned(t.TempDir(), "test", budget)
		defer s.Close()
		add(s, 0, 10_000)
		if grow > 0 {
			done := make(chan struct{})
			go func() { s.Grow(grow); close(done) }() // beside Add (go test -race)
			add(s, 10_000, 20_000)
			<-done
		} else {
			add(s, 10_000, 20_000)
		}
		for i := 20_000; i < len(in); i += 5000 {
			add(s, i, i+5000)
		}
		got, _ := readParts(t, s, 2)
		if !slices.Equal(got, want) {
			t.Fatalf("grow %d: %d entries read, want %d sorted as slices.SortFunc", grow, len(got), len(want))
		}
		return s.SpilledBytes(), s.hold
	}
	base, baseHold := run(0)
	if base == 0 || baseHold != budget*3/4 {
		t.Fatalf("under %d bytes: %d spilled, hold %d: the input is too small for this test", budget, base, baseHold)
	}
	if smaller, h := run(baseHold / 2); smaller != base || h != baseHold {
		t.Errorf("Grow to half the hold: %d bytes spilled, hold %d; want %d and %d as without", smaller, h, base, baseHold)
	}
	if some, h := run(2 * baseHold); some == 0 || some >= base || h != 2*baseHold {
		t.Errorf("Grow to twice the hold: %d bytes spilled (without: %d), hold %d", some, base, h)
	}
	if none, _ := run(4 * blockBytes(in)); none != 0 {
		t.Errorf("Grow to hold every block: %d bytes spilled", none)
	}
}

// TestSingleFilterSeal: after seal, split and splitWords keep exactly the
// entries both of whose slots the marks left seen twice (read from the
// filter's word pairs before sealing), for filters of one group pair up,
// one entry, every key shared, and random keys with escapes (documents
// far apart) split across sources.
func TestSingleFilterSeal(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, tc := range []struct {
		name   string
		n      int
		shared int // one key in shared has 2–4 entries
	}{{"one", 1, 0}, {"two-same", 2, 1}, {"small", 100, 3}, {"all-shared", 5000, 1}, {"random", 50_000, 20}} {
		t.Run(tc.name, func(t *testing.T) {
			var es []Wide
			doc := uint32(0)
			for len(es) < tc.n {
				k, copies := 0x3c<<56|r.Uint64()>>8, 1
				if r.IntN(tc.shared+1) == 1 || tc.shared == 1 {
					copies = 2 + r.IntN(3)
				}
				for range min(copies, tc.n-len(es)) {
					doc += uint32(r.IntN(3))
					if r.IntN(50) == 0 {
						doc += 1000 // an escape
					}
					es = append(es, Wide{Key: k, Doc: doc})
				}
			}
			r.Shuffle(len(es), func(i, j int) { es[i].Key, es[j].Key = es[j].Key, es[i].Key })
			f := newSingleFilter(len(es) + len(es)/50 + 1)
			f.f = make([]uint64, f.words)
			f.mark(es)
			var want []Wide
			for _, e := range es {
				g, s := f.slots(e.Key)
				if f.f[2*g+1]&s == s {
					want = append(want, e)
				}
			}
			f.seal()
			dst := make([]Wide, len(es))
			k, _ := f.split(es, dst, 0, DocSet{}, 0)
			if !slices.Equal(dst[:k], want) {
				t.Fatalf("split kept %d entries; want %d", k, len(want))
			}
			// The same as words, in two sources cut at every fifth word.
			ws := rangeWords(es)[0x3c]
			cut := len(ws) / 5
			d := wordDecoder{top: 0x3c << 56}
			k, _, err := f.splitWords(ws[:cut], dst, 0, DocSet{}, 0, &d)
			if err == nil {
				k, _, err = f.splitWords(ws[cut:], dst, k, DocSet{}, 0, &d)
			}
			if err != nil || d.end() != nil {
				t.Fatal(err, d.end())
			}
			if !slices.Equal(dst[:k], want) {
				t.Fatalf("splitWords kept %d entries; want %d", k, len(want))
			}
		})
	}
}
