package index

import "encoding/binary"

// The keys of a Pebble index (see "Layout" in the package doc).
const (
	prefixMeta    = 'm'
	prefixDF      = 'f' // the document-frequency table of a TF-IDF SimHash index
	prefixID      = 'i'
	prefixPosting = 'p'
	prefixPacked  = 'q'
	prefixSig     = 's'

	// docNumBytes is the width of a document number.
	docNumBytes = 4
	// maxDocNum is the largest document number.
	maxDocNum = 1<<32 - 1
)

var (
	metaKey = []byte{prefixMeta}
	dfKey   = []byte{prefixDF}
)

func appendIDKey(dst []byte, id string) []byte {
	return append(append(dst, prefixID), id...)
}

func appendSigKey(dst []byte, doc uint32) []byte {
	return binary.BigEndian.AppendUint32(append(dst, prefixSig), doc)
}

// appendBucketPrefix appends the prefix of the postings of bucket bk, a key
// left-aligned in 64 bits (Config.keysOf), stored in its high w bytes (the
// index's Config.BucketKeyBytes).
func appendBucketPrefix(dst []byte, bk uint64, w int) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], bk)
	return append(append(dst, prefixPosting), b[:w]...)
}

func appendPostingKey(dst []byte, bk uint64, doc uint32, w int) []byte {
	return binary.BigEndian.AppendUint32(appendBucketPrefix(dst, bk, w), doc)
}

// appendGroupKey appends the key of a group of packed postings.
func appendGroupKey(dst []byte, group uint32) []byte {
	return binary.BigEndian.AppendUint32(append(dst, prefixPacked), group)
}

// parseGroupKey reads the group number of a packed-postings key.
func parseGroupKey(k []byte) (uint32, bool) {
	if len(k) != 5 || k[0] != prefixPacked {
		return 0, false
	}
	return binary.BigEndian.Uint32(k[1:]), true
}

// parsePostingKey splits a posting key of w-byte bucket keys, returning the
// key left-aligned; ok is false if k is not one.
func parsePostingKey(k []byte, w int) (bk uint64, doc uint32, ok bool) {
	if len(k) != 1+w+docNumBytes || k[0] != prefixPosting {
		return 0, 0, false
	}
	var b [8]byte
	copy(b[:], k[1:1+w])
	return binary.BigEndian.Uint64(b[:]), binary.BigEndian.Uint32(k[1+w:]), true
}

// parseSigKey reads the document number of a signature key.
func parseSigKey(k []byte) (uint32, bool) {
	if len(k) != 1+docNumBytes || k[0] != prefixSig {
		return 0, false
	}
	return binary.BigEndian.Uint32(k[1:]), true
}
