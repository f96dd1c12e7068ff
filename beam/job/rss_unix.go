//go:build unix

package job

import "syscall"

// peakRSS returns the process's peak resident set size in bytes (Linux
// reports ru_maxrss in KiB); with the Prism runner in-process, that includes
// the runner and its workers.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024
}
