//go:build !amd64 || !gc || purego || race

package dedup

import "sync/atomic"

// storeRelease stores v at p (see prefetch_release_amd64.go): an atomic
// store, which orders the stores before it for every architecture and
// which the race detector sees.
func storeRelease(p *atomic.Uint32, v uint32) { p.Store(v) }
