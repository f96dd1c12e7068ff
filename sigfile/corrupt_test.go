package sigfile_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sigfile"
)

// smallFiles are files of several blocks (the last one partial) for the
// corruption tests: MinHash with a partial last byte, and SimHash.
func smallFiles(t *testing.T) map[string][]byte {
	rng := rand.New(rand.NewPCG(7, 8))
	files := map[string][]byte{}
	for name, h := range map[string]sigfile.Header{
		"minhash": sigfile.MinHashHeader(shingle.Prose, minhash.Params{K: 5, Bits: 4, Seed: 3}),
		"simhash": sigfile.SimHashHeader(shingle.Prose, sigfile.SimHashParams{}),
	} {
		h.BlockBytes = sigfile.MinBlockBytes
		files[name] = encode(t, h, randomRecords(rng, h, 40, 12))
	}
	return files
}

// layout returns the offsets of a valid file's blocks and of its trailer.
func layout(t *testing.T, data []byte) (blocks []int, trailer int) {
	t.Helper()
	off := 30 + int(binary.LittleEndian.Uint16(data[28:]))
	off += 2 + int(binary.LittleEndian.Uint16(data[off:])) + 8
	for binary.LittleEndian.Uint32(data[off:]) != 0 {
		blocks = append(blocks, off)
		off += 8 + int(binary.LittleEndian.Uint32(data[off+4:])) + 8
	}
	if off+24 != len(data) {
		t.Fatalf("trailer at %d, file of %d bytes", off, len(data))
	}
	return blocks, off
}

// TestTruncated cuts a file at every offset: each cut is refused as
// truncated, naming the file, including cuts between two blocks and the
// empty file.
func TestTruncated(t *testing.T) {
	for name, data := range smallFiles(t) {
		blocks, _ := layout(t, data)
		if len(blocks) < 3 {
			t.Fatalf("%s: %d blocks; the test wants several", name, len(blocks))
		}
		for cut := range len(data) {
			_, _, err := readAll(data[:cut], "cut.sig", nil)
			if !errors.Is(err, sigfile.ErrTruncated) || !strings.Contains(err.Error(), "cut.sig") {
				t.Fatalf("%s cut at %d of %d bytes: got %v; want ErrTruncated naming the file", name, cut, len(data), err)
			}
		}
		_, _, err := readAll(data[:blocks[2]], "cut.sig", nil)
		if !strings.Contains(err.Error(), "between two blocks") {
			t.Errorf("%s cut at a block boundary: %v; want it to say so", name, err)
		}
	}
	_, _, err := readAll(nil, "empty.sig", nil)
	if !errors.Is(err, sigfile.ErrTruncated) || !strings.Contains(err.Error(), "empty file (0 bytes)") {
		t.Errorf("0-byte file: got %v; want ErrTruncated saying it is empty", err)
	}
}

// TestFlipped changes every byte of a file in several ways: none reads as
// valid. A change inside a block is a checksum error naming the block.
func TestFlipped(t *testing.T) {
	for name, data := range smallFiles(t) {
		blocks, trailer := layout(t, data)
		for off := range data {
			for _, mask := range []byte{0x01, 0x80, 0xff} {
				bad := bytes.Clone(data)
				bad[off] ^= mask
				_, _, err := readAll(bad, "flip.sig", nil)
				if err == nil {
					t.Fatalf("%s: byte %d ^ %#x read as valid", name, off, mask)
				}
				if !strings.Contains(err.Error(), "flip.sig") {
					t.Fatalf("%s: byte %d ^ %#x: error %q does not name the file", name, off, mask, err)
				}
				if off >= blocks[0]+8 && off < trailer && !isBlockHeader(blocks, off) {
					if !errors.Is(err, sigfile.ErrCorrupt) || !strings.Contains(err.Error(), "block") || !strings.Contains(err.Error(), "checksum") {
						t.Fatalf("%s: byte %d ^ %#x in a block: got %v; want a block checksum error", name, off, mask, err)
					}
				}
			}
		}
	}
}

func isBlockHeader(blocks []int, off int) bool {
	for _, b := range blocks {
		if off >= b && off < b+8 {
			return true
		}
	}
	return false
}

