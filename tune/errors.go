package tune

import "errors"

// Errors returned by this package. Returned errors wrap one of these and name
// the offending value and the rule it broke; check with errors.Is.
var (
	// ErrInvalidOptions reports an Options field out of range, or a banding
	// the signatures cannot support (more slots than they have).
	ErrInvalidOptions = errors.New("tune: invalid options")

	// ErrBandings reports a banding list (ParseBandings) that does not
	// parse: an item not of the form BxR, a number out of range, a repeat.
	ErrBandings = errors.New("tune: invalid banding list")

	// ErrSignatures reports signatures tune cannot band: SimHash
	// fingerprints rather than MinHash signatures, or more than 2^32
	// records (documents are numbered with 32 bits, as dedup numbers them).
	ErrSignatures = errors.New("tune: unusable signatures")

	// ErrRepeatedID reports an id of the truth file held by two records of
	// the signatures: truth pairs are matched by id, as eval score matches
	// them, so an id must name one document.
	ErrRepeatedID = errors.New("tune: repeated document id")
)
