package jobspec

import (
	"bytes"
	"math"
	"strconv"

	"github.com/neardup/neardup/internal/docid"
	"github.com/neardup/neardup/internal/jsontext"
)

// Output file names inside the output directory (neardup-beam cuts each but
// report.json into shards named after them).
const (
	KeptFile     = "kept.jsonl"
	ClustersFile = "clusters.jsonl"
	PairsFile    = "pairs.tsv"
	ReportFile   = "report.json"
	HTMLFile     = "report.html"
)

// Version is the neardup release, written into report.json.
const Version = "0.1.0"

// PairRow is one line of pairs.tsv before formatting. IDA ≤ IDB bytewise;
// A < B are the input positions of the pair's documents (in input order, not
// in id order), which order rows whose ids are equal. A driver may use any
// order-preserving numbering of the documents for A and B (dedup uses the
// global record index, neardup-beam split<<40 | local index). The zero value
// is an empty row.
type PairRow struct {
	// IDA and IDB are the pair's document ids, IDA ≤ IDB bytewise.
	IDA, IDB []byte
	// A and B are the documents' input positions, A < B.
	A, B uint64
	// Est is the pair's similarity estimated from the signatures.
	Est float64
	// Exact is the exact Jaccard similarity, or a negative value when it was
	// not computed (written as "-").
	Exact float64
}

// NewPairRow returns the row of the verified pair of documents a < b (input
// positions) whose ids are idOfA and idOfB, ordering the ids bytewise. The
// row aliases the id slices.
func NewPairRow(idOfA, idOfB []byte, a, b uint64, v Verdict) PairRow {
	if bytes.Compare(idOfA, idOfB) > 0 {
		idOfA, idOfB = idOfB, idOfA
	}
	return PairRow{IDA: idOfA, IDB: idOfB, A: a, B: b, Est: v.Est, Exact: v.Exact}
}

// ComparePairRows orders rows as pairs.tsv lists them: by IDA, then IDB
// (bytewise), then, for equal ids, by A and B. It returns -1, 0 or +1.
func ComparePairRows(x, y PairRow) int {
	if c := bytes.Compare(x.IDA, y.IDA); c != 0 {
		return c
	}
	if c := bytes.Compare(x.IDB, y.IDB); c != 0 {
		return c
	}
	switch {
	case x.A < y.A:
		return -1
	case x.A > y.A:
		return 1
	case x.B < y.B:
		return -1
	case x.B > y.B:
		return 1
	}
	return 0
}

// AppendLine appends the row's pairs.tsv line, newline included: idA, idB,
// the estimate and the exact similarity (AppendSim; "-" when not computed),
// tab-separated, each id a docid field (Go-quoted when it holds a tab, a line
// break or a quote, or begins with '#').
func (r PairRow) AppendLine(dst []byte) []byte {
	dst = docid.AppendField(dst, r.IDA)
	dst = append(dst, '\t')
	dst = docid.AppendField(dst, r.IDB)
	dst = append(dst, '\t')
	dst = AppendSim(dst, r.Est)
	dst = append(dst, '\t')
	if r.Exact >= 0 {
		dst = AppendSim(dst, r.Exact)
	} else {
		dst = append(dst, '-')
	}
	return append(dst, '\n')
}

// AppendSim appends a similarity with six decimals, as the outputs write it:
// as strconv.AppendFloat(dst, x, 'f', 6, 64) does.
func AppendSim(dst []byte, x float64) []byte {
	// The similarities, from 0 to 1, are rounded here rather than by
	// strconv's general conversion (0.05 CPU-s of the 0.5M pairs.tsv lines
	// at 5M short documents). x·10⁶ is y plus err exactly (math.FMA gives
	// the product's rounding error, |err| ≤ ulp(y)/2), so y's fraction
	// decides the rounding unless it is exactly one half, where err does,
	// and a tie (x = j/128 for an odd j, frequent among estimates) rounds
	// to even as strconv rounds exact halves.
	if !(x >= 0 && x <= 1) || math.Signbit(x) {
		return strconv.AppendFloat(dst, x, 'f', 6, 64)
	}
	y := x * 1e6
	err := math.FMA(x, 1e6, -y)
	n := math.Floor(y)
	f := y - n
	if f > 0.5 || f == 0.5 && (err > 0 || err == 0 && uint64(n)&1 == 1) {
		n++
	}
	u := uint32(n)
	if u >= 1e6 {
		return append(dst, "1.000000"...)
	}
	dst = append(dst, '0', '.', 0, 0, 0, 0, 0, 0)
	for i := len(dst) - 1; i >= len(dst)-6; i-- {
		dst[i] = byte('0' + u%10)
		u /= 10
	}
	return dst
}

// FormatSim renders a similarity with six decimals, as the outputs write it.
func FormatSim(x float64) string { return string(AppendSim(nil, x)) }

// ClusterLine is one line of clusters.jsonl, as a reader decodes it
// (encoding/json); writers use AppendClusterLine.
type ClusterLine struct {
	// Cluster numbers the clusters from 0 in the order of their lowest
	// member's input position.
	Cluster int `json:"cluster"`
	// Size is the number of members.
	Size int `json:"size"`
	// Kept is the id of the document the cluster keeps.
	Kept string `json:"kept"`
	// Members are the ids of all members, kept one included, in input order.
	Members []string `json:"members"`
	// Reference is the number of members that are reference documents
	// (Options.Against): the first Reference of Members, as reference
	// documents are numbered before the inputs'. Omitted when 0.
	Reference int `json:"reference,omitempty"`
}

// AppendClusterLine appends the clusters.jsonl line of cluster number n,
// which keeps the document whose id is kept and whose members' ids are
// members (in input order), newline included, and returns the extended
// buffer: byte for byte what encoding/json writes for the ClusterLine
// without HTML escaping (ids as internal/jsontext writes them: invalid
// UTF-8 becomes U+FFFD). It keeps none of its arguments.
func AppendClusterLine(dst []byte, n int, kept []byte, members [][]byte) []byte {
	return AppendClusterLineRef(dst, n, kept, members, 0)
}

// AppendClusterLineRef is AppendClusterLine for a cluster whose first
// reference members are reference documents: the line ends with
// "reference":reference when it is not 0, as encoding/json writes
// ClusterLine.Reference.
func AppendClusterLineRef(dst []byte, n int, kept []byte, members [][]byte, reference int) []byte {
	dst = append(dst, `{"cluster":`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, `,"size":`...)
	dst = strconv.AppendInt(dst, int64(len(members)), 10)
	dst = append(dst, `,"kept":`...)
	dst = jsontext.AppendBytes(dst, kept)
	dst = append(dst, `,"members":[`...)
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsontext.AppendBytes(dst, m)
	}
	dst = append(dst, ']')
	if reference != 0 {
		dst = append(dst, `,"reference":`...)
		dst = strconv.AppendInt(dst, int64(reference), 10)
	}
	return append(dst, "}\n"...)
}
