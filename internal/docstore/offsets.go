package docstore

import "sort"

// offsetPageBits sets the page of an Offsets table: 2^14 values, 64 KiB.
const offsetPageBits = 14

const (
	offsetPageLen  = 1 << offsetPageBits
	offsetPageMask = offsetPageLen - 1
)

// OffsetBytes is what one value costs an Offsets table, its pages' slack
// aside (at most one page of 64 KiB).
const OffsetBytes = 4

// Offsets is an append-only table of non-decreasing int64 values (byte
// offsets) in 4 bytes each: their low 32 bits in pages of 64 KiB, and their
// high 32 bits only where they change (once every 4 GiB of offsets, so a
// list of a few entries). Paging it means growing it never copies it, nor
// holds the old copy beside the new one, as growing a slice by append does.
// Not safe for concurrent appends; At is safe for concurrent use once
// appends are done.
type Offsets struct {
	pages []*[offsetPageLen]uint32
	n     int
	last  int64
	hiAt  []int   // indexes where the high 32 bits change, ascending
	hi    []int64 // the high 32 bits (shifted in place) from hiAt[k] on
}

// Append adds v, which must not be below the last value appended.
func (o *Offsets) Append(v int64) {
	if v < o.last {
		panic("docstore: Offsets.Append: decreasing value")
	}
	if h := v &^ 0xffffffff; h != o.last&^0xffffffff {
		o.hiAt = append(o.hiAt, o.n)
		o.hi = append(o.hi, h)
	}
	if o.n&offsetPageMask == 0 {
		o.pages = append(o.pages, new([offsetPageLen]uint32))
	}
	o.pages[o.n>>offsetPageBits][o.n&offsetPageMask] = uint32(v)
	o.n++
	o.last = v
}

// At returns value i.
func (o *Offsets) At(i int) int64 {
	if uint(i) >= uint(o.n) {
		panic("docstore: Offsets.At: index out of range")
	}
	v := int64(o.pages[i>>offsetPageBits][i&offsetPageMask])
	if len(o.hiAt) == 0 || i < o.hiAt[0] {
		return v
	}
	k := sort.Search(len(o.hiAt), func(k int) bool { return o.hiAt[k] > i }) - 1
	return o.hi[k] | v
}

// Len is the number of values.
func (o *Offsets) Len() int { return o.n }

// Last is the last value appended (0 if none).
func (o *Offsets) Last() int64 { return o.last }

// MemoryBytes is the memory the table holds.
func (o *Offsets) MemoryBytes() int64 {
	return int64(len(o.pages))*offsetPageLen*4 + int64(cap(o.pages))*8 + int64(cap(o.hiAt)+cap(o.hi))*8
}
