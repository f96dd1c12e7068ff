//go:build !unix

package dedup

// peakRSS is unknown on this platform.
func peakRSS() int64 { return 0 }
