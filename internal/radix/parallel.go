package radix

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// SortKeyParallel is SortKey using up to workers goroutines: the
// most-significant-digit pass is split into equal chunks (per-chunk
// histograms, then a stable scatter of each chunk to its own offsets), and
// the resulting buckets are sorted concurrently. Its result is identical to
// SortKey's, whatever workers is. Inputs of at most LSDMax elements, and
// workers ≤ 1, sort on the calling goroutine.
//
// Scratch handling is as for [Sort].
func SortKeyParallel(data, scratch []uint64, shift uint, workers int) []uint64 {
	n := len(data)
	if workers <= 1 || n <= LSDMax {
		return SortKey(data, scratch, shift)
	}
	if shift >= 64 {
		panic("radix: SortKeyParallel shift must be less than 64")
	}
	if len(scratch) < n {
		scratch = make([]uint64, n)
	}
	scratch = scratch[:n]
	workers = min(workers, n/(LSDMax/4)) // chunks of at least LSDMax/4 elements
	chunk := (n + workers - 1) / workers
	bounds := func(w int) (int, int) { return min(w*chunk, n), min((w+1)*chunk, n) }

	// Pass 1: which bits vary.
	ors, ands := make([]uint64, workers), make([]uint64, workers)
	parallel(workers, func(w int) {
		lo, hi := bounds(w)
		or, and := uint64(0), ^uint64(0)
		for _, v := range data[lo:hi] {
			or |= v
			and &= v
		}
		ors[w], ands[w] = or, and
	})
	or, and := uint64(0), ^uint64(0)
	for w := range workers {
		or |= ors[w]
		and &= ands[w]
	}
	varying := (or ^ and) &^ (1<<shift - 1)
	if varying == 0 {
		return scratch
	}
	top := (bits.Len64(varying) - 1) / digitBits
	digitShift := uint(digitBits * top)

	// Pass 2: per-chunk histograms of the top varying digit.
	counts := make([][256]int, workers)
	parallel(workers, func(w int) {
		lo, hi := bounds(w)
		c := &counts[w]
		for _, v := range data[lo:hi] {
			c[(v>>digitShift)&0xff]++
		}
	})
	// Bucket x starts at the total of smaller digits; within it, chunk w's
	// elements follow those of chunks before w, which keeps the scatter stable.
	var starts [257]int
	sum := 0
	for x := range 256 {
		starts[x] = sum
		for w := range workers {
			c := counts[w][x]
			counts[w][x] = sum
			sum += c
		}
	}
	starts[256] = n

	// Pass 3: scatter each chunk to its offsets.
	parallel(workers, func(w int) {
		lo, hi := bounds(w)
		next := &counts[w]
		for _, v := range data[lo:hi] {
			x := (v >> digitShift) & 0xff
			scratch[next[x]] = v
			next[x]++
		}
	})

	// Pass 4: sort the buckets concurrently, from scratch back into data.
	var nextBucket atomic.Int32
	parallel(workers, func(int) {
		for {
			x := int(nextBucket.Add(1) - 1)
			if x >= 256 {
				return
			}
			lo, hi := starts[x], starts[x+1]
			switch {
			case hi-lo == 1 || hi-lo > 1 && top == 0:
				copy(data[lo:hi], scratch[lo:hi])
			case hi-lo > 1:
				sortDigits(scratch[lo:hi], data[lo:hi], top-1, varying, false)
			}
		}
	})
	return scratch
}

// parallel runs f(0) … f(workers−1) concurrently and waits for them.
func parallel(workers int, f func(w int)) {
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { f(w) })
	}
	f(0)
	wg.Wait()
}
