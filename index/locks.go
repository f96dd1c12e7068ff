package index

import (
	"slices"
	"sync"

	"github.com/zeebo/xxh3"
)

// lockStripes is the number of lock stripes of a lockTable: with 16 to 20
// buckets per document and a few dozen writers at once, unrelated documents
// rarely share a stripe.
const lockStripes = 1 << 16

// lockTable serialises writers that touch the same bucket or id. A
// check-and-insert holds the stripes of all its buckets and its id from the
// check until its batch is applied: two near-identical documents share a
// bucket (that is how they find each other), so one of them sees the other.
// Stripes are taken in ascending order, so writers never deadlock.
type lockTable struct {
	mu [lockStripes]sync.Mutex
}

// bucketStripe takes the stripe from the key's high bits, which every width
// holds (keys are left-aligned; they are hashes already).
func bucketStripe(bk uint64) uint32 { return uint32(bk>>32) & (lockStripes - 1) }

func idStripe(id string) uint32 { return uint32(xxh3.HashString(id)) & (lockStripes - 1) }

// lock sorts and deduplicates stripes in place, takes them, and returns the
// deduplicated slice to pass to unlock.
func (t *lockTable) lock(stripes []uint32) []uint32 {
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		t.mu[s].Lock()
	}
	return stripes
}

func (t *lockTable) unlock(stripes []uint32) {
	for i := len(stripes) - 1; i >= 0; i-- {
		t.mu[stripes[i]].Unlock()
	}
}
