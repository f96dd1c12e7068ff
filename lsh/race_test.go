//go:build race

package lsh

// raceEnabled trims the slowest exhaustive tests under the race detector,
// which slows math/big arithmetic tenfold without adding coverage there.
const raceEnabled = true
