package corpus

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// parquetRowsPerRead is how many rows a Parquet source decodes at a time.
const parquetRowsPerRead = 128

// parquetSource reads the rows of a Parquet file, row group by row group,
// and encodes each as a JSON object whose keys are the column names in schema
// order, so that the Parser reads the id, text and keep fields by name and a
// kept-records writer can emit the row as JSON Lines.
//
// Flat schemas (top-level, non-repeated leaf columns: the usual shape of a
// text corpus) are encoded directly: booleans, integers (unsigned when the
// logical type says so; dates and timestamps as their stored integers),
// floats (null for NaN and infinities), and byte arrays as JSON strings
// (invalid UTF-8 replaced by U+FFFD). Nested or repeated schemas go through
// parquet-go's reconstruction into map[string]any and encoding/json, which is
// slower and orders keys alphabetically.
type parquetSource struct {
	r      *Reader
	in     *input
	f      *os.File
	schema *parquet.Schema
	groups []parquet.RowGroup
	group  int          // next row group
	rows   parquet.Rows // rows of the current group; nil between groups
	rowBuf []parquet.Row
	line   int64   // rows seen so far
	cols   []pqCol // flat schemas: one per column; nil otherwise
}

type pqCol struct {
	key      []byte // `"name":` with the name JSON-escaped
	kind     parquet.Kind
	unsigned bool
}

// countingReaderAt counts bytes read from a Parquet file into Progress.
type countingReaderAt struct {
	f *os.File
	n *atomic.Int64
}

// ReadAt reads from the file and adds the bytes read to the counter.
func (c countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.f.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

func (r *Reader) openParquet(in *input) (source, error) {
	f, err := os.Open(in.path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("corpus: %w", err)
	}
	pf, err := parquet.OpenFile(countingReaderAt{f, &r.read}, fi.Size(),
		parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		f.Close()
		return nil, &RecordError{File: in.name, Index: -1, Err: fmt.Errorf("%w: parquet: %v", ErrUnsupported, err)}
	}
	schema := pf.Schema()
	if _, ok := schema.Lookup(r.opts.TextField); !ok {
		f.Close()
		return nil, &RecordError{File: in.name, Index: -1, Field: r.opts.TextField,
			Err: fmt.Errorf("%w: no such top-level column in the Parquet schema %s", ErrMissingField, schema)}
	}
	s := &parquetSource{r: r, in: in, f: f, schema: schema, groups: pf.RowGroups(),
		rowBuf: make([]parquet.Row, parquetRowsPerRead)}
	s.cols = flatColumns(schema)
	return s, nil
}

// flatColumns describes the columns of a flat schema, or returns nil.
func flatColumns(schema *parquet.Schema) []pqCol {
	fields := schema.Fields()
	cols := make([]pqCol, len(fields))
	for i, f := range fields {
		if !f.Leaf() || f.Repeated() {
			return nil
		}
		t := f.Type()
		c := pqCol{key: append(appendJSONString(nil, []byte(f.Name())), ':'), kind: t.Kind()}
		if lt := t.LogicalType(); lt != nil {
			if it, ok := lt.Value.(*format.IntType); ok {
				c.unsigned = !it.IsSigned
			}
		}
		cols[i] = c
	}
	return cols
}

func (s *parquetSource) close() error {
	var err error
	if s.rows != nil {
		err = s.rows.Close()
		s.rows = nil
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *parquetSource) fill(b *Batch) error {
	r := s.r
	for {
		if s.rows == nil {
			if s.group == len(s.groups) {
				return io.EOF
			}
			s.rows = s.groups[s.group].Rows()
			s.group++
		}
		n, rerr := s.rows.ReadRows(s.rowBuf)
		for _, row := range s.rowBuf[:n] {
			s.line++
			start := len(b.buf)
			buf, err := s.appendRow(b.buf, row)
			if err != nil {
				b.buf = buf[:start]
				return &RecordError{File: s.in.name, Line: s.line, Index: r.index, Err: err}
			}
			r.stats.Bytes += int64(len(buf) - start)
			if len(buf)-start > r.opts.MaxRecordBytes {
				b.buf = buf[:start]
				if err := r.tooLarge(b, s.in, s.line, strconv.Itoa(len(buf)-start)); err != nil {
					return err
				}
				continue
			}
			b.buf = buf
			r.emit(b, s.in, buf[start:], s.line, -1)
		}
		if rerr == io.EOF {
			err := s.rows.Close()
			s.rows = nil
			if err != nil {
				return &RecordError{File: s.in.name, Line: s.line, Index: r.index, Err: err}
			}
		} else if rerr != nil {
			return &RecordError{File: s.in.name, Line: s.line + 1, Index: r.index, Err: fmt.Errorf("parquet: %w", rerr)}
		}
		if len(b.buf) >= r.opts.BatchBytes && len(b.Records) > 0 {
			return nil
		}
	}
}

// appendRow appends row as a JSON object to dst.
func (s *parquetSource) appendRow(dst []byte, row parquet.Row) ([]byte, error) {
	if s.cols == nil {
		return s.appendRowGeneric(dst, row)
	}
	dst = append(dst, '{')
	first := true
	var err error
	row.Range(func(ci int, vals []parquet.Value) bool {
		if ci >= len(s.cols) || len(vals) > 1 {
			err = fmt.Errorf("parquet: row does not match the flat schema at column %d", ci)
			return false
		}
		c := &s.cols[ci]
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, c.key...)
		if len(vals) == 0 || vals[0].IsNull() {
			dst = append(dst, "null"...)
			return true
		}
		dst = appendParquetValue(dst, c, vals[0])
		return true
	})
	return append(dst, '}'), err
}

// appendRowGeneric encodes a row of any schema through parquet-go's
// reconstruction into a map; a panic there (the library's way to report a
// row that does not fit the schema) becomes an error.
func (s *parquetSource) appendRowGeneric(dst []byte, row parquet.Row) (_ []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("parquet: cannot rebuild the row: %v", p)
		}
	}()
	m := map[string]any{}
	if err := s.schema.Reconstruct(&m, row); err != nil {
		return dst, fmt.Errorf("parquet: %w", err)
	}
	j, err := json.Marshal(m)
	if err != nil {
		return dst, fmt.Errorf("parquet: %w", err)
	}
	return append(dst, j...), nil
}

// appendParquetValue appends a non-null leaf value as JSON.
func appendParquetValue(dst []byte, c *pqCol, v parquet.Value) []byte {
	switch c.kind {
	case parquet.Boolean:
		return strconv.AppendBool(dst, v.Boolean())
	case parquet.Int32:
		if c.unsigned {
			return strconv.AppendUint(dst, uint64(uint32(v.Int32())), 10)
		}
		return strconv.AppendInt(dst, int64(v.Int32()), 10)
	case parquet.Int64:
		if c.unsigned {
			return strconv.AppendUint(dst, uint64(v.Int64()), 10)
		}
		return strconv.AppendInt(dst, v.Int64(), 10)
	case parquet.Int96:
		return append(dst, v.Int96().String()...)
	case parquet.Float:
		f := float64(v.Float())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(dst, "null"...)
		}
		return strconv.AppendFloat(dst, f, 'g', -1, 32)
	case parquet.Double:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(dst, "null"...)
		}
		return strconv.AppendFloat(dst, f, 'g', -1, 64)
	default: // ByteArray, FixedLenByteArray
		return appendJSONString(dst, v.ByteArray())
	}
}
