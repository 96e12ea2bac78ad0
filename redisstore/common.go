package redisstore

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// checkCommon checks what every constructor takes: a client, and a key
// prefix (DefaultPrefix when empty; no brace, which would change the hash
// slot of every key) and timeout (DefaultTimeout when not positive),
// which it resolves in place.
func checkCommon(client redis.UniversalClient, prefix *string, timeout *time.Duration) error {
	if client == nil {
		return errors.New("redisstore: nil client")
	}
	*prefix = cmp.Or(*prefix, DefaultPrefix)
	if strings.ContainsAny(*prefix, "{}") {
		return fmt.Errorf("redisstore: prefix %q contains a brace", *prefix)
	}
	*timeout = cmp.Or(max(*timeout, 0), DefaultTimeout)
	return nil
}
