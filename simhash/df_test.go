package simhash

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/zeebo/xxh3"
)

// randDocs returns n documents of features drawn from a vocabulary of v
// features with a skewed (roughly Zipf) frequency, repeats within a
// document included, and the true document frequency of every feature.
func randDocs(r *rand.Rand, n, v, size int) ([][]uint64, map[uint64]int) {
	vocab := randFeatures(r, v)
	vocab[0] = 0 // feature 0 is tracked apart by AddDocument
	docs := make([][]uint64, n)
	df := make(map[uint64]int)
	for i := range docs {
		seen := make(map[uint64]bool)
		for range 1 + r.IntN(size) {
			f := vocab[int(float64(v)*math.Pow(r.Float64(), 3))] // skewed to the front
			docs[i] = append(docs[i], f)
			if !seen[f] {
				seen[f] = true
				df[f]++
			}
		}
	}
	return docs, df
}

func TestDFTableCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	docs, df := randDocs(r, 500, 3000, 200)
	// A wide table: no collisions among 3000 features in 2^20 counters,
	// except with probability about 3000²/2^21 per row for the pair … so
	// check the counts are exact for all but a handful.
	big, err := NewDFTable(DFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A narrow table: many collisions; counts may only be too high.
	small, err := NewDFTable(DFOptions{Rows: 1, LogWidth: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		big.AddDocument(d)
		small.AddDocument(d)
	}
	if big.Docs() != 500 || small.Docs() != 500 {
		t.Fatalf("Docs = %d, %d; want 500", big.Docs(), small.Docs())
	}
	inexact, over := 0, 0
	for f, want := range df {
		if got := big.Count(f); got != uint32(want) {
			if got < uint32(want) {
				t.Fatalf("Count(%#x) = %d below the true %d", f, got, want)
			}
			inexact++
		}
		got := small.Count(f)
		if got < uint32(want) {
			t.Fatalf("narrow table: Count(%#x) = %d below the true %d", f, got, want)
		}
		if got > uint32(want) {
			over++
		}
	}
	// Two rows of 2^20: a feature collides in both with probability about
	// (3000/2^20)² ≈ 1e-5.
	if inexact > 2 {
		t.Errorf("wide table: %d of %d counts inexact; want at most 2", inexact, len(df))
	}
	if over == 0 {
		t.Errorf("narrow table (256 counters, %d features): no count too high; the test should exercise collisions", len(df))
	}
	if got := big.Count(0); got != uint32(df[0]) {
		t.Errorf("Count(0) = %d; want %d", got, df[0])
	}
	// Repeats in a document count once, and an empty document counts.
	tb, _ := NewDFTable(DFOptions{Rows: 1, LogWidth: 10})
	tb.AddDocument([]uint64{7, 7, 7, 0, 0, 9})
	tb.AddDocument(nil)
	if tb.Count(7) != 1 || tb.Count(0) != 1 || tb.Count(9) != 1 || tb.Docs() != 2 {
		t.Errorf("counts 7:%d 0:%d 9:%d docs %d; want 1 1 1 2", tb.Count(7), tb.Count(0), tb.Count(9), tb.Docs())
	}
}

// TestDFTableMerge checks that tables counted over parts of a corpus and
// merged in any order equal the table counted over all of it.
func TestDFTableMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	docs, _ := randDocs(r, 300, 2000, 100)
	opts := DFOptions{Rows: 3, LogWidth: 9}
	whole, _ := NewDFTable(opts)
	for _, d := range docs {
		whole.AddDocument(d)
	}
	parts := make([]*DFTable, 4)
	for i := range parts {
		parts[i], _ = NewDFTable(opts)
	}
	for i, d := range docs {
		parts[(i*7)%4].AddDocument(d)
	}
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 1, 0, 2}} {
		m, _ := NewDFTable(opts)
		for _, i := range order {
			if err := m.Merge(parts[i]); err != nil {
				t.Fatal(err)
			}
		}
		if !m.Equal(whole) || m.Fingerprint() != whole.Fingerprint() {
			t.Errorf("merge in order %v differs from the whole", order)
		}
	}
	other, _ := NewDFTable(DFOptions{Rows: 3, LogWidth: 10})
	if err := whole.Merge(other); !errors.Is(err, ErrDFTable) {
		t.Errorf("merge of unequal options: %v; want ErrDFTable", err)
	}
	// Saturation.
	a, _ := NewDFTable(DFOptions{Rows: 1, LogWidth: 4})
	b, _ := NewDFTable(DFOptions{Rows: 1, LogWidth: 4})
	a.counts[3], b.counts[3] = math.MaxUint32-1, 5
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.counts[3] != math.MaxUint32 {
		t.Errorf("saturating merge: %d; want %d", a.counts[3], uint32(math.MaxUint32))
	}
	a.counts[3] = math.MaxUint32
	a.count(findInCell(a, 3))
	if a.counts[3] != math.MaxUint32 {
		t.Errorf("saturating count wrapped to %d", a.counts[3])
	}
}

