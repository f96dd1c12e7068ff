package cluster

import "errors"

// Errors returned by this package. They are wrapped with the offending value
// and the rule it broke; check with errors.Is.
var (
	// ErrInvalidEdge: an edge names a document outside 0..n−1 or has a NaN
	// similarity.
	ErrInvalidEdge = errors.New("cluster: invalid edge")

	// ErrInvalidPolicy: a keep policy string did not parse, or a Policy
	// value is not one of the known kinds.
	ErrInvalidPolicy = errors.New("cluster: invalid keep policy")

	// ErrMissingAttrs: the keep policy needs per-document attributes
	// (lengths or field values) that were not supplied for every document.
	ErrMissingAttrs = errors.New("cluster: missing document attributes")

	// ErrInvalidOptions: an Options field is out of range, or n is negative
	// or too large.
	ErrInvalidOptions = errors.New("cluster: invalid options")
)
