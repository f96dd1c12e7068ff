package extsort

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWideSorterMatchesSort: every limit (in memory, a few runs, many runs)
// yields the entries slices.SortFunc gives, duplicates and keys equal in
// their high 32 bits included.
func TestWideSorterMatchesSort(t *testing.T) {
	for _, tc := range []struct{ n, limit int }{{0, 1024}, {10, 1024}, {300, 1024}, {5000, 1024}, {100000, 1024}, {100000, 1 << 20}} {
		r := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.limit)))
		s := NewWide(t.TempDir(), "test", tc.limit)
		var want []Wide
		for i := range tc.n {
			e := Wide{Key: r.Uint64(), Doc: uint32(r.IntN(1 << 20))}
			switch {
			case i%7 == 0 && len(want) > 0: // a duplicate
				e = want[r.IntN(len(want))]
			case i%5 == 0 && len(want) > 0: // same high 32 bits, other low bits
				e.Key = want[r.IntN(len(want))].Key&^(1<<32-1) | uint64(r.Uint32())
			case i%3 == 0 && len(want) > 0: // same key, another document
				e.Key = want[r.IntN(len(want))].Key
			}
			want = append(want, e)
			if err := s.Add(e.Key, uint64(e.Doc)); err != nil {
				t.Fatal(err)
			}
		}
		slices.SortFunc(want, compareWide)
		if s.Len() != int64(tc.n) {
			t.Errorf("n=%d: Len %d", tc.n, s.Len())
		}
		if tc.n > tc.limit && s.Runs() == 0 {
			t.Errorf("n=%d limit=%d: nothing spilled", tc.n, tc.limit)
		}
		it, err := s.Iter()
		if err != nil {
			t.Fatal(err)
		}
		var got []Wide
		for e, ok := it.Next(); ok; e, ok = it.Next() {
			got = append(got, e)
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d limit=%d: got %d entries, not those of slices.SortFunc (%d)", tc.n, tc.limit, len(got), len(want))
		}
	}
}

// BenchmarkEntries sorts n band-key entries of random keys through a Sorter
// (32-bit keys: key<<32 | doc, 8 bytes) and a WideSorter (64-bit keys, 16
// bytes): add, spill runs of n/4, merge. SetBytes counts 8 bytes an entry
// for both, so that MB/s compare entries per second.
func BenchmarkEntries(b *testing.B) {
	for _, n := range []int{1 << 20, 1 << 23} {
		rng := rand.New(rand.NewPCG(1, 2))
		keys := make([]uint64, n)
		for i := range keys {
			keys[i] = rng.Uint64()
		}
		narrow := make([]uint64, n)
		wide := make([]uint64, 0, 2*n)
		for i, k := range keys {
			narrow[i] = k&^(1<<32-1) | uint64(i/16)
			wide = append(wide, k, uint64(i/16))
		}
		b.Run(fmt.Sprintf("n=%d/key=32", n), func(b *testing.B) {
			b.SetBytes(8 * int64(n))
			b.ReportAllocs()
			defer reportCPU(b, cpuTime(b))
			var sink uint64
			for b.Loop() {
				s := New(b.TempDir(), "bench", n/4)
				if err := s.Add(narrow...); err != nil {
					b.Fatal(err)
				}
				it, err := s.Iter(false)
				if err != nil {
					b.Fatal(err)
				}
				for v, ok := it.Next(); ok; v, ok = it.Next() {
					sink += v
				}
				it.Close()
			}
			_ = sink
		})
		b.Run(fmt.Sprintf("n=%d/key=64", n), func(b *testing.B) {
			b.SetBytes(8 * int64(n))
			b.ReportAllocs()
			defer reportCPU(b, cpuTime(b))
			var sink uint64
			for b.Loop() {
				s := NewWide(b.TempDir(), "bench", n/4)
				if err := s.Add(wide...); err != nil {
					b.Fatal(err)
				}
				it, err := s.Iter()
				if err != nil {
					b.Fatal(err)
				}
				for e, ok := it.Next(); ok; e, ok = it.Next() {
					sink += e.Key
				}
				it.Close()
			}
			_ = sink
		})
	}
}

