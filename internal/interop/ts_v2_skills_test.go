package interop

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// tsV2SkillsSummary is what ts_v2_skills_client.mjs prints.
type tsV2SkillsSummary struct {
	ProtocolVersion string            `json:"protocolVersion"`
	Supported       bool              `json:"supported"`
	DirectoryRead   bool              `json:"directoryRead"`
	Invalid         int               `json:"invalid"`
	Skills          []string          `json:"skills"`
	Verified        int               `json:"verified"`
	Unverified      int               `json:"unverified"`
	Directories     int               `json:"directories"`
	Errors          map[string]string `json:"errors"`
}

// TestTypeScriptV2SkillsClient runs the official TypeScript SDK v2
// client's Skills extension (SkillsClient) against mcpkit's conformance
// fixture server, which serves two skills with AddSkills (one nested
// under acme/data), in both eras, over stdio and Streamable HTTP: it
// lists and gets every skill, reads every listed file and verifies its
// size, digest and (for SKILL.md) frontmatter, and reads each skill's
// directory.
func TestTypeScriptV2SkillsClient(t *testing.T) {
	modules := nodeModules(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	bin := buildFixtureServer(ctx, t)
	run := func(t *testing.T, mode string, target ...string) *tsV2SkillsSummary {
		t.Helper()
		work, scriptPath := stageScript(t, modules, "ts_v2_skills_client.mjs")
		cmd := exec.CommandContext(ctx, "node", append([]string{scriptPath, mode}, target...)...)
		cmd.Dir = work
		cmd.WaitDelay = 5 * time.Second
		var stderr syncBuffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node ts_v2_skills_client.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, tail(stderr.String(), 8000), tail(string(out), 8000))
		}
		var sum tsV2SkillsSummary
		if err := json.Unmarshal(out, &sum); err != nil {
			t.Fatalf("summary: %v\n%s", err, tail(string(out), 8000))
		}
		return &sum
	}
	for _, era := range []struct{ mode, version string }{{"auto", mcp.Version20260728}, {"legacy", mcp.Version20251125}} {
		for _, tr := range []string{"stdio", "streamable HTTP"} {
			t.Run(era.version+"/"+tr, func(t *testing.T) {
				target := []string{"--", bin}
				if tr != "stdio" {
					target = []string{"--url", startFixtureHTTP(ctx, t, bin)}
				}
				sum := run(t, era.mode, target...)
				if len(sum.Errors) > 0 {
					t.Fatalf("errors: %v", sum.Errors)
				}
				if sum.ProtocolVersion != era.version {
					t.Errorf("negotiated %q, want %s", sum.ProtocolVersion, era.version)
				}
				if !sum.Supported || !sum.DirectoryRead || sum.Invalid != 0 {
					t.Errorf("supported %v, directoryRead %v, invalid entries %d", sum.Supported, sum.DirectoryRead, sum.Invalid)
				}
				if !slices.Equal(sum.Skills, []string{"csv-tools", "pdf-processing"}) {
					t.Errorf("skills %v", sum.Skills)
				}
				if sum.Verified != 4 || sum.Unverified != 0 || sum.Directories != 2 {
					t.Errorf("files verified %d, unverified %d; directories read %d", sum.Verified, sum.Unverified, sum.Directories)
				}
			})
		}
	}
}
