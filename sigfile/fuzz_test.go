package sigfile_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// legacyOpts reads the old-format seeds: prose, default params.
var legacyOpts = &sigfile.ReadOptions{Legacy: &sigfile.Legacy{Spec: shingle.Prose, Params: minhash.Params{}}}

// FuzzReader reads arbitrary bytes as a signature file (seeds in
// testdata/fuzz/FuzzReader). It must never panic, never allocate more than
// the format's bounds allow, and return either an error wrapping one of the
// package's sentinels or records that, written again under the header read,
// read back the same.
func FuzzReader(f *testing.F) {
	for _, c := range goldenCases() {
		h := c.h
		recs := randomRecords(rand.New(rand.NewPCG(1, 1)), h, 5, 4)
		f.Add(encode(f, h, recs), false, false)
		f.Add(encode(f, h, recs), false, true)
	}
	f.Add(minhash.AppendBinary(nil, *(&minhash.Params{}).EnsureDefaults(), shingle.Prose.Fingerprint(), []byte("a"), make(minhash.Signature, 64)), true, false)
	f.Fuzz(func(t *testing.T, data []byte, legacy, fix bool) {
		opts := (*sigfile.ReadOptions)(nil)
		if legacy {
			opts = legacyOpts
		}
		if fix {
			data = fixChecksums(bytes.Clone(data))
		}
		h, recs, err := readAll(data, "fuzz", opts)
		if err != nil {
			for _, s := range []error{sigfile.ErrNotSignatureFile, sigfile.ErrVersion, sigfile.ErrTruncated, sigfile.ErrCorrupt,
				sigfile.ErrLegacy, sigfile.ErrSpecMismatch, sigfile.ErrParamsMismatch} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error %v wraps no sentinel", err)
		}
		if h.Version == 0 {
			return // old format: no header to write again
		}
		again := encode(t, h, recs)
		h2, recs2, err := readAll(again, "again", nil)
		if err != nil {
			t.Fatalf("a file written from a valid one's records does not read: %v", err)
		}
		if h2 != h {
			t.Fatalf("header %+v read back as %+v", h, h2)
		}
		if len(recs2) != len(recs) {
			t.Fatalf("%d records read back as %d", len(recs), len(recs2))
		}
		for i := range recs {
			if !bytes.Equal(recs[i].id, recs2[i].id) || !equalWords(recs[i].sig, recs2[i].sig) {
				t.Fatalf("record %d changed on the round trip", i)
			}
		}
	})
}

// fixChecksums rewrites, as far as the framing can be followed, the
// header's, every block's and the trailer's checksums and the trailer's
// count to match the content, so that the fuzzer reaches the checks behind
// the checksums (header fields, record framing, padding).
func fixChecksums(b []byte) []byte {
	if len(b) < 30 {
		return b
	}
	off := 30 + int(binary.LittleEndian.Uint16(b[28:]))
	if off+2 > len(b) {
		return b
	}
	off += 2 + int(binary.LittleEndian.Uint16(b[off:]))
	if off+8 > len(b) {
		return b
	}
	binary.LittleEndian.PutUint64(b[off:], xxh3.Hash(b[:off]))
	c := xxh3.Hash(b[:off])
	off += 8
	var count uint64
	for block := uint64(0); off+8 <= len(b); block++ {
		n := binary.LittleEndian.Uint32(b[off:])
		if n == 0 {
			if off+24 <= len(b) {
				binary.LittleEndian.PutUint64(b[off+8:], count)
				binary.LittleEndian.PutUint64(b[off+16:], chainSum(c, count))
			}
			break
		}
		end := off + 8 + int(binary.LittleEndian.Uint32(b[off+4:]))
		if end+8 > len(b) {
			break
		}
		sum := xxh3.HashSeed(b[off:end], block)
		binary.LittleEndian.PutUint64(b[end:], sum)
		c = chainSum(c, sum)
		count += uint64(n)
		off = end + 8
	}
	return b
}

func chainSum(c, sum uint64) uint64 {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], c)
	binary.LittleEndian.PutUint64(b[8:], sum)
	return xxh3.Hash(b[:])
}

func equalWords(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzRoundTrip writes records made from arbitrary bytes under headers of
// every slot width and reads them back: the same records, whatever the
// block size, and a Reader that stops at EOF after exactly as many.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("seed"), uint16(128), uint8(5), uint16(64))
	f.Add([]byte{}, uint16(1), uint8(0), uint16(0))
	f.Add(bytes.Repeat([]byte{0xff, 0x00, 0x7f}, 300), uint16(13), uint8(2), uint16(100))
	f.Fuzz(func(t *testing.T, data []byte, k uint16, bitsIdx uint8, block uint16) {
		bits := []int{1, 2, 4, 8, 16, 32, 64, 0}[bitsIdx%8]
		var h sigfile.Header
		if bits == 0 {
			h = sigfile.SimHashHeader(shingle.Prose, sigfile.SimHashParams{})
		} else {
			h = sigfile.MinHashHeader(shingle.Prose, minhash.Params{K: 1 + int(k)%512, Bits: bits})
		}
		h.BlockBytes = sigfile.MinBlockBytes + int(block)
		// Records from the data: an id length byte, the id, then words.
		var recs []record
		rest := data
		for len(rest) > 0 {
			n := min(int(rest[0]), len(rest)-1)
			id := rest[1 : 1+n]
			rest = rest[1+n:]
			sig := make([]uint64, h.Words())
			for i := range sig {
				var b [8]byte
				rest = rest[copy(b[:], rest):]
				sig[i] = binary.LittleEndian.Uint64(b[:])
			}
			if pad := h.Words()*64 - h.Slots()*h.SlotBits(); pad > 0 {
				sig[len(sig)-1] &= ^uint64(0) >> pad
			}
			recs = append(recs, record{id, sig})
		}
		file := encode(t, h, recs)
		r, err := sigfile.NewReader(bytes.NewReader(file), "rt", nil)
		if err != nil {
			t.Fatal(err)
		}
		var rec sigfile.Record
		for i, want := range recs {
			if err := r.Next(&rec); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
			if !bytes.Equal(rec.ID, want.id) || !equalWords(rec.Sig, want.sig) {
				t.Fatalf("record %d: got %q %x; want %q %x", i, rec.ID, rec.Sig, want.id, want.sig)
			}
		}
		if err := r.Next(&rec); err != io.EOF {
			t.Fatalf("after %d records: got %v; want io.EOF", len(recs), err)
		}
		if r.Count() != int64(len(recs)) {
			t.Fatalf("Count %d; want %d", r.Count(), len(recs))
		}
	})
}
