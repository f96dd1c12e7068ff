//go:build race

package minhash

// raceEnabled reports whether the race detector is on: the statistical test,
// which has no concurrency, is skipped under it (it runs 40 times slower).
const raceEnabled = true