// findInCell returns a feature that a one-row table puts in cell c.
func findInCell(t *DFTable, c int) uint64 {
	for f := uint64(1); ; f++ {
		if cell(f, 0, t.logWidth) == c {
			return f
		}
	}
}

func TestDFTableOptions(t *testing.T) {
	for _, o := range []DFOptions{{Rows: -1}, {Rows: MaxDFRows + 1}, {LogWidth: MinDFLogWidth - 1}, {LogWidth: MaxDFLogWidth + 1}} {
		if _, err := NewDFTable(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("NewDFTable(%+v) = %v; want ErrInvalidOptions", o, err)
		}
	}
	tb, err := NewDFTable(DFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tb.Options(); got != (DFOptions{Rows: DefaultDFRows, LogWidth: DefaultDFLogWidth}) {
		t.Errorf("Options() = %+v; want the defaults", got)
	}
	if got, want := tb.EncodedLen(), 16+4*2<<20+8; got != want {
		t.Errorf("EncodedLen = %d; want %d", got, want)
	}
}

// smallTable returns a one-row table of 16 counters after two documents.
func smallTable() *DFTable {
	t, _ := NewDFTable(DFOptions{Rows: 1, LogWidth: 4})
	t.AddDocument([]uint64{1, 2, 3, 3})
	t.AddDocument([]uint64{3, 0x8000000000000000})
	return t
}

// TestDFTableGolden pins the encoding: a change to it changes every TF-IDF
// params fingerprint, so it must be deliberate.
func TestDFTableGolden(t *testing.T) {
	tb := smallTable()
	enc, err := tb.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Features 1, 2, 3 and 2^63 fall in cells 9, 3, 13 and 8 (f·P1 >> 60).
	const want = "4e44444601010400" + "0200000000000000" +
		"00000000" + "00000000" + "00000000" + "01000000" + "00000000" + "00000000" + "00000000" + "00000000" +
		"01000000" + "01000000" + "00000000" + "00000000" + "00000000" + "02000000" + "00000000" + "00000000"
	if got := hex.EncodeToString(enc[:len(enc)-8]); got != want {
		t.Errorf("encoding\n got %s\nwant %s", got, want)
	}
	sum := binary.LittleEndian.Uint64(enc[len(enc)-8:])
	if sum != xxh3.Hash(enc[:len(enc)-8]) {
		t.Errorf("checksum %016x is not xxh3 of the bytes before it", sum)
	}
	if fp := tb.Fingerprint(); fp != sum {
		t.Errorf("Fingerprint = %016x; want the checksum %016x", fp, sum)
	}
	if got := tb.IDF().Fingerprint(); got != sum {
		t.Errorf("IDF().Fingerprint = %016x; want %016x", got, sum)
	}
	// A large table's streamed fingerprint equals the one-shot checksum.
	r := rand.New(rand.NewPCG(75, 76))
	docs, _ := randDocs(r, 100, 5000, 300)
	big, _ := NewDFTable(DFOptions{Rows: 2, LogWidth: 12})
	for _, d := range docs {
		big.AddDocument(d)
	}
	enc, _ = big.MarshalBinary()
	if got, want := big.Fingerprint(), xxh3.Hash(enc[:len(enc)-8]); got != want {
		t.Errorf("Fingerprint %016x; want xxh3 of the encoding %016x", got, want)
	}
}

func TestDFTableRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 78))
	docs, _ := randDocs(r, 200, 3000, 100)
	tb, _ := NewDFTable(DFOptions{Rows: 3, LogWidth: 10})
	for _, d := range docs {
		tb.AddDocument(d)
	}
	enc, err := tb.AppendBinary([]byte("prefix"))
	if err != nil {
		t.Fatal(err)
	}
	enc = enc[len("prefix"):]
	var back DFTable
	if err := back.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	if !back.Equal(tb) || back.Fingerprint() != tb.Fingerprint() {
		t.Fatal("round trip changed the table")
	}
	// The decoded table keeps counting like the original.
	back.AddDocument(docs[0])
	tb.AddDocument(docs[0])
	if !back.Equal(tb) {
		t.Fatal("decoded table counts differently")
	}
}

