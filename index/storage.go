package index

import "context"

// What a backend implements. The algorithm — check-and-insert, insert,
// query, get and delete, with the lock stripes, the bucket cap, the
// verification of candidates and the durable answers — is written once, in
// engine.go; a backend stores bytes. A backend is a type that embeds
// engine[R] and implements storage[R]: Pebble (pebble.go), Redis (redis.go)
// and Memory (memory.go), the shortest, which shows what is needed.

// ref names a stored document within a backend: its document number
// (Pebble, Memory) or its id (Redis).
type ref interface{ ~uint32 | ~string }

// storage is what the algorithm needs of a backend.
//
// The engine calls it with its lock stripes held for every id and bucket key
// a write touches (see lockTable), so that a backend whose view of the index
// is live (Redis, Memory) sees every write of the writers that held them
// before.
type storage[R ref] interface {
	// admit returns why an operation may not start (write: it writes), nil
	// if it may: the backend's own refusals, such as a read-only index, a
	// bulk build in progress or a storage fault. The engine has checked
	// that the index is open.
	admit(write bool) error

	// acquire takes the backend's locks of ids and bucket keys (a key may
	// repeat), beyond the engine's stripes, which it holds: Redis's lock
	// keys, shared by every process, and for a delete (del) Pebble's lock
	// of packed values. The engine calls unlock once, before it releases its
	// stripes. ctx bounds the wait (ErrLockTimeout).
	acquire(ctx context.Context, ids []string, keys []uint64, del bool) (unlock func(), err error)

	// begin opens a transaction: a view of the index and an empty set of
	// writes. Pebble's view is one consistent snapshot; Redis's and
	// Memory's are live.
	begin(ctx context.Context) (txn[R], error)

	// durable reports whether document r, visible to a view, is durable
	// (see "Durability" in the package doc): an answer that names a
	// document that is not waits for syncBarrier.
	durable(r R) bool

	// syncBarrier returns once every write visible before the call is
	// durable.
	syncBarrier() error

	// fault turns an error of the backend into the one the caller gets
	// (Pebble: a damaged block wraps ErrCorrupt, a disk error ErrStorage).
	fault(err error) error
}

// txn is one operation's view of a backend and its writes. It is used by
// one goroutine and ended by exactly one call of commit or abort, after
// which it is not used (a backend may reuse it).
type txn[R ref] interface {
	// has sets found[i] to whether ids[i] is stored.
	has(ids []string, found []bool) error

	// lookup returns the ref and the record of document id, ok false if the
	// id is not stored. rec is valid until the next call.
	lookup(id string) (r R, rec []byte, ok bool, err error)

	// buckets reads the buckets of keys (distinct, ascending): it sets
	// counts[i] to the size of bucket keys[i] up to limit (or the whole
	// size if limit is Unlimited) and, with collect, appends the documents
	// counted to cands: the oldest first where the backend knows the order
	// (Pebble, Memory), else the smallest ids (Redis).
	buckets(keys []uint64, limit int, collect bool, counts []int, cands []R) ([]R, error)

	// records calls fn with the record of each of refs (ascending,
	// distinct) that is stored, in order; rec is valid during the call. An
	// error of fn stops it and is returned.
	records(refs []R, fn func(r R, rec []byte) error) error

	// insert adds a new document: its id, the bucket keys it is posted
	// under (ascending; those of full buckets left out) and its record
	// (appendRecord). rec and post are valid only during the call. It fails
	// with ErrFull if the backend has no document number left.
	insert(id string, post []uint64, rec []byte) error

	// remove deletes document r: its id, its postings under post (the
	// bucket keys it was posted under) and its record.
	remove(r R, id string, post []uint64) error

	// commit ends the transaction: it applies the writes (at once in
	// Pebble and Memory; in Redis postings first, so that a writer that
	// dies halfway leaves postings without a record, which reads skip),
	// may call unlock as soon as they are visible, and returns once they
	// are durable. An error the view met (Pebble's iterator) fails it
	// before anything is written.
	commit(unlock func()) error

	// abort ends the transaction without writing.
	abort()
}
