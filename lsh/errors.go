package lsh

import "errors"

// Errors returned by this package. They are wrapped with the offending value
// and the rule it broke; check with errors.Is.
var (
	// ErrInvalidParams: a Params field is out of range (Bands or Rows below
	// 1, Probe outside 0..MaxProbe or not below Rows, too many keys per
	// document).
	ErrInvalidParams = errors.New("lsh: invalid params")

	// ErrInvalidArgument: an argument of an optimiser or a helper is out of
	// range (a threshold outside (0, 1), k below 1, a negative or non-finite
	// weight, a recall outside (0, 1], docBits outside 1..32).
	ErrInvalidArgument = errors.New("lsh: invalid argument")

	// ErrNoParams: ForRecall found no (Bands, Rows) with Bands·Rows ≤ k that
	// reaches the requested recall at the threshold.
	ErrNoParams = errors.New("lsh: no params meet the requirement")

	// ErrInvalidOptions: a CandidateOptions field is out of range.
	ErrInvalidOptions = errors.New("lsh: invalid options")

	// ErrUnsorted: entries given to a Grouper, or values read from a Run,
	// were not in ascending order.
	ErrUnsorted = errors.New("lsh: input not sorted ascending")
)
