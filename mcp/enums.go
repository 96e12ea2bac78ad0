package mcp

// ElicitMode is the mode of an elicitation: [ElicitModeForm] (the user
// fills in a form described by a restricted JSON Schema) or
// [ElicitModeURL] (the user is sent to a URL, MCP 2025-11-25). An empty
// mode means form on the wire; [ServerSession.Elicit] sends URL mode when
// a URL is given without a mode.
type ElicitMode string

// IconTheme is the background an icon is designed for (MCP 2025-11-25).
type IconTheme string

// Icon themes.
const (
	// IconThemeLight marks an icon meant for a light background.
	IconThemeLight IconTheme = "light"
	// IconThemeDark marks an icon meant for a dark background.
	IconThemeDark IconTheme = "dark"
)

// ReferenceType is the kind of a [CompleteReference]: what
// completion/complete completes an argument of.
type ReferenceType string

// Reference types.
const (
	// ReferencePrompt refers to a prompt by name.
	ReferencePrompt ReferenceType = "ref/prompt"
	// ReferenceResource refers to a resource template by its URI template.
	ReferenceResource ReferenceType = "ref/resource"
)
