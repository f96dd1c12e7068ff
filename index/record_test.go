package index

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/neardup/neardup/minhash"
)

// FuzzDecodeRecord: any bytes decode or fail without panicking, and a
// record made from the decoded parts encodes back to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	p := &minhash.Params{K: 12, Bits: 8}
	p.EnsureDefaults()
	sig := minhash.Signature{0x0102030405060708, 0x090a0b0c}
	f.Add(appendRecord(nil, p, sig, "doc-1", nil, nil), 0)
	f.Add(appendRecord(nil, p, sig, "d", []int{0, 3, 15}, []byte(`{"a":1}`)), 1)
	f.Add([]byte{1, 2, 3}, 2)
	f.Fuzz(func(t *testing.T, rec []byte, _ int) {
		r, err := decodeRecord(nil, p, rec)
		if err != nil {
			return
		}
		var dropped []int
		for b := r.dropped; len(b) > 0; {
			v, w := binary.Uvarint(b)
			dropped = append(dropped, int(v))
			b = b[w:]
		}
		again := appendRecord(nil, p, r.sig, string(r.id), dropped, r.meta)
		r2, err := decodeRecord(nil, p, again)
		if err != nil || !slices.Equal(r2.sig, r.sig) || !bytes.Equal(r2.id, r.id) || !bytes.Equal(r2.meta, r.meta) {
			t.Fatalf("round trip of %x: %x (%v)", rec, again, err)
		}
		for _, i := range dropped {
			if !r2.droppedAt(i) {
				t.Fatalf("dropped posting %d lost", i)
			}
		}
	})
}

func TestRecordRoundTrip(t *testing.T) {
	for _, bits := range []int{1, 8, 16, 32, 64} {
		p := &minhash.Params{K: 100, Bits: bits}
		p.EnsureDefaults()
		sig := make(minhash.Signature, p.Words())
		for i := range sig {
			sig[i] = uint64(i+1) * 0x9e3779b97f4a7c15
		}
		if pad := p.Words()*64 - p.K*p.Bits; pad > 0 {
			sig[len(sig)-1] &= 1<<(64-pad) - 1
		}
		rec := appendRecord(nil, p, sig, "id/é", []int{2, 7}, []byte(`{"x":true}`))
		r, err := decodeRecord(nil, p, rec)
		if err != nil || !slices.Equal(r.sig, sig) || string(r.id) != "id/é" || string(r.meta) != `{"x":true}` || !r.droppedAt(7) || r.droppedAt(3) {
			t.Errorf("bits %d: %+v, %v", bits, r, err)
		}
	}
}
