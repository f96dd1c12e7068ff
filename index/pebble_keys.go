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

	// bucketKeyBytes is the width of a bucket key in a posting: the high 32
	// bits of the 64-bit band key. With n postings in the index a query's
	// bucket meets a foreign key with probability n/2^32 (0.4% per bucket
	// at 16 million postings); verification drops such candidates.
	bucketKeyBytes = 4
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

func appendBucketPrefix(dst []byte, bk uint32) []byte {
	return binary.BigEndian.AppendUint32(append(dst, prefixPosting), bk)
}

func appendPostingKey(dst []byte, bk, doc uint32) []byte {
	return binary.BigEndian.AppendUint32(appendBucketPrefix(dst, bk), doc)
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

// parsePostingKey splits a posting key; ok is false if k is not one.
func parsePostingKey(k []byte) (bk, doc uint32, ok bool) {
	if len(k) != 1+bucketKeyBytes+docNumBytes || k[0] != prefixPosting {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(k[1:]), binary.BigEndian.Uint32(k[5:]), true
}

// parseSigKey reads the document number of a signature key.
func parseSigKey(k []byte) (uint32, bool) {
	if len(k) != 1+docNumBytes || k[0] != prefixSig {
		return 0, false
	}
	return binary.BigEndian.Uint32(k[1:]), true
}
