package server

import (
	"sync"
	"time"
)

// limiter is a token bucket per client: rate tokens a second, at most burst
// held. Idle clients are forgotten, so memory follows the active clients.
type limiter struct {
	mu        sync.Mutex
	rate      float64
	burst     float64
	clients   map[string]*tokenBucket
	lastSweep time.Time
}

type tokenBucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(rate float64, burst int) *limiter {
	return &limiter{rate: rate, burst: float64(burst), clients: map[string]*tokenBucket{}}
}

// allow takes a token for client, or says how long until one is free.
func (l *limiter) allow(client string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > time.Minute {
		// A bucket idle long enough to be full again is the same as none.
		full := time.Duration(l.burst / l.rate * float64(time.Second))
		for k, b := range l.clients {
			if now.Sub(b.last) > full {
				delete(l.clients, k)
			}
		}
		l.lastSweep = now
	}
	b, ok := l.clients[client]
	if !ok {
		b = &tokenBucket{tokens: l.burst, last: now}
		l.clients[client] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}
