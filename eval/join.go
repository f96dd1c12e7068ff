package eval

import (
	"cmp"
	"slices"
	"sort"
	"sync"
)

// Pair is one result of a join: two documents, by their index in the sets
// given to NewCollection or AllPairs, and their exact similarity. It is a
// plain value; the zero Pair (document 0 with itself) is never a result.
type Pair struct {
	// A and B are the documents' indexes, A < B.
	A, B int32
	// Overlap is |A ∩ B|, exact.
	Overlap int32
	// Jaccard is float64(|A ∩ B|) / float64(|A ∪ B|), the value compared
	// with the threshold; identical to Jaccard(sets[A], sets[B]).
	Jaccard float64
}

// AllPairs returns every pair of documents whose sets have Jaccard similarity
// at least threshold, sorted by (A, B). threshold must be in (0, 1]. Each set
// must be sorted ascending without duplicates (see Normalize); set i is
// document i, and empty sets never pair. The result is exact and
// deterministic, identical for every Options.Workers; it is a new slice the
// caller owns. sets is only read, and not retained.
//
// AllPairs builds a Collection and joins it once; to join one corpus at
// several thresholds, build the Collection once with NewCollection.
func AllPairs(sets [][]uint64, threshold float64, opts *Options) ([]Pair, error) {
	if err := checkThreshold(threshold); err != nil {
		return nil, err
	}
	c, err := NewCollection(sets, opts)
	if err != nil {
		return nil, err
	}
	return c.AllPairs(threshold)
}

// AllPairsFunc is like AllPairs but streams the pairs to yield instead of
// collecting them, stopping early when yield returns false. See
// Collection.AllPairsFunc for the order and the memory bound.
func AllPairsFunc(sets [][]uint64, threshold float64, opts *Options, yield func(Pair) bool) error {
	if err := checkThreshold(threshold); err != nil {
		return err
	}
	c, err := NewCollection(sets, opts)
	if err != nil {
		return err
	}
	return c.AllPairsFunc(threshold, yield)
}

// AllPairs returns every pair of the collection's documents with Jaccard
// similarity at least threshold, in (0, 1], sorted by (A, B). The result is
// exact, deterministic, and a new slice the caller owns.
func (c *Collection) AllPairs(threshold float64) ([]Pair, error) {
	return c.AppendPairs(nil, threshold)
}

// AppendPairs is like AllPairs but appends the pairs, sorted by (A, B), to
// dst and returns the extended slice; on error it returns dst unchanged.
func (c *Collection) AppendPairs(dst []Pair, threshold float64) ([]Pair, error) {
	n0 := len(dst)
	err := c.run(threshold, func(ps []Pair) bool {
		dst = append(dst, ps...)
		return true
	})
	if err != nil {
		return dst[:n0], err
	}
	sortPairs(dst[n0:], c.nsets)
	return dst, nil
}

// AllPairsFunc calls yield for every pair of the collection's documents with
// Jaccard similarity at least threshold, in (0, 1], until yield returns false.
// yield is called on the calling goroutine, never concurrently, and the
// sequence of pairs is deterministic: the same for every Options.Workers. It
// is grouped by the pair's member that comes later in ascending (set size,
// index) order, not sorted by (A, B).
//
// Unlike AllPairs, memory does not grow with the total number of pairs: only
// the pairs of a window of four chunks of documents per worker (a chunk is
// about 32k feature occurrences) wait for yield.
func (c *Collection) AllPairsFunc(threshold float64, yield func(Pair) bool) error {
	return c.run(threshold, func(ps []Pair) bool {
		for _, p := range ps {
			if !yield(p) {
				return false
			}
		}
		return true
	})
}

// posting is one entry of the prefix index: the set at processing position p
// has the list's token at position pos (in its rarest-first order).
type posting struct {
	p, pos int32
}

// joinPlan is the prefix index of a collection for one threshold, shared
// read-only by the probing workers.
type joinPlan struct {
	c      *Collection
	b      bounds
	start  []uint32  // token t ≥ c.unique has postings post[start[t-u]:start[t-u+1]]
	post   []posting // by token, then ascending p
	chunks []int     // work unit boundaries over processing positions
}

