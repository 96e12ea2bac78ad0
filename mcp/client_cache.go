package mcp

import (
	"context"
	"sync"
	"time"
)

// The client's cache of 2026-07-28 results. A server of that era says how
// long a client may keep a list result or a resources/read result (ttlMs)
// and who may share it (cacheScope); a client session of that era keeps
// those with a positive ttlMs and answers the same request from the cache
// until they expire. (Its server/discover answer is asked for once, at
// Connect.) A session's
// cache is its own, so both scopes are honoured. ClearCache empties it,
// and a context from WithoutCache goes to the server whatever the cache
// holds (and refreshes it).

// The bounds of a session's cache, which the server fills: past
// maxCachedResults entries or maxCachedBytes of results it starts afresh,
// and a result longer than maxCachedResultBytes is not kept.
const (
	maxCachedResults     = 256
	maxCachedBytes       = 8 << 20
	maxCachedResultBytes = 1 << 20
)

type withoutCacheKey struct{}

// WithoutCache returns a context under which a client of the stateless era
// sends its requests to the server even when it holds an answer that has
// not expired; the fresh answers replace the cached ones.
func WithoutCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, withoutCacheKey{}, true)
}

// resultCache holds the cacheable results of a client session, by method
// and the params that tell one page or resource from another.
type resultCache struct {
	mu    sync.Mutex
	m     map[string]cachedResult
	bytes int // of the results in m
}

type cachedResult struct {
	data    []byte // the result as received
	expires time.Time
}

// cacheKey returns the cache key of a request, or "" when its result is
// not cached.
func cacheKey(method string, p Params) string {
	switch p := p.(type) {
	case *ListToolsParams:
		return method + "\x00" + p.Cursor
	case *ListPromptsParams:
		return method + "\x00" + p.Cursor
	case *ListResourcesParams:
		return method + "\x00" + p.Cursor
	case *ListResourceTemplatesParams:
		return method + "\x00" + p.Cursor
	case *ReadResourceParams:
		if len(p.InputResponses) > 0 || p.RequestState != "" {
			return "" // a retry of an input round
		}
		return method + "\x00" + p.URI
	}
	return ""
}

func (c *resultCache) get(key string, now time.Time) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok {
		return nil, false
	}
	if !now.Before(e.expires) {
		delete(c.m, key)
		c.bytes -= len(e.data)
		return nil, false
	}
	return e.data, true
}

// put keeps a result whose ttlMs is positive.
func (c *resultCache) put(key string, res Result, data []byte, now time.Time) {
	ttl, _ := res.cacheHints()
	if ttl == nil || *ttl == nil || **ttl <= 0 || len(data) > maxCachedResultBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok {
		c.bytes -= len(old.data)
	}
	if c.m == nil || len(c.m) >= maxCachedResults || c.bytes+len(data) > maxCachedBytes {
		c.m, c.bytes = make(map[string]cachedResult), 0
	}
	c.m[key] = cachedResult{data: data, expires: now.Add(time.Duration(**ttl) * time.Millisecond)}
	c.bytes += len(data)
}

// clear empties the cache, or, with a method, forgets that method's
// results.
func (c *resultCache) clear(methods ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(methods) == 0 {
		c.m, c.bytes = nil, 0
		return
	}
	for k, e := range c.m {
		for _, m := range methods {
			if len(k) > len(m) && k[:len(m)] == m && k[len(m)] == 0 {
				delete(c.m, k)
				c.bytes -= len(e.data)
				break
			}
		}
	}
}

// ClearCache empties the session's cache of 2026-07-28 results (see
// WithoutCache).
func (cs *ClientSession) ClearCache() { cs.cache.clear() }
