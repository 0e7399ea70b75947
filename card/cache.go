package card

import (
	"sync"
	"time"
)

// cacheTTL is how long the card trusts what GitHub said about a
// person's permission or a repository's config.
const cacheTTL = time.Minute

// cacheMax bounds a cache; past it, expired entries go, then all.
const cacheMax = 10000

// cache keeps values for a short time. Failed loads are not kept.
type cache[V any] struct {
	mu  sync.Mutex
	ttl time.Duration
	now func() time.Time
	m   map[string]entry[V]
}

type entry[V any] struct {
	v       V
	expires time.Time
}

func newCache[V any](ttl time.Duration, now func() time.Time) *cache[V] {
	return &cache[V]{ttl: ttl, now: now, m: map[string]entry[V]{}}
}

// forget drops what is kept for key, so the next get loads it.
func (c *cache[V]) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}

// get returns the value kept for key, or loads and keeps it.
func (c *cache[V]) get(key string, load func() (V, error)) (V, error) {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && c.now().Before(e.expires) {
		return e.v, nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= cacheMax {
		now := c.now()
		for k, e := range c.m {
			if !now.Before(e.expires) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= cacheMax {
			clear(c.m)
		}
	}
	c.m[key] = entry[V]{v: v, expires: c.now().Add(c.ttl)}
	return v, nil
}
