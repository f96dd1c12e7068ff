//go:build race

package eval

// raceEnabled reports whether the race detector is on; the slowest test
// configurations shrink or skip under it.
const raceEnabled = true
