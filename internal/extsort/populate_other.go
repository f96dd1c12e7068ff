//go:build !linux

package extsort

// populate does nothing where MADV_POPULATE_WRITE is not known.
func populate([]uint64) {}