// chunkTokens is the number of feature occurrences per unit of work handed to
// a prober: enough to amortise the hand-off, small enough to balance load.
const chunkTokens = 1 << 15

func (c *Collection) plan(t float64) *joinPlan {
	j := &joinPlan{c: c, b: bounds{t}}
	u := c.unique
	start := make([]uint32, int(c.ntok-u)+1)
	nsets := len(c.ids)
	for p := range nsets {
		s := c.toks[c.offs[p]:c.offs[p+1]]
		for _, tok := range s[:j.b.indexPrefix(len(s))] {
			if tok >= u {
				start[tok-u]++
			}
		}
	}
	var sum uint32
	for i, n := range start {
		start[i] = sum
		sum += n
	}
	post := make([]posting, sum)
	for p := range nsets {
		s := c.toks[c.offs[p]:c.offs[p+1]]
		for i, tok := range s[:j.b.indexPrefix(len(s))] {
			if tok >= u {
				k := &start[tok-u]
				post[*k] = posting{int32(p), int32(i)}
				*k++
			}
		}
	}
	// start[i] now holds the end of list i, that is, the start of list i+1.
	copy(start[1:], start)
	start[0] = 0
	j.start, j.post = start, post

	j.chunks = append(j.chunks, 0)
	for p := range nsets {
		if c.offs[p+1]-c.offs[j.chunks[len(j.chunks)-1]] >= chunkTokens {
			j.chunks = append(j.chunks, p+1)
		}
	}
	if j.chunks[len(j.chunks)-1] != nsets {
		j.chunks = append(j.chunks, nsets)
	}
	return j
}

// run joins the collection at threshold t, handing each chunk's pairs to
// consume in chunk order until consume returns false. Workers probe chunks
// concurrently; a reorder window of a few chunks per worker keeps the output
// order fixed and the buffered output bounded.
func (c *Collection) run(t float64, consume func([]Pair) bool) error {
	if err := checkThreshold(t); err != nil {
		return err
	}
	if len(c.ids) == 0 {
		return nil
	}
	j := c.plan(t)
	nch := len(j.chunks) - 1
	W := max(min(c.workers, nch), 1)
	if W == 1 {
		pr := j.newProber()
		var buf []Pair
		for k := range nch {
			buf = pr.probeRange(j.chunks[k], j.chunks[k+1], buf[:0])
			if !consume(buf) {
				return nil
			}
		}
		return nil
	}

	window := 4 * W
	var (
		mu    sync.Mutex
		cond  = sync.NewCond(&mu)
		slots = make([][]Pair, window)
		ready = make([]bool, window)
		free  [][]Pair
		next  int  // next chunk to hand out
		done  int  // chunks consumed
		stop  bool // consumer quit
		wg    sync.WaitGroup
	)
	for range W {
		wg.Go(func() {
			pr := j.newProber()
			for {
				mu.Lock()
				for !stop && next < nch && next >= done+window {
					cond.Wait()
				}
				if stop || next >= nch {
					mu.Unlock()
					return
				}
				k := next
				next++
				var buf []Pair
				if n := len(free); n > 0 {
					buf, free = free[n-1], free[:n-1]
				}
				mu.Unlock()

				buf = pr.probeRange(j.chunks[k], j.chunks[k+1], buf[:0])

				mu.Lock()
				slots[k%window], ready[k%window] = buf, true
				cond.Broadcast()
				mu.Unlock()
			}
		})
	}
	// Stop and drain the workers however the consumer leaves, panics included.
	defer func() {
		mu.Lock()
		stop = true
		cond.Broadcast()
		mu.Unlock()
		wg.Wait()
	}()
	for k := range nch {
		mu.Lock()
		for !ready[k%window] {
			cond.Wait()
		}
		buf := slots[k%window]
		slots[k%window], ready[k%window] = nil, false
		done++
		cond.Broadcast()
		mu.Unlock()

		if !consume(buf) {
			return nil
		}
		mu.Lock()
		free = append(free, buf[:0])
		mu.Unlock()
	}
	return nil
}

