package dedup

import (
	"math"
	"slices"
	"sort"

	"github.com/neardup/neardup/cluster"
	"github.com/neardup/neardup/internal/docstore"
)

// The per-document table.
//
// Every document of a run, banded or not, has an entry in the run's
// docTable for the whole run: the budget (Options.Memory) bounds what is
// stored about the documents (texts, signatures, band keys, ids checked for
// repeats), not this table, so its bytes a document are kept few and
// documented (docTableBytes): the status (1 byte), the id's bytes and its
// end offset (4 bytes, docstore.Offsets), and only under the policies that
// read them the length (KeepLongest: 4 bytes, a uint32 since a record is at
// most 1 GiB, with the rare length past it in a map) and the keep field's
// value (KeepField: 8 bytes, NaN for a document without it, which the
// ranker counts as missing). The ids live in pages of idPageSize bytes and
// the offsets in pages of their own, so the table never grows by copying
// itself (a slice grown by append holds its old copy beside the new one
// while it grows: 2.25 times its size).

// docTableBytes is what the table holds a document, its id's bytes aside,
// under the default policy (KeepFirst); docTableLengthBytes and
// docTableKeepBytes are added under KeepLongest and KeepField. The pages'
// slack (at most one page of ids and one of offsets) aside.
const (
	docTableBytes       = 1 + docstore.OffsetBytes
	docTableLengthBytes = 4
	docTableKeepBytes   = 8
)

// idPageSize is the size of a page of ids; a longer id has a page of its
// own.
const idPageSize = 256 << 10

// docTable holds the per-document bookkeeping, by input index.
type docTable struct {
	status []uint8

	pre     [][]byte           // the ids of the documents placed before the others (prepend)
	idPages [][]byte           // the ids, each whole in one page
	idPage0 []int64            // where page p starts in the ids' concatenation
	idEnd   docstore.Offsets   // where each id ends in it
	lengths []uint32           // under KeepLongest, else nil
	long    map[uint32]int64   // lengths past math.MaxUint32, by document
	keep    []float64          // under KeepField (NaN: no value), else nil
	policy  cluster.PolicyKind // which of lengths and keep are kept
	sized   bool               // reserve was called
}

// newDocTable returns an empty table for a run whose keep policy is of the
// given kind.
func newDocTable(policy cluster.PolicyKind) docTable {
	return docTable{policy: policy}
}

func (d *docTable) len() int { return len(d.status) }

// reserve makes room for n documents in all in the per-document arrays
// (status, and lengths or keep values under their policies), so that they
// do not grow by copying as documents are added: at 5M documents the
// status array's growth, a quarter at a time, faulted in 25 MB for its
// final 5 MB. n is an estimate; an array grows as before past it.
func (d *docTable) reserve(n int) {
	d.sized = true
	n -= len(d.status)
	if n <= 0 {
		return
	}
	d.status = slices.Grow(d.status, n)
	switch d.policy {
	case cluster.KeepLongest:
		d.lengths = slices.Grow(d.lengths, n)
	case cluster.KeepField:
		d.keep = slices.Grow(d.keep, n)
	}
}

func (d *docTable) add(status uint8, id []byte, length int64, keep float64, hasKeep bool) {
	i := uint32(len(d.status))
	d.status = append(d.status, status)
	end := d.idEnd.Last()
	if len(id) > 0 {
		p := len(d.idPages) - 1
		if p < 0 || len(id) > cap(d.idPages[p])-len(d.idPages[p]) {
			d.idPages = append(d.idPages, make([]byte, 0, max(idPageSize, len(id))))
			d.idPage0 = append(d.idPage0, end)
			p++
		}
		d.idPages[p] = append(d.idPages[p], id...)
		end += int64(len(id))
	}
	d.idEnd.Append(end)
	switch d.policy {
	case cluster.KeepLongest:
		if length > math.MaxUint32 {
			if d.long == nil {
				d.long = map[uint32]int64{}
			}
			d.long[i] = length
			length = math.MaxUint32
		}
		d.lengths = append(d.lengths, uint32(length))
	case cluster.KeepField:
		if !hasKeep {
			keep = math.NaN()
		}
		d.keep = append(d.keep, keep)
	}
}

func (d *docTable) id(i uint32) []byte {
	if int(i) < len(d.pre) {
		return d.pre[i]
	}
	j := int(i) - len(d.pre)
	lo, hi := int64(0), d.idEnd.At(j)
	if j > 0 {
		lo = d.idEnd.At(j - 1)
	}
	if lo == hi {
		return nil
	}
	p := sort.Search(len(d.idPage0), func(p int) bool { return d.idPage0[p] > lo }) - 1
	at := lo - d.idPage0[p]
	return d.idPages[p][at : at+hi-lo : at+hi-lo]
}

// attrs returns the documents' attributes for the keep policy.
func (d *docTable) attrs() *cluster.Attrs {
	a := &cluster.Attrs{Values: d.keep}
	if d.policy == cluster.KeepLongest {
		a.Lengths = make([]int64, len(d.lengths))
		for i, n := range d.lengths {
			a.Lengths[i] = int64(n)
		}
		for i, n := range d.long {
			a.Lengths[i] = n
		}
	}
	return a
}

// prepend puts documents with the given ids before the others: documents
// known only by their ids (reference documents), with no length or keep
// value. It is called once, after verification.
func (d *docTable) prepend(ids [][]byte) {
	if len(ids) == 0 {
		return
	}
	n := len(ids)
	d.pre = ids
	d.status = append(make([]uint8, n, n+len(d.status)), d.status...)
	switch d.policy {
	case cluster.KeepLongest:
		d.lengths = append(make([]uint32, n, n+len(d.lengths)), d.lengths...)
		long := make(map[uint32]int64, len(d.long))
		for i, v := range d.long {
			long[i+uint32(n)] = v
		}
		d.long = long
	case cluster.KeepField:
		keep := make([]float64, n, n+len(d.keep))
		for i := range keep {
			keep[i] = math.NaN()
		}
		d.keep = append(keep, d.keep...)
	}
}
