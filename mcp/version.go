package mcp

import "slices"

// negotiate picks the revision to answer initialize with: the requested
// one when supported, otherwise the newest this package speaks.
func negotiate(requested string) string {
	if slices.Contains(SupportedVersions(), requested) {
		return requested
	}
	return LatestVersion
}
