package app

import (
	"sync"
	"time"
)

// cardCacheTTL is how long the card trusts what GitHub said about a
// person's permission or a repository's config.
const cardCacheTTL = time.Minute

// cardCacheMax bounds a cache; past it, expired entries go, then all.
const cardCacheMax = 10000

// cardCache keeps values for a short time. Failed loads are not kept.
type cardCache[V any] struct {
	mu  sync.Mutex
	ttl time.Duration
	now func() time.Time
	m   map[string]cardEntry[V]
}

type cardEntry[V any] struct {
	v       V
	expires time.Time
}

func newCardCache[V any](ttl time.Duration, now func() time.Time) *cardCache[V] {
	return &cardCache[V]{ttl: ttl, now: now, m: map[string]cardEntry[V]{}}
}

// get returns the value kept for key, or loads and keeps it.
func (c *cardCache[V]) get(key string, load func() (V, error)) (V, error) {
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
	if len(c.m) >= cardCacheMax {
		now := c.now()
		for k, e := range c.m {
			if !now.Before(e.expires) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= cardCacheMax {
			clear(c.m)
		}
	}
	c.m[key] = cardEntry[V]{v: v, expires: c.now().Add(c.ttl)}
	return v, nil
}
