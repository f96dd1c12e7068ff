package sigfile

import "errors"

// Errors; check with errors.Is. Every error a Reader returns names the file
// (the name given to NewReader, or the path) and, for a damaged file, the
// offset and the block or record where the damage was found.
var (
	// ErrNotSignatureFile reports input that does not start with the magic
	// "NDSF" (nor "NDMH", the old format): some other file, or an empty one.
	ErrNotSignatureFile = errors.New("sigfile: not a signature file")
	// ErrVersion reports a signature file of a format version this build
	// does not read (a newer one).
	ErrVersion = errors.New("sigfile: unsupported signature file version")
	// ErrTruncated reports a file that ends before its trailer: cut while it
	// was written or copied, wherever the cut falls (inside the header, a
	// block or the trailer, or between two blocks).
	ErrTruncated = errors.New("sigfile: truncated signature file")
	// ErrCorrupt reports bytes that fail a checksum or break a rule of the
	// format: a changed, inserted or removed byte, or blocks out of order.
	ErrCorrupt = errors.New("sigfile: corrupt signature file")
	// ErrLegacy reports a signature file of the old format (concatenated
	// per-signature encodings, as neardup sign wrote them before signature
	// files had a header), read without ReadOptions.Legacy.
	ErrLegacy = errors.New("sigfile: old-format signature file")
	// ErrSketchMismatch reports signatures of another sketch (MinHash
	// against SimHash) than the caller expects.
	ErrSketchMismatch = errors.New("sigfile: signatures of another sketch")
	// ErrSpecMismatch reports signatures made under another shingle spec
	// than the caller expects.
	ErrSpecMismatch = errors.New("sigfile: signatures made under another shingle spec")
	// ErrParamsMismatch reports signatures made under other sketch
	// parameters (MinHash params with their seed, or SimHash weighting)
	// than the caller expects.
	ErrParamsMismatch = errors.New("sigfile: signatures made under other params")
	// ErrShards reports a set of shard files that is not one complete
	// output: a shard missing or given twice, shards of different outputs,
	// or sharded and unsharded files mixed.
	ErrShards = errors.New("sigfile: incomplete or inconsistent shards")
	// ErrInvalidHeader reports a Header a Writer cannot write (or a read
	// header that breaks the same rules).
	ErrInvalidHeader = errors.New("sigfile: invalid header")
	// ErrInvalidRecord reports a record a Writer cannot write: an id of
	// MaxIDLen bytes or more, a signature of the wrong length, or non-zero
	// padding bits.
	ErrInvalidRecord = errors.New("sigfile: invalid record")
	// ErrClosed reports a use of a Writer or Reader after Close or Abort.
	ErrClosed = errors.New("sigfile: writer or reader already closed")
)