// TestBlocksRearranged drops, repeats and swaps whole blocks, and appends
// bytes after the trailer: each is refused as corrupt.
func TestBlocksRearranged(t *testing.T) {
	data := smallFiles(t)["minhash"]
	blocks, trailer := layout(t, data)
	b1, b2, b3 := data[blocks[1]:blocks[2]], data[blocks[2]:blocks[3]], data[blocks[3]:blocks[4]]
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	head, tail := data[:blocks[1]], data[blocks[4]:]
	// A block of another file with the same header, at the same position and
	// with as many records: only the trailer's chained checksum differs.
	h := sigfile.MinHashHeader(shingle.Prose, minhash.Params{K: 5, Bits: 4, Seed: 3})
	h.BlockBytes = sigfile.MinBlockBytes
	_, recs, err := readAll(data, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	recs[1].sig[0] ^= 1 // in block 0
	other := encode(t, h, recs)
	oblocks, _ := layout(t, other)
	if !bytes.Equal(data[blocks[1]:trailer], other[oblocks[1]:oblocks[1]+trailer-blocks[1]]) || bytes.Equal(data[blocks[0]:blocks[1]], other[oblocks[0]:oblocks[1]]) {
		t.Fatal("the other file should differ in block 0 only")
	}
	for name, bad := range map[string][]byte{
		"drop":         cat(head, b1, b3, tail),
		"drop last":    cat(data[:blocks[len(blocks)-1]], data[trailer:]),
		"repeat":       cat(head, b1, b2, b2, b3, tail),
		"swap":         cat(head, b1, b3, b2, tail),
		"trailing":     cat(data, []byte{0}),
		"two files":    cat(data, data),
		"empty block":  cat(head, []byte{0, 0, 0, 0, 0, 0, 0, 0}, b1, b2, b3, tail),
		"count + 1":    cat(data[:trailer+8], binary.LittleEndian.AppendUint64(nil, binary.LittleEndian.Uint64(data[trailer+8:])+1), data[trailer+16:]),
		"trailer only": cat(data[:blocks[0]], data[trailer:]),
		"spliced":      cat(data[:blocks[0]], other[oblocks[0]:oblocks[1]], data[blocks[1]:]),
	} {
		if _, _, err := readAll(bad, "x.sig", nil); !errors.Is(err, sigfile.ErrCorrupt) {
			t.Errorf("%s: got %v; want ErrCorrupt", name, err)
		}
	}
}

func TestNotASignatureFile(t *testing.T) {
	data := smallFiles(t)["simhash"]
	for name, c := range map[string]struct {
		data []byte
		want error
	}{
		"wrong magic":    {append([]byte("NDSX"), data[4:]...), sigfile.ErrNotSignatureFile},
		"text":           {[]byte("{\"id\": 1}\n"), sigfile.ErrNotSignatureFile},
		"short text":     {[]byte("{}"), sigfile.ErrNotSignatureFile},
		"magic only":     {[]byte("NDSF"), sigfile.ErrTruncated},
		"future version": {append([]byte("NDSF\x02"), data[5:]...), sigfile.ErrVersion},
		"version 0":      {append([]byte("NDSF\x00"), data[5:]...), sigfile.ErrCorrupt},
	} {
		_, _, err := readAll(c.data, "f.sig", nil)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "f.sig") {
			t.Errorf("%s: got %v; want %v naming the file", name, err, c.want)
		}
	}
	_, _, err := readAll(append([]byte("NDSF\x07"), data[5:]...), "f.sig", nil)
	if !strings.Contains(err.Error(), "newer") {
		t.Errorf("future version: %v; want it to say a newer neardup wrote it", err)
	}
}

// TestValidChecksumBadContent re-checksums headers and blocks whose
// content breaks a rule, as a faulty writer would make them: the reader
// still refuses them.
func TestValidChecksumBadContent(t *testing.T) {
	h := sigfile.MinHashHeader(shingle.Prose, minhash.Params{K: 5, Bits: 4})
	data := encode(t, h, []record{{[]byte("a"), []uint64{0x12345}}, {[]byte("bc"), []uint64{0xfffff}}})
	blocks, _ := layout(t, data)
	hlen := blocks[0] - 8
	rehead := func(mut func(b []byte)) []byte {
		bad := bytes.Clone(data)
		mut(bad)
		binary.LittleEndian.PutUint64(bad[hlen:], xxh3.Hash(bad[:hlen]))
		return bad
	}
	reblock := func(mut func(b []byte)) []byte {
		bad := bytes.Clone(data)
		b := blocks[0]
		mut(bad[b:])
		end := b + 8 + int(binary.LittleEndian.Uint32(bad[b+4:]))
		binary.LittleEndian.PutUint64(bad[end:], xxh3.HashSeed(bad[b:end], 0))
		return bad
	}
	for name, bad := range map[string][]byte{
		"flags":          rehead(func(b []byte) { b[6] = 1 }),
		"reserved":       rehead(func(b []byte) { b[13] = 1 }),
		"sketch":         rehead(func(b []byte) { b[5] = 9 }),
		"slots":          rehead(func(b []byte) { b[8] = 6 }),
		"bits":           rehead(func(b []byte) { b[12] = 8 }),
		"block bytes":    rehead(func(b []byte) { binary.LittleEndian.PutUint32(b[16:], 1) }),
		"shard":          rehead(func(b []byte) { b[20] = 1 }),
		"padding":        reblock(func(b []byte) { b[8+1+1+2] |= 0xf0 }),
		"id length":      reblock(func(b []byte) { b[8] = 0x81 }),
		"record count":   reblock(func(b []byte) { b[0] = 1 }),
		"non-canonical":  reblock(func(b []byte) { b[8] = 0x80 }),
		"records beyond": reblock(func(b []byte) { b[0] = 3 }),
	} {
		_, _, err := readAll(bad, "x.sig", nil)
		if !errors.Is(err, sigfile.ErrCorrupt) {
			t.Errorf("%s: got %v; want ErrCorrupt", name, err)
		}
	}
}
