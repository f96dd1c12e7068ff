//go:build race

package simhash

// raceEnabled scales down the largest tests under the race detector, which
// makes them about 10× slower; the concurrency tests keep their full size.
const raceEnabled = true
