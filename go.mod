module github.com/mcpkit/mcpkit

go 1.25.0

require (
	github.com/go-jose/go-jose/v4 v4.1.9
	github.com/go-json-experiment/json v0.0.0-20251027170946-4849db3c2f7e
	github.com/google/jsonschema-go v0.4.3
	github.com/yosida95/uritemplate/v3 v3.0.2
)

require golang.org/x/oauth2 v0.36.0
