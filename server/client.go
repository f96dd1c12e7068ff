package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls a neardup server: what `neardup query`, `neardup check` and
// the load generator use. The zero value is not usable; call NewClient. A
// Client is safe for concurrent use and reuses connections.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// NewClient returns a client of the server at baseURL (e.g.
// "http://127.0.0.1:8080"), sending token as a bearer token if not empty.
// hc may be nil for a client with keep-alive connections and a 30 s timeout.
func NewClient(baseURL, token string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{
			Timeout: 30 * time.Second,
			Transport: &http.Transport{
				MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second,
			},
		}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, http: hc}
}

// Query are optional per-request overrides: zero means the server's default.
type Query struct {
	// Threshold is the least estimated similarity of a match, in (0, 1].
	// Default 0: the index's threshold.
	Threshold float64
	// Limit is the most matches returned, in 1..1000. Default 0: the
	// server's, 10 matches.
	Limit int
}

func (q Query) encode() string {
	v := url.Values{}
	if q.Threshold != 0 {
		v.Set("threshold", strconv.FormatFloat(q.Threshold, 'g', -1, 64))
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// do sends a request and decodes a JSON answer into out (if not nil); an
// error response becomes an *APIError.
func (c *Client) do(ctx context.Context, method, path, ctype string, body []byte, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 400 {
		var e ErrorResponse
		if json.Unmarshal(data, &e) != nil || e.Error.Code == "" {
			return resp.StatusCode, &APIError{Status: resp.StatusCode, Code: "http_" + strconv.Itoa(resp.StatusCode), Message: strings.TrimSpace(string(data))}
		}
		return resp.StatusCode, &APIError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("server: decoding the answer to %s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// Check asks for the near duplicates of doc; nothing is stored.
func (c *Client) Check(ctx context.Context, doc Document, q Query) (CheckResult, error) {
	var res CheckResult
	body, err := json.Marshal(doc)
	if err != nil {
		return res, err
	}
	_, err = c.do(ctx, http.MethodPost, "/v1/check"+q.encode(), typeJSON, body, &res)
	return res, err
}

// Insert checks doc and stores it if it is new.
func (c *Client) Insert(ctx context.Context, doc Document, q Query) (CheckResult, error) {
	var res CheckResult
	body, err := json.Marshal(doc)
	if err != nil {
		return res, err
	}
	_, err = c.do(ctx, http.MethodPost, "/v1/documents"+q.encode(), typeJSON, body, &res)
	return res, err
}

// Get returns a stored document's id and metadata.
func (c *Client) Get(ctx context.Context, id string) (StoredDocument, error) {
	var d StoredDocument
	_, err := c.do(ctx, http.MethodGet, "/v1/documents/"+escapePath(id), "", nil, &d)
	return d, err
}

// Delete removes a stored document.
func (c *Client) Delete(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/documents/"+escapePath(id), "", nil, nil)
	return err
}

// Batch checks and inserts docs in one request; the results are in order.
func (c *Client) Batch(ctx context.Context, docs []Document, q Query) ([]CheckResult, error) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/documents:batch"+q.encode(), &body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", typeNDJSON)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		data, _ := io.ReadAll(resp.Body)
		var e ErrorResponse
		json.Unmarshal(data, &e)
		return nil, &APIError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	}
	var out []CheckResult
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var r CheckResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return out, fmt.Errorf("server: decoding batch line %d: %w", len(out)+1, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return out, err
	}
	if len(out) != len(docs) {
		return out, fmt.Errorf("server: batch of %d documents answered with %d lines", len(docs), len(out))
	}
	return out, nil
}

// Ready reports whether the server answers /readyz with 200.
func (c *Client) Ready(ctx context.Context) error {
	var h Health
	_, err := c.do(ctx, http.MethodGet, "/readyz", "", nil, &h)
	return err
}
