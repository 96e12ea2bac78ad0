module github.com/mcpkit/mcpkit/redisstore

go 1.26.0

replace github.com/mcpkit/mcpkit => ../

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/mcpkit/mcpkit v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20251027170946-4849db3c2f7e // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
