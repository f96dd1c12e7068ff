//go:build race

package radix

// raceEnabled trims the largest test inputs under the race detector.
const raceEnabled = true
