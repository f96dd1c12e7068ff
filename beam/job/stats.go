package job

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/neardup/neardup/internal/drift"
)

// OrdID is a document's number and id.
type OrdID struct {
	Ord uint64 // the document's ord
	ID  []byte // its id
}

// Stats is everything the report needs from the pipelines; each stage fills
// its part and one combine merges them.
type Stats struct {
	Splits       []SplitStats // one per split, in no particular order
	Buckets      BucketStats  // summed over the partitions
	HasBuckets   bool         // whether any partition reported bucket statistics
	Candidates   int64        // distinct candidate pairs
	VerifiedDocs int64        // documents read again for verification
	Shuffle      InfoShuffle  // the document infos sent to verification
	Hist         Hist         // similarity histogram of the verified pairs
	FirstIDs     []OrdID      // ids of the listed buckets' first members
	Clusters     ClusterStats // summed over the components
	Kept         int64        // records written to kept.jsonl
	// Best counts each document of a verified pair by its best match's
	// estimated similarity (report.json's drift.best_similarity).
	Best drift.Histogram
}

func (a Stats) merge(b Stats) Stats {
	a.Splits = append(slices.Clone(a.Splits), b.Splits...)
	if b.HasBuckets {
		if a.HasBuckets {
			a.Buckets = a.Buckets.merge(b.Buckets)
		} else {
			a.Buckets = b.Buckets
		}
		a.HasBuckets = true
	}
	a.Candidates += b.Candidates
	a.VerifiedDocs += b.VerifiedDocs
	a.Shuffle = a.Shuffle.merge(b.Shuffle)
	a.Hist = a.Hist.merge(b.Hist)
	a.FirstIDs = append(slices.Clone(a.FirstIDs), b.FirstIDs...)
	slices.SortFunc(a.FirstIDs, func(x, y OrdID) int { return cmp.Compare(x.Ord, y.Ord) })
	a.FirstIDs = slices.CompactFunc(a.FirstIDs, func(x, y OrdID) bool { return x.Ord == y.Ord })
	a.Clusters = a.Clusters.merge(b.Clusters)
	a.Kept += b.Kept
	best := drift.Histogram{Upper: a.Best.Upper, Counts: slices.Clone(a.Best.Counts)}
	if err := best.Merge(b.Best); err != nil {
		panic("job: " + err.Error()) // every Best has drift.SimilarityBounds
	}
	a.Best = best
	return a
}

// InfoShuffle measures the verification shuffle: the document infos
// (DocInfo) sent towards the verifier, those of them that are copies
// (DocInfo.Copy: no signature or text), their bytes, and the most infos of
// one document.
type InfoShuffle struct {
	Sends  int64 // DocInfos sent
	Copies int64 // of them, copies
	Bytes  int64 // their bytes (infoBytes each)
	Max    int64 // the most DocInfos of one document
}

func (a InfoShuffle) merge(b InfoShuffle) InfoShuffle {
	return InfoShuffle{Sends: a.Sends + b.Sends, Copies: a.Copies + b.Copies, Bytes: a.Bytes + b.Bytes, Max: max(a.Max, b.Max)}
}

// add counts info, sent once; the caller keeps Max.
func (a *InfoShuffle) add(info *DocInfo) {
	a.Sends++
	if info.Copy {
		a.Copies++
	}
	a.Bytes += infoBytes(info)
}

// infoBytes is the size of a DocInfo on its way to the verifier, its
// document number included: the id, signature and text, 25 bytes of
// number, length, keep value and flag, and a copy's 8 bytes of SameAs (the
// coder's framing aside).
func infoBytes(info *DocInfo) int64 {
	n := int64(len(info.ID)+len(info.Sig)+len(info.Text)) + 25
	if info.Copy {
		n += 8
	}
	return n
}

func (a Hist) merge(b Hist) Hist {
	add := func(x, y []int64) []int64 {
		if x == nil {
			return slices.Clone(y)
		}
		x = slices.Clone(x)
		for i := range y {
			x[i] += y[i]
		}
		return x
	}
	return Hist{Est: add(a.Est, b.Est), Exact: add(a.Exact, b.Exact)}
}

type statsFn struct{}

// MergeAccumulators merges two partial Stats.
func (*statsFn) MergeAccumulators(a, b Stats) Stats { return a.merge(b) }

func splitStatsToStats(s SplitStats) Stats     { return Stats{Splits: []SplitStats{s}} }
func bucketStatsToStats(b BucketStats) Stats   { return Stats{Buckets: b, HasBuckets: true} }
func candidatesToStats(n int64) Stats          { return Stats{Candidates: n} }
func histToStats(e Edge) Stats                 { return Stats{Hist: edgeHist(e)} }
func clusterStatsToStats(c ClusterStats) Stats { return Stats{Clusters: c} }
func keptToStats(n int64) Stats                { return Stats{Kept: n} }

// edgeEnds emits both documents of a verified pair with its estimated
// similarity.
func edgeEnds(e Edge, emit func(uint64, float64)) {
	emit(e.A, e.Est)
	emit(e.B, e.Est)
}

// maxSim keeps the larger similarity (CombinePerKey: a document's best
// match).
func maxSim(a, b float64) float64 { return max(a, b) }

// bestToStats counts a document's best similarity.
func bestToStats(_ uint64, sim float64) Stats {
	h := drift.New(drift.SimilarityBounds)
	h.Add(sim)
	return Stats{Best: h}
}
func statsJSON(s Stats) ([]byte, error) { return json.Marshal(s) }

// edgeHist is the histogram of one verified pair: both columns are filled,
// and the driver drops Exact when it was not computed.
func edgeHist(e Edge) Hist {
	h := Hist{Est: make([]int64, histBins), Exact: make([]int64, histBins)}
	h.Est[histBin(e.Est)]++
	h.Exact[histBin(e.Exact)]++
	return h
}

// firstIDsFn emits the ids of the first members of the buckets listed in the
// side input (capped, and the largest shared), from the document infos on
// their way to verification (a document in several tasks comes several
// times: Stats.merge keeps one).
func firstIDsFn(_ uint64, info DocInfo, st Stats, emit func(Stats)) {
	o := info.Ord
	for _, list := range [...][]LargeBucket{st.Buckets.Largest, st.Buckets.Top} {
		for _, b := range list {
			if b.First == o {
				emit(Stats{FirstIDs: []OrdID{{o, info.ID}}})
				return
			}
		}
	}
}

// Members travel between jobs as blobs: ord, length, keep value (float64
// bits), has-keep byte, id.
func encodeMember(o uint64, m Member) []byte {
	b := make([]byte, 0, 25+len(m.ID))
	b = binary.LittleEndian.AppendUint64(b, o)
	b = binary.LittleEndian.AppendUint64(b, uint64(m.Length))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(m.Keep))
	if m.HasKeep {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return append(b, m.ID...)
}

func decodeMember(b []byte, emit func(uint64, Member)) error {
	if len(b) < 25 {
		return fmt.Errorf("member record of %d bytes", len(b))
	}
	o := binary.LittleEndian.Uint64(b)
	emit(o, Member{Ord: o, Length: int64(binary.LittleEndian.Uint64(b[8:])), Keep: math.Float64frombits(binary.LittleEndian.Uint64(b[16:])),
		HasKeep: b[24] == 1, ID: b[25:]})
	return nil
}
