package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis servers for the tests: .ci/services.sh starts them. Without them the
// tests skip, except under CI=true, where they fail.
func redisAddrs(cluster bool) []string {
	if cluster {
		if v := os.Getenv("NEARDUP_REDIS_CLUSTER_ADDRS"); v != "" {
			return strings.Split(v, ",")
		}
		return []string{"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"}
	}
	if v := os.Getenv("NEARDUP_REDIS_ADDR"); v != "" {
		return []string{v}
	}
	return []string{DefaultRedisAddr}
}

// needRedis returns the addresses of a reachable server, or skips (fails
// under CI).
func needRedis(t *testing.T, cluster bool) []string {
	t.Helper()
	addrs := redisAddrs(cluster)
	c := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: addrs, IsClusterMode: cluster, DialTimeout: time.Second})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := c.Ping(ctx).Err()
	if err == nil && cluster {
		var info string
		info, err = c.ClusterInfo(ctx).Result()
		if err == nil && !strings.Contains(info, "cluster_state:ok") {
			err = fmt.Errorf("cluster state not ok")
		}
	}
	if err != nil {
		msg := fmt.Sprintf("no Redis %s at %v (%v); run .ci/services.sh", map[bool]string{false: "server", true: "cluster"}[cluster], addrs, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return addrs
}

func redisBackend(cluster bool) backend {
	return backend{
		name: map[bool]string{false: "redis", true: "redis-cluster"}[cluster],
		open: func(t *testing.T, opts *Options) (Index, func(*Options) (Index, error)) {
			addrs := needRedis(t, cluster)
			prefix := fmt.Sprintf("ndtest:%x:", rand.Uint64())
			mk := func(opts *Options) (*Redis, error) {
				o := RedisOptions{Addrs: addrs, Cluster: cluster, Prefix: prefix}
				if opts != nil {
					o.Options = *opts
				}
				return OpenRedis(context.Background(), &o)
			}
			x, err := mk(opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				x.Close()
				y, err := mk(nil)
				if err == nil {
					err = y.Drop(context.Background())
					y.Close()
				}
				if err != nil {
					t.Errorf("drop: %v", err)
				}
			})
			return x, func(opts *Options) (Index, error) {
				y, err := mk(opts)
				if err != nil {
					return nil, err
				}
				return y, nil
			}
		},
	}
}

func TestRedis(t *testing.T)        { runSuite(t, redisBackend(false)) }
func TestRedisCluster(t *testing.T) { runSuite(t, redisBackend(true)) }

// TestRedisInstances runs the concurrency test through two handles with
// separate clients and lock tables, as two service instances sharing one
// index: the Redis locks alone must make check-and-insert atomic.
func TestRedisInstances(t *testing.T) {
	for _, cluster := range []bool{false, true} {
		t.Run(map[bool]string{false: "standalone", true: "cluster"}[cluster], func(t *testing.T) {
			x, reopen := redisBackend(cluster).open(t, nil)
			y, err := reopen(nil)
			if err != nil {
				t.Fatal(err)
			}
			defer y.Close()
			concurrentGroups(t, []Index{x, y})
		})
	}
}

// TestRedisStaleLock: a lock left by a writer that died expires after its
// TTL; until then writers of that bucket wait, and give up with
// ErrLockTimeout when their context ends.
func TestRedisStaleLock(t *testing.T) {
	x, _ := redisBackend(false).open(t, nil)
	r := x.(*Redis)
	doc := docOf(t, r.Config(), "a", newTextGen(12).text(100))
	keys := r.docKeys(doc.Sig)
	stale := r.key(redisLockB, r.bucketName(keys[3]))
	// The lock lives an hour while a writer gives up behind it (with a
	// 300 ms TTL from the start, a slow machine saw it expire first), then
	// 300 ms.
	if err := r.c.Set(context.Background(), stale, "dead-writer", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := r.CheckAndInsert(short, []Doc{doc}, nil); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("CheckAndInsert behind a live lock: %v; want ErrLockTimeout", err)
	}
	if err := r.c.PExpire(context.Background(), stale, 300*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := r.CheckAndInsert(context.Background(), []Doc{doc}, nil)
	if err != nil || res[0].Status != New {
		t.Fatalf("after the lock expired: %+v, %v", res, err)
	}
	if waited := time.Since(start); waited >= DefaultLockTTL/2 {
		t.Errorf("waited %v for a 300ms lock; want it gone well before the %v a lock of the index's own lives", waited, DefaultLockTTL)
	}
	// Our own locks are gone.
	if n, _ := r.c.Exists(context.Background(), stale).Result(); n != 0 {
		t.Error("lock key left behind")
	}
	mustCheck(t, x)
}
