//go:build !unix

package simhash

import (
	"testing"
	"time"
)

func cpuTime() time.Duration { return 0 }

func reportCPU(b *testing.B, bytes int64, cpu time.Duration) {}
