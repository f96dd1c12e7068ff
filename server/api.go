package server

import "encoding/json"

// Document is a document as the API takes it: a JSON object with a text,
// an id (required to store it) and optional metadata, returned with matches.
// Threshold and Limit override the server's defaults for this request.
type Document struct {
	ID        string          `json:"id,omitempty"`
	Text      string          `json:"text"`
	Meta      json.RawMessage `json:"meta,omitempty"`
	Threshold *float64        `json:"threshold,omitempty"`
	Limit     *int            `json:"limit,omitempty"`
}

// Duplicate is a stored document similar to the one checked.
type Duplicate struct {
	ID         string          `json:"id"`
	Similarity float64         `json:"similarity"`
	Meta       json.RawMessage `json:"meta,omitempty"`
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
	ID         string      `json:"id"`
	Status     string      `json:"status"`
	Duplicates []Duplicate `json:"duplicates"`
	Line       int         `json:"line,omitempty"`
	Error      *ErrorBody  `json:"error,omitempty"`
}

// StoredDocument is what GET /v1/documents/{id} returns.
type StoredDocument struct {
	ID   string          `json:"id"`
	Meta json.RawMessage `json:"meta,omitempty"`
}

// ErrorBody is the error object of every error response.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ErrorResponse is the body of every error response: {"error": {...}}.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// Health is the body of /healthz and /readyz.
type Health struct {
	Status string `json:"status"`
}
