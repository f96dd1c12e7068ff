package dedup

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestHashTableMatchesMap: a table and a Go map given the same random keys
// (a quarter of them repeats, and high words drawn from a few values, so
// that many keys share one) hold the same documents,
// through growth (doubling, or to a bounded table's size), and a reset
// table is empty.
func TestHashTableMatchesMap(t *testing.T) {
	for _, highs := range []int{0, 1, 7, 1000, -1, -7} { // 0: random high words; < 0: a bounded table
		r := rand.New(rand.NewPCG(uint64(highs), 9))
		tab := newHashTable(16)
		if highs < 0 {
			// Not a power of two of slots: 61,680, from 3,855.
			tab, highs = newBoundedHashTable(1<<20), -highs
			if len(tab.cur.Load().s) != 3855 {
				t.Fatalf("bounded table: %d slots at first; want 3,855", len(tab.cur.Load().s))
			}
		}
		want := map[[2]uint64]uint32{}
		var keys [][2]uint64
		for i := range 50000 {
			var k [2]uint64
			switch {
			case len(keys) > 0 && r.IntN(4) == 0:
				k = keys[r.IntN(len(keys))]
			case highs > 0:
				k = [2]uint64{uint64(r.IntN(highs)) << 40, r.Uint64()}
			default:
				k = [2]uint64{r.Uint64(), r.Uint64()}
			}
			keys = append(keys, k)
			f, ok := tab.getOrPut(k[0], k[1], uint32(i), true)
			wf, wok := want[k]
			if ok != wok || ok && f != wf {
				t.Fatalf("highs %d, key %d %x: got (%d, %v); want (%d, %v)", highs, i, k, f, ok, wf, wok)
			}
			if !wok {
				want[k] = uint32(i)
			}
			if tab.len() != len(want) {
				t.Fatalf("highs %d, key %d: len %d; want %d", highs, i, tab.len(), len(want))
			}
		}
		for k, d := range want {
			if f, ok := tab.get(k[0], k[1]); !ok || f != d {
				t.Fatalf("highs %d: get %x = (%d, %v); want %d", highs, k, f, ok, d)
			}
			// A key differing in one word only is not there.
			if _, ok := tab.get(k[0], k[1]^1); ok {
				if _, in := want[[2]uint64{k[0], k[1] ^ 1}]; !in {
					t.Fatalf("highs %d: get %x found a key never added", highs, [2]uint64{k[0], k[1] ^ 1})
				}
			}
		}
		// getOrPut without put adds nothing.
		if _, ok := tab.getOrPut(1, 2, 3, false); ok || tab.len() != len(want) {
			t.Fatalf("highs %d: a lookup without put changed the table", highs)
		}
		if _, ok := tab.get(1, 2); ok {
			t.Fatalf("highs %d: a lookup without put added its key", highs)
		}
		size := tab.bytes()
		tab.reset()
		if tab.len() != 0 || tab.bytes() != size {
			t.Fatalf("highs %d: reset: len %d, %d bytes; want 0, %d", highs, tab.len(), tab.bytes(), size)
		}
		for k := range want {
			if _, ok := tab.get(k[0], k[1]); ok {
				t.Fatalf("highs %d: %x still there after reset", highs, k)
			}
		}
	}
}

// TestHashTableLimit: a table filled to its limit stays within its budget
// and never grows past it.
func TestHashTableLimit(t *testing.T) {
	for _, budget := range []int64{0, 1 << 20, 1<<20 + 12345, 16 << 20} {
		limit := hashTableLimit(budget)
		if limit < 1024 {
			t.Errorf("budget %d: limit %d; want at least 1,024", budget, limit)
		}
		tab := newBoundedHashTable(budget)
		r := rand.New(rand.NewPCG(uint64(budget), 1))
		keys := make([][2]uint64, limit)
		for i := range limit {
			keys[i] = [2]uint64{r.Uint64(), r.Uint64()}
			tab.getOrPut(keys[i][0], keys[i][1], uint32(i), tab.len() < limit)
		}
		if tab.len() != limit {
			t.Fatalf("budget %d: %d keys; want %d", budget, tab.len(), limit)
		}
		if n := len(tab.cur.Load().s); n != hashTableSlots(budget) {
			t.Fatalf("budget %d: %d slots when full; want %d", budget, n, hashTableSlots(budget))
		}
		for i, k := range keys {
			if d, ok := tab.get(k[0], k[1]); !ok || d != uint32(i) {
				t.Fatalf("budget %d: key %d = (%d, %v) in the full table", budget, i, d, ok)
			}
		}
		// Past the limit, a table asked to put anyway fills all but one
		// slot, so that a probe still ends.
		slots := len(tab.cur.Load().s)
		for i := limit; i < slots+10; i++ {
			tab.getOrPut(r.Uint64(), r.Uint64(), uint32(i), true)
		}
		if tab.len() != slots-1 || len(tab.cur.Load().s) != slots {
			t.Fatalf("budget %d: %d keys in %d slots past the limit; want %d in %d", budget, tab.len(), len(tab.cur.Load().s), slots-1, slots)
		}
		if _, ok := tab.get(r.Uint64(), r.Uint64()); ok {
			t.Fatalf("budget %d: found a key never added in the filled table", budget)
		}
		if b := tab.bytes(); budget >= 2048*hashSlotBytes && b > budget {
			t.Errorf("budget %d: the full table takes %d bytes", budget, b)
		} else if b < budget/2 && budget >= 2048*hashSlotBytes {
			t.Errorf("budget %d: the full table takes %d bytes, under half of it", budget, b)
		}
	}
}