// candidate is a prober's state for one indexed set while probing one set x:
// cnt prefix tokens shared so far (-1 once pruned), the last at x[i] = y[j].
type candidate struct {
	cnt, i, j int32
}

// prober is one worker's scratch state: 16 bytes per non-empty set, 4 per
// token of the largest set, and the verification bitmap.
type prober struct {
	*joinPlan
	cand    []candidate // by processing position
	touched []int32
	need    []int32  // need[k]: least overlap with a partner of size minSize+k
	bits    []uint64 // all zero between probes; nil: verify by merging
}

// maxBitmapTokens bounds the verification bitmap, one bit per token that
// occurs in more than one set, to 32 MiB per worker; past it, verification
// falls back to merging. A variable so that tests can force the fallback.
var maxBitmapTokens = 1 << 28

func (j *joinPlan) newProber() *prober {
	pr := &prober{joinPlan: j, cand: make([]candidate, len(j.c.ids))}
	if nt := int(j.c.ntok - j.c.unique); nt <= maxBitmapTokens {
		pr.bits = make([]uint64, (nt+63)/64)
	}
	return pr
}

// probeRange probes the sets at processing positions [lo, hi) against the
// sets before each of them, appending the accepted pairs to out.
func (pr *prober) probeRange(lo, hi int, out []Pair) []Pair {
	for x := lo; x < hi; x++ {
		out = pr.probe(x, out)
	}
	return out
}

// probe finds the partners of x among the sets before it in processing order:
// those at most as large. It applies, in turn, the size filter (partners of
// at least minSize), the prefix filter (only the index postings of x's probe
// prefix), the positional filter (drop a candidate as soon as the overlap it
// could still reach falls short), and verification that resumes the merge
// after the last shared prefix token and stops once the required overlap is
// out of reach.
func (pr *prober) probe(x int, out []Pair) []Pair {
	c, b := pr.c, pr.b
	offs, toks := c.offs, c.toks
	xs := toks[offs[x]:offs[x+1]]
	n := len(xs)
	ms := b.minSize(n)
	// First position with size ≥ ms: sets before x are sorted by size.
	lo := int32(sort.Search(x, func(p int) bool { return int(c.sizes[p]) >= ms }))
	if int(lo) == x {
		return out
	}

	// need[k] for partner sizes ms..n: minOverlap grows by at most one per
	// unit of s, as accept(o, u) implies accept(o+1, u).
	need := pr.need[:0]
	a := b.minOverlap(n + ms)
	for s := n + ms; s <= 2*n; s++ {
		if !b.accept(a, s-a) {
			a++
		}
		need = append(need, int32(a))
	}
	pr.need = need

	u := c.unique
	cand := pr.cand
	touched := pr.touched[:0]
	plen := n - int(need[0]) + 1
	x32 := int32(x)
	for i, tok := range xs[:plen] {
		if tok < u {
			continue // occurs in x alone
		}
		lst := pr.post[pr.start[tok-u]:pr.start[tok-u+1]]
		if len(lst) > 16 && lst[0].p < lo {
			k := sort.Search(len(lst), func(k int) bool { return lst[k].p >= lo })
			lst = lst[k:]
		}
		remX := int32(n - i - 1)
		for _, e := range lst {
			y := e.p
			if y >= x32 {
				break
			}
			if y < lo {
				continue
			}
			cd := &cand[y]
			if cd.cnt < 0 {
				continue
			}
			if cd.cnt == 0 {
				touched = append(touched, y)
			}
			ny := c.sizes[y]
			rem := min(remX, ny-e.pos-1)
			if cd.cnt+1+rem < need[int(ny)-ms] {
				cd.cnt = -1
				continue
			}
			cd.cnt++
			cd.i, cd.j = int32(i), e.pos
		}
	}

	// Verify. With several survivors, x's tokens go into a bitmap so that
	// each costs one scan of its own remaining tokens rather than a branchy
	// two-list merge (1.3-2x on char 5-grams); filling and clearing the
	// bitmap costs more than it saves for a single one (word 5-grams).
	survivors := 0
	for _, y := range touched {
		if cand[y].cnt > 0 {
			survivors++
		}
	}
	useBits := pr.bits != nil && survivors >= 2
	built := false
	for _, y := range touched {
		cd := cand[y]
		cand[y] = candidate{}
		if cd.cnt <= 0 {
			continue
		}
		ys := toks[offs[y]:offs[y+1]]
		ny := len(ys)
		nd := int(need[ny-ms])
		var o int
		if useBits {
			if !built {
				setBits(pr.bits, xs, u)
				built = true
			}
			o = int(cd.cnt) + countBitsAtLeast(pr.bits, ys[cd.j+1:], u, nd-int(cd.cnt))
		} else {
			o = int(cd.cnt) + overlapAtLeast(xs[cd.i+1:], ys[cd.j+1:], nd-int(cd.cnt))
		}
		if o < nd || !b.accept(o, n+ny-o) {
			continue
		}
		p := Pair{A: c.ids[y], B: c.ids[x], Overlap: int32(o), Jaccard: float64(o) / float64(n+ny-o)}
		if p.A > p.B {
			p.A, p.B = p.B, p.A
		}
		out = append(out, p)
	}
	if built {
		clearBits(pr.bits, xs, u)
	}
	pr.touched = touched
	return out
}

