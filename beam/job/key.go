package job

import (
	"context"
	"fmt"
	"sync"

	"github.com/neardup/neardup/beam/internal/files"
	"github.com/neardup/neardup/internal/jobspec"
	"github.com/neardup/neardup/internal/keyfile"
	"github.com/neardup/neardup/shingle"
)

// shipJob returns the job as the pipeline carries it and its key's
// fingerprint: j itself and 0 for an unkeyed spec; for a keyed one, j
// without its key. A keyed spec needs keyFile, from which workers read the
// key back (Config.sketchJob).
func shipJob(j jobspec.Job, keyFile string) (jobspec.Job, uint64, error) {
	k := j.Sketch.Spec.Key
	if k == nil {
		return j, 0, nil
	}
	if keyFile == "" {
		return j, 0, fmt.Errorf("%w: a keyed shingle spec (%s) needs Options.KeyFile (--key-file), the file the workers read the key from: the key is never put in the pipeline",
			jobspec.ErrInvalidOptions, j.Sketch.Spec)
	}
	j.Sketch.Spec.Key = nil
	return j, k.Fingerprint(), nil
}

// keys caches the keys a worker process has read, by file and fingerprint,
// so that it reads a key file once.
var keys struct {
	sync.Mutex
	m map[string]*shingle.Key
}

// sketchJob returns the job to sign and verify with: c.Job, and for a keyed
// job (KeyID set) its key, read from c.KeyFile (once per process) and checked
// against c.KeyID. Every DoFn that signs or shingles takes its job from here.
func (c *Config) sketchJob(ctx context.Context) (jobspec.Job, error) {
	j := c.Job
	if c.KeyID == 0 {
		return j, nil
	}
	name := fmt.Sprintf("%s\x00%x", c.KeyFile, c.KeyID)
	keys.Lock()
	defer keys.Unlock()
	k := keys.m[name]
	if k == nil {
		data, err := files.ReadFile(ctx, c.KeyFile)
		if err != nil {
			return j, fmt.Errorf("%s: reading the key file: %w", Tool, err)
		}
		if k, err = keyfile.Parse(data, c.KeyFile); err != nil {
			return j, err
		}
		if k.Fingerprint() != c.KeyID {
			return j, fmt.Errorf("%w: %s now holds the key %s; the job was started with the key %x (was the key file replaced?)",
				keyfile.ErrKeyFile, c.KeyFile, keyfile.ID(k), c.KeyID)
		}
		if keys.m == nil {
			keys.m = map[string]*shingle.Key{}
		}
		keys.m[name] = k
	}
	j.Sketch.Spec.Key = k
	return j, nil
}
