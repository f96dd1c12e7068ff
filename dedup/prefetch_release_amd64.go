//go:build amd64 && gc && !purego && !race

package dedup

import "sync/atomic"

// storeRelease stores v at p with release order only: the stores before it
// are seen by any reader that sees v (an atomic load of p), as amd64 orders
// every store after those before it. It is a plain MOVL where p.Store is an
// XCHG, a full barrier that waits for every store before it to reach the
// cache: the exact pass's table publishes a slot's tag with it
// (hashSlots.setTag) right after writing the slot, whose line the
// collector's insert (getOrPut) then waited on. It is assembly because Go
// has no release store outside the runtime; the race detector's build
// (prefetch_release_other.go) uses p.Store, which it can see.
//
//go:noescape
func storeRelease(p *atomic.Uint32, v uint32)
