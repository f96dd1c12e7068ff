package simhash

import "errors"

// Errors returned by this package. They are wrapped with the offending value
// and the rule it broke; check with errors.Is.
var (
	// ErrWeightsLength: FingerprintWeighted got a different number of weights
	// than features.
	ErrWeightsLength = errors.New("simhash: weights and features differ in length")

	// ErrInvalidWeight: a weight was NaN, infinite or negative.
	ErrInvalidWeight = errors.New("simhash: invalid weight")

	// ErrInvalidOptions: an Options field is out of range.
	ErrInvalidOptions = errors.New("simhash: invalid options")

	// ErrQueryDistance: a query distance was negative or larger than the
	// index's MaxDistance.
	ErrQueryDistance = errors.New("simhash: query distance out of range")

	// ErrInvalidArgument: an argument other than an Options field is out of
	// range (document bits, the number of fingerprints).
	ErrInvalidArgument = errors.New("simhash: invalid argument")

	// ErrUnsorted: a Grouper got an entry below its predecessor.
	ErrUnsorted = errors.New("simhash: entries not sorted ascending")

	// ErrDocument: a Grouper got an entry naming a document it has no
	// fingerprint for.
	ErrDocument = errors.New("simhash: entry names a document without a fingerprint")

	// ErrDFTable: an encoded document-frequency table is malformed,
	// truncated or corrupt, or two tables to merge differ in layout.
	ErrDFTable = errors.New("simhash: invalid document-frequency table")
)
