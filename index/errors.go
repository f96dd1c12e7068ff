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
	// signature found by Check).
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

	// ErrLockTimeout: the Redis backend could not take the locks of a
	// document's buckets before the context ended.
	ErrLockTimeout = errors.New("index: timed out waiting for bucket locks")
)