// randomWide returns n entries whose keys share high bits in various ways:
// duplicates, keys equal in their high 32 bits, keys with constant high
// bytes (top bits, when narrow is set), runs of one key.
func randomWide(r *rand.Rand, n int, narrow bool) []Wide {
	a := make([]Wide, 0, n)
	for i := range n {
		e := Wide{Key: r.Uint64(), Doc: uint32(r.IntN(1 << 20))}
		if narrow {
			e.Key &= 1<<44 - 1 // bytes 6 and 7 constant
		}
		switch {
		case i%7 == 0 && i > 0:
			e = a[r.IntN(i)]
		case i%5 == 0 && i > 0:
			e.Key = a[r.IntN(i)].Key&^(1<<32-1) | uint64(r.Uint32())
		case i%3 == 0 && i > 0:
			e.Key = a[r.IntN(i)].Key
		}
		a = append(a, e)
	}
	return a
}

// TestSortWideInPlace: the in-place sort gives slices.SortFunc's order
// whatever the scratch's length, down to parts partitioned in place on
// every byte of the high 32 bits.
func TestSortWideInPlace(t *testing.T) {
	for _, n := range []int{0, 1, 63, 255, 256, 1000, 20000, 200000} {
		for _, scratch := range []int{0, 64, 1000, 1 << 20} {
			for _, narrow := range []bool{false, true} {
				r := rand.New(rand.NewPCG(uint64(n), uint64(scratch)))
				a := randomWide(r, n, narrow)
				want := slices.Clone(a)
				slices.SortFunc(want, compareWide)
				sortWideInPlace(a, make([]Wide, scratch))
				if !slices.Equal(a, want) {
					t.Fatalf("n=%d scratch=%d narrow=%v: not sorted as slices.SortFunc", n, scratch, narrow)
				}
			}
		}
	}
	// Every key equal in its high 32 bits, and every key equal.
	for _, mask := range []uint64{1<<32 - 1, 0} {
		r := rand.New(rand.NewPCG(7, mask))
		a := make([]Wide, 5000)
		for i := range a {
			a[i] = Wide{Key: 0xabcdef12<<32 | r.Uint64()&mask, Doc: r.Uint32()}
		}
		want := slices.Clone(a)
		slices.SortFunc(want, compareWide)
		sortWideInPlace(a, make([]Wide, 100))
		if !slices.Equal(a, want) {
			t.Fatalf("mask %#x: not sorted as slices.SortFunc", mask)
		}
	}
}

// TestWideSorterRuns: the merge of many runs (counts that are not powers
// of two, an empty in-memory remainder, runs of one key) yields what
// slices.SortFunc gives, and Runs and SpilledBytes count every run written
// in the background.
func TestWideSorterRuns(t *testing.T) {
	for _, tc := range []struct {
		n, limit int
		narrow   bool
	}{{1008 * 3, 1024, false}, {1008 * 5, 1024, true}, {77777, 1024, false}, {50000, 2000, true}} {
		r := rand.New(rand.NewPCG(uint64(tc.n), 3))
		want := randomWide(r, tc.n, tc.narrow)
		dir := t.TempDir()
		s := NewWide(dir, "test", tc.limit)
		for _, e := range want {
			if err := s.Add(e.Key, uint64(e.Doc)); err != nil {
				t.Fatal(err)
			}
		}
		slices.SortFunc(want, compareWide)
		perRun := tc.limit - tc.limit/64
		if s.Runs() != tc.n/perRun {
			t.Errorf("n=%d: %d runs, want %d", tc.n, s.Runs(), tc.n/perRun)
		}
		var size int64
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			info, _ := f.Info()
			size += info.Size()
		}
		if len(files) != s.Runs() || size != s.SpilledBytes() {
			t.Errorf("n=%d: %d files of %d bytes, Runs %d SpilledBytes %d", tc.n, len(files), size, s.Runs(), s.SpilledBytes())
		}
		it, err := s.Iter()
		if err != nil {
			t.Fatal(err)
		}
		var got []Wide
		for e, ok := it.Next(); ok; e, ok = it.Next() {
			if e != it.Last() {
				t.Fatalf("Last %v after Next %v", it.Last(), e)
			}
			got = append(got, e)
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d limit=%d: got %d entries, not those of slices.SortFunc (%d)", tc.n, tc.limit, len(got), len(want))
		}
		if files, _ := os.ReadDir(dir); len(files) != 0 {
			t.Errorf("n=%d: %d run files left after Close", tc.n, len(files))
		}
	}
}

