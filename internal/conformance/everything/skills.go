package everything

import (
	"embed"

	"github.com/mcpkit/mcpkit/mcp"
)

// skillsFS holds the skills the fixture serves (the Skills extension,
// SEP-2640): pdf-processing, with a references/ directory, and csv-tools
// at the nested skill path acme/data/csv-tools.
//
//go:embed all:skills
var skillsFS embed.FS

// addSkills serves the skills in skillsFS, declaring the extension with
// directoryRead.
func addSkills(s *mcp.Server, _ Options) error {
	return s.AddSkills(skillsFS, "skills")
}
