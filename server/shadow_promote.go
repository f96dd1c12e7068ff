package server

import (
	"context"
	"os"

	"github.com/neardup/neardup/index"
)

// ReplayStats is what ReplayShadowJournal applied.
type ReplayStats struct {
	// Inserts and Deletes count the journal's records applied (an insert of
	// a stored id, or a delete of an absent one, counts and changes
	// nothing).
	Inserts, Deletes int64
	// Bytes is the journal's size before it was emptied.
	Bytes int64
}

type replayCounter struct{ st *ReplayStats }

func (c replayCounter) applied(inserts, deletes int) {
	c.st.Inserts += int64(inserts)
	c.st.Deletes += int64(deletes)
}
func (c replayCounter) insertFailed() {}

// ReplayShadowJournal applies the shadow journal at path (see
// ShadowOptions.Journal) to the shadow index: every write a server
// acknowledged is then in the shadow. It then empties the journal. It is the
// first step of promoting a shadow (neardup index promote), run while no
// server uses the journal. It is idempotent: run again, after a crash or a
// kill at any point, it leaves the shadow as one complete run does. A
// missing journal is an empty one.
func ReplayShadowJournal(ctx context.Context, shadow index.Index, path string) (ReplayStats, error) {
	var st ReplayStats
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return st, nil
	}
	j, err := openJournal(path)
	if err != nil {
		return st, err
	}
	defer j.close()
	st.Bytes = j.end()
	var off int64
	for {
		next, err := applyJournal(ctx, j, off, shadow, applyBatch, replayCounter{&st})
		if err != nil {
			return st, err
		}
		if next == off {
			break
		}
		off = next
	}
	if _, err := j.reset(off, false); err != nil {
		return st, err
	}
	return st, j.close()
}
