package index

import "errors"

// Errors returned by this package. They are wrapped with the offending value
// and the rule it broke; check with errors.Is.
var (
	// ErrInvalidOptions: an Options or RedisOptions field is out of range.
	ErrInvalidOptions = errors.New("index: invalid options")

	// ErrSpecMismatch: the index was made under another shingle spec than
	// the one asked for. Signatures of different specs are not comparable,
	// so the index refuses to open rather than answer wrongly.
	ErrSpecMismatch = errors.New("index: made under another shingle spec")

	// ErrParamsMismatch: the index was made under other minhash Params.
	ErrParamsMismatch = errors.New("index: made under other minhash params")

	// ErrBandsMismatch: the index was made with another LSH banding.
	ErrBandsMismatch = errors.New("index: made with another LSH banding")

	// ErrCorrupt: stored bytes are not what this version writes (a bad
	// meta record, a signature of the wrong length, a posting without its
	// signature found by Check), or a block of the index on disk is damaged
	// (its checksum fails): the read that met it fails, others go on.
	ErrCorrupt = errors.New("index: corrupt data")

	// ErrInvalidDocument: a document cannot be stored: its id is empty or
	// longer than MaxIDLen, or its signature has the wrong length.
	ErrInvalidDocument = errors.New("index: invalid document")

	// ErrDuplicateID: Insert or CheckAndInsert was given an id the index
	// already holds, or the same id twice in one call.
	ErrDuplicateID = errors.New("index: id already in the index")

	// ErrNotFound: Get or Delete of an id the index does not hold.
	ErrNotFound = errors.New("index: no document with this id")

	// ErrNotEmpty: a Builder needs an empty index.
	ErrNotEmpty = errors.New("index: bulk build needs an empty index")

	// ErrFull: the index has used every document number (2^32 − 1 inserts
	// over its life).
	ErrFull = errors.New("index: document numbers exhausted")

	// ErrClosed: the index was closed.
	ErrClosed = errors.New("index: closed")

	// ErrNoIndex: Open with Options.MustExist (or ReadOnly) of a directory
	// that holds no index. Nothing was created.
	ErrNoIndex = errors.New("index: no index")

	// ErrLocked: the index directory is locked by another process (or
	// another DB of this one): a Pebble index has one user at a time.
	ErrLocked = errors.New("index: locked by another process")

	// ErrIncomplete: the index was being bulk-built and the build did not
	// finish (the process was killed, or the disk filled up): it holds no
	// documents, or only part of them. Build it again (Options.ForBuild).
	ErrIncomplete = errors.New("index: a bulk build did not finish")

	// ErrStorage: the disk failed under the index (full, read-only, an I/O
	// error) or Pebble reported a fatal error: the DB refuses writes (after
	// a fatal error, every operation) until it is reopened. See DB.Health.
	ErrStorage = errors.New("index: storage failure")

	// ErrKeyWidth: Migrate of an index whose bucket keys are already 8
	// bytes wide, or of a SimHash index (whose keys stay 4 bytes).
	ErrKeyWidth = errors.New("index: bucket key width")

	// ErrLockTimeout: the Redis backend could not take the locks of a
	// document's buckets before the context ended.
	ErrLockTimeout = errors.New("index: timed out waiting for bucket locks")
)
