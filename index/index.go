package index

import (
	"context"
	"fmt"
	"strings"

	"github.com/neardup/neardup/minhash"
)

// Index is a near-duplicate index: documents' signatures and their LSH band
// postings, with atomic check-and-insert. *DB (Pebble, persistent, one
// process), *Redis (shared by several processes) and *Memory (in memory)
// implement it with one algorithm (engine.go) over their storage, so they
// answer alike; the tests run one suite against each, and one sequence of
// operations on all of them compares their answers.
//
// All methods are safe for concurrent use. Results are deterministic given
// the index contents: matches are sorted by similarity, best first, ties by
// id.
type Index interface {
	// Config returns what the index was made with (spec, params, bands)
	// and the defaults in force (threshold, bucket cap).
	Config() Config

	// Insert stores docs without checking for near duplicates. It is all or
	// nothing: if any id is already present, or repeated in docs, nothing
	// is written and the error wraps ErrDuplicateID. It returns once the
	// write is durable.
	Insert(ctx context.Context, docs []Doc) error

	// CheckAndInsert checks each doc, in order, against the index and the
	// docs before it, and stores it if it has no match: result i is New, or
	// Duplicate with its matches (nothing stored), or carries Err (an id
	// already present: ErrDuplicateID). It is atomic with respect to every
	// other writer: of near-identical documents submitted at once, exactly
	// one is New. It returns once the writes are durable.
	CheckAndInsert(ctx context.Context, docs []Doc, q *QueryOptions) ([]Result, error)

	// Query returns the stored documents whose estimated similarity to sig
	// reaches the threshold, best first, at most the limit. It stores
	// nothing.
	Query(ctx context.Context, sig minhash.Signature, q *QueryOptions) ([]Match, error)

	// Get returns the stored document id, or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (Doc, error)

	// Delete removes document id and its postings, or returns an error
	// wrapping ErrNotFound. It returns once the delete is durable.
	Delete(ctx context.Context, id string) error

	// Stats counts the documents and the bytes the index takes.
	Stats(ctx context.Context) (Stats, error)

	// Check verifies that postings and signatures agree: every document has
	// a signature and all its postings (bar those dropped at full buckets),
	// and every posting belongs to a stored document under a key of its
	// signature. It reads the whole index.
	Check(ctx context.Context) (CheckReport, error)

	// Metrics returns what the index has counted since it was opened.
	Metrics() Metrics

	// Close releases the index; pending writes are finished first.
	Close() error
}

// Compile-time checks that the backends implement Index.
var (
	_ Index = (*DB)(nil)
	_ Index = (*Redis)(nil)
	_ Index = (*Memory)(nil)
)

// Doc is a document as the index stores it.
type Doc struct {
	// ID names the document: 1 to MaxIDLen bytes, unique in the index.
	ID string
	// Sig is its signature, made under the index's Config (Params.Words()
	// words). The index does not retain it.
	Sig minhash.Signature
	// Meta is optional opaque metadata (the server keeps a JSON object),
	// returned with matches. The index copies it.
	Meta []byte
}

// Match is a stored document similar to a query.
type Match struct {
	// ID is the stored document's id.
	ID string
	// Similarity is the estimated Jaccard similarity (minhash
	// Params.Similarity) of the query and the document.
	Similarity float64
	// Meta is the stored document's metadata, nil if none. It is the
	// caller's.
	Meta []byte
}

// Status is the outcome of a check-and-insert.
type Status uint8

// Statuses.
const (
	// Failed: the document was not processed; Result.Err says why.
	Failed Status = iota
	// New: no stored document matched; the document is now stored.
	New
	// Duplicate: at least one stored document matched; nothing was stored.
	Duplicate
)

// String returns "new", "duplicate" or "failed".
func (s Status) String() string {
	switch s {
	case New:
		return "new"
	case Duplicate:
		return "duplicate"
	}
	return "failed"
}

// Result is the outcome of CheckAndInsert for one document.
type Result struct {
	// ID is the document's id.
	ID string
	// Status says what happened.
	Status Status
	// Matches are the documents it duplicates, best first (Duplicate only).
	Matches []Match
	// Err is why the document failed (Failed only), e.g. ErrDuplicateID.
	Err error
}

// Stats describe an index's size.
type Stats struct {
	// Documents is the number of stored documents.
	Documents int64
	// Bytes is the space the index takes: on disk for Pebble (sstables,
	// WAL, manifests), the Redis servers' used memory for Redis.
	Bytes int64
}

// CheckReport is what Check found.
type CheckReport struct {
	// Documents and Postings are the counts read.
	Documents, Postings int64
	// CappedPostings are postings absent because their bucket was full:
	// expected, not a problem.
	CappedPostings int64
	// Problems lists the first inconsistencies found (at most 100).
	Problems []string
	// ProblemCount counts all of them, listed or not; 0 means Check found
	// none (OK).
	ProblemCount int64
}

// OK reports whether Check found no inconsistency.
func (r CheckReport) OK() bool { return r.ProblemCount == 0 }

func (r *CheckReport) problem(format string, args ...any) {
	r.ProblemCount++
	if len(r.Problems) < 100 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// posting checks one of document id's postings, the one under bucket key
// bk, against its record: present says whether the bucket holds it,
// dropped whether the record says it was left out of a full bucket. It
// counts a dropped posting, lists a posting that should not be there or is
// missing, and reports whether the posting is there as it should be. Every
// backend's Check applies it.
func (r *CheckReport) posting(id string, bk uint64, present, dropped bool) bool {
	switch {
	case dropped && present:
		r.problem("document %q has a posting in bucket %016x that its record says was dropped", id, bk)
	case dropped:
		r.CappedPostings++
	case !present:
		r.problem("document %q lacks its posting in bucket %016x", id, bk)
	default:
		return true
	}
	return false
}

// String summarises the report.
func (r CheckReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "documents %d, postings %d (%d dropped at full buckets), problems %d", r.Documents, r.Postings, r.CappedPostings, r.ProblemCount)
	for _, p := range r.Problems {
		b.WriteString("\n  ")
		b.WriteString(p)
	}
	return b.String()
}

// validateDoc checks a document against the index's params.
func validateDoc(c *Config, d *Doc) error {
	if d.ID == "" {
		return fmt.Errorf("%w: empty id", ErrInvalidDocument)
	}
	if len(d.ID) > MaxIDLen {
		return fmt.Errorf("%w: id of %d bytes, the limit is %d", ErrInvalidDocument, len(d.ID), MaxIDLen)
	}
	if len(d.Sig) != c.Params.Words() {
		return fmt.Errorf("%w: signature of %d words, params %s make %d", ErrInvalidDocument, len(d.Sig), c.Params, c.Params.Words())
	}
	return nil
}
