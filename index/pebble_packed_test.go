package index

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// decodePacked reads every posting of a group value.
func decodePacked(v []byte, lowBits uint) ([]posting, error) {
	var it packedIter
	if err := it.init(v, lowBits); err != nil {
		return nil, err
	}
	var ps []posting
	for {
		low, doc, ok, err := it.next()
		if err != nil || !ok {
			return ps, err
		}
		ps = append(ps, posting{low, doc})
	}
}

// randomGroup makes n distinct postings sorted by (low, doc), with low
// below 2^lowBits and documents below maxDoc, some sharing a bucket.
func randomGroup(rng *rand.Rand, n int, lowBits uint, maxDoc uint32) []posting {
	seen := map[posting]bool{}
	var ps []posting
	for len(ps) < n {
		p := posting{rng.Uint64N(1 << lowBits), rng.Uint32N(maxDoc)}
		if len(ps) > 0 && rng.IntN(5) == 0 {
			p.low = ps[rng.IntN(len(ps))].low // a shared bucket
		}
		if !seen[p] {
			seen[p] = true
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b posting) int {
		return cmp.Or(cmp.Compare(a.low, b.low), cmp.Compare(a.doc, b.doc))
	})
	return ps
}

func TestPackedRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name    string
		ps      []posting
		lowBits uint
	}{
		{"one", []posting{{0, 0}}, 8},
		{"one at the top", []posting{{1<<31 - 1, 1<<32 - 1}}, 31},
		{"one bucket", []posting{{7, 1}, {7, 2}, {7, 1000}, {7, 1 << 31}}, 12},
		{"wide gaps", []posting{{0, 5}, {1<<20 - 1, 6}}, 20},
		{"random 12-bit", randomGroup(rng, 32, 12, 1<<20), 12},
		{"random 13-bit, big", randomGroup(rng, 2000, 13, 1<<24), 13},
		{"random 31-bit", randomGroup(rng, 100, 31, 1<<31), 31},
		{"dense", randomGroup(rng, 500, 8, 100), 8},
		// 8-byte keys: 64 − G bits below the group.
		{"one at the top, 63-bit", []posting{{1<<63 - 1, 1<<32 - 1}}, 63},
		{"random 45-bit", randomGroup(rng, 32, 45, 1<<20), 45},
		{"random 63-bit", randomGroup(rng, 100, 63, 1<<32-1), 63},
		{"one bucket, 40-bit", []posting{{1 << 39, 1}, {1 << 39, 2}}, 40},
	} {
		v := appendPacked([]byte("prefix"), tc.ps)
		if !bytes.HasPrefix(v, []byte("prefix")) {
			t.Fatalf("%s: appendPacked lost dst", tc.name)
		}
		got, err := decodePacked(v[6:], tc.lowBits)
		if err != nil || !slices.Equal(got, tc.ps) {
			t.Errorf("%s: decoded %v, %v; want %v", tc.name, got, err, tc.ps)
		}
	}
}

// TestPackedGolden pins the encoding: a change to it is a new layout
// version.
func TestPackedGolden(t *testing.T) {
	for _, tc := range []struct {
		ps   []posting
		want string
	}{
		{[]posting{{0, 0}}, "00000100"},
		{[]posting{{5, 1}, {5, 3}, {200, 2}}, "0502034ac0bf21"},
		{[]posting{{1000, 70000}, {3000, 1}}, "0a1102d0878b18f4010000"},
	} {
		got := hex.EncodeToString(appendPacked(nil, tc.ps))
		if got != tc.want {
			t.Errorf("appendPacked(%v) = %s; want %s", tc.ps, got, tc.want)
		}
		v, _ := hex.DecodeString(tc.want)
		if ps, err := decodePacked(v, 12); err != nil || !slices.Equal(ps, tc.ps) {
			t.Errorf("decoding %s: %v, %v; want %v", tc.want, ps, err, tc.ps)
		}
	}
}

// TestPackedSize checks the density the layout is for: 16 million
// postings in 2^19 groups (about 30 each, 13 bits below the group) of
// documents numbered below 2^20 take under 4 bytes a posting.
func TestPackedSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var n, size int
	for range 200 {
		ps := randomGroup(rng, 30, 13, 1<<20)
		n += len(ps)
		size += len(appendPacked(nil, ps))
	}
	if per := float64(size) / float64(n); per > 4 {
		t.Errorf("%.2f bytes a posting; want under 4", per)
	}
}

func TestPackedCorrupt(t *testing.T) {
	good := appendPacked(nil, []posting{{5, 1}, {5, 3}, {200, 2}})
	for _, tc := range []struct {
		name string
		v    []byte
	}{
		{"empty", nil},
		{"short", good[:2]},
		{"truncated", good[:len(good)-1]},
		{"zero count", []byte{0, 0, 0, 0}},
		{"count past the bits", []byte{0, 0, 9, 0}},
		{"rice parameter 32", []byte{32, 0, 1, 0}},
		{"width 33", []byte{0, 33, 1, 0}},
		{"beyond the group", appendPacked(nil, []posting{{300, 1}})},                  // 12 bits is fine, 8 is not
		{"out of order", []byte{0, 2, 2, 0x14}},                                       // two postings of low 0: documents 2 then 1
		{"repeated", []byte{0, 2, 2, 0x24}},                                           // two postings of low 0: documents 2 and 2
		{"unary overflow", []byte{0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, // a gap past 2^8
	} {
		_, err := decodePacked(tc.v, 8)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s (%x): %v; want ErrCorrupt", tc.name, tc.v, err)
		}
	}
}

func TestPackedGroupBits(t *testing.T) {
	for _, tc := range []struct {
		postings int64
		want     int
	}{
		{0, 1}, {64, 1}, {66, 2}, {16_000_000, 19}, {1 << 40, maxPackedGroupBits},
	} {
		if got := packedGroupBits(tc.postings); got != tc.want {
			t.Errorf("packedGroupBits(%d) = %d; want %d", tc.postings, got, tc.want)
		}
	}
}

// FuzzPackedGroup: any bytes decode or fail with ErrCorrupt, without
// panicking; what decodes is sorted, distinct and within its group, and
// encodes to a value that decodes to the same postings.
func FuzzPackedGroup(f *testing.F) {
	f.Add(appendPacked(nil, []posting{{5, 1}, {5, 3}, {200, 2}}), uint8(12))
	f.Add(appendPacked(nil, []posting{{0, 0}}), uint8(8))
	f.Add(appendPacked(nil, randomGroup(rand.New(rand.NewPCG(5, 6)), 40, 13, 1<<20)), uint8(13))
	f.Add([]byte{0, 0, 1, 0xff}, uint8(31))
	f.Fuzz(func(t *testing.T, v []byte, lb uint8) {
		lowBits := 8 + uint(lb)%24
		ps, err := decodePacked(v, lowBits)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		for i, p := range ps {
			if uint64(p.low) >= 1<<lowBits || i > 0 && (p.low < ps[i-1].low || p.low == ps[i-1].low && p.doc <= ps[i-1].doc) {
				t.Fatalf("decoded %v: not sorted, distinct and below 2^%d", ps, lowBits)
			}
		}
		again, err := decodePacked(appendPacked(nil, ps), lowBits)
		if err != nil || !slices.Equal(again, ps) {
			t.Fatalf("round trip of %v: %v, %v", ps, again, err)
		}
	})
}
