//go:build !unix

package job

func peakRSS() int64 { return 0 }
