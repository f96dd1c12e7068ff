// Package cluster groups documents linked by verified near-duplicate pairs
// and picks the one document of each group to keep.
//
// Two modes are offered. [Components] takes connected components (a
// deterministic union-find): simple, but transitive, so a chain of pairs
// A~B, B~C, …, Y~Z puts A and Z in one cluster even if they share nothing.
// [Star] avoids chaining: it visits documents in keep-policy order, and an
// unclaimed document with unclaimed neighbours becomes a centre and claims
// them; every member is then linked to its centre, the kept document, by an
// edge at or above the threshold. It is greedy, not an optimal clustering.
//
// A [Policy] decides which document a cluster keeps: the first (lowest
// input index), the longest, or the one with the largest value of a field.
// Reference documents (Options.Reference: an archive the others are
// deduplicated against) outrank every policy and are never removed.
// Results are deterministic: they depend on the set of edges and the
// per-document attributes, never on the order of the edges or on map
// iteration.
//
// Edges too many to hold (a corpus with hubs has far more verified pairs
// than documents) can be streamed: [ComponentsSeq] reads them once, in any
// order, and [StarSeq] once in visit order ([VisitOrder]; under KeepFirst,
// edges sorted by (A, B)), each in memory per document, not per edge, with
// the results of Components and Star.
package cluster
