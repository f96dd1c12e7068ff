package dedup

// docTable holds the per-document bookkeeping, by input index.
type docTable struct {
	status  []uint8
	ids     []byte
	idEnd   []int64
	length  []int64
	keep    []float64
	hasKeep []bool
}

func (d *docTable) len() int { return len(d.status) }

func (d *docTable) add(status uint8, id []byte, length int64, keep float64, hasKeep bool) {
	d.status = append(d.status, status)
	d.ids = append(d.ids, id...)
	d.idEnd = append(d.idEnd, int64(len(d.ids)))
	d.length = append(d.length, length)
	d.keep = append(d.keep, keep)
	d.hasKeep = append(d.hasKeep, hasKeep)
}

func (d *docTable) id(i uint32) []byte {
	lo := int64(0)
	if i > 0 {
		lo = d.idEnd[i-1]
	}
	return d.ids[lo:d.idEnd[i]]
}

// prepend puts documents with the given ids before the others: documents
// known only by their ids (reference documents), with no length or keep
// value.
func (d *docTable) prepend(ids [][]byte) {
	if len(ids) == 0 {
		return
	}
	n := len(ids)
	var size int64
	for _, id := range ids {
		size += int64(len(id))
	}
	status := make([]uint8, n, n+len(d.status))
	d.status = append(status, d.status...)
	idEnd := make([]int64, 0, n+len(d.idEnd))
	buf := make([]byte, 0, size+int64(len(d.ids)))
	for _, id := range ids {
		buf = append(buf, id...)
		idEnd = append(idEnd, int64(len(buf)))
	}
	for _, e := range d.idEnd {
		idEnd = append(idEnd, e+size)
	}
	d.ids, d.idEnd = append(buf, d.ids...), idEnd
	d.length = append(make([]int64, n, n+len(d.length)), d.length...)
	d.keep = append(make([]float64, n, n+len(d.keep)), d.keep...)
	d.hasKeep = append(make([]bool, n, n+len(d.hasKeep)), d.hasKeep...)
}