// setBits sets the bit of every token t ≥ u of s, at t-u.
func setBits(bm []uint64, s []int32, u int32) {
	for _, t := range s {
		if t >= u {
			v := uint32(t - u)
			bm[v>>6] |= 1 << (v & 63)
		}
	}
}

// clearBits undoes setBits, leaving bm all zero again.
func clearBits(bm []uint64, s []int32, u int32) {
	for _, t := range s {
		if t >= u {
			bm[uint32(t-u)>>6] = 0
		}
	}
}

// countBitsAtLeast returns how many tokens of s have their bit set in bm if
// that is at least need; otherwise it may stop early and return any smaller
// count. Every token of s must be at least u.
func countBitsAtLeast(bm []uint64, s []int32, u int32, need int) int {
	maxMiss := len(s) - need
	if maxMiss < 0 {
		return 0
	}
	m := 0
	for k, t := range s {
		v := uint32(t - u)
		m += int(bm[v>>6] >> (v & 63) & 1)
		if k+1-m > maxMiss { // misses so far
			return m
		}
	}
	return m
}

// overlapAtLeast returns |a ∩ b| for two ascending token lists if it is at
// least need; otherwise it may stop early and return any smaller count.
func overlapAtLeast(a, b []int32, need int) int {
	o, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		switch {
		case x == y:
			o++
			i++
			j++
		case x < y:
			i++
			if o+len(a)-i < need {
				return o
			}
		default:
			j++
			if o+len(b)-j < need {
				return o
			}
		}
	}
	return o
}

// sortPairs sorts ps by (A, B); ids are below nsets. Large results use two
// stable counting-sort passes (by B, then by A), linear in len(ps) + nsets.
func sortPairs(ps []Pair, nsets int) {
	if len(ps) < 4096 || len(ps) < nsets/4 {
		slices.SortFunc(ps, func(p, q Pair) int {
			if r := cmp.Compare(p.A, q.A); r != 0 {
				return r
			}
			return cmp.Compare(p.B, q.B)
		})
		return
	}
	tmp := make([]Pair, len(ps))
	cnt := make([]int, nsets+1)
	pass := func(dst, src []Pair, key func(Pair) int32) {
		clear(cnt)
		for _, p := range src {
			cnt[key(p)+1]++
		}
		for i := 1; i < len(cnt); i++ {
			cnt[i] += cnt[i-1]
		}
		for _, p := range src {
			k := key(p)
			dst[cnt[k]] = p
			cnt[k]++
		}
	}
	pass(tmp, ps, func(p Pair) int32 { return p.B })
	pass(ps, tmp, func(p Pair) int32 { return p.A })
}