// TestHashTableConcurrent: readers looking keys up while the writer adds
// them (and grows the table) find every key added before they started and
// never a key with the wrong document. Run it with -race.
func TestHashTableConcurrent(t *testing.T) {
	const n = 200000
	keys := make([][2]uint64, n)
	r := rand.New(rand.NewPCG(3, 3))
	for i := range keys {
		keys[i] = [2]uint64{r.Uint64() & 0xffff, r.Uint64()} // high words shared
	}
	tab := newHashTable(16)
	const before = 1000
	for i := range before {
		tab.getOrPut(keys[i][0], keys[i][1], uint32(i), true)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 3 {
		wg.Go(func() {
			rr := rand.New(rand.NewPCG(uint64(g), 7))
			for range 100000 {
				i := rr.IntN(n)
				d, ok := tab.get(keys[i][0], keys[i][1])
				if i < before && !ok || ok && d != uint32(i) {
					errs <- "reader saw a wrong document or missed an early key"
					return
				}
			}
		})
	}
	for i := before; i < n; i++ {
		tab.getOrPut(keys[i][0], keys[i][1], uint32(i), true)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// TestHashTableSameHome: keys that mix to the same value (hi ^ rotl(lo, 31)
// equal) share their home slot and their tag, so only the keys themselves
// tell them apart: each is found with its own document, and a key of that
// mix never added is not found, in a table grown over them and in one
// that was not.
func TestHashTableSameHome(t *testing.T) {
	const mix = 0x0123456789abcdef
	r := rand.New(rand.NewPCG(4, 4))
	for _, capacity := range []int{16, 1 << 12} {
		tab := newHashTable(capacity)
		var keys [][2]uint64
		for i := range 300 {
			lo := r.Uint64()
			k := [2]uint64{mix ^ bits.RotateLeft64(lo, 31), lo}
			keys = append(keys, k)
			if _, ok := tab.getOrPut(k[0], k[1], uint32(i), true); ok {
				t.Fatalf("capacity %d: key %d %x found before it was added", capacity, i, k)
			}
		}
		h := tab.cur.Load()
		fp0, _ := fingerprint(keys[0][0], keys[0][1])
		home, tag := h.home(fp0)
		for i, k := range keys {
			fp, _ := fingerprint(k[0], k[1])
			if hm, tg := h.home(fp); hm != home || tg != tag {
				t.Fatalf("capacity %d: key %d has home %d tag %x; want %d %x (the test's premise)", capacity, i, hm, tg, home, tag)
			}
			if d, ok := tab.get(k[0], k[1]); !ok || d != uint32(i) {
				t.Fatalf("capacity %d: get key %d = (%d, %v); want (%d, true)", capacity, i, d, ok, i)
			}
		}
		lo := r.Uint64()
		if _, ok := tab.get(mix^bits.RotateLeft64(lo, 31), lo); ok {
			t.Fatalf("capacity %d: found a key of the same home never added", capacity)
		}
	}
}

// TestHashTableTags: every used slot, and only those, has a tag; it is the
// tag of the key it holds.
func TestHashTableTags(t *testing.T) {
	tab := newHashTable(16)
	r := rand.New(rand.NewPCG(6, 6))
	for i := range 5000 {
		tab.getOrPut(r.Uint64(), r.Uint64(), uint32(i), true)
	}
	h := tab.cur.Load()
	used := 0
	for i := range h.s {
		s := &h.s[i]
		tg := h.tag(uint64(i))
		if d := s.doc; d == 0 {
			if tg != 0 {
				t.Fatalf("empty slot %d has tag %x", i, tg)
			}
			continue
		}
		used++
		if _, want := h.home(s.fp); tg != want {
			t.Fatalf("slot %d holds a key of tag %x; its tag is %x", i, want, tg)
		}
	}
	if used != tab.len() {
		t.Fatalf("%d slots used; the table holds %d keys", used, tab.len())
	}
}

// TestHashTableReserve: a table reserved for n keys holds them without
// growing, keeps the keys it had, is never shrunk, and a bounded table's
// reserve stops at its largest array; a table that got fewer slots than it
// needed grows as before.
func TestHashTableReserve(t *testing.T) {
	for _, c := range []struct {
		name      string
		tab       *hashTable
		reserve   int
		keys      int
		wantSlots int // after reserve
	}{
		{"unbounded", newHashTable(16), 10000, 10000, 11430},
		{"bounded", newBoundedHashTable(16 << 20), 50000, 50000, 57144},
		{"bounded past its largest", newBoundedHashTable(1 << 20), 1 << 20, hashTableLimit(1 << 20), hashTableSlots(1 << 20)},
		{"too few", newHashTable(16), 1000, 5000, 1144},
		{"never smaller", newHashTable(4096), 10, 100, 4096},
		{"none", newHashTable(16), 0, 10, 16},
	} {
		r := rand.New(rand.NewPCG(uint64(c.keys), 2))
		var keys [][2]uint64
		// A few keys before, which reserve copies.
		for i := range min(5, c.keys) {
			k := [2]uint64{r.Uint64(), r.Uint64()}
			keys = append(keys, k)
			c.tab.getOrPut(k[0], k[1], uint32(i), true)
		}
		c.tab.reserve(c.reserve)
		h := c.tab.cur.Load()
		if len(h.s) != c.wantSlots {
			t.Fatalf("%s: %d slots after reserve(%d); want %d", c.name, len(h.s), c.reserve, c.wantSlots)
		}
		for i := len(keys); i < c.keys; i++ {
			k := [2]uint64{r.Uint64(), r.Uint64()}
			keys = append(keys, k)
			if _, ok := c.tab.getOrPut(k[0], k[1], uint32(i), true); ok {
				t.Fatalf("%s: key %d found before it was added", c.name, i)
			}
		}
		grew := c.tab.cur.Load() != h
		if want := c.keys > c.reserve && c.keys*8 > len(h.s)*maxLoad; grew != want {
			t.Fatalf("%s: grew %v after reserve(%d) and %d keys; want %v", c.name, grew, c.reserve, c.keys, want)
		}
		for i, k := range keys {
			if d, ok := c.tab.get(k[0], k[1]); !ok || d != uint32(i) {
				t.Fatalf("%s: key %d = (%d, %v); want (%d, true)", c.name, i, d, ok, i)
			}
		}
	}
}

// TestHashTablePutAt: adding each absent key at the slot its lookup ended
// at (absentAt, putAt) leaves the table exactly as getOrPut does, slot for
// slot, through growths (putAt then probes the new array) and in a bounded
// table up to its largest array; a hint is refused once its slot is taken
// or the array has grown.
func TestHashTablePutAt(t *testing.T) {
	for _, c := range []struct {
		name     string
		new      func() *hashTable
		keys, of int
	}{
		{"growing", func() *hashTable { return newHashTable(16) }, 3000, 2000},
		{"bounded", func() *hashTable { return newBoundedHashTable(1 << 14) }, 1500, 1200},
	} {
		t.Run(c.name, func(t *testing.T) {
			fast, slow := c.new(), c.new()
			r := rand.New(rand.NewPCG(8, 9))
			pool := make([][2]uint64, c.of)
			for i := range pool {
				pool[i] = [2]uint64{r.Uint64(), r.Uint64()}
			}
			refused := 0
			for d := range c.keys {
				k := pool[r.IntN(len(pool))]
				doc, ok, slot, gen := fast.lookup(k[0], k[1])
				if d%5 == 0 && !ok {
					// A stale hint: another key goes first, maybe into
					// that slot or through a growth.
					o := [2]uint64{r.Uint64(), r.Uint64()}
					if d%10 == 0 {
						o = k // the key itself, into that slot
					}
					fast.getOrPut(o[0], o[1], uint32(1<<30+d), true)
					slow.getOrPut(o[0], o[1], uint32(1<<30+d), true)
				}
				want, wantOK := slow.getOrPut(k[0], k[1], uint32(d), true)
				switch {
				case ok:
					if !wantOK || doc != want {
						t.Fatalf("key %d: lookup got %d, %v; want %d, %v", d, doc, ok, want, wantOK)
					}
				case fast.absentAt(slot, gen):
					if wantOK {
						t.Fatalf("key %d: absentAt reports a key the table holds", d)
					}
					fast.putAt(k[0], k[1], uint32(d), slot)
				default:
					refused++
					fast.getOrPut(k[0], k[1], uint32(d), true)
				}
				hf, hs := fast.cur.Load(), slow.cur.Load()
				if fast.len() != slow.len() || hf.n != hs.n || !slices.Equal(hf.s, hs.s) {
					t.Fatalf("key %d: tables differ (%d keys in %d slots; want %d in %d)", d, fast.len(), hf.n, slow.len(), hs.n)
				}
				for i := range hf.n {
					if hf.tag(i) != hs.tag(i) {
						t.Fatalf("key %d: tag %d is %#x; want %#x", d, i, hf.tag(i), hs.tag(i))
					}
				}
			}
			if refused == 0 {
				t.Fatal("no hint was refused")
			}
		})
	}
}
