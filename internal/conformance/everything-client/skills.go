package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mcpkit/mcpkit/mcp"
)

// listSkills lists the server's skills and reads none of their files: a
// host fetches a skill's files only once it loads the skill
// (sep-2640-client-no-prefetch).
func listSkills(ctx context.Context, cs *mcp.ClientSession) error {
	_, err := skills(ctx, cs)
	return err
}

// skills lists every skill the server serves.
func skills(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Skill, error) {
	var all []*mcp.Skill
	for e, err := range cs.Skills(ctx) {
		if err != nil {
			return nil, fmt.Errorf("listing skills: %w", err)
		}
		all = append(all, e)
	}
	return all, nil
}

// loadSkills lists the skills, loads each (reading and verifying its
// SKILL.md) and, only for a skill that passed, reads its other files,
// each verified (sep-2640-client-verify-*). A skill or file that fails
// verification is not used: the client says so on standard error and
// goes on, as a host would; that is the outcome those scenarios expect.
func loadSkills(ctx context.Context, cs *mcp.ClientSession) error {
	all, err := skills(ctx, cs)
	if err != nil {
		return err
	}
	for _, e := range all {
		l, err := cs.LoadSkill(ctx, e)
		var ve *mcp.SkillVerificationError
		if errors.As(err, &ve) {
			fmt.Fprintf(os.Stderr, "everything-client: not using skill %s: %v\n", e.URI, err)
			continue
		}
		if err != nil {
			return fmt.Errorf("loading skill %s: %w", e.URI, err)
		}
		dir := strings.TrimSuffix(e.URI, "SKILL.md")
		for _, f := range e.Resources.Files {
			if f.URI == e.URI {
				continue
			}
			if _, err := l.ReadFile(ctx, strings.TrimPrefix(f.URI, dir)); err != nil {
				if errors.As(err, &ve) {
					fmt.Fprintf(os.Stderr, "everything-client: not using %s: %v\n", f.URI, err)
					continue
				}
				return fmt.Errorf("reading %s: %w", f.URI, err)
			}
		}
	}
	return nil
}