// TestDFTableCorrupt checks that every single-byte change, every truncation
// and appended bytes are refused, and that the error names the rule.
func TestDFTableCorrupt(t *testing.T) {
	enc, _ := smallTable().MarshalBinary()
	var tb DFTable
	for i := range enc {
		for _, x := range []byte{1, 0x80} {
			bad := bytes.Clone(enc)
			bad[i] ^= x
			if err := tb.UnmarshalBinary(bad); !errors.Is(err, ErrDFTable) {
				t.Fatalf("byte %d ^ %#x: %v; want ErrDFTable", i, x, err)
			}
		}
	}
	for n := range len(enc) {
		if err := tb.UnmarshalBinary(enc[:n]); !errors.Is(err, ErrDFTable) {
			t.Fatalf("cut to %d bytes: %v; want ErrDFTable", n, err)
		}
	}
	if err := tb.UnmarshalBinary(append(bytes.Clone(enc), 0)); !errors.Is(err, ErrDFTable) {
		t.Fatalf("a byte appended: %v; want ErrDFTable", err)
	}
	if tb.counts != nil {
		t.Fatal("a refused encoding changed the table")
	}
	// Errors name the field.
	bad := bytes.Clone(enc)
	bad[4] = 2
	if err := tb.UnmarshalBinary(bad); err == nil || !bytes.Contains([]byte(err.Error()), []byte("format version 2 at offset 4")) {
		t.Errorf("version 2: %v", err)
	}
}

func FuzzDFTable(f *testing.F) {
	enc, _ := smallTable().MarshalBinary()
	f.Add(enc)
	f.Add(enc[:20])
	f.Add([]byte("NDDF\x01\x01\x04\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var tb DFTable
		if err := tb.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrDFTable) {
				t.Fatalf("error %v does not wrap ErrDFTable", err)
			}
			return
		}
		// Accepted: it re-encodes to the same bytes, and its weights work.
		again, _ := tb.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("re-encoding differs")
		}
		x := tb.IDF()
		if w := x.Weight(12345); w < 8 || w > 363 {
			t.Fatalf("weight %d out of 8..363", w)
		}
	})
}

// TestIDFWeights checks the weights against the formula, at both ends of
// its range, and that the IDF takes the largest weight over the rows (the
// least count).
func TestIDFWeights(t *testing.T) {
	for _, c := range []struct {
		df   uint32
		docs uint64
		want uint16
	}{
		{0, 0, 8},                     // 8·(ln(1/1) + 1) = 8
		{5, 5, 8},                     // in every document: 8·1
		{9, 5, 8},                     // counts above N (collisions) clamp to N
		{0, 1, 14},                    // 8·(ln 2 + 1) = 13.55
		{1, 999, 58},                  // 8·(ln(1000/2) + 1) = 57.72
		{99, 1_000_000_000, 137},      // 8·(ln(1e9/100) + 1) = 136.95
		{math.MaxUint32, 1 << 40, 52}, // 8·(ln 256 + 1) = 52.36
		{0, math.MaxUint64, 363},      // 8·(64 ln 2 + 1) = 362.89, the largest
	} {
		if got := weightOf(c.df, c.docs); got != c.want {
			t.Errorf("weightOf(%d, %d) = %d; want %d", c.df, c.docs, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(79, 80))
	docs, df := randDocs(r, 400, 4000, 150)
	tb, _ := NewDFTable(DFOptions{Rows: 3, LogWidth: 8}) // collisions: rows disagree
	for _, d := range docs {
		tb.AddDocument(d)
	}
	x := tb.IDF()
	if x.Docs() != 400 {
		t.Errorf("IDF Docs = %d; want 400", x.Docs())
	}
	for f := range df {
		if got, want := x.Weight(f), int(weightOf(tb.Count(f), 400)); got != want {
			t.Fatalf("Weight(%#x) = %d; want %d (count %d)", f, got, want, tb.Count(f))
		}
	}
	// Frozen: later counts do not change the weights.
	w := x.Weight(docs[0][0])
	for range 100 {
		tb.AddDocument(docs[0])
	}
	if x.Weight(docs[0][0]) != w {
		t.Error("IDF changed after the table did")
	}
}
