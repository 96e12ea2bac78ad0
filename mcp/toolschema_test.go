package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/schema"
)

type bindArgs struct {
	Name  string   `json:"name"`
	Count int      `json:"count,omitempty" schema:"minimum=1"`
	Tags  []string `json:"tags,omitempty"`
	Mode  string   `json:"mode,omitempty" schema:"enum=fast|slow"`
}

// TestBindWithoutDefaults covers the path that validates the arguments as
// text and decodes them once.
func TestBindWithoutDefaults(t *testing.T) {
	var r schema.Reflector
	b, err := newArgBinder[bindArgs](&r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.hasDefaults {
		t.Fatal("schema has defaults")
	}
	tests := []struct {
		args    string
		want    bindArgs
		wantErr string // substring; "" for none
	}{
		{``, bindArgs{}, `missing required property "name"`},
		{`null`, bindArgs{}, `missing required property "name"`},
		{`{"name":"a"}`, bindArgs{Name: "a"}, ""},
		{" \n{\"name\":\"a\\u00e9\",\"count\":2,\"tags\":[\"x\"],\"mode\":\"slow\"}\n", bindArgs{Name: "aé", Count: 2, Tags: []string{"x"}, Mode: "slow"}, ""},
		{`{"\u006eame":"a"}`, bindArgs{Name: "a"}, ""},
		{`{"name":"a","count":0}`, bindArgs{}, "/count: must be >= 1"},
		{`{"name":"a","count":1.5}`, bindArgs{}, "/count: want integer, got number"},
		{`{"name":"a","mode":"x"}`, bindArgs{}, "/mode: must be one of"},
		{`{"name":"a","tags":[1]}`, bindArgs{}, "/tags/0: want string, got integer"},
		{`{"name":"a","extra":1}`, bindArgs{Name: "a"}, ""},
		{`{"name":"a","name":"b"}`, bindArgs{}, "duplicate"},
		{`{"name":"a"} 1`, bindArgs{}, "after top-level value"},
		{`{"name":`, bindArgs{}, "EOF"},
		{`[1]`, bindArgs{}, "must be a JSON object"},
		{`"x"`, bindArgs{}, "must be a JSON object"},
		{`x`, bindArgs{}, "invalid character"},
	}
	for _, tt := range tests {
		got, err := b.bind(json.RawMessage(tt.args))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("bind(%s): %v", tt.args, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "invalid arguments: ")):
			t.Errorf("bind(%s) = %v, want an error containing %q", tt.args, err, tt.wantErr)
		case tt.wantErr == "" && !equalArgs(got, tt.want):
			t.Errorf("bind(%s) = %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

func equalArgs(a, b bindArgs) bool {
	return a.Name == b.Name && a.Count == b.Count && a.Mode == b.Mode && strings.Join(a.Tags, ",") == strings.Join(b.Tags, ",")
}

// TestBindDecodesOnce bounds the allocations of binding arguments to a
// struct: they are decoded into the struct only, not first into a map for
// validation.
func TestBindDecodesOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	var r schema.Reflector
	b, err := newArgBinder[struct {
		Message string `json:"message"`
	}](&r, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw := json.RawMessage(`{"message":"hello"}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := b.bind(raw); err != nil {
			t.Fatal(err)
		}
	})
	// The struct and the message string.
	if allocs > 2 {
		t.Errorf("bind allocates %v times, want at most 2", allocs)
	}
}
