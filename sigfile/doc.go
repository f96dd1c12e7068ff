// Package sigfile reads and writes signature files: the MinHash signatures
// or SimHash fingerprints of a corpus, one record (document id and
// signature) per document in corpus order, behind a header that says how
// they were made. It is a container with integrity checks against accidents
// (cut or damaged files), not against tampering: its checksums are not
// cryptographic.
//
// # Layout
//
// docs/signature-format.md §6 defines the format byte for byte. In short:
//
//	header   magic "NDSF", version, sketch, slots, slot width, block size,
//	         shard i of n, the shingle spec's and the params' canonical
//	         forms (with the seed), xxh3 checksum
//	blocks   record count, byte length, records (uvarint id length, id,
//	         packed signature), xxh3 checksum seeded with the block number
//	trailer  0, "NDSE", record count, file checksum (the header's and
//	         every block's checksum chained, then the count)
//
// The header is enough to use the signatures without being told how they
// were made: Header.ShingleSpec rebuilds the spec (a keyed spec's key is
// never written, only its fingerprint), Header.MinHash the params with their
// seed, and Header.CheckMinHash and Header.CheckSimHash refuse signatures
// that are not comparable with the caller's, naming both fingerprints.
//
// # Integrity
//
// A Reader refuses, with an error naming the file and the offset:
//   - a 0-byte file, and a file cut anywhere, including between two blocks
//     (the trailer is missing) or inside the trailer (ErrTruncated);
//   - any changed byte: in the header (its checksum), in a block (the
//     block's checksum), in the trailer (the count or the file checksum),
//     and blocks dropped, repeated or reordered (each block's checksum is
//     seeded with its number, and the trailer's checksum chains them all),
//     or bytes after the trailer (ErrCorrupt);
//   - a file of a newer format version (ErrVersion).
//
// Per-block rather than per-record checksums: 16 bytes of framing per 64 KiB
// block instead of 8 bytes per record (up to a third of a SimHash record),
// and a Reader hands out only records whose block has checked. xxh3 because
// it runs at memory speed (tens of GB/s), so checking costs nothing next to
// the disk, and its 64 bits miss a random corruption with probability 2^-64.
//
// # Old format
//
// Before this package, neardup sign wrote the wire encodings of package
// minhash (magic "NDMH") back to back. Such a file carries in every record
// the spec and params fingerprints, K, the scheme and the slot width, but not
// the seed or the spec itself, and no count or checksum. A Reader reads it
// only when ReadOptions.Legacy supplies the spec and params, checking every
// record's fingerprints against them; otherwise it refuses it (ErrLegacy),
// telling the user to re-run neardup sign.
//
// # Shards
//
// A distributed job writes one file per shard, each with its own header and
// trailer, Header.Shard and Header.Shards naming its place. Open of a
// directory or a glob, and OpenFiles, read the shards of one output as one
// stream in shard order and refuse a set with a shard missing or repeated.
package sigfile
