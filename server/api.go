package server

import "encoding/json"

// Document is a document as the API takes it: a JSON object with a text,
// an id (required to store it) and optional metadata, returned with matches.
// Threshold and Limit override the server's defaults for this request.
type Document struct {
	// ID is the document's id, at most 1024 bytes (index.MaxIDLen);
	// required to store it, optional for a check, where a stored document
	// with the same id is never a match.
	ID string `json:"id,omitempty"`
	// Text is the document's text: not empty, at most Options.MaxTextBytes
	// bytes.
	Text string `json:"text"`
	// Meta is optional metadata, a JSON object (or null or absent for
	// none), stored with the document and returned with matches.
	Meta json.RawMessage `json:"meta,omitempty"`
	// Threshold, if set, is the least estimated similarity of a match for
	// this request, in (0, 1]; it overrides the threshold query parameter.
	// Nil means the query parameter or the index's default. Not allowed on
	// batch lines.
	Threshold *float64 `json:"threshold,omitempty"`
	// Limit, if set, is the most matches returned for this request, in
	// 1..1000 (index.MaxLimit); it overrides the limit query parameter. Nil
	// means the query parameter or 10 (index.DefaultLimit). Not allowed on
	// batch lines.
	Limit *int `json:"limit,omitempty"`
}

// Duplicate is a stored document similar to the one checked.
type Duplicate struct {
	// ID is the stored document's id.
	ID string `json:"id"`
	// Similarity is the estimated Jaccard similarity of the checked and the
	// stored document, from their signatures; in [0, 1].
	Similarity float64 `json:"similarity"`
	// Meta is the stored document's metadata; absent if it has none.
	Meta json.RawMessage `json:"meta,omitempty"`
}

// Statuses of a CheckResult.
const (
	StatusNew       = "new"
	StatusDuplicate = "duplicate"
	StatusError     = "error" // batch lines only
)

// CheckResult answers a check or an insert: "new" (stored, for an insert)
// or "duplicate" with the matches, best first. In a batch response a line
// that failed has status "error", its line number and the error.
type CheckResult struct {
	// ID is the checked document's id as given; empty for a check without
	// one (or a batch line whose id could not be read).
	ID string `json:"id"`
	// Status is StatusNew, StatusDuplicate or, on batch lines only,
	// StatusError.
	Status string `json:"status"`
	// Duplicates are the matches, best first; the server sends [] when
	// there are none.
	Duplicates []Duplicate `json:"duplicates"`
	// Line is the 1-based line of the batch body (blank lines counted) of
	// a failed batch line; 0 and absent otherwise.
	Line int `json:"line,omitempty"`
	// Error is why a batch line failed; nil and absent otherwise.
	Error *ErrorBody `json:"error,omitempty"`
}

// StoredDocument is what GET /v1/documents/{id} returns.
type StoredDocument struct {
	// ID is the document's id.
	ID string `json:"id"`
	// Meta is the document's stored metadata; absent if it has none.
	Meta json.RawMessage `json:"meta,omitempty"`
}

// ErrorBody is the error object of every error response.
type ErrorBody struct {
	// Code is the stable error code, one of the Code constants; branch on
	// it.
	Code string `json:"code"`
	// Message says what went wrong, for people; it may change.
	Message string `json:"message"`
}

// ErrorResponse is the body of every error response: {"error": {...}}.
type ErrorResponse struct {
	// Error is the error's code and message.
	Error ErrorBody `json:"error"`
}

// Health is the body of /healthz and /readyz.
type Health struct {
	// Status is "ok" from /healthz; "ready", "shutting down" or "index
	// unavailable: " and the error from /readyz.
	Status string `json:"status"`
}
