package index

import (
	"encoding/binary"
	"fmt"

	"github.com/neardup/neardup/minhash"
)

// A document's record is the same bytes in every backend: Pebble stores it
// under the document's number, Redis under its id.

// appendRecord appends a document record: the signature's slots packed as on
// the wire (minhash.AppendBinary's slot bytes: the words little-endian,
// Params.Bytes() of them); a uvarint holding the id length times two, plus
// one if postings were dropped at full buckets; the id; if postings were
// dropped, their number as a uvarint and, for each, its position among the
// document's distinct bucket keys in ascending order, as a uvarint; then the
// metadata to the end.
func appendRecord(dst []byte, p *minhash.Params, sig minhash.Signature, id string, dropped []int, meta []byte) []byte {
	n := p.Bytes()
	for _, w := range sig[:p.Words()] {
		k := min(n, 8)
		if k == 8 {
			dst = binary.LittleEndian.AppendUint64(dst, w)
		} else {
			for j := 0; j < k; j++ {
				dst = append(dst, byte(w>>(8*j)))
			}
		}
		n -= k
	}
	flag := uint64(0)
	if len(dropped) > 0 {
		flag = 1
	}
	dst = binary.AppendUvarint(dst, uint64(len(id))<<1|flag)
	dst = append(dst, id...)
	if flag == 1 {
		dst = binary.AppendUvarint(dst, uint64(len(dropped)))
		for _, i := range dropped {
			dst = binary.AppendUvarint(dst, uint64(i))
		}
	}
	return append(dst, meta...)
}

// record is a decoded document record; id, meta and dropped alias the
// stored bytes.
type record struct {
	sig     minhash.Signature
	id      []byte
	meta    []byte
	dropped []byte // uvarint positions of dropped postings
}

// droppedAt reports whether the posting of the document's i-th distinct
// bucket key was dropped.
func (r *record) droppedAt(i int) bool {
	b := r.dropped
	for len(b) > 0 {
		v, w := binary.Uvarint(b)
		if w <= 0 {
			return false
		}
		if int(v) == i {
			return true
		}
		b = b[w:]
	}
	return false
}

// decodeRecord reads a record; its signature is appended to sig.
func decodeRecord(sig minhash.Signature, p *minhash.Params, rec []byte) (record, error) {
	r := record{sig: sig}
	nb := p.Bytes()
	if len(rec) < nb+1 {
		return r, fmt.Errorf("%w: record of %d bytes, the signature alone takes %d", ErrCorrupt, len(rec), nb)
	}
	body := rec[:nb]
	for len(body) >= 8 {
		r.sig = append(r.sig, binary.LittleEndian.Uint64(body))
		body = body[8:]
	}
	if len(body) > 0 {
		var w uint64
		for j, c := range body {
			w |= uint64(c) << (8 * j)
		}
		r.sig = append(r.sig, w)
	}
	rest := rec[nb:]
	n, w := binary.Uvarint(rest)
	flag := n & 1
	n >>= 1
	if w <= 0 || n > uint64(len(rest)-w) {
		return r, fmt.Errorf("%w: bad id length in a record", ErrCorrupt)
	}
	r.id = rest[w : w+int(n)]
	rest = rest[w+int(n):]
	if flag == 0 {
		r.meta = rest
		return r, nil
	}
	nd, w := binary.Uvarint(rest)
	if w <= 0 || nd > uint64(len(rest)) {
		return r, fmt.Errorf("%w: bad dropped-postings count in a record", ErrCorrupt)
	}
	rest = rest[w:]
	list := rest
	for range nd {
		_, w := binary.Uvarint(rest)
		if w <= 0 {
			return r, fmt.Errorf("%w: bad dropped posting in a record", ErrCorrupt)
		}
		rest = rest[w:]
	}
	r.dropped = list[:len(list)-len(rest)]
	r.meta = rest
	return r, nil
}
