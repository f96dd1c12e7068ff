package job

import (
	"context"
	"fmt"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/sigfile"
)

// SignaturesPrefix is the name of the signature shards --signatures-out
// writes: signatures-00003-of-00016 holds split 3's (sigfile.ShardName).
const SignaturesPrefix = "signatures"

// sigWriter writes one split's signature shard. A local shard appears only
// once complete (sigfile.Create); a remote one is written through Beam's
// file systems, where a reader's checks (trailer, checksums) tell a
// complete shard from a cut one. A bundle that is retried writes the same
// bytes again.
type sigWriter struct {
	w      *sigfile.Writer
	f      *outputFile // the remote file, nil for a local one
	path   string
	closed bool
}

// newSigWriter starts the signature shard of split i. Its header names the
// spec the signatures are made under: for a keyed job the one with its key
// (Config.sketchJob), whose canonical form has the key's id, not c.Job's,
// shipped without the key.
func newSigWriter(ctx context.Context, c *Config, i int) (*sigWriter, error) {
	job, err := c.sketchJob(ctx)
	if err != nil {
		return nil, err
	}
	h := job.Sketch.SignatureHeader()
	h.Shard, h.Shards = i, len(c.Splits)
	path := joinPath(c.SignaturesOut, sigfile.ShardName(SignaturesPrefix, i, len(c.Splits)))
	s := &sigWriter{path: path}
	if !isRemote(path) {
		s.w, err = sigfile.Create(path, h)
		return s, err
	}
	if s.f, err = openOutput(ctx, path); err != nil {
		return nil, err
	}
	if s.w, err = sigfile.NewWriter(s.f, h); err != nil {
		s.f.abort()
		return nil, err
	}
	return s, nil
}

// add writes a document's record; an id too long for a signature file is an
// error naming the record, as in neardup sign.
func (s *sigWriter) add(rec *corpus.Record, id []byte, sig []uint64) error {
	if len(id) >= sigfile.MaxIDLen {
		return fmt.Errorf("%s:%d: id of %d bytes, the limit is %d", rec.File, rec.Line, len(id), sigfile.MaxIDLen-1)
	}
	return s.w.Add(id, sig)
}

// close finishes the shard.
func (s *sigWriter) close() error {
	s.closed = true
	err := s.w.Close()
	if s.f != nil {
		if err == nil {
			err = s.f.commit()
		} else {
			s.f.abort()
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return nil
}

// abort drops an unfinished shard (a local one leaves no file).
func (s *sigWriter) abort() {
	if s.closed {
		return
	}
	s.w.Abort()
	if s.f != nil {
		s.f.abort()
	}
}
