package server

import (
	"context"
	"time"

	"github.com/neardup/neardup/index"
)

// repacker is what the periodic repack needs of an index: index.DB has it;
// the Redis index, which has no packed postings, does not.
type repacker interface {
	Repack(ctx context.Context, progress func(done, total int64)) (index.RepackStats, error)
}

var _ repacker = (*index.DB)(nil)

// repackLoop repacks r every Options.RepackInterval until ctx ends: the
// first time one interval after it starts, then one interval after each
// repack ends (a slow repack is never overlapped, and repacks do not pile
// up). It runs in a goroutine of Serve, which cancels ctx at shutdown and
// waits for it to return.
func (s *Server) repackLoop(ctx context.Context, r repacker) {
	t := time.NewTimer(s.opts.RepackInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.repackOnce(ctx, r)
		t.Reset(s.opts.RepackInterval)
	}
}

// repackOnce runs one repack, counts it and logs one line. A repack that
// ctx interrupted (shutdown) is logged but not counted as failed: what it
// committed stays, and the index is consistent.
func (s *Server) repackOnce(ctx context.Context, r repacker) {
	st, err := r.Repack(ctx, s.repackProgress)
	s.m.repacks.Inc()
	s.m.repackPostings.Add(float64(st.Postings))
	s.m.repackGroups.Add(float64(st.Groups))
	s.m.repackDur.Observe(st.Seconds)
	attrs := []any{"postings", st.Postings, "groups", st.Groups, "unpacked", st.Unpacked, "group_bits", st.GroupBits,
		"bytes_before", st.BytesBefore, "bytes_after", st.BytesAfter, "seconds", st.Seconds}
	switch {
	case err == nil:
		s.log.Info("repacked", attrs...)
	case ctx.Err() != nil:
		s.log.Info("repack interrupted by shutdown", append(attrs, "err", err)...)
	default:
		s.m.repacksFailed.Inc()
		s.log.Error("repack failed", append(attrs, "err", err)...)
	}
}
