// Package progress draws a one-line progress bar for long batch work on a
// terminal: stage, documents and bytes done, their rates and, when the total
// is known, a bar and the time left. A stage that counts something other
// than documents read (band keys, pairs) names its unit and shows no byte
// rate. It redraws at most a few times a second from its own goroutine, so
// counting is an atomic add.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bar is a progress line. The zero Bar is unusable; use New. A nil *Bar is a
// valid no-op, so callers need not check whether progress is on. Add is safe
// for concurrent use.
type Bar struct {
	w     io.Writer
	every time.Duration

	mu        sync.Mutex
	unit      string // what Add's first argument counts in Stage stages; "docs" by default
	stageUnit string // what it counts in the current stage
	counts    bool   // the current stage counts stageUnit only: no bytes, total is a count
	stage     string
	total     int64 // bytes (or, when counts, units) expected in this stage, or -1
	start     time.Time
	docs      atomic.Int64
	bytes     atomic.Int64
	read      func() int64 // optional: bytes read so far, overrides bytes for the bar
	stop      chan struct{}
	done      chan struct{}
}

// New returns a Bar writing to w (usually os.Stderr when it is a terminal).
func New(w io.Writer) *Bar {
	return &Bar{w: w, every: 200 * time.Millisecond, total: -1, unit: "docs"}
}

// SetUnit names what Add's first argument counts in the stages Stage starts
// ("docs" until set), for work that is not counted in documents. See
// CountStage for a stage of its own unit without bytes.
func (b *Bar) SetUnit(unit string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.unit = unit
	if !b.counts {
		b.stageUnit = unit
	}
	b.mu.Unlock()
}

// Stage starts a new stage with a name and, if known (else -1), the total
// bytes it will process; read, if not nil, reports bytes done (for example
// compressed input consumed) instead of what Add counts. Its line shows the
// count of the bar's unit (SetUnit) and the byte rate.
func (b *Bar) Stage(name string, total int64, read func() int64) {
	if b == nil {
		return
	}
	b.Finish()
	b.mu.Lock()
	b.stageUnit, b.counts = b.unit, false
	b.mu.Unlock()
	b.start1(name, total, read)
}

// CountStage starts a new stage that counts unit ("keys", "pairs") and no
// bytes: its line shows the count and its rate, and no byte rate. total, if
// positive, is the count the stage will reach, for the bar and the time
// left; -1 or 0 if unknown. Add's bytes are ignored.
func (b *Bar) CountStage(name, unit string, total int64) {
	if b == nil {
		return
	}
	b.Finish()
	b.mu.Lock()
	b.stageUnit, b.counts = unit, true
	b.mu.Unlock()
	b.start1(name, total, nil)
}

// start1 starts the stage after Finish.
func (b *Bar) start1(name string, total int64, read func() int64) {
	b.mu.Lock()
	b.stage, b.total, b.read, b.start = name, total, read, time.Now()
	b.docs.Store(0)
	b.bytes.Store(0)
	b.stop, b.done = make(chan struct{}), make(chan struct{})
	b.mu.Unlock()
	go b.loop(b.stop, b.done)
}

// Add counts documents and bytes done in the current stage.
func (b *Bar) Add(docs, bytes int64) {
	if b == nil {
		return
	}
	b.docs.Add(docs)
	b.bytes.Add(bytes)
}

func (b *Bar) loop(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(b.every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			b.draw(true)
			return
		case <-t.C:
			b.draw(false)
		}
	}
}

// Finish draws the stage's final line and ends it.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	stop, done := b.stop, b.done
	b.stop = nil
	b.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

func (b *Bar) draw(final bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	el := time.Since(b.start).Seconds()
	docs, by := b.docs.Load(), b.bytes.Load()
	if b.read != nil {
		by = b.read()
	}
	var s strings.Builder
	fmt.Fprintf(&s, "\r%-10s %10d %s %8.0f %s/s", b.stage, docs, b.stageUnit, rate(float64(docs), el), b.stageUnit)
	done := by
	if b.counts {
		done = docs
	} else {
		fmt.Fprintf(&s, " %7.1f MB/s", rate(float64(by)/1e6, el))
	}
	if b.total > 0 {
		frac := min(1, float64(done)/float64(b.total))
		const width = 24
		fill := int(frac * width)
		fmt.Fprintf(&s, " [%s%s] %3.0f%%", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), 100*frac)
		if frac > 0 && !final {
			left := time.Duration(el/frac*(1-frac)) * time.Second
			fmt.Fprintf(&s, " ETA %s", left.Round(time.Second))
		}
	}
	if final {
		fmt.Fprintf(&s, " %.1fs\n", el)
	} else {
		s.WriteString("   ")
	}
	io.WriteString(b.w, s.String())
}

func rate(x, sec float64) float64 {
	if sec <= 0 {
		return 0
	}
	return x / sec
}
