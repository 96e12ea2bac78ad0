package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/mcp"
)

// A server serves a directory of skills; a host lists them, loads one
// (its SKILL.md read and verified against the listing) and reads a file
// of it only when it needs it, verified too.
func ExampleServer_AddSkills() {
	skills := fstest.MapFS{
		"skills/pdf-processing/SKILL.md":            {Data: []byte("---\nname: pdf-processing\ndescription: Fill PDF forms.\n---\nSee references/FORMS.md.\n")},
		"skills/pdf-processing/references/FORMS.md": {Data: []byte("Fill each field.\n")},
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "skills", Version: "1.0.0"}, nil)
	if err := s.AddSkills(skills, "skills"); err != nil {
		log.Fatal(err)
	}
	cs, done := connectPair(s, nil)
	defer done()
	ctx := context.Background()
	for entry, err := range cs.Skills(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(entry.URI, entry.Frontmatter["description"])
		skill, err := cs.LoadSkill(ctx, entry)
		var ve *mcp.SkillVerificationError
		if errors.As(err, &ve) {
			continue // tampered with: not used
		} else if err != nil {
			log.Fatal(err)
		}
		forms, err := skill.ReadFile(ctx, "references/FORMS.md")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s", forms)
	}
	// Output:
	// skill://pdf-processing/SKILL.md Fill PDF forms.
	// Fill each field.
}
