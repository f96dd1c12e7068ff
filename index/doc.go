// Package index is the persistent near-duplicate index behind `neardup
// serve`: every document's MinHash signature and LSH band postings, with an
// atomic check-and-insert, on Pebble in one directory ([DB]), shared on
// Redis ([Redis]) or in memory ([Memory]). It reuses the batch job's
// stages — shingle.Shingler and
// minhash.Hasher to sign ([Config.NewSigner]), lsh.Params.AppendKeys to band,
// minhash.Params.Similarity to verify — and adds only storage.
//
// Answers are estimates: a match's similarity is the MinHash estimate of the
// Jaccard similarity, and a near duplicate is missed with the probability the
// LSH S-curve gives (1% at the threshold with the default banding). The index
// is not a search engine and not a cryptographic store.
//
// # Backends
//
// The algorithm is written once (engine.go): check-and-insert, insert,
// query, get and delete, with the lock stripes, the bucket cap, the
// verification of candidates and the wait for durability. A backend
// implements a small storage interface (storage.go): has, lookup, buckets
// and records to read; insert, remove and an atomic commit to write; its
// own locks beyond the stripes, and whether a document is durable. Pebble
// (pebble.go and the pebble_*.go files, which are Pebble's alone: packed
// postings, bulk build, repack, storage faults), Redis (redis.go) and
// Memory (memory.go, the shortest) implement it, so every backend answers
// alike: the tests run one suite on each and compare their answers to one
// sequence of operations.
//
// # Layout
//
// A Pebble index is one Pebble database. Keys start with a one-byte prefix;
// numbers are fixed-width big-endian, so that key order is numeric order:
//
//	m                        meta record: JSON with the layout version, the
//	                         shingle spec and minhash params with their
//	                         fingerprints, the banding, the default threshold,
//	                         the bucket cap, the bucket-key width W (4 or 8
//	                         bytes) and the packed group bits G
//	i <id>                   → document number (4 bytes)
//	s <docnum:4>             → record: the signature's slots as packed on the
//	                           wire (Params.Bytes() bytes), uvarint id length,
//	                           id, uvarint count and positions of postings
//	                           dropped at full buckets, then the metadata
//	p <bucket:W> <docnum:4>  → empty: a posting of its own (written online)
//	q <group:4>              → packed postings (written by a bulk build or a
//	                           repack): those of every bucket key whose high
//	                           G bits are group
//
// A document number is given to each stored document (ascending; numbers of
// deleted documents are not reused while the index is open, so an index takes
// 2^32 − 1 inserts in all). A bucket key is, in an index of 8-byte keys
// (layout version 3, the default of a new MinHash index, bulk-built or not),
// the 64-bit band key from lsh.Params.AppendKeys; in an index of 4-byte keys
// (layout versions 1 and 2: indexes made before version 3, SimHash ones) its
// high 32 bits, the batch job's bucket key. Two different band keys share 32
// bits with probability 2^-32 per pair of keys: at 16 million postings a
// query's bucket meets a foreign posting 0.4% of the time, at 10⁹ several
// times per bucket, and verification reads and drops each; 64 bits make that
// 2^-64. An index keeps the width it was made with (queries band with it);
// [Migrate] rewrites one of 4-byte keys with 8-byte keys. A SimHash index's
// keys are its tables' block values, which 4 bytes hold: it keeps them.
//
// A posting is stored in one of two ways. Insert and CheckAndInsert write
// each as a key of its own, so that a write touches only its own keys and
// the documents of a bucket are one prefix scan. A bulk build packs its
// postings, and [DB.Repack] packs those written online later: one value per
// group of bucket keys sharing their high G bits,
// G chosen from the number of postings so that a group holds about 32
// (G = 19 for 16 million); the value lists the group's postings sorted by
// bucket key, the gaps between keys Rice-coded and the document numbers in
// fixed width (packed.go has the format), 4 bytes a posting on disk instead
// of 7.6. With 8-byte keys a packed posting keeps 32 bits more of key gap:
// about 8 bytes, against 13 of a posting of its own. A bulk build keeps the
// index's width: it sorts 8-byte keys as (key, document) entries
// (extsort.WideSorter), 4-byte ones packed with the document in 64 bits. A
// bucket's documents are then its packed postings (one seek and a
// short decode) and its postings of their own. Packed values change only
// when a delete drops a posting from them or a repack merges postings into
// them; both hold a mutex for it (deletes besides their stripes: a group
// spans many stripes).
//
// The meta record is written when the index is made and checked at every
// open: an index made under another spec, params or banding does not open
// (ErrSpecMismatch, ErrParamsMismatch, ErrBandsMismatch). A keyed spec's key
// is never stored, only its fingerprint. The layout version of an index of
// 4-byte keys is 1 until a bulk build writes packed postings, then 2: builds
// before packed postings refuse a version-2 index with ErrCorrupt ("layout
// version 2, this build reads 1") and still open every other one. A repack
// marks an index version 2 too. An index of 8-byte keys is version 3
// (FormatVersion), which builds before it refuse ("this build reads 1 and
// 2"): they would misread its keys.
//
// # Migrate
//
// [Migrate] rewrites an index of 4-byte keys as one of 8-byte keys: it opens
// the index (taking its lock, so not while a server holds it), makes a new
// index beside it (dir.migrate) marked "build in progress", inserts every
// stored document in document-number order from its record (signature, id,
// metadata), clears the mark in a synced write, and then renames dir to
// dir.premigrate and dir.migrate to dir, syncing the parent directory after
// each rename, and removes the old index. Killed before the first rename, it
// leaves dir as it was (the next Migrate removes the partial
// copy and starts over); killed between the renames, dir is absent and the
// next Migrate completes the switch. Full buckets keep their oldest
// documents, as before; buckets that only shared 32 bits are split, so a
// posting dropped at a full 4-byte bucket may be kept. If the old index had
// packed postings, the new one is repacked before the mark is cleared.
//
// On disk (1M synthetic documents of 100 to 200 words, 8-character ids, the
// default 16 bands, zstd at the bottom level, bulk-built) a document takes
// 217 bytes with k = 128 8-bit slots: its record 145, its id 7, its 16 packed
// postings 65 (4.0 bytes each). With 32-bit slots it takes 612 (record 540:
// the 512 signature bytes are random and do not compress). Online inserts
// add 7.6 bytes a posting until a repack packs them. See BENCHMARKS.md.
//
// # Queries
//
// A query bands the signature into its distinct bucket keys, scans each
// bucket (at most BucketCap documents), and reads the record of each distinct
// candidate to compute Params.Similarity; matches at or above the threshold
// are returned best first, ties by id. One Pebble iterator serves the whole
// query, so it reads one consistent view.
//
// A bucket filter (Options.FilterBytes, 32 MiB by default) remembers which
// bucket-key ranges have ever held a posting of their own, and on a
// bulk-built index a second one those holding packed postings, so that the
// buckets of a new document, nearly all empty, cost no seek. They are filled
// by scanning the postings at open and never shrink while open.
//
// # Check-and-insert
//
// CheckAndInsert is atomic with respect to every other writer. Writers take
// lock stripes (65,536 mutexes) for the document's id and each of its bucket
// keys, in ascending order, so they never deadlock; they check, write and
// apply their batch under the locks. Two documents that could match each
// other share a bucket key — that is how a query finds a document at all —
// so they share a stripe: the second to take it sees the first one's
// postings. Of near-identical documents submitted at once, exactly one is
// new. Unrelated documents rarely share a stripe and proceed in parallel.
// A batch is checked in order, each document also against those before it.
//
// # Durability
//
// Every write (Insert, CheckAndInsert, Delete, the bulk build's tables) is
// one Pebble batch, applied atomically. A write returns only after its batch
// is in the write-ahead log and the log is fsynced: an acknowledged write
// survives a crash of the process (SIGKILL) or of the machine, and the index
// reopens consistent — every document with all its postings, or none of it.
// Concurrent writers share fsyncs (Pebble's group commit): the locks are
// released as soon as the batch is applied, and the fsync is awaited after.
//
// A batch is visible to readers before its fsync completes (as in any Pebble
// database), yet an answer never names a document that is not durable: a
// Query or CheckAndInsert whose matches include a document that may not be
// durable yet waits for a sync barrier before it returns — an empty record
// written to the WAL with a sync (Pebble's LogData), which returns once the
// WAL is synced through it and so through every batch applied before it.
// Most matches are old documents, and they cost nothing: every document
// number is given out under a mutex, the first number of each write batch is
// listed until its sync completes, and a document numbered below the smallest
// listed number (the durable watermark) is durable. Only answers naming a
// document at or above the watermark — written in the last millisecond or so
// — wait, and concurrent waits share fsyncs. A CheckAndInsert that writes
// anything needs no barrier: its own synced commit is one. Metrics.SyncBarriers
// counts the waits. At open the watermark starts past every stored document,
// because Pebble flushes the WAL it replays to synced sstables.
// Options.NoSync drops the fsync and the barriers (for tests and bulk loads
// only).
//
// The crash test in package server kills a serving process with SIGKILL at
// random moments and checks every acknowledged document, every document
// named in a "duplicate" answer, and the agreement of postings and records
// ([DB.Check]); TestDuplicateAnswersAreDurable holds the WAL's syncs and
// checks, on a copy of the filesystem holding only synced data, that no
// answer names a document before it is durable.
//
// # Storage faults
//
// Pebble's defaults end the process on a damaged block (its DataCorruption
// event calls Logger.Fatalf, which exits) and panic when a write-ahead log
// write or creation fails. A DB routes both to a health record instead
// (health.go), so that a fault is an error of the operations it touches:
//
//   - A damaged block (its checksum fails) fails the read that meets it with
//     ErrCorrupt, on one line naming the sstable; other reads and writes go
//     on. [DB.Health] reports it from then on, Metrics.Corruptions counts,
//     and Options.Logger gets one line per damaged file. An iterator's error
//     is checked after each seek (the next seek clears it), so a damaged
//     posting block fails a query rather than letting it answer "new".
//   - A disk error (full, read-only, an I/O error, a permission refused) is
//     seen by a filesystem wrapper the moment a write, sync or file creation
//     fails: from then on writes fail with ErrStorage before they reach
//     Pebble (whose WAL writer, once failed, panics at the next commit, and
//     whose failed flushes stall every writer), reads go on, Health reports
//     it and Metrics.StorageFaults counts. A WAL that cannot be created is
//     handed to Pebble as a file whose writes fail (Pebble cannot survive the
//     failed creation itself). Reopening the index, once the disk has room
//     or is writable, clears the state; every acknowledged write is there.
//   - A fatal error of Pebble's (Logger.Fatalf) or a panic of its commit
//     path makes every operation fail with ErrStorage.
//
// Options.MustExist (and ReadOnly) open only an existing index: a missing
// or foreign directory fails with ErrNoIndex and nothing is created. A
// directory another process has open fails with ErrLocked.
//
// # Hot buckets
//
// A bucket holds at most Options.BucketCap documents (1000 by default). A
// posting into a full bucket is dropped and counted
// (Metrics.DroppedPostings); the document is stored, is found through its
// other buckets, and its record lists the dropped posting so that Check and
// Delete know. Queries count the full buckets they meet (Metrics.FullBuckets)
// and the sizes of the buckets they read (Metrics.BucketSize).
//
// # Bulk build
//
// [DB.NewBuilder] fills an empty index without the write-ahead log (the
// package reads no corpus: `neardup index build` feeds the builder from one): records stream into sstables in document order; postings
// are radix-sorted (spilling sorted runs to disk past BuildOptions.Memory)
// and packed, and ids sorted; the meta record is marked version 2 with the
// group bits, then the tables, which do not overlap, are ingested at once
// into the bottom level. The result answers every query as inserting the
// same documents in the same order would, and takes inserts and deletes as
// any index does.
//
// The meta record says "building" from the start of a build (from the
// index's creation with Options.ForBuild) until Finish has ingested every
// table, in synced writes: a build killed at any moment, or one whose Finish
// failed after ingesting, leaves an index that Open refuses with
// ErrIncomplete rather than one that looks complete and empty. Opened with
// ForBuild it is built again, and NewBuilder removes what the killed build
// left in build.tmp. A repeated id fails Finish with a [DuplicateIDError].
//
// # Repack
//
// [DB.Repack] (neardup index repack, or neardup serve --repack-interval in
// the background) moves the postings of their own into packed values,
// offline or while the index serves. If the index has no
// group bits yet, it chooses G from the number of postings, as a build does,
// and records it in the meta record (synced) before it writes any packed
// value: an index marked with G but holding no packed value is valid. It
// then reads the posting keys in order and, for each group that has any,
// merges them into the group's packed value and deletes their keys, in one
// batch with the other groups of about 4 MiB; batches are committed in key
// order, each durable before the next. A batch is atomic, so at any moment,
// a crash included, every posting is stored once, packed or of its own, and
// the index is consistent; running the repack again finishes the work, and
// once it is done another repack writes nothing. Postings dropped at full
// buckets have no posting to move and stay dropped. The merge keeps every
// bucket's documents, so every query answers as before; a bucket read only
// up to a cap lowered since it filled is read in the same order too, packed
// postings first and then the newer ones of their own, which after the
// merge is document order.
// The packed filter marks each bucket before its batch is applied; the
// filter of postings of their own keeps its bits until the next open. At
// the end the key range of the postings is compacted, which drops the
// deleted keys.
//
// G never changes while packed values exist: a reader would decode them
// under the wrong bits. If the postings have outgrown G (groups would
// average more than twice their target of 32), a repack first moves
// every packed posting back into keys of its own (a batch per few MiB of
// values, each atomic), then, with no packed value left, records the new G,
// then packs everything. A G change takes the exclusive side of the lock
// every operation holds shared, so no operation is in flight across it.
//
// Readers and writers may run during a repack. Each batch takes the packed
// values' mutex from before its reads until it is applied, as a delete
// does, so no delete rewrites a value under it; an insert meanwhile writes
// keys of its own, which the repack moves if its view holds them and leaves
// otherwise; counts of a bucket's size are the same before and after a
// batch. The CLI opens the index itself, so there it runs alone (Pebble
// locks the directory).
//
// # Memory
//
// A DB's memory is bounded by its options, not by the index size: the block
// cache (Options.CacheSize, 256 MiB by default), two memtables
// (Options.MemTableSize, 32 MiB), the bucket filter (32 MiB; another 32 MiB
// on a bulk-built or repacked index) and the lock stripes (0.5 MiB). A bulk
// build adds BuildOptions.Memory; a repack a batch (4 MiB) and a group's
// postings.
//
// # Redis
//
// [Redis] implements the same Index on a standalone Redis or a Redis Cluster,
// so that several service instances share one index; a document is named by
// its id rather than a number. Keys, under a prefix:
// "meta" (the same meta record), "d:<id>" (the record), "b:<bucket:W>" (a set
// of ids), "n" (the document count), and lock keys "l:b:<bucket>" and
// "l:i:<id>". A check-and-insert takes the lock keys of its id and buckets
// with SET NX PX in one pipeline (and this process's stripes first); if any is
// taken it releases what it got and retries after a random, growing pause,
// until its context ends (ErrLockTimeout). Locks expire after
// RedisOptions.LockTTL, so a crashed writer blocks no one for longer. Writes
// go postings first, then the record and the count, so a writer that dies
// halfway leaves postings that queries skip (Check reports them).
//
// Durability is Redis's. A write is acknowledged once Redis has executed it,
// which makes it durable as far as the servers' persistence makes it: with
// appendonly yes and appendfsync always, Redis writes and fsyncs the
// append-only file before it sends any reply from that turn of its event
// loop, so an acknowledged write survives a crash of the server or the
// machine; with appendfsync everysec (Redis's default once AOF is on) up to
// about a second of acknowledged writes can be lost; with no AOF (as in the
// tests, and Redis's own default) everything since the last RDB snapshot.
// A "duplicate" answer names a document whose record this process read from
// Redis; under appendfsync always that record was fsynced before Redis sent
// it, so the answer needs no barrier of its own and never names a document
// a server crash can lose. Under the weaker settings it is exactly as durable
// as an acknowledged write (a crash can lose both), and the death of the
// neardup process loses neither: the record is already in Redis. A Redis
// Cluster (or a replica) adds asynchronous replication: a failover to a
// replica can lose acknowledged writes, and so the documents answers named,
// whatever the fsync setting.
//
// A Redis index has the same layout versions: a new MinHash one has 8-byte
// bucket keys, one made before version 3 keeps its 4-byte keys. There is no
// migration in place: other instances write to the index all the time, and
// Redis has no snapshot to copy from and no atomic switch of a key space.
// Fill a new index under another prefix (instances started with another
// --redis-prefix, the corpus inserted again), move the service to it, and
// drop the old one (Redis.Drop).
//
// # In memory
//
// [Memory] keeps an index in the process's memory: the records a Pebble
// index stores, under document numbers, and each bucket's numbers oldest
// first, so that it answers as Pebble does (a bucket keeps its oldest
// documents). Writes are atomic and visible at once, and nothing survives
// the process, so no answer waits for durability. It suits an index rebuilt
// at start or kept beside another (a shadow), and tests.
package index