// TestWideSorterSpillError: a run that cannot be written (its directory
// is gone) fails a later Add or Iter with the cause, not a panic or a
// silent loss.
func TestWideSorterSpillError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	s := NewWide(dir, "test", 1024)
	var err error
	for i := 0; i < 10000 && err == nil; i++ {
		err = s.Add(uint64(i), uint64(i))
	}
	if err == nil {
		_, err = s.Iter()
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("error %v, want one of a missing directory", err)
	}
	s.Close()
}

// TestWideRunCorrupt: a run file cut inside an entry, or holding a
// uvarint past 64 bits, a document past 32 bits or a key past 64 bits,
// fails the iterator with the run's name and the rule.
func TestWideRunCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name string
		tail []byte
		want error
	}{
		{"cut", []byte{0x85}, errRunCut},
		{"cut after key", []byte{0x05}, errRunCut},
		{"long uvarint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x01}, errRunVarint},
		{"document", binary.AppendUvarint([]byte{0x01}, 1<<32), errRunVarint},
		{"key", binary.AppendUvarint(binary.AppendUvarint(nil, 1<<64-1), 3), errRunVarint},
	} {
		dir := t.TempDir()
		s := NewWide(dir, "test", 1024)
		for i := range 2000 {
			if err := s.Add(uint64(i)<<40, uint64(i)); err != nil {
				t.Fatal(err)
			}
		}
		if s.Runs() != 1 {
			t.Fatalf("%d runs", s.Runs())
		}
		name := s.runs[0]
		f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(tc.tail)
		f.Close()
		it, err := s.Iter()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ok := it.Next(); ok; _, ok = it.Next() {
			n++
		}
		if err := it.Err(); !errors.Is(err, tc.want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v after %d entries, want %v naming %s", tc.name, err, n, tc.want, name)
		}
		it.Close()
	}
}

// FuzzWideRun decodes arbitrary bytes as a run file: no panic; what
// decodes without error is entries of nondecreasing keys whose encoding
// decodes to the same entries.
func FuzzWideRun(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x05, 0x01, 0x00, 0x02})
	f.Add(binary.AppendUvarint(binary.AppendUvarint(nil, 1<<63), 1<<31))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		decode := func(data []byte) ([]Wide, error) {
			w := &wideRun{r: bytes.NewReader(data), name: "fuzz", buf: make([]byte, 0, 64)}
			var out []Wide
			for {
				e, ok, err := w.next()
				if err != nil || !ok {
					return out, err
				}
				out = append(out, e)
			}
		}
		got, err := decode(data)
		if err != nil {
			if !errors.Is(err, errRunCut) && !errors.Is(err, errRunVarint) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if !slices.IsSortedFunc(got, func(a, b Wide) int { return cmp.Compare(a.Key, b.Key) }) {
			t.Fatalf("keys decrease: %v", got)
		}
		dir := t.TempDir()
		name, _, _, err := writeWideRun(dir, "fuzz", [][]Wide{got})
		if err != nil {
			t.Fatal(err)
		}
		again, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decode(again)
		if err != nil || !slices.Equal(back, got) {
			t.Fatalf("re-encoded run decodes to %v, %v; want %v", back, err, got)
		}
	})
}
